"""The harness's library under the `osworld` command, in three parts: execution/ runs tasks on desktops,
results/ is what a run leaves and what reads it back, experiments/ is tooling built from whole runs.
Arrows go experiments -> execution -> results (and experiments -> results), never back.

This package's own names are the documented API (docs/API.md), the only ones that follow semantic
versioning; every module under it, and under desktop_env/ and mm_agents/, is internal and may change.

    from osworld_harness import RunConfig, run, summarize
    summary = run(RunConfig(agent="oracle", domains=["os"], task_ids=["os-organize-invoices"]))
    (results,) = summarize("results/")

They are re-exported from the layers that own them: running from execution/ (`run`, `preview`), options
and summaries from results/ (`RunConfig`, `summarize`), tasks from desktop_env.tasks (`load_task_set`,
`load_task`, `Task`, `TaskSet`), and the plug-in decorators from their registries (`metric`, `getter`,
`setup_step`, `agent`, `model_client`, `provider`; `lookup` finds what they registered). Each is imported
the first time it is asked for (PEP 562), so importing this package, as every `osworld` command does
through its submodules, costs nothing, and results/ imported alone never pulls in execution/.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .own_packages import put_ours_first

# Before anything below imports them: this harness's mm_agents, desktop_env and lib_run_single, not those of an
# OSWorld checkout earlier on sys.path (PYTHONPATH).
put_ours_first()

if TYPE_CHECKING:
    from desktop_env.controllers.setup import setup_step as setup_step
    from desktop_env.evaluators.outcome import MetricResult as MetricResult
    from desktop_env.evaluators.registry import getter as getter
    from desktop_env.evaluators.registry import metric as metric
    from desktop_env.providers import provider as provider
    from desktop_env.tasks import Task as Task
    from desktop_env.tasks import TaskSet as TaskSet
    from desktop_env.tasks import load_task as load_task
    from desktop_env.tasks import load_task_set as load_task_set
    from mm_agents.llm import model_client as model_client
    from mm_agents.loader import agent as agent
    from osworld_harness.execution.backend import Backend
    from osworld_harness.execution.events import Reporter
    from osworld_harness.execution.plan import RunSummary
    from osworld_harness.execution.preview import RunPreview
    from osworld_harness.results.config import RunConfig as RunConfig
    from osworld_harness.results.summary import summarize as summarize

__all__ = ["run", "preview", "summarize", "RunConfig", "load_task_set", "load_task", "Task", "TaskSet",
           "metric", "getter", "setup_step", "agent", "model_client", "provider", "MetricResult", "lookup"]

# name -> the module that defines it, imported when the name is first asked for.
_LAZY = {
    "RunConfig": "osworld_harness.results.config",
    "summarize": "osworld_harness.results.summary",
    "load_task_set": "desktop_env.tasks",
    "load_task": "desktop_env.tasks",
    "Task": "desktop_env.tasks",
    "TaskSet": "desktop_env.tasks",
    "metric": "desktop_env.evaluators.registry",
    "getter": "desktop_env.evaluators.registry",
    "MetricResult": "desktop_env.evaluators.outcome",
    "setup_step": "desktop_env.controllers.setup",
    "agent": "mm_agents.loader",
    "model_client": "mm_agents.llm",
    "provider": "desktop_env.providers",
}


def run(config: RunConfig, report: Reporter | None = None, backend: Backend | None = None) -> RunSummary:
    """Runs the benchmark `config` selects, as `osworld run` does, and returns its RunSummary (planned, ran,
    ok, errors, score_sum, skipped_done, skipped_errors, invalid, stopped). Everything is checked before a
    desktop starts (RunOptionError, ResumeMismatch); each task's folder goes under config.result_dir, and
    a run into a folder that holds finished tasks resumes it. `report` receives the run's events (for a
    progress display); `backend` runs the tasks (default: worker processes, or Ray with backend="ray")."""
    from osworld_harness.execution.run import run_benchmark

    return run_benchmark(config, report or (lambda event: None), backend)


def preview(config: RunConfig) -> RunPreview:
    """What `osworld run --dry-run` plans for `config`, checked as a real run checks it (its plugins loaded,
    the agent's class and arguments, the result folder's recorded settings) and nothing started or written:
    the config as it will run (`config`: the network and time budget decided), the `plan` (to_run, skipped,
    invalid), per-domain counts (`domains`), the tasks that need the live web, the downloads missing from
    the cache, the `verdict` on comparability with OSWorld's leaderboard and `warnings()`. With
    config.strict, a run would refuse what the verdict calls incomparable; the preview only reports it."""
    import dataclasses  # here, as the rest: 9 ms at the package's import

    from osworld_harness.execution.run import check_run

    planned, _ = check_run(dataclasses.replace(config, strict=False))
    return planned


def lookup(kind: str, name: str) -> Any:
    """What is registered as `name` of `kind` ("metric", "getter", "setup_step", "provider", "agent",
    "model_client"): built-in, from an installed plugin's entry point, or registered by a decorator
    above. An unknown name is an UnknownName (a KeyError) listing the known ones."""
    from desktop_env import extensions

    return extensions.get(kind, name)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # asked for once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
