"""`osworld summarize`: scores per domain, per paper category and overall, with their uncertainty.

Reads our result folders and OSWorld's (which have only result.txt / traj.jsonl), every trial of
`--trials K` (osworld_harness/results/task_folder.py). The first figure of a group is the leaderboard's: the mean score
over its tasks (each task's trials averaged: pass@1), an error counted as 0, with its 95% interval
(osworld_harness/results/stats.py) and the number of errors beside it, so that a user sees when to --retry-errors;
the same mean with errors left out follows. Beside them: how many tasks and trials, a hash of the
task set (task ids and the task files the trials ran with) and the step budget; with more than one
trial, pass@K, pass^K and the share of tasks that flip between trials; the cost per task and per
success where the agent reported its cost. A trial still marked "running" (its run was cut off) is
counted as incomplete and in no figure. Beside the groups, each trial's status and score (`task_scores`);
`summarize` gives both for each run under some folders (the package's API, docs/API.md).

`failures` lists the trials that scored below 1 with the explanation status.json keeps of their
evaluation (the metric's: the first differing cell, the missing file...), and the trials that
ended in an error with that error; folders written before explanations existed, and OSWorld's,
say "no explanation recorded".
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import stats
from .settings import SettingsMismatch, read_args, recorded_step_budgets
from .shards import combine_shards
from .task_folder import (
    TaskRecord,
    TaskStatus,
    error_text,
    find_task_folders,
    read_status,
    read_task,
    split_trial,
    trial_dir,
)
from .task_scope import Scope, scoped

CATEGORIES = {
    "OS": ("os",),
    "Office": ("libreoffice_calc", "libreoffice_writer", "libreoffice_impress"),
    "Daily": ("chrome", "vlc", "thunderbird"),
    "Professional": ("gimp", "vs_code"),
    "Workflow": ("multi_apps",),
}

TaskKey = tuple[str, str]   # (domain, task id)


@dataclass
class RunResults:
    label: str
    path: Path
    records: list[TaskRecord] = field(default_factory=list)  # one per trial of a task
    step_budgets: list[int] = field(default_factory=list)     # max_steps of the runs made into the folder
    args: dict[str, Any] | None = None                        # args.json as read (ours, OSWorld's or none)
    # the task set the records are of, the folders left out of it, the shards combined (task_scope.py)
    scope: Scope = field(default_factory=Scope)

    def folder(self, record: TaskRecord) -> Path:
        """The folder of the record's trial."""
        root = self.scope.folders.get((record.domain, record.task_id), self.path)
        return trial_dir(root / record.domain / record.task_id, record.trial)


def find_runs(path: str | Path, rescored: bool = False, label: str | None = None) -> list[RunResults]:
    """Every run (action_space/obs_type/model folder) under `path`, which may be any level of the layout.
    With `rescored`, finished tasks carry the scores `osworld rescore` wrote, where it wrote one. A run is
    labelled `label` (with one run under `path`; with several, `label` and each one's own), else with
    the label its args.json records (`osworld run --label`), else action_space/obs_type/model."""
    path = Path(path)
    task_dirs = find_task_folders(path)
    runs: dict[Path, RunResults] = {}
    for task_dir in task_dirs:
        run_dir = split_trial(task_dir)[0].parent.parent
        if run_dir not in runs:
            args = readable_args(run_dir)
            runs[run_dir] = RunResults(label=recorded_label(args) or "/".join(run_dir.parts[-3:]), path=run_dir,
                                       step_budgets=recorded_step_budgets(run_dir), args=args)
        record = read_task(task_dir, rescored=rescored)
        if record is not None:
            runs[run_dir].records.append(record)
    for run in runs.values():  # the score is over the task set args.json records, not every folder there
        run.records, run.scope = scoped(run.records, run.args)
    found = [r for r in runs.values() if r.records or r.scope.strays]
    if label:
        for run in found:
            run.label = label if len(found) == 1 else f"{label}:{'/'.join(run.path.parts[-3:])}"
    return found


def recorded_label(args: dict[str, Any] | None) -> str | None:
    """The label `osworld run --label` recorded in args.json, if any."""
    config = (args or {}).get("config")
    label = config.get("label") if isinstance(config, dict) else None
    return label if isinstance(label, str) and label else None


def distinct_labels(runs: Sequence[RunResults]) -> None:
    """Runs that would stand side by side under one label (one model run twice, into two result folders)
    get the folder that holds their results in front of it: `results-a:pyautogui/screenshot/gpt-4o`
    (its whole path when its name is not enough)."""
    def clashing() -> list[RunResults]:
        counts = Counter(run.label for run in runs)
        return [run for run in runs if counts[run.label] > 1]

    base = {id(run): run.label for run in runs}
    for whole in (False, True):
        for run in clashing():
            root = run.path.parents[2] if len(run.path.parents) > 2 else run.path.parent
            run.label = f"{root if whole else root.name}:{base[id(run)]}"


def parse_labels(values: Sequence[str]) -> dict[str, str]:
    """`NAME=PATH` pairs, by path (ValueError naming the one that is not)."""
    labels: dict[str, str] = {}
    for value in values:
        name, sep, where = value.partition("=")
        if not sep or not name or not where:
            raise ValueError(f"expected NAME=PATH, got {value!r}")
        labels[where] = name
    return labels


def runs_under(paths: Sequence[str | Path], labels: Mapping[str, str] | None = None,
               rescored: bool = False) -> list[RunResults]:
    """The runs under each path, labelled (`labels`: NAME by PATH, as --label gives them), with labels
    that would clash made distinct, and the shards of one run (`run --shard`) combined into it (shards.py;
    ShardMismatch for shards of different configurations)."""
    labels = dict(labels or {})
    unknown = [where for where in labels if where not in {str(p) for p in paths}]
    if unknown:
        raise ValueError(f"--label names {unknown[0]!r}, which is not one of the folders given "
                         f"({', '.join(map(str, paths))})")
    runs = combine_shards([run for path in paths for run in find_runs(path, rescored, labels.get(str(path)))])
    distinct_labels(runs)
    return runs


def readable_args(run_dir: Path) -> dict[str, Any] | None:
    try:
        recorded = read_args(run_dir)
    except SettingsMismatch:  # an args.json that cannot be read takes nothing from the scores
        return None
    return recorded if isinstance(recorded, dict) else None


def price_dates(run: RunResults) -> list[str]:
    """How the costs of the run's runs were priced: each distinct "as of <date> (<source>)"."""
    runs = (run.args or {}).get("runs")
    dates = []
    for recorded in runs if isinstance(runs, list) else []:
        pricing = recorded.get("pricing") if isinstance(recorded, dict) else None
        if isinstance(pricing, dict) and "input_usd_per_1m" in pricing:
            dates.append(f"as of {pricing.get('as_of') or 'an unknown date'} ({pricing.get('source', '?')})")
    return list(dict.fromkeys(dates))


# -- what a group of trials says ------------------------------------------------------------------

def scores_by_task(records: Sequence[TaskRecord], errors_as_zero: bool = True) -> dict[TaskKey, list[float]]:
    """Each task's trial scores, in trial order: an error as 0 (the leaderboard's rule), or left out;
    incomplete trials are in neither."""
    scores: dict[TaskKey, list[float]] = {}
    for record in sorted(records, key=lambda r: (r.domain, r.task_id, r.trial)):
        if record.status == "ok" or (errors_as_zero and record.status == "error"):
            scores.setdefault((record.domain, record.task_id), []).append(record.score or 0.0)
    return scores


@dataclass(frozen=True)
class TaskSetHash:
    """A short hash of which tasks a figure is over: their ids and the task files their trials ran with.
    `unrecorded` tasks had no file recorded (older folders, OSWorld's): only their ids are in it."""
    digest: str
    unrecorded: int = 0

    def __str__(self) -> str:
        return self.digest + ("*" if self.unrecorded else "")


def task_set_digest(files: Mapping[TaskKey, Iterable[str]]) -> TaskSetHash:
    """The hash of tasks (domain, id) and the sha256 of each one's task file (none: not recorded). A run's
    args.json records the one of its selection; summaries compute it from the trials' records."""
    known = {key: sorted(set(shas)) for key, shas in files.items()}
    lines = [f"{domain}/{task_id} {' '.join(shas) or '?'}" for (domain, task_id), shas in sorted(known.items())]
    digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:8]
    return TaskSetHash(digest, sum(not shas for shas in known.values()))


def task_set_hash(records: Sequence[TaskRecord]) -> TaskSetHash | None:
    files: dict[TaskKey, list[str]] = {}
    for record in records:
        files.setdefault((record.domain, record.task_id), []).extend(
            [record.task_sha256] if record.task_sha256 else [])
    return task_set_digest(files) if files else None


@dataclass
class GroupStats:
    """One row of a summary. Counts are of trials (`tasks` of tasks); `score` is the leaderboard's
    mean (errors as 0) with its interval, `score_without_errors` the mean over scored trials only."""
    name: str
    tasks: int = 0
    trials: int = 0
    finished: int = 0            # trials with a score
    successes: float = 0.0       # the sum of those scores
    errors: int = 0
    incomplete: int = 0
    score: stats.Estimate | None = None
    score_without_errors: stats.Estimate | None = None
    k: int = 1                   # the most trials any task has
    pass_at_k: float | None = None
    pass_all_k: float | None = None
    flips: float | None = None
    task_set: TaskSetHash | None = None
    avg_steps: float | None = None
    avg_seconds: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None         # of every trial that reported one
    cost_per_task: float | None = None    # per finished trial, when each one reported its cost
    cost_per_success: float | None = None
    # Replays (`--agent replay`): the mean score the replayed trajectories had where they were recorded, over
    # the trials that carry one, and how many of those ended otherwise here (a success there, not here, or back).
    recorded: float | None = None
    recorded_trials: int = 0
    recorded_disagree: int = 0

    @property
    def success_rate(self) -> float | None:
        """The mean score with errors left out."""
        return self.score_without_errors.mean if self.score_without_errors else None

    @property
    def success_rate_errors_as_zero(self) -> float | None:
        """The leaderboard's mean score: an error counts as 0."""
        return self.score.mean if self.score else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in asdict(self).items()
                               if k not in ("score", "score_without_errors", "task_set")}
        for name, estimate in (("score", self.score), ("score_without_errors", self.score_without_errors)):
            interval = estimate.interval if estimate else None
            out[name] = estimate.mean if estimate else None
            out[f"{name}_low"], out[f"{name}_high"] = (interval.low, interval.high) if interval else (None, None)
        out["score_interval_method"] = self.score.method if self.score else None
        out["task_set"] = self.task_set.digest if self.task_set else None
        out["task_set_unrecorded"] = self.task_set.unrecorded if self.task_set else None
        return out


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 2) if values else None


def _sum_or_none(values: list[Any]) -> Any:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def group_stats(name: str, records: list[TaskRecord]) -> GroupStats:
    ok = [r for r in records if r.status == "ok"]
    done = [r for r in records if r.status in ("ok", "error")]
    with_errors, without_errors = scores_by_task(records), scores_by_task(records, errors_as_zero=False)
    k = max((len(trials) for trials in with_errors.values()), default=1)
    successes = round(sum(r.score or 0.0 for r in ok), 4)
    cost = _sum_or_none([r.cost_usd for r in records])
    every_cost_known = bool(done) and all(r.cost_usd is not None for r in done)
    return GroupStats(
        name=name, tasks=len({(r.domain, r.task_id) for r in records}), trials=len(records), finished=len(ok),
        successes=successes, errors=sum(r.status == "error" for r in records),
        incomplete=sum(r.status == "incomplete" for r in records),
        score=stats.estimate(with_errors), score_without_errors=stats.estimate(without_errors), k=k,
        pass_at_k=stats.pass_at(with_errors, k) if k > 1 else None,
        pass_all_k=stats.pass_all(with_errors, k) if k > 1 else None,
        flips=stats.flip_share(with_errors), task_set=task_set_hash(records),
        avg_steps=_mean([r.steps for r in done if r.steps is not None]),
        avg_seconds=_mean([r.seconds for r in done if r.seconds is not None]),
        input_tokens=_sum_or_none([r.input_tokens for r in records]),
        output_tokens=_sum_or_none([r.output_tokens for r in records]),
        cost_usd=cost,
        cost_per_task=cost / len(done) if every_cost_known and cost is not None else None,
        cost_per_success=cost / successes if every_cost_known and cost is not None and successes else None,
        **recorded_stats(records))


def succeeded(score: float | None) -> bool:
    """OSWorld's success: a score of 1 (a partial score is not one, an error or no score neither)."""
    return score is not None and score >= 1.0


def recorded_stats(records: Sequence[TaskRecord]) -> dict[str, Any]:
    replayed = [r for r in records if r.recorded_score is not None]
    if not replayed:
        return {}
    return {"recorded": round(sum(r.recorded_score or 0.0 for r in replayed) / len(replayed), 4),
            "recorded_trials": len(replayed),
            "recorded_disagree": sum(succeeded(r.recorded_score) != succeeded(r.score if r.status == "ok" else None)
                                     for r in replayed)}


@dataclass
class RecordedDisagreement:
    domain: str
    task_id: str
    trial: int
    recorded: float
    here: float | None           # None: an error or no result here
    status: str


def recorded_disagreements(run: RunResults) -> list[RecordedDisagreement]:
    """The replayed trials that ended otherwise here than where their trajectory was recorded."""
    return [RecordedDisagreement(r.domain, r.task_id, r.trial, r.recorded_score, r.score if r.status == "ok" else None,
                                 r.status)
            for r in run.records if r.recorded_score is not None
            and succeeded(r.recorded_score) != succeeded(r.score if r.status == "ok" else None)]


def recorded_disagreement_lines(run: RunResults) -> list[str]:
    listed = recorded_disagreements(run)
    if not listed:
        return []
    lines = [f"{len(listed)} replayed task(s) ended otherwise than where they were recorded:"]
    for d in listed:
        here = f"{d.here:g}" if d.here is not None else d.status
        lines.append(f"  {task_label(d.domain, d.task_id, d.trial)}: {d.recorded:g} where recorded, {here} here")
    return lines


def summarize_run(run: RunResults) -> list[GroupStats]:
    """Rows: each domain, then each paper category present, then overall."""
    domains = sorted({r.domain for r in run.records})
    rows = [group_stats(d, [r for r in run.records if r.domain == d]) for d in domains]
    for category, members in CATEGORIES.items():
        records = [r for r in run.records if r.domain in members]
        if records:
            rows.append(group_stats(category, records))
    rows.append(group_stats("Overall", run.records))
    return rows


def group_kind(name: str) -> str:
    """What a summary row is: "overall", a paper "category" or a "domain"."""
    return "overall" if name == "Overall" else "category" if name in CATEGORIES else "domain"


@dataclass(frozen=True)
class TaskScore:
    """One trial of one task as a summary lists it. `status` "ok" has a score; "error" has none (the
    leaderboard's figures count it as 0); "incomplete" (its run was cut off) is in no figure."""
    domain: str
    task_id: str
    trial: int
    status: str
    score: float | None


def task_scores(run: RunResults) -> list[TaskScore]:
    """Every trial of the run, in task order."""
    return [TaskScore(r.domain, r.task_id, r.trial, r.status, r.score if r.status == "ok" else None)
            for r in sorted(run.records, key=lambda r: (r.domain, r.task_id, r.trial))]


@dataclass
class ResultsSummary:
    """One run's summary, as `osworld summarize` gives it: `groups` are each domain, each paper category
    present and "Overall" (summarize_run's rows), `tasks` each trial's status and score."""
    label: str
    path: Path
    groups: list[GroupStats]
    tasks: list[TaskScore]

    def group(self, name: str) -> GroupStats:
        """The row of a domain, a category or "Overall" (KeyError naming the rows there are)."""
        for row in self.groups:
            if row.name == name:
                return row
        raise KeyError(f"no group {name!r} in the summary of {self.path}: {', '.join(r.name for r in self.groups)}")

    @property
    def overall(self) -> GroupStats:
        return self.group("Overall")


def summarize(*results: str | Path, rescored: bool = False) -> list[ResultsSummary]:
    """A summary of each run under the folders given (any level of the result layout: results/, a model's
    folder...), labelled as `osworld summarize` labels them; none when they hold no task results. With
    `rescored`, the scores `osworld rescore` wrote where it wrote one. A folder that is not there is a
    FileNotFoundError naming it."""
    for folder in results:
        if not Path(folder).is_dir():
            raise FileNotFoundError(f"no results folder {str(folder)!r}")
    return [ResultsSummary(run.label, run.path, summarize_run(run), task_scores(run))
            for run in runs_under(results, rescored=rescored)]


# -- as text ----------------------------------------------------------------------------------------

def pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def interval_text(estimate: stats.Estimate | None) -> str:
    interval = estimate.interval if estimate else None
    return "-" if interval is None else f"{interval.low:.1%}–{interval.high:.1%}"


def usd(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _cells(row: GroupStats, k: int) -> dict[str, str]:
    """The row's cells by column; pass@K, pass^K and flips with K > 1 trials."""
    return {"group": row.name, "tasks": str(row.tasks), "trials": str(row.trials),
            "score": pct(row.success_rate_errors_as_zero), "95% CI": interval_text(row.score),
            "errors": str(row.errors), "score w/o errors": pct(row.success_rate), "incomplete": str(row.incomplete),
            **({f"pass@{k}": pct(row.pass_at_k), f"pass^{k}": pct(row.pass_all_k), "flips": pct(row.flips)}
               if k > 1 else {}),
            "task set": "-" if row.task_set is None else str(row.task_set),
            "avg steps": "-" if row.avg_steps is None else f"{row.avg_steps:g}",
            "avg s": "-" if row.avg_seconds is None else f"{row.avg_seconds:g}",
            "tokens in/out": "-" if row.input_tokens is None else f"{row.input_tokens}/{row.output_tokens or 0}",
            "cost $": usd(row.cost_usd), "$/task": usd(row.cost_per_task), "$/success": usd(row.cost_per_success),
            "score where recorded": pct(row.recorded),
            "ended otherwise": "-" if not row.recorded_trials else f"{row.recorded_disagree}/{row.recorded_trials}"}


def scored_with_evaluator_fixes(run: RunResults) -> bool:
    """Whether any run into the folder scored with --evaluator-fixes (args.json): its scores are then not
    OSWorld's verdicts, so not comparable with OSWorld's published scores."""
    args = run.args if isinstance(run.args, dict) else {}
    configs = [args.get("config")] + [r.get("config") for r in args.get("runs") or [] if isinstance(r, dict)]
    return any(isinstance(c, dict) and c.get("evaluator_fixes") for c in configs)


def run_heading(run: RunResults, rows: Sequence[GroupStats]) -> str:
    """What the figures of the run mean: the score, the step budget, and what the task-set hash leaves out."""
    budgets = ", ".join(map(str, run.step_budgets)) or "not recorded"
    if len(run.step_budgets) > 1:
        budgets += " (runs with different budgets mixed by --force)"
    overall = rows[-1] if rows else None
    rescored = sum(r.rescored for r in run.records)
    text = (f"score: the mean over tasks of each task's mean over its trials, an error counted as 0 (w/o errors: "
            f"errored trials left out); 95% CI: Wilson's where every task scored 0 or 1, else a bootstrap over "
            f"tasks; step budget {budgets}")
    if rescored:
        text = f"scores as rescored (rescore.json) for {rescored} trial(s), result.txt for the rest; " + text
    if overall and overall.cost_usd is not None:
        text += f"; costs at prices {'; '.join(price_dates(run)) or 'of a date not recorded'}"
    if scored_with_evaluator_fixes(run):
        text += ("; NOT COMPARABLE with OSWorld's scores: scored with --evaluator-fixes (our fixes of OSWorld's "
                 "metrics, docs/EVALUATORS.md)")
    if overall and overall.task_set and overall.task_set.unrecorded:
        text += (f"; * {overall.task_set.unrecorded} task(s) ran without a task hash recorded (older or OSWorld's "
                 "folders), so the task-set hash covers their ids only")
    return text


TOKEN_COLUMNS = ("tokens in/out",)
COST_COLUMNS = ("cost $", "$/task", "$/success")
RECORDED_COLUMNS = ("score where recorded", "ended otherwise")


def table_rows(rows: Sequence[GroupStats]) -> tuple[list[str], list[list[str]]]:
    """The header and cells of a run's rows. Token and cost columns only when some trial reported them."""
    k = max((row.k for row in rows), default=1)
    cells = [_cells(row, k) for row in rows]
    hidden = (() if any(row.input_tokens is not None for row in rows) else TOKEN_COLUMNS) + \
        (() if any(row.cost_usd is not None for row in rows) else COST_COLUMNS) + \
        (() if any(row.recorded_trials for row in rows) else RECORDED_COLUMNS)
    header = [name for name in (cells[0] if cells else _cells(GroupStats("x"), k)) if name not in hidden]
    return header, [[row[name] for name in header] for row in cells]


def to_markdown(summaries: list[tuple[RunResults, list[GroupStats]]],
                notes: Mapping[Path, list[str]] | None = None) -> str:
    """The runs' tables; `notes` are lines to print under a run's heading, by its path."""
    out = []
    for run, rows in summaries:
        header, body = table_rows(rows)
        out.append(f"### {run.label}\n")
        out.append(f"{run_heading(run, rows)}\n")
        out += [f"{line}\n" for line in (notes or {}).get(run.path, [])]
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "---|" * len(header))
        out += ["| " + " | ".join(cells) + " |" for cells in body]
        out.append("")
    if len(summaries) > 1:
        out.append(comparison_markdown(summaries))
    return "\n".join(out)


def comparison_rows(summaries: list[tuple[RunResults, list[GroupStats]]]) -> tuple[list[str], list[list[str]]]:
    """The runs side by side: each group's leaderboard score, interval and task count (not paired: see
    `osworld compare` for what the data says about the difference)."""
    groups = list(dict.fromkeys(s.name for _, rows in summaries for s in rows))
    header = ["group"] + [run.label for run, _ in summaries]
    body = []
    for group in groups:
        cells = [group]
        for _, rows in summaries:
            match = next((s for s in rows if s.name == group), None)
            if match is None:
                cells.append("-")
                continue
            interval = f" [{interval_text(match.score)}]" if match.score and match.score.interval else ""
            cells.append(f"{pct(match.success_rate_errors_as_zero)}{interval} ({match.tasks})")
        body.append(cells)
    return header, body


def comparison_markdown(summaries: list[tuple[RunResults, list[GroupStats]]]) -> str:
    header, body = comparison_rows(summaries)
    lines = ["### side by side (score with errors as 0, 95% CI, tasks)\n", "| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in body]) + "\n"


def to_json(summaries: list[tuple[RunResults, list[GroupStats]]],
            extra: Mapping[Path, dict[str, Any]] | None = None) -> str:
    """The runs' figures; `extra` adds keys to a run's object, by its path."""
    return json.dumps({"runs": [{"label": run.label, "path": str(run.path), "step_budgets": run.step_budgets,
                                 "prices": price_dates(run), **(extra or {}).get(run.path, {}),
                                 "groups": [s.to_dict() for s in rows],
                                 "tasks": [asdict(t) for t in task_scores(run)]}
                                for run, rows in summaries]}, indent=2)


def to_csv(summaries: list[tuple[RunResults, list[GroupStats]]]) -> str:
    """A row per group (`kind` domain, category or overall), then one per trial (`kind` task: `name` is its
    domain; `task_id`, `trial`, `status` and `score` are filled, the group figures left empty)."""
    buffer = io.StringIO()
    fields = ["run", "path", "step_budgets"] + list(GroupStats("x").to_dict().keys()) + \
        ["kind", "task_id", "trial", "status"]
    writer = csv.DictWriter(buffer, fieldnames=fields)
    writer.writeheader()
    for run, rows in summaries:
        where = {"run": run.label, "path": str(run.path), "step_budgets": " ".join(map(str, run.step_budgets))}
        for row in rows:
            writer.writerow({**where, **row.to_dict(), "kind": group_kind(row.name)})
        for each in task_scores(run):
            writer.writerow({**where, "kind": "task", "name": each.domain, "task_id": each.task_id,
                             "trial": each.trial, "status": each.status, "score": each.score})
    return buffer.getvalue()


NO_EXPLANATION = "no explanation recorded"


@dataclass(frozen=True)
class TaskFailure:
    """A task that did not succeed, and why: `outcome` is "fail" (scored 0), "partial" (between 0
    and 1) or "error" (no score: the harness failed; `explanation` is the error)."""
    run: str
    domain: str
    task_id: str
    outcome: str
    score: float | None
    explanation: str
    trial: int = 1


def explanation_of(status: TaskStatus | None) -> str:
    """Why a task scored what it did, from its status.json (the evaluation's explanation)."""
    evaluation = status.evaluation if status else None
    return evaluation.explanation.strip() if evaluation and evaluation.explanation.strip() else NO_EXPLANATION


def failures(run: RunResults) -> list[TaskFailure]:
    """Every task of the run that scored below 1 or ended in an error, with why, in task order."""
    found = []
    for record in sorted(run.records, key=lambda r: (r.domain, r.task_id, r.trial)):
        if record.status == "ok" and stats.solved(record.score or 0.0) or record.status == "incomplete":
            continue
        status = read_status(run.folder(record))
        if record.status == "error":
            found.append(TaskFailure(run.label, record.domain, record.task_id, "error", None, error_text(status),
                                     record.trial))
        else:
            score = record.score or 0.0
            found.append(TaskFailure(run.label, record.domain, record.task_id, "partial" if score > 0 else "fail",
                                     score, explanation_of(status), record.trial))
    return found


def task_label(domain: str, task_id: str, trial: int = 1) -> str:
    """domain/id, and "#k" for trial k > 1."""
    return f"{domain}/{task_id}" + (f" #{trial}" if trial > 1 else "")


def failures_markdown(listed: list[TaskFailure]) -> str:
    if not listed:
        return "### failures\n\nnone: every finished task scored 1\n"
    lines = ["### failures\n", "| run | task | outcome | score | why |", "|---|---|---|---|---|"]
    for f in listed:
        why = f.explanation.replace("|", "\\|").replace("\n", "<br>")
        score = "-" if f.score is None else f"{f.score:g}"
        lines.append(f"| {f.run} | {task_label(f.domain, f.task_id, f.trial)} | {f.outcome} | {score} | {why} |")
    return "\n".join(lines) + "\n"


def failures_json(listed: list[TaskFailure]) -> list[dict[str, Any]]:
    return [asdict(f) for f in listed]
