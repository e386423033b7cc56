"""`osworld summarize`: success rates per domain, per paper category and overall.

Reads our result folders and OSWorld's (which have only result.txt / traj.jsonl).
An error is neither a success nor a failure: it is counted apart, and the success
rate is given both excluding errors and counting them as 0. A task still marked
"running" (its run was cut off) is counted as incomplete.

`failures` lists the tasks that scored below 1 with the explanation status.json keeps of
their evaluation (the metric's: the first differing cell, the missing file...), and the tasks
that ended in an error with that error; folders written before explanations existed, and
OSWorld's, say "no explanation recorded".
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .results import (
    TaskRecord,
    TaskStatus,
    error_text,
    find_task_folders,
    read_status,
    read_task,
    split_trial,
    trial_dir,
)

CATEGORIES = {
    "OS": ("os",),
    "Office": ("libreoffice_calc", "libreoffice_writer", "libreoffice_impress"),
    "Daily": ("chrome", "vlc", "thunderbird"),
    "Professional": ("gimp", "vs_code"),
    "Workflow": ("multi_apps",),
}


@dataclass
class GroupStats:
    name: str
    tasks: int = 0
    finished: int = 0
    successes: float = 0.0
    errors: int = 0
    incomplete: int = 0
    avg_steps: float | None = None
    avg_seconds: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None

    @property
    def success_rate(self) -> float | None:
        """Over the tasks that finished with a score (errors excluded)."""
        return self.successes / self.finished if self.finished else None

    @property
    def success_rate_errors_as_zero(self) -> float | None:
        denominator = self.finished + self.errors
        return self.successes / denominator if denominator else None

    def to_dict(self) -> dict:
        return {**asdict(self), "success_rate": self.success_rate,
                "success_rate_errors_as_zero": self.success_rate_errors_as_zero}


@dataclass
class RunResults:
    label: str
    path: Path
    records: list[TaskRecord] = field(default_factory=list)  # one per trial of a task

    def folder(self, record: TaskRecord) -> Path:
        """The folder of the record's trial."""
        return trial_dir(self.path / record.domain / record.task_id, record.trial)


def find_runs(path: str | Path) -> list[RunResults]:
    """Every run (action_space/obs_type/model folder) under `path`, which may be any level of the layout."""
    path = Path(path)
    task_dirs = find_task_folders(path)
    runs: dict[Path, RunResults] = {}
    for task_dir in task_dirs:
        run_dir = split_trial(task_dir)[0].parent.parent
        if run_dir not in runs:  # labelled action_space/obs_type/model, as the folders are
            runs[run_dir] = RunResults(label="/".join(run_dir.parts[-3:]), path=run_dir)
        record = read_task(task_dir)
        if record is not None:
            runs[run_dir].records.append(record)
    return [r for r in runs.values() if r.records]


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 2) if values else None


def _sum_or_none(values: list) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def group_stats(name: str, records: list[TaskRecord]) -> GroupStats:
    ok = [r for r in records if r.status == "ok"]
    done = [r for r in records if r.status in ("ok", "error")]
    return GroupStats(
        name=name, tasks=len(records), finished=len(ok), successes=round(sum(r.score or 0.0 for r in ok), 4),
        errors=sum(r.status == "error" for r in records), incomplete=sum(r.status == "incomplete" for r in records),
        avg_steps=_mean([r.steps for r in done if r.steps is not None]),
        avg_seconds=_mean([r.seconds for r in done if r.seconds is not None]),
        input_tokens=_sum_or_none([r.input_tokens for r in records]),
        output_tokens=_sum_or_none([r.output_tokens for r in records]),
        cost_usd=_sum_or_none([r.cost_usd for r in records]))


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


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


COLUMNS = ("group", "tasks", "successes", "success rate", "rate (errors=0)", "errors", "incomplete",
           "avg steps", "avg time s", "tokens in/out", "cost $")


def row_cells(stats: GroupStats) -> list[str]:
    tokens = "-" if stats.input_tokens is None else f"{stats.input_tokens}/{stats.output_tokens or 0}"
    return [stats.name, str(stats.tasks), f"{stats.successes:g}", _pct(stats.success_rate),
            _pct(stats.success_rate_errors_as_zero), str(stats.errors), str(stats.incomplete),
            "-" if stats.avg_steps is None else f"{stats.avg_steps:g}",
            "-" if stats.avg_seconds is None else f"{stats.avg_seconds:g}", tokens,
            "-" if stats.cost_usd is None else f"{stats.cost_usd:.4f}"]


def to_markdown(summaries: list[tuple[RunResults, list[GroupStats]]]) -> str:
    out = []
    for run, rows in summaries:
        out.append(f"### {run.label}\n")
        out.append("| " + " | ".join(COLUMNS) + " |")
        out.append("|" + "---|" * len(COLUMNS))
        out += ["| " + " | ".join(row_cells(stats)) + " |" for stats in rows]
        out.append("")
    if len(summaries) > 1:
        out.append(comparison_markdown(summaries))
    return "\n".join(out)


def comparison_rows(summaries: list[tuple[RunResults, list[GroupStats]]]) -> tuple[list[str], list[list[str]]]:
    groups = list(dict.fromkeys(s.name for _, rows in summaries for s in rows))
    header = ["group"] + [run.label for run, _ in summaries]
    body = []
    for group in groups:
        cells = [group]
        for _, rows in summaries:
            match = next((s for s in rows if s.name == group), None)
            cells.append("-" if match is None else f"{_pct(match.success_rate)} ({match.tasks})")
        body.append(cells)
    return header, body


def comparison_markdown(summaries) -> str:
    header, body = comparison_rows(summaries)
    lines = ["### comparison (success rate, tasks)\n", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in body]) + "\n"


def to_json(summaries) -> str:
    return json.dumps({"runs": [{"label": run.label, "path": str(run.path), "groups": [s.to_dict() for s in rows]}
                                for run, rows in summaries]}, indent=2)


def to_csv(summaries) -> str:
    buffer = io.StringIO()
    fields = ["run", "path"] + list(GroupStats("x").to_dict().keys())
    writer = csv.DictWriter(buffer, fieldnames=fields)
    writer.writeheader()
    for run, rows in summaries:
        for stats in rows:
            writer.writerow({"run": run.label, "path": str(run.path), **stats.to_dict()})
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


def explanation_of(status: TaskStatus | None) -> str:
    """Why a task scored what it did, from its status.json (the evaluation's explanation)."""
    evaluation = status.evaluation if status else None
    return evaluation.explanation.strip() if evaluation and evaluation.explanation.strip() else NO_EXPLANATION


def failures(run: RunResults) -> list[TaskFailure]:
    """Every task of the run that scored below 1 or ended in an error, with why, in task order."""
    found = []
    for record in sorted(run.records, key=lambda r: (r.domain, r.task_id)):
        if record.status == "ok" and (record.score or 0.0) >= 1.0 - 1e-9 or record.status == "incomplete":
            continue
        status = read_status(run.folder(record))
        if record.status == "error":
            found.append(TaskFailure(run.label, record.domain, record.task_id, "error", None, error_text(status)))
        else:
            score = record.score or 0.0
            found.append(TaskFailure(run.label, record.domain, record.task_id, "partial" if score > 0 else "fail",
                                     score, explanation_of(status)))
    return found


def failures_markdown(listed: list[TaskFailure]) -> str:
    if not listed:
        return "### failures\n\nnone: every finished task scored 1\n"
    lines = ["### failures\n", "| run | task | outcome | score | why |", "|---|---|---|---|---|"]
    for f in listed:
        why = f.explanation.replace("|", "\\|").replace("\n", "<br>")
        score = "-" if f.score is None else f"{f.score:g}"
        lines.append(f"| {f.run} | {f.domain}/{f.task_id} | {f.outcome} | {score} | {why} |")
    return "\n".join(lines) + "\n"


def failures_json(listed: list[TaskFailure]) -> list[dict]:
    return [asdict(f) for f in listed]
