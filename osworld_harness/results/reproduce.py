"""What a published score needs to be reproduced: the command that makes the run again, and what the
run was observed to use (the sampling settings the model requests carried, the model ids the servers
answered with, the desktop's screen size), besides the options and versions args.json keeps.

args.json gets the command, the price table's date and the task-set hash when a run starts, and what
was observed when it ends (`observed`); status.json keeps each trial's own (`model_calls`,
`screen_size`), so a run killed before its end still says it. `summarize` prints the command.
"""
from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from .config import RunConfig, flag, options_affecting_results
from .options import Affects, described
from .settings import TRANSPORT_ARGS
from .summary import RunResults, scored_with_evaluator_fixes
from .task_folder import TaskStatus, read_status

# On the command line: what the run is, always; then what changes its results, where it differs from the default.
ALWAYS = tuple(name for name, info in described(RunConfig).items() if info.always)
SCORING = tuple(name for name in options_affecting_results(Affects.SETTING, Affects.CONDITION) if name not in ALWAYS)
SECRET_WORDS = ("key", "token", "password", "secret")


def _is_secret(name: str) -> bool:
    return name in TRANSPORT_ARGS or any(word in name.lower() for word in SECRET_WORDS)


def _value(name: str, value: Any) -> str:
    spell = described(RunConfig)[name].spell  # as the command line writes it: a screen size is WIDTHxHEIGHT
    if spell is not None:
        return spell(value)
    if isinstance(value, float) and value.is_integer():
        return f"{value:g}"
    return str(value)


def reproduce_command(config: Mapping[str, Any]) -> str:
    """`osworld run ...` with the recorded options (`config`: a RunConfig as args.json holds it) that
    decide what the run measures. Where it ran (result folder, desktops, Ray), and where its model is
    served and with what key (transport arguments: yours to give), are left out."""
    defaults = RunConfig().__dict__
    words = ["osworld", "run"]
    if config.get("osworld"):  # its tasks are the checkout's OSWorld-Verified selection
        words += ["--osworld", str(config["osworld"])]
    elif config.get("tasks"):
        words += ["--tasks", str(config["tasks"])]
    words += [part for domain in config.get("domains") or [] for part in ("--domain", domain)]
    words += [part for task_id in config.get("task_ids") or [] for part in ("--task-id", task_id)]
    shard, limit = config.get("shard"), config.get("limit")
    words += ["--shard", f"{shard[0]}/{shard[1]}"] if shard else []
    words += ["--limit", str(limit)] if limit else []
    own = config.get("agent_defaults") or []  # the agent's own declared values: it takes them again
    for name in (*ALWAYS, *SCORING):
        value = config.get(name, defaults[name])
        if name not in ALWAYS and (name in own or value == defaults[name] or (
                name == "screen_size" and list(value) == list(defaults[name]))):
            continue
        if name == "agent_args":
            words += [part for key, arg in sorted(value.items()) if not _is_secret(key)
                      for part in ("--agent-arg", f"{key}={arg}")]
        elif name == "plugins":
            words += [part for plugin in value for part in ("--plugin", plugin)]
        elif name == "network":
            words.append("--network" if value else "--no-network")
        elif name == "evaluator_fixes":
            words.append("--evaluator-fixes")  # a flag: only ever given to turn it on
        elif value is not None:
            words += [flag(name), _value(name, value)]
    return shlex.join(words)


def observed(statuses: Iterable[TaskStatus]) -> dict[str, Any]:
    """What the trials' records say they ran with: each distinct set of sampling settings sent, model id
    served and screen size, in the order first seen, and how many model calls they made."""
    sent: list[Any] = []
    served: list[str] = []
    screens: list[list[int]] = []
    calls = 0
    for status in statuses:
        record = status.model_calls or {}
        calls += record.get("calls", 0) if isinstance(record.get("calls"), int) else 0
        sent += [s for s in record.get("sent") or [] if s not in sent]
        served += [s for s in record.get("served") or [] if isinstance(s, str) and s not in served]
        if status.screen_size and status.screen_size not in screens:
            screens.append(status.screen_size)
    return {"model_calls": calls, "sampling_sent": sent, "models_served": served, "screen_sizes": screens}


def reproduce_line(run: RunResults) -> str | None:
    """The command that makes the run's latest options again (None for a folder without our args.json)."""
    config = (run.args or {}).get("config")
    return reproduce_command(config) if isinstance(config, dict) else None


def reproducibility(run: RunResults) -> dict[str, Any]:
    """The run's reproducibility record: the command, the versions and prices of its latest run, and what
    its trials' records say they ran with."""
    args = run.args or {}
    return {"command": reproduce_line(run), "versions": args.get("versions"), "pricing": args.get("pricing"),
            "evaluator_fixes": scored_with_evaluator_fixes(run),
            "task_set": args.get("task_set"),
            "observed": observed(s for s in (read_status(run.folder(r)) for r in run.records) if s is not None)}
