"""`osworld run` as a library call: pick tasks, resume, run them on N desktops, record everything.

The run is checked and planned here (options, resume, every task) before any desktop starts;
then one scheduling loop (osworld_harness/execution/scheduler.py) runs the tasks on a backend: worker processes
(osworld_harness/execution/worker_pool.py, the default), Ray actors (osworld_harness/execution/ray_backend.py) or
threads in this
process. A worker that dies takes its current task with it as a recorded error; Ctrl-C stops
the workers, whose desktops are torn down with them; a run killed outright leaves its running
tasks marked "running", which the next run detects and re-runs.
"""
from __future__ import annotations

import json
import platform
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

import desktop_env
from desktop_env.evaluators.metrics.pdf import pdf_text_engine
from desktop_env.extensions import PluginError, load_plugin
from desktop_env.providers import prepare_for
from desktop_env.tasks import load_task_set
from desktop_env.tasks.prefetch import prefetch
from mm_agents.llm import LLMError
from mm_agents.llm.pricing import PriceTableError, price_for
from mm_agents.loader import (
    AgentLoadError,
    accepts_argument,
    build_agent,
    constructor_parameters,
    load_agent_class,
    takes_any_keyword,
)
from osworld_harness.results.config import ResumeMismatch as ResumeMismatch  # `X as X`: re-exported, a run's names
from osworld_harness.results.config import RunConfig as RunConfig
from osworld_harness.results.config import RunOptionError as RunOptionError
from osworld_harness.results.reproduce import observed, reproduce_command
from osworld_harness.results.settings import SettingsMismatch, recorded_differences, runs_recorded
from osworld_harness.results.summary import task_set_digest
from osworld_harness.results.task_folder import TaskState, now_iso, read_status, record_invalid_task, write_json_atomic
from osworld_harness.results.task_scope import ids_digest, task_names

from .backend import Backend
from .breaker import FatalErrorBreaker
from .episode import call_problems
from .events import Note, Planned, Reporter
from .plan import Plan, RunSummary
from .plan import PlannedTask as PlannedTask  # re-exported
from .plan import plan_tasks as plan_tasks
from .preview import RunPreview, desktop_facts, preview_run
from .scheduler import run_tasks
from .worker_pool import LocalBackend as LocalBackend  # re-exported: the library's backends
from .worker_pool import ThreadBackend as ThreadBackend


def environment_versions(provider: str) -> dict[str, Any]:
    """What args.json records the run ran with: this harness, and what the provider's desktops run (`apps`,
    and `desktop_system`, the system they boot from, which `summarize` names later)."""
    versions: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform()}
    try:
        versions["osworld"] = metadata.version("osworld")
    except metadata.PackageNotFoundError:
        versions["osworld"] = "unknown"
    versions.update(desktop_facts(provider))
    # compare_pdfs gives OSWorld's scores on every PDF only with PyMuPDF (the optional `pdf` extra)
    versions["pdf_text"] = pdf_text_engine()
    source = Path(desktop_env.__file__).resolve().parents[1]
    try:
        commit = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10)
        if commit.returncode == 0:
            versions["git_commit"] = commit.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return versions


def check_writable(folder: Path) -> None:
    """Refuses a result folder that cannot be made or written, before anything runs."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".osworld-write-check-"):
            pass
    except OSError as e:
        blocker = next((p for p in (folder, *folder.parents) if p.exists()), folder)
        where = "" if blocker == folder else f" ({blocker} is in the way)" if not blocker.is_dir() else ""
        raise RunOptionError("--result-dir", f"cannot write results to {folder}: {e.strerror or e}{where}") from None


def check_resume(config: RunConfig) -> list[tuple[str, Any, Any]]:
    """Refuses (ResumeMismatch) to run into a folder whose results were made with other settings, unless
    `force`; returns the differences it was forced past."""
    try:
        differences = recorded_differences(config)
    except SettingsMismatch as e:
        raise RunOptionError("--result-dir", str(e)) from None
    if differences and not config.force:
        raise ResumeMismatch(config.layout.model_dir, differences)
    return differences


SECRET_ARGS = frozenset({"api_key", "grounder_api_key"})


def write_args(config: RunConfig, forced: Sequence[tuple[str, Any, Any]] = (), plan: Plan | None = None,
               facts: dict[str, Any] | None = None, versions: dict[str, Any] | None = None) -> None:
    """args.json: this run's options on top (as readers expect), and every run's in `runs`; with them
    what reproducing the run needs: the command, the model's price and its date, the task-set hash, and
    what its plan found (`plan`: what the tasks need, the budgets), which `summarize` judges it by.
    `versions`: environment_versions(), when the caller has them."""
    config = config.resolved()
    model = config.layout.model
    options = asdict(config)
    # A key given as --agent-arg is where the model is served, not a setting: it stays out of the file.
    options["agent_args"] = {k: "<not recorded>" if k in SECRET_ARGS else v for k, v in config.agent_args.items()}
    run: dict[str, Any] = {"config": options, "versions": versions or environment_versions(config.provider),
                           "written": now_iso(), "reproduce": reproduce_command(options)}
    try:
        price = price_for(model)
        run["pricing"] = price.record(model) if price else None
    except PriceTableError as e:  # the agent's own cost figures will say the same; the run is not refused here
        run["pricing"] = {"model": model, "error": str(e)}
    if plan is not None:
        run["task_set"] = {"tasks": len(plan.task_files), "hash": task_set_digest(
            {pair: [sha] for pair, sha in plan.task_files.items()}).digest, "ids": task_names(plan.selected)}
        if config.shard or config.limit:  # a part of a selection: which, and of what (shards.py combines them)
            run["part"] = {"smoke_run": config.limit is not None, "limit": config.limit,
                           "shard": list(config.shard) if config.shard else None, "of_tasks": len(plan.selection),
                           "selection_hash": ids_digest(plan.selection)}
    if facts is not None:
        run["plan"] = facts
    if forced:
        run["forced"] = [{"setting": name, "recorded": old, "requested": new} for name, old, new in forced]
    runs = runs_recorded(config.layout.model_dir) + [run]
    write_json_atomic(config.layout.model_dir / "args.json", {**run, "runs": runs})


def record_observed(config: RunConfig, ran: list[PlannedTask]) -> None:
    """args.json's latest run gets what its trials were observed to run with
    (osworld_harness.results.reproduce.observed)."""
    path = config.layout.model_dir / "args.json"
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError):
        return  # written at the start of this run: gone or unreadable now is someone else's doing
    statuses = [read_status(config.layout.task_dir(p.domain, p.task_id, p.trial)) for p in ran]
    recorded["observed"] = observed(s for s in statuses if s is not None)
    if isinstance(recorded.get("runs"), list) and recorded["runs"]:
        recorded["runs"][-1]["observed"] = recorded["observed"]
    write_json_atomic(path, recorded)


def make_backend(config: RunConfig) -> Backend:
    if config.backend == "ray":
        from .ray_backend import RayBackend

        return RayBackend(config)
    return LocalBackend(config)


def check_agent_class(config: RunConfig) -> None:
    """Finds the agent class: a typo in --agent, a reset() or predict() the episode cannot call as it does, an
    option it would ignore, or an --agent-arg its constructor does not take (unless it takes **kwargs, which
    then judges them) fails before planning."""
    try:
        agent_class = load_agent_class(config.agent, config.agent_python)
    except AgentLoadError as e:
        raise RunOptionError("--agent", str(e)) from e
    problems = call_problems(agent_class)
    if problems:
        raise RunOptionError("--agent", f"agent {config.agent!r} does not fit how a run calls it: "
                             + "; ".join(problems))
    if config.screenshot_scale not in (None, 1.0) and not accepts_argument(agent_class, "screenshot_scale"):
        raise RunOptionError("--screenshot-scale", f"agent {config.agent!r} does not take screenshot_scale, so "
                             f"{config.screenshot_scale:g} would be ignored")
    unknown = [key for key in config.agent_args if not accepts_argument(agent_class, key)]
    if unknown and not takes_any_keyword(agent_class):
        takes = ", ".join(constructor_parameters(agent_class)) or "no arguments"
        raise RunOptionError("--agent-arg", f"agent {config.agent!r} takes no argument {', '.join(map(repr, unknown))} "
                             f"(its constructor takes: {takes})")


def check_agent(config: RunConfig) -> None:
    """Builds the agent once, as each desktop's worker will: a missing API key, a model no client serves or
    an argument the agent refuses fails the run before any desktop starts, instead of once per task.
    The agent built here is dropped; workers build their own."""
    check_agent_class(config)
    try:
        build_agent(config.agent, agent_python=config.agent_python, **config.agent_kwargs())
    except AgentLoadError as e:
        if isinstance(e.__cause__, LLMError):  # the model's client: its key, its name, its SDK
            raise RunOptionError("--model", str(e.__cause__)) from e
        raise RunOptionError("--agent", str(e)) from e


def load_plugins(config: RunConfig) -> None:
    for plugin in config.plugins:  # here too: the plan checks the names they register
        try:
            load_plugin(plugin)
        except PluginError as e:
            raise RunOptionError("--plugin", str(e)) from e


def check_run(config: RunConfig) -> tuple[RunPreview, list[tuple[str, Any, Any]]]:
    """Everything checked before a run spends anything: plugins, the agent's class and arguments, the
    result folder's recorded settings (ResumeMismatch), the plan and what its tasks need; with
    `strict`, a number that would not be comparable with OSWorld's (RunOptionError naming why).
    Returns the preview (its config as the run will use it) and the settings --force mixed."""
    load_plugins(config)
    config = config.resolved()
    check_agent_class(config)
    forced = check_resume(config)
    preview = preview_run(config)
    if config.strict and not preview.verdict.comparable:
        raise RunOptionError("--strict", "the score would not be comparable with OSWorld's leaderboard: "
                             + "; ".join(preview.verdict.reasons))
    return preview, forced


def prefetch_downloads(preview: RunPreview, report: Reporter) -> None:
    """The selected tasks' downloads that are not in the cache, fetched now (each failure said; the task
    then tries again during its setup, and is an error if that fails too)."""
    if not preview.missing_files:
        return
    config = preview.config
    task_set = load_task_set(config.tasks)
    pairs = list(dict.fromkeys((f.domain, f.task_id) for f in preview.missing_files))
    report(Note(f"fetching {len(preview.missing_files)} file(s) of {len(pairs)} task(s) into {config.cache_dir} "
                "before the first desktop starts"))
    fetched = prefetch((task_set.load(*pair, check_paths=False) for pair in pairs), config.cache_dir)
    for outcome in fetched.failed:
        report(Note(f"could not fetch {outcome.file.url} ({outcome.file.domain}/{outcome.file.task_id}): "
                    f"{outcome.message}"))
    report(Note(f"fetched {fetched.count('fetched') + fetched.count('copied')} file(s), "
                f"{len(fetched.failed)} failed"))


def run_benchmark(config: RunConfig, report: Reporter = lambda event: None,
                  backend: Backend | None = None) -> RunSummary:
    """Runs the selected tasks; `report` receives the run's events (osworld_harness.execution.events) for a progress
    display.
    `backend` runs them (default: worker processes, or Ray with config.backend "ray"); a Python caller
    with its own environments passes ThreadBackend.with_env_factory(config, make_env)."""
    preview, forced = check_run(config)
    config, plan = preview.config, preview.plan
    to_run, skipped = plan.to_run, plan.skipped
    if to_run:  # nothing to run needs no agent: a finished run re-read without its API key is fine
        check_agent(config)
    check_writable(config.layout.model_dir)
    summary = RunSummary(planned=len(to_run), skipped_done=sum(p.state is TaskState.DONE for p in skipped),
                         skipped_errors=sum(p.state is TaskState.ERROR for p in skipped), invalid=plan.invalid,
                         breaker=FatalErrorBreaker(config.stop_after_fatal))
    report(Planned(to_run, skipped, plan.invalid))
    for warning in preview.warnings():
        report(Note(f"warning: {warning}"))
    versions = environment_versions(config.provider)
    for line in preview.verdict_with(versions).lines():
        report(Note(line))
    if not to_run:
        record_start(config, forced, plan, preview.facts, versions)
        return summary
    if config.prefetch:
        prefetch_downloads(preview, report)
    prepare_desktops(config, to_run)
    backend = backend or make_backend(config)
    workers = min(config.num_envs, len(to_run))
    backend.start(workers, report)  # first: one that cannot start leaves no trace
    try:
        record_start(config, forced, plan, preview.facts, versions)
    except BaseException:
        backend.stop(clean=False)
        raise
    run_tasks(to_run, config.layout, backend, summary, report, workers)
    record_observed(config, to_run)
    return summary


def prepare_desktops(config: RunConfig, to_run: list[PlannedTask]) -> None:
    """What the run's provider builds for the tasks to run before any desktop starts."""
    task_set = load_task_set(config.tasks)
    prepare_for(config.provider, [task_set.load(p.domain, p.task_id, check_paths=False).config for p in to_run])


def record_start(config: RunConfig, forced: list[tuple[str, Any, Any]], plan: Plan,
                 facts: dict[str, Any] | None = None, versions: dict[str, Any] | None = None) -> None:
    """What a run that starts writes before its first task: args.json and the error records of the
    tasks the plan refused."""
    write_args(config, forced, plan, facts, versions)
    for planned in plan.invalid:
        record_invalid_task(config.layout.task_dir(planned.domain, planned.task_id, planned.trial), planned.task_id,
                            [problem.to_dict() for problem in planned.problems], planned.error, planned.trial)
