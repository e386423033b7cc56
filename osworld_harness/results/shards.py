"""The shards of one run (`osworld run --shard I/N`), summarized as that run: one score over all their tasks.

Each shard runs into a folder of its own (MODEL-shard-I-of-N, beside where the whole run would go), so shards
run on several machines, or at once on one, never write the same args.json, and their folders can be copied
into one results folder side by side. `summarize` given the shards' folders (or a folder holding them) puts
the shards of one run (the same action space, observation, model and N) together: their records, their
args.json runs (each with its shard taken off, so the verdict judges the whole), and which shards are there.
A missing shard makes the score incomparable, named; shards whose configurations differ (any setting, the
trials, --limit, or the selection they are parts of), or one shard given twice, are refused (ShardMismatch).
"""
from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from .config import RunConfig, flag
from .settings import SETTING_FIELDS, settings_of
from .task_folder import TaskRecord
from .task_scope import Scope, TaskKey, recorded_runs


class FolderRun(Protocol):
    """What this module reads of a run found in a folder (summary.RunResults, whose runs_under combines them)."""
    __dataclass_fields__: ClassVar[dict[str, Any]]
    label: str
    path: Path
    records: list[TaskRecord]
    step_budgets: list[int]
    args: dict[str, Any] | None
    scope: Scope


RunResults = TypeVar("RunResults", bound=FolderRun)

SHARD_SUFFIX = re.compile(r"-shard-\d+-of-\d+")


class ShardMismatch(ValueError):
    """Shards that cannot be one run's: other configurations, or one shard found twice; the message names them."""


def run_shard(run: FolderRun) -> tuple[int, int] | None:
    """(I, N) of a folder made by `run --shard I/N` (its latest run's), else None."""
    config = (run.args or {}).get("config")
    shard = config.get("shard") if isinstance(config, dict) else None
    if isinstance(shard, list) and len(shard) == 2 and all(isinstance(n, int) for n in shard):
        return shard[0], shard[1]
    return None


def _what_must_agree(run: FolderRun) -> dict[str, Any]:
    config = (run.args or {}).get("config") or {}
    defaults = settings_of(RunConfig())
    values = settings_of({name: config.get(name, defaults[name]) for name in SETTING_FIELDS})
    part = (run.args or {}).get("part")
    values.update(trials=config.get("trials", 1), limit=config.get("limit"),
                  selection=part.get("selection_hash") if isinstance(part, dict) else None)
    return values


def _name(run: FolderRun) -> str:
    shard = run_shard(run)
    return f"shard {shard[0]}/{shard[1]} ({run.path})" if shard else str(run.path)


def check_one_run(group: Sequence[FolderRun]) -> None:
    """ShardMismatch unless the shards are parts of one run: each index once, the same configuration."""
    seen: dict[int, FolderRun] = {}
    for run in group:
        index = _shard(run)[0]
        if index in seen:
            raise ShardMismatch(f"shard {index} of {group[0].label} is given twice: {seen[index].path} and "
                                f"{run.path}; give each shard's folder once")
        seen[index] = run
    first = _what_must_agree(group[0])
    for run in group[1:]:
        other = _what_must_agree(run)
        differ = [name for name in first if first[name] != other[name]]
        if differ:
            what = "; ".join(f"{'the selection they are parts of' if name == 'selection' else flag(name)} "
                             f"{first[name]!r} against {other[name]!r}" for name in differ)
            raise ShardMismatch(f"cannot combine {_name(group[0])} and {_name(run)} into one run: they were made "
                                f"with other configurations ({what}); summarize them apart")


def _shard(run: FolderRun) -> tuple[int, int]:
    """(I, N) of a run grouped as a shard."""
    return run_shard(run) or (0, 0)


def _without_shard(record: Mapping[str, Any]) -> dict[str, Any]:
    copied = copy.deepcopy(dict(record))
    copied["config"] = {**copied["config"], "shard": None}
    return copied


def combined(group: Sequence[RunResults]) -> RunResults:
    """The shards of one run as that run."""
    check_one_run(group)
    group = sorted(group, key=_shard)
    count = _shard(group[0])[1]
    last = group[-1]
    runs = [_without_shard(record) for run in group for record in recorded_runs(run.args)]
    args = {**copy.deepcopy(last.args or {}), "config": runs[-1]["config"], "runs": runs}
    tasks: frozenset[TaskKey] | None = frozenset()
    folders: dict[TaskKey, Path] = {}
    for run in group:
        tasks = None if tasks is None or run.scope.tasks is None else tasks | run.scope.tasks
        folders.update({(r.domain, r.task_id): run.path for r in run.records + run.scope.strays})
    scope = Scope(tasks, [r for run in group for r in run.scope.strays], count,
                  sorted(_shard(run)[0] for run in group), folders)
    path = last.path.parent / SHARD_SUFFIX.sub("", last.path.name)  # where the whole run's folder would be
    return dataclasses.replace(last, label=SHARD_SUFFIX.sub("", last.label), path=path,
                               records=[r for run in group for r in run.records],
                               step_budgets=list(dict.fromkeys(b for run in group for b in run.step_budgets)),
                               args=args, scope=scope)


def combine_shards(runs: Sequence[RunResults]) -> list[RunResults]:
    """The runs, with the shards of each run combined into one (in the place of its first shard)."""
    groups: dict[tuple[Any, ...], list[RunResults]] = {}
    order: list[Any] = []
    for run in runs:
        shard = run_shard(run)
        if shard is None:
            order.append(run)
            continue
        key = (*run.path.parts[-3:-1], SHARD_SUFFIX.sub("", run.path.name), shard[1])
        if key not in groups:
            order.append(key)
        groups.setdefault(key, []).append(run)
    return [combined(groups[item]) if isinstance(item, tuple) else item for item in order]


def shard_lines(run: FolderRun) -> list[str]:
    """What a combined run is made of, for its summary."""
    scope = run.scope
    if not scope.shards:
        return []
    parts = ", ".join(f"{i}/{scope.shards}" for i in scope.present)
    missing = scope.missing_shards
    return [f"shards: {len(scope.present)} of {scope.shards} combined ({parts})"
            + (f"; missing: {', '.join(f'{i}/{scope.shards}' for i in missing)}" if missing else "; all present")]
