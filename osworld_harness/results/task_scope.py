"""Which tasks a run, and a result folder, is over: the part of a selection `--shard` and `--limit` take, what
args.json records of it, and the folders of a result folder that are not in it.

A run records the tasks it selected in args.json (`task_set.ids`, after --shard and --limit; a shard or smoke
run also records the selection it is a part of, `part`). A result folder's task set is the union of its runs'
(they share their settings, settings.py), and its score is over that set only: a task folder of another run
(copied in, or left by a run of another task set) is listed apart and enters no figure. A run recorded before
the ids were (older args.json) is re-selected from the meta file it names, when that file is still there;
otherwise the folder's task set is not known and every task folder counts, as it did.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .settings import SettingsMismatch, read_args
from .task_folder import TaskRecord, find_task_folders, split_trial

TaskKey = tuple[str, str]   # (domain, task id)
SHOWN = 10  # tasks named in a line before "and N more"


def narrowed(selection: Sequence[TaskKey], shard: Sequence[int] | None, limit: int | None) -> list[TaskKey]:
    """The part of the selection (its order kept) a run is over: shard (I, N) takes every N-th task of the
    selection sorted by (domain, id), starting at the I-th, so the N shards are disjoint and cover it whatever
    the meta file's order; then limit takes the first N of what is left."""
    part = list(selection)
    if shard:
        index, count = shard
        taken = set(sorted(part)[index - 1::count])
        part = [pair for pair in part if pair in taken]
    return part[:limit] if limit else part


def ids_digest(pairs: Iterable[TaskKey]) -> str:
    """A short hash of which tasks (domain/id) a selection holds, whatever their order."""
    return hashlib.sha256("\n".join(sorted(f"{d}/{t}" for d, t in set(pairs))).encode("utf-8")).hexdigest()[:8]


def task_names(pairs: Iterable[TaskKey]) -> list[str]:
    return [f"{d}/{t}" for d, t in pairs]


def named(pairs: Sequence[TaskKey]) -> str:
    names = task_names(sorted(pairs)[:SHOWN])
    return ", ".join(names) + (f" and {len(pairs) - SHOWN} more" if len(pairs) > SHOWN else "")


def _key(name: Any) -> TaskKey | None:
    domain, sep, task_id = name.partition("/") if isinstance(name, str) else ("", "", "")
    return (domain, task_id) if sep and domain and task_id else None


def recorded_runs(args: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The runs args.json records (each with its `config`), oldest first; none for OSWorld's args.json."""
    args = args or {}
    runs = [r for r in args.get("runs") or [] if isinstance(r, dict) and isinstance(r.get("config"), dict)]
    if not runs and isinstance(args.get("config"), dict):
        runs = [dict(args)]
    return runs


def run_tasks(run: Mapping[str, Any]) -> frozenset[TaskKey] | None:
    """The tasks one recorded run was over: its `task_set.ids`, else (an older args.json) its meta file
    re-selected with its options, else None (not known)."""
    task_set = run.get("task_set")
    ids = task_set.get("ids") if isinstance(task_set, dict) else None
    if isinstance(ids, list):
        keys = [_key(name) for name in ids]
        return frozenset(k for k in keys if k is not None)
    config = run.get("config")
    return _reselected(config) if isinstance(config, dict) else None


def _reselected(config: Mapping[str, Any]) -> frozenset[TaskKey] | None:
    from desktop_env.tasks import TaskFileError, UnknownSelection, load_task_set  # noqa: PLC0415  (older folders only)

    from .suite import left_out  # noqa: PLC0415

    meta = config.get("tasks")
    if not isinstance(meta, str) or not Path(meta).is_file():
        return None
    try:
        task_set = load_task_set(meta)
        pairs = task_set.select(config.get("domains") or None, config.get("task_ids") or None)
        if config.get("osworld"):
            out = left_out(task_set, pairs)
            pairs = [pair for pair in pairs if pair not in out]
    except (TaskFileError, UnknownSelection, OSError, ValueError):
        return None
    return frozenset(narrowed(list(dict.fromkeys(pairs)), config.get("shard"), config.get("limit")))


def folder_tasks(args: Mapping[str, Any] | None) -> frozenset[TaskKey] | None:
    """A result folder's task set: the union of its runs' (None when a run's is not known, or none is
    recorded: OSWorld's folders)."""
    sets = [run_tasks(run) for run in recorded_runs(args)]
    if not sets or any(s is None for s in sets):
        return None
    return frozenset().union(*[s for s in sets if s is not None])


def covered(runs: Sequence[Mapping[str, Any]]) -> list[bool]:
    """For each run, whether another run of the folder was over all of its tasks (and more, or the same ones
    later): a smoke test or a resumed part of a full run, which says nothing of the folder's task set."""
    sets = [run_tasks(run) for run in runs]
    return [mine is not None and any(other is not None and mine <= other and (mine != other or j > i)
                                     for j, other in enumerate(sets) if j != i)
            for i, mine in enumerate(sets)]


@dataclass
class Scope:
    """What a summary's figures are over. `tasks`: the folder's task set (None: not recorded, every folder
    counts); `strays`: the records of folders not in it, in no figure; for shards combined into one run,
    `shards` (N), the indices `present` and each task's folder (`folders`, its model folder)."""
    tasks: frozenset[TaskKey] | None = None
    strays: list[TaskRecord] = field(default_factory=list)
    shards: int | None = None
    present: list[int] = field(default_factory=list)
    folders: dict[TaskKey, Path] = field(default_factory=dict)

    @property
    def missing_shards(self) -> list[int]:
        return [i for i in range(1, (self.shards or 0) + 1) if i not in self.present]


def scoped(records: list[TaskRecord], args: Mapping[str, Any] | None) -> tuple[list[TaskRecord], Scope]:
    """The records of the folder's task set, and its Scope (the other records as strays)."""
    tasks = folder_tasks(args)
    if tasks is None:
        return records, Scope()
    inside = [r for r in records if (r.domain, r.task_id) in tasks]
    return inside, Scope(tasks, [r for r in records if (r.domain, r.task_id) not in tasks])


def missing_tasks(tasks: frozenset[TaskKey] | None, records: Iterable[TaskRecord]) -> list[TaskKey]:
    """The tasks of the set that have no folder at all (never started)."""
    present = {(r.domain, r.task_id) for r in records}
    return sorted(pair for pair in tasks or () if pair not in present)


def stray_line(strays: Sequence[TaskRecord]) -> str | None:
    pairs = list(dict.fromkeys((r.domain, r.task_id) for r in strays))
    if not pairs:
        return None
    return (f"{len(pairs)} task folder(s) not in this run's task set, left out of every figure (another run's, or "
            f"copied in): {named(pairs)}")


@dataclass
class FolderHoldings:
    """What a result folder holds before a run into it (the dry run says it): the run's own tasks already there
    (`done`, `errored`, `cut_off`: resumed), the folders of tasks of other task sets recorded there, and those in
    no recorded task set (`strays`; every other folder when the folder's task set is not recorded)."""
    folder: Path
    done: int = 0
    errored: int = 0
    cut_off: int = 0
    other_sets: list[TaskKey] = field(default_factory=list)
    strays: list[TaskKey] = field(default_factory=list)
    recorded: bool = True

    def lines(self) -> list[str]:
        ours = self.done + self.errored + self.cut_off
        if not ours and not self.other_sets and not self.strays:
            return [f"results folder: {self.folder} holds no results yet"]
        lines = [f"results folder: {self.folder} holds {ours} task(s) of this run's task set"
                 + (f" (to be resumed: {self.done} done, {self.errored} errored, {self.cut_off} cut off)"
                    if ours else "")]
        if self.other_sets:
            lines.append(f"  {len(self.other_sets)} task folder(s) of other task sets run into it (its runs' "
                         f"summaries count them; this run's selection does not): {named(self.other_sets)}")
        if self.strays:
            what = "in no task set its args.json records (strays, left out of its score)" if self.recorded else \
                "not in this run's task set (args.json records no task set for them)"
            lines.append(f"  {len(self.strays)} task folder(s) {what}: {named(self.strays)}")
        return lines


def folder_holdings(model_dir: Path, selected: Iterable[TaskKey], states: Mapping[TaskKey, Sequence[str]]
                    ) -> FolderHoldings:
    """What `model_dir` holds against a run over `selected` (`states`: each selected task's trials' states,
    TaskState values, as the plan found them)."""
    holdings = FolderHoldings(model_dir)
    for each in states.values():
        holdings.done += bool(each) and all(s == "done" for s in each)
        holdings.errored += "error" in each and "interrupted" not in each
        holdings.cut_off += "interrupted" in each
    try:
        args = read_args(model_dir)
    except SettingsMismatch:
        args = None
    recorded = folder_tasks(args if isinstance(args, dict) else None)
    holdings.recorded = recorded is not None
    mine = set(selected)
    found = dict.fromkeys(split_trial(p)[0] for p in find_task_folders(model_dir)) if model_dir.is_dir() else {}
    for task_dir in found:
        pair = (task_dir.parent.name, task_dir.name)
        if pair in mine:
            continue
        (holdings.other_sets if recorded is not None and pair in recorded else holdings.strays).append(pair)
    holdings.other_sets = sorted(set(holdings.other_sets))
    holdings.strays = sorted(set(holdings.strays))
    return holdings
