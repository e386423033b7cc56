"""The fidelity suite: OSWorld's own task files that need no network, run with the no-op agent.

On the official VM, doing nothing scores 0 on every task and no task breaks the harness. The
local desktop should do the same: a harness error (a setup step, a getter, the desktop) or a
free pass (the no-op agent scored > 0) is a place where the desktop does not start where the
VM starts, or reads it differently.

Which tasks: `select_tasks` keeps a task file that runs offline here (network_reasons, from
desktop_env.tasks.coverage's rules); each excluded task is kept with its reasons so the report can
list them.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from desktop_env.tasks import Task, TaskSet, load_task_set, validate_task
from desktop_env.tasks.coverage import default_missing_apps, files_present, lacking_apps, web_reasons
from desktop_env.tasks.remote_files import remote_files
from osworld_harness.execution.run import RunConfig, run_benchmark
from osworld_harness.results.task_folder import error_text, read_status, read_task


@dataclass
class Excluded:
    domain: str
    task_id: str
    reasons: list[str]


@dataclass
class Selection:
    selected: list[tuple[str, str]]
    excluded: list[Excluded]
    meta_path: Path


def find_meta_file(osworld: Path) -> Path:
    """The `test_all.json` of an OSWorld checkout (its `evaluation_examples/`), or of a folder laid
    out like one (`test_all.json` beside `examples/`). Raises FileNotFoundError naming what was looked for."""
    for candidate in (osworld / "evaluation_examples" / "test_all.json", osworld / "test_all.json"):
        if candidate.is_file() and (candidate.parent / "examples").is_dir():
            return candidate
    raise FileNotFoundError(f"{osworld} is not an OSWorld checkout: neither evaluation_examples/test_all.json nor "
                            "test_all.json with examples/ beside it is there")


def network_reasons(task: Task, missing_apps: Callable[[], dict[str, str]] = default_missing_apps,
                    cache_dir: Path | None = None) -> list[str]:
    """Why the task cannot run offline here: an app the desktop lacks, a file it downloads (and `cache_dir`, a
    cache as OSWorld's runs leave it, does not hold), a live website it needs to be set up, done or scored
    (desktop_env.tasks.coverage); [] when nothing."""
    files, _ = remote_files(task)
    if cache_dir is not None and files_present(files, cache_dir):
        files = []
    return (list(lacking_apps(task, missing_apps()).values()) + [f"{file.field} downloads {file.url}" for file in files]
            + web_reasons(task))


def unsupported_reasons(task: Task) -> list[str]:
    """Names this harness declares it cannot run (accounts, live websites). Unknown names are not here: they
    stay in the suite and come out as harness errors, which is what they are."""
    return [str(problem) for problem in validate_task(task) if problem.unsupported]


def select_tasks(osworld: Path, only: list[str] | None = None, cache_dir: Path | None = None) -> Selection:
    """The checkout's tasks (those with an id in `only`, when given) split into selected and excluded; a task
    whose downloads `cache_dir` holds counts as offline."""
    meta = find_meta_file(osworld)
    task_set: TaskSet = load_task_set(meta)
    selection = Selection([], [], meta)
    for domain, task_id in task_set.select(None, only or None):
        if not task_set.task_path(domain, task_id).is_file():
            selection.selected.append((domain, task_id))  # the run records it as an error, naming the file
            continue
        task = task_set.load(domain, task_id, check_paths=False)
        reasons = network_reasons(task, cache_dir=cache_dir) or unsupported_reasons(task)
        if reasons:
            selection.excluded.append(Excluded(domain, task_id, reasons))
        else:
            selection.selected.append((domain, task_id))
    return selection


@dataclass
class TaskOutcome:
    domain: str
    task_id: str
    status: str                    # ok | error | incomplete
    score: float | None = None
    error: str | None = None       # "Type: message" of an error record


@dataclass
class FidelityReport:
    tasks: int
    excluded: list[Excluded]
    errors: list[TaskOutcome]
    free_passes: list[TaskOutcome]
    incomplete: list[TaskOutcome]
    minutes: float
    num_envs: int
    meta_path: str
    outcomes: list[TaskOutcome] = field(default_factory=list)
    load: dict[str, Any] = field(default_factory=dict)   # load averages before and after, CPUs
    cpu_hogs: int = 0                                      # busy loops run beside the desktops

    @property
    def clean(self) -> bool:
        return not (self.errors or self.free_passes or self.incomplete)

    def to_json(self) -> str:
        return json.dumps(asdict(self) | {"clean": self.clean}, indent=2, default=str)

    def to_markdown(self) -> str:
        lines = [f"# Fidelity suite: {self.meta_path}", "",
                 "| tasks | harness errors | free passes | minutes | desktops | CPU hogs | load before / after |",
                 "|---|---|---|---|---|---|---|",
                 f"| {self.tasks} | {len(self.errors)} | {len(self.free_passes)} | {self.minutes:.1f} "
                 f"| {self.num_envs} | {self.cpu_hogs} | {self.load.get('before', '-')} / "
                 f"{self.load.get('after', '-')} ({self.load.get('cpus', '?')} CPUs) |",
                 ""]
        for title, items, text in (("Harness errors", self.errors, lambda o: o.error),
                                   ("Free passes (the no-op agent scored > 0)", self.free_passes,
                                    lambda o: f"score {o.score:g}"),
                                   ("Not finished", self.incomplete, lambda o: "no result")):
            if items:
                lines += [f"## {title}", ""] + [f"- {o.domain}/{o.task_id}: {text(o)}" for o in items] + [""]
        lines += [f"## Excluded ({len(self.excluded)}): they need the network or what no local desktop has", ""]
        lines += [f"- {e.domain}/{e.task_id}: {'; '.join(e.reasons)}" for e in self.excluded]
        return "\n".join(lines) + "\n"


def _outcome(task_dir: Path, domain: str, task_id: str) -> TaskOutcome:

    record = read_task(task_dir)
    if record is None:
        return TaskOutcome(domain, task_id, "incomplete")
    outcome = TaskOutcome(domain, task_id, record.status, record.score)
    if record.status == "error":
        outcome.error = error_text(read_status(task_dir))
    return outcome


def run_suite(osworld: Path, result_dir: Path, num_envs: int = 2, only: list[str] | None = None,
              **options: Any) -> FidelityReport:
    """Runs the selected tasks with the no-op agent through an ordinary run (a fresh one each
    time: nothing is resumed) and reports what came out. `options` go to RunConfig."""

    selection = select_tasks(osworld, only)
    config = RunConfig(agent="noop", model="noop", observation_type="screenshot", tasks=str(selection.meta_path),
                       task_ids=[task_id for _, task_id in selection.selected], num_envs=num_envs,
                       result_dir=str(result_dir), resume=False, record=False, max_steps=1, force=True, **options)
    started, before = time.monotonic(), load_average()
    if selection.selected:
        run_benchmark(config)
    minutes = (time.monotonic() - started) / 60
    outcomes = [_outcome(config.layout.task_dir(d, t), d, t) for d, t in selection.selected]
    return FidelityReport(
        tasks=len(outcomes), excluded=selection.excluded, minutes=minutes, num_envs=num_envs,
        meta_path=str(selection.meta_path), outcomes=outcomes,
        load={"before": before, "after": load_average(), "cpus": os.cpu_count()},
        errors=[o for o in outcomes if o.status == "error"],
        free_passes=[o for o in outcomes if o.status == "ok" and (o.score or 0) > 0],
        incomplete=[o for o in outcomes if o.status == "incomplete"])


def load_average() -> str:
    """The machine's 1, 5 and 15 minute load averages, for a figure measured under load."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())
