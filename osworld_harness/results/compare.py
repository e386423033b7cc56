"""`osworld compare RESULTS_A RESULTS_B`: two runs over the same tasks, paired task by task. Each side is one run,
given as its folder or as its shards' folders (`run --shard I/N`, combined as `summarize` combines them).

What differs between two runs' scores is partly which tasks each got right by chance; pairing the
tasks takes the tasks' own difficulty out of the comparison, so a smaller difference is seen. The
difference of the mean scores (errors as 0, as on the leaderboard) gets a paired 95% interval
(Newcombe's for binary scores with one trial per task, else the paired bootstrap) and a test
(osworld_harness/results/stats.py: the exact McNemar test when both runs have one trial per task, else the paired
bootstrap's interval), overall, per paper category and per domain, with the tasks each run won.

Two runs over different tasks are not compared: the difference (tasks only one run has, tasks whose
file changed between the runs) is named, and `common=True` compares the tasks both ran with the same
file, saying what it left out.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import stats
from .shards import shard_lines
from .summary import (
    CATEGORIES,
    GroupStats,
    RunResults,
    TaskKey,
    distinct_labels,
    group_stats,
    pct,
    runs_under,
    scores_by_task,
    usd,
)
from .task_folder import TaskRecord

SHOWN = 5  # tasks named in a message before "and N more"


class CompareError(ValueError):
    """Two result folders that cannot be compared as asked; the message names what differs."""


def _named(keys: Sequence[TaskKey]) -> str:
    names = [f"{domain}/{task_id}" for domain, task_id in keys[:SHOWN]]
    return ", ".join(names) + (f" and {len(keys) - SHOWN} more" if len(keys) > SHOWN else "")


def _task_files(records: Sequence[TaskRecord]) -> dict[TaskKey, set[str]]:
    files: dict[TaskKey, set[str]] = {}
    for record in records:
        files.setdefault((record.domain, record.task_id), set()).update(
            [record.task_sha256] if record.task_sha256 else [])
    return files


@dataclass(frozen=True)
class TaskSetDifference:
    """How two runs' task sets differ: tasks only one run finished, tasks both ran from different task
    files, and how many shared tasks cannot be checked (no task file recorded in one run or both)."""
    only_a: list[TaskKey]
    only_b: list[TaskKey]
    changed: list[TaskKey]
    unchecked: int

    @property
    def differs(self) -> bool:
        return bool(self.only_a or self.only_b or self.changed)

    def describe(self, a: str, b: str) -> str:
        parts = []
        if self.only_a:
            parts.append(f"{len(self.only_a)} task(s) only in {a}: {_named(self.only_a)}")
        if self.only_b:
            parts.append(f"{len(self.only_b)} task(s) only in {b}: {_named(self.only_b)}")
        if self.changed:
            parts.append(f"{len(self.changed)} task(s) ran from different task files: {_named(self.changed)}")
        return "; ".join(parts)


def task_set_difference(a: RunResults, b: RunResults) -> TaskSetDifference:
    scored_a, scored_b = scores_by_task(a.records), scores_by_task(b.records)
    files_a, files_b = _task_files(a.records), _task_files(b.records)
    shared = sorted(set(scored_a) & set(scored_b))
    return TaskSetDifference(
        only_a=sorted(set(scored_a) - set(scored_b)), only_b=sorted(set(scored_b) - set(scored_a)),
        changed=[k for k in shared if files_a[k] and files_b[k] and files_a[k] != files_b[k]],
        unchecked=sum(not (files_a[k] and files_b[k]) for k in shared))


@dataclass(frozen=True)
class GroupComparison:
    name: str
    comparison: stats.Comparison[TaskKey]


@dataclass(frozen=True)
class RunComparison:
    """Run A against run B over `tasks` (what they share; all of both unless `common` left some out).
    `a_stats` and `b_stats` summarize each run over those tasks (trials, errors, cost)."""
    a: RunResults
    b: RunResults
    tasks: list[TaskKey]
    difference: TaskSetDifference
    overall: stats.Comparison[TaskKey]
    groups: list[GroupComparison]
    a_stats: GroupStats
    b_stats: GroupStats


def pick_run(paths: str | Path | Sequence[str | Path], rescored: bool = False,
             labels: Mapping[str, str] | None = None) -> RunResults:
    """The one run under `paths` (a folder, or several: the shards of one run are combined into it, as
    `summarize` does; `rescored`: with the scores `osworld rescore` wrote; `labels`: NAME by PATH, as --label
    gives them); folders with none or several runs, or shards that are not one run's, are refused, naming them."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    where = ", ".join(map(str, paths))
    try:
        runs = runs_under(paths, {path: name for path, name in (labels or {}).items()
                                  if path in {str(p) for p in paths}}, rescored)
    except ValueError as e:  # ShardMismatch among them
        raise CompareError(str(e)) from None
    if not runs:
        raise CompareError(f"no task results under {where}")
    if len(runs) > 1:
        raise CompareError(f"{where} {'holds' if len(paths) == 1 else 'hold'} {len(runs)} runs "
                           f"({', '.join(r.label for r in runs)}): give the folder of one "
                           "(<result-dir>/<action_space>/<obs>/<model>), or the folders of its shards")
    return runs[0]


def compare_runs(a: RunResults, b: RunResults, common: bool = False) -> RunComparison:
    """A against B, paired by task. Refuses (CompareError) runs whose task sets differ, unless
    `common`: then only the tasks both ran from the same task file are compared."""
    distinct_labels([a, b])
    difference = task_set_difference(a, b)
    if difference.differs and not common:
        lacking = [f"{name} lacks shard(s) {', '.join(f'{i}/{run.scope.shards}' for i in run.scope.missing_shards)} "
                   "of its run" for name, run in (("A", a), ("B", b)) if run.scope.missing_shards]
        why = f" ({'; '.join(lacking)}: give each shard's folder)" if lacking else ""
        raise CompareError(f"{a.label} and {b.label} are not over the same tasks: "
                           f"{difference.describe('A', 'B')}{why}. Compare only what they share with --common")
    scored_a, scored_b = scores_by_task(a.records), scores_by_task(b.records)
    tasks = sorted(set(scored_a) & set(scored_b) - set(difference.changed))
    if not tasks:
        raise CompareError(f"{a.label} and {b.label} have no finished task in common")
    keep = set(tasks)

    def within(keys: Sequence[TaskKey]) -> tuple[dict[TaskKey, list[float]], dict[TaskKey, list[float]]]:
        return {k: scored_a[k] for k in keys}, {k: scored_b[k] for k in keys}

    groups = []
    domains = sorted({domain for domain, _ in tasks})
    for name, members in [*((d, (d,)) for d in domains), *CATEGORIES.items()]:
        keys = [k for k in tasks if k[0] in members]
        if keys:
            groups.append(GroupComparison(name, stats.compare(*within(keys))))
    return RunComparison(
        a=a, b=b, tasks=tasks, difference=difference, overall=stats.compare(*within(tasks)), groups=groups,
        a_stats=group_stats("A", [r for r in a.records if (r.domain, r.task_id) in keep]),
        b_stats=group_stats("B", [r for r in b.records if (r.domain, r.task_id) in keep]))


# -- as text ----------------------------------------------------------------------------------------

def points(value: float) -> str:
    return f"{100 * value:+.1f}"


def verdict(comparison: stats.Comparison[TaskKey]) -> str:
    if not comparison.significant:
        return "no significant difference"
    return "A better" if comparison.difference > 0 else "B better"


def test_text(comparison: stats.Comparison[TaskKey]) -> str:
    """Which test gives the verdict: with one trial per task McNemar's exact test on the tasks only one run
    solved; with more, the paired bootstrap's interval."""
    if comparison.p_value is not None:
        return (f"exact McNemar p={comparison.p_value:.3g} on the tasks only one run solved (A {comparison.a_only}, "
                f"B {comparison.b_only}), which decides")
    return "paired bootstrap over tasks, whose 95% CI excluding 0 decides"


GROUP_COLUMNS = ("group", "tasks", "A", "B", "A−B points", "95% CI", "p", "verdict")


def group_rows(result: RunComparison) -> list[list[str]]:
    rows = []
    for name, comparison in [*((g.name, g.comparison) for g in result.groups), ("Overall", result.overall)]:
        interval = comparison.interval
        rows.append([name, str(comparison.tasks), pct(comparison.mean_a), pct(comparison.mean_b),
                     points(comparison.difference),
                     "-" if interval is None else f"{points(interval.low)} to {points(interval.high)}",
                     "-" if comparison.p_value is None else f"{comparison.p_value:.3g}", verdict(comparison)])
    return rows


def headline(result: RunComparison) -> list[str]:
    """The lines above the table: what was compared, over what, and the overall verdict."""
    overall, a, b = result.overall, result.a_stats, result.b_stats
    budgets = {run.label: ", ".join(map(str, run.step_budgets)) or "not recorded" for run in (result.a, result.b)}
    lines = [f"{name}: {run.label} ({run.path})" + "".join(f"; {line}" for line in shard_lines(run))
             for name, run in (("A", result.a), ("B", result.b))]
    lines += [
             f"{len(result.tasks)} task(s) (task set {a.task_set}); trials per task A {a.k}, B {b.k}; "
             f"step budget A {budgets[result.a.label]}, B {budgets[result.b.label]}; "
             f"errors (counted as 0) A {a.errors}, B {b.errors}"]
    if result.difference.differs:
        lines.append(f"left out: {result.difference.describe('A', 'B')}")
    if result.difference.unchecked:
        lines.append(f"{result.difference.unchecked} task(s) have no task hash recorded in one run or both, so "
                     "whether both ran the same task file could not be checked")
    interval = overall.interval
    ci = "" if interval is None else f", 95% CI {points(interval.low)} to {points(interval.high)} ({overall.method})"
    lines.append(f"mean score (errors as 0): A {pct(overall.mean_a)}, B {pct(overall.mean_b)}; "
                 f"A−B {points(overall.difference)} points{ci}; {test_text(overall)}: {verdict(overall)}")
    for name, stats_row in (("A", a), ("B", b)):
        if stats_row.cost_usd is not None:
            lines.append(f"cost {name}: ${usd(stats_row.cost_usd)} in all, ${usd(stats_row.cost_per_task)} per task, "
                         f"${usd(stats_row.cost_per_success)} per success")
    return lines


def won_and_lost(result: RunComparison) -> list[tuple[str, list[str]]]:
    name = "{}/{}".format
    return [(f"A scored higher ({len(result.overall.won)})", [name(*k) for k in result.overall.won]),
            (f"B scored higher ({len(result.overall.lost)})", [name(*k) for k in result.overall.lost])]


def to_markdown(result: RunComparison) -> str:
    out = [f"### compare: {result.a.label} (A) against {result.b.label} (B)\n"]
    out += [f"- {line}" for line in headline(result)]
    out += ["", "| " + " | ".join(GROUP_COLUMNS) + " |", "|" + "---|" * len(GROUP_COLUMNS)]
    out += ["| " + " | ".join(cells) + " |" for cells in group_rows(result)]
    for title, names in won_and_lost(result):
        out += ["", f"{title}: {', '.join(names) or 'none'}"]
    return "\n".join(out) + "\n"


def _comparison_json(comparison: stats.Comparison[TaskKey]) -> dict[str, Any]:
    interval = comparison.interval
    return {"tasks": comparison.tasks, "mean_a": comparison.mean_a, "mean_b": comparison.mean_b,
            "difference": comparison.difference, "low": interval.low if interval else None,
            "high": interval.high if interval else None, "interval_method": comparison.method,
            "test": comparison.test, "p_value": comparison.p_value,
            "a_only": comparison.a_only, "b_only": comparison.b_only, "significant": comparison.significant,
            "won": ["/".join(k) for k in comparison.won], "lost": ["/".join(k) for k in comparison.lost]}


def _side_json(run: RunResults, summary: GroupStats) -> dict[str, Any]:
    scope = run.scope
    shards = {"count": scope.shards, "present": scope.present, "missing": scope.missing_shards} \
        if scope.shards else None
    return {"label": run.label, "path": str(run.path), "step_budgets": run.step_budgets, "shards": shards,
            "summary": summary.to_dict()}


def to_json(result: RunComparison) -> str:
    difference = result.difference
    return json.dumps({
        "a": _side_json(result.a, result.a_stats),
        "b": _side_json(result.b, result.b_stats),
        "left_out": {"only_a": ["/".join(k) for k in difference.only_a],
                     "only_b": ["/".join(k) for k in difference.only_b],
                     "changed": ["/".join(k) for k in difference.changed]},
        "unchecked": difference.unchecked,
        "overall": _comparison_json(result.overall),
        "groups": {g.name: _comparison_json(g.comparison) for g in result.groups}}, indent=2)
