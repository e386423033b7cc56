"""The plan of a run (which trials of which tasks run, which are skipped, which cannot run) and its tally."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from desktop_env.providers import builds_its_desktop
from desktop_env.tasks import load_task_set, refusals, selection_problems
from osworld_harness.results.config import RunConfig
from osworld_harness.results.suite import left_out as suite_left_out
from osworld_harness.results.task_folder import TaskState, refused_by_plan, task_state
from osworld_harness.results.task_scope import narrowed

from .breaker import FatalErrorBreaker
from .task_result import TaskResult

if TYPE_CHECKING:
    from desktop_env.tasks import Problem, TaskSet


@dataclass
class PlannedTask:
    domain: str
    task_id: str
    state: TaskState
    problems: list[Problem] = field(default_factory=list)   # why it cannot run
    warnings: list[Problem] = field(default_factory=list)   # said, but it runs
    trial: int = 1                                          # which of the run's --trials K

    @property
    def name(self) -> str:
        """domain/id, and the trial when it is not the first."""
        return f"{self.domain}/{self.task_id}" + (f" (trial {self.trial})" if self.trial > 1 else "")

    @property
    def broken(self) -> bool:
        """Its task file (or the meta file's entry for it) is broken: unreadable, a name no code knows, an option
        or path that is wrong; not a valid task that needs what this machine lacks (a live account...)."""
        return any(not p.unsupported for p in self.problems)

    @property
    def error(self) -> str:
        first = str(self.problems[0]) if self.problems else ""
        return first + (f" (and {len(self.problems) - 1} more)" if len(self.problems) > 1 else "")


def once_per_task(planned: list[PlannedTask]) -> list[PlannedTask]:
    """The first trial listed of each task: a task that cannot run is told once, not once per trial."""
    first: dict[tuple[str, str], PlannedTask] = {}
    for p in planned:
        first.setdefault((p.domain, p.task_id), p)
    return list(first.values())


def broken_tasks(planned: list[PlannedTask]) -> list[PlannedTask]:
    """Of the tasks that cannot run, once each, those whose files are broken."""
    return [p for p in once_per_task(planned) if p.broken]


def unsupported_tasks(planned: list[PlannedTask]) -> list[PlannedTask]:
    """Of the tasks that cannot run, once each, the valid ones that need what this machine lacks."""
    return [p for p in once_per_task(planned) if not p.broken]


@dataclass
class RunSummary:
    planned: int
    skipped_done: int
    skipped_errors: int
    invalid: list[PlannedTask] = field(default_factory=list)  # refused by the plan, each with an error record
    ran: int = 0
    ok: int = 0
    errors: int = 0
    score_sum: float = 0.0
    stopped: str | None = None       # why the run stopped before its end (the same fatal error, task after task)
    breaker: FatalErrorBreaker = field(default_factory=lambda: FatalErrorBreaker(0), repr=False)

    def count(self, result: TaskResult) -> None:
        """Books one finished task; sets `stopped` once the breaker trips."""
        self.ran += 1
        if result.status == "ok":
            self.ok += 1
            self.score_sum += result.score or 0.0
        else:
            self.errors += 1
        self.stopped = self.stopped or self.breaker.observe(result)


@dataclass
class Plan:
    to_run: list[PlannedTask]
    skipped: list[PlannedTask]       # finished, or (without retry_errors) errored in an earlier run
    invalid: list[PlannedTask]       # cannot run (each with its problems): an error record, no desktop
    task_files: dict[tuple[str, str], str] = field(default_factory=dict)  # (domain, id) -> Task.sha256, if loadable
    left_out: dict[tuple[str, str], str] = field(default_factory=dict)    # not in the suite (--osworld), and why
    suite_tasks: int | None = None   # the tasks of the suite (--osworld) before --domain/--task-id chose some
    selected: list[tuple[str, str]] = field(default_factory=list)   # the tasks this run is over, in order
    selection: list[tuple[str, str]] = field(default_factory=list)  # before --shard and --limit took a part


def add_app_problems(task_set: TaskSet, pairs: list[tuple[str, str]],
                     problems: dict[tuple[str, str], list[Problem]]) -> None:
    """Adds to `problems` the apps each readable task needs that the local desktop lacks and cannot build."""
    from desktop_env.providers.local.apps import missing_apps  # noqa: PLC0415  (the local provider, loaded for a local run only)
    from desktop_env.tasks.coverage import app_problems  # noqa: PLC0415

    missing = missing_apps()
    if not missing:
        return
    for pair in dict.fromkeys(pairs):
        if not refusals(problems.get(pair, [])):
            problems.setdefault(pair, []).extend(app_problems(task_set.load(*pair), missing))


def plan_tasks(config: RunConfig) -> Plan:
    """Checks every selected task before any desktop starts, then sorts each of its trials: all tasks'
    first trials, then all second ones, and so on (a run cut short has whole trials first). Resume
    skips finished trials and, unless retry_errors, errored ones; a task an earlier plan refused runs
    once it is valid."""

    task_set = load_task_set(config.tasks)
    pairs = task_set.select(config.domains or None, config.task_ids or None)
    left_out: dict[tuple[str, str], str] = {}
    suite_tasks = None
    if config.osworld:  # OSWorld-Verified: the checkout's tasks less those it leaves out

        everything = task_set.select()
        left_out = suite_left_out(task_set, everything)
        suite_tasks = len(dict.fromkeys(everything)) - len(left_out)
        pairs = [pair for pair in pairs if pair not in left_out]
    problems = selection_problems(task_set, pairs)
    if builds_its_desktop(config.provider):  # what the local desktop lacks and cannot build, as `tasks coverage` says
        add_app_problems(task_set, pairs, problems)
    selection = list(dict.fromkeys(pairs))  # an id listed twice is one task (and an invalid one)
    unique = narrowed(selection, config.shard, config.limit)
    plan = Plan([], [], [], {pair: task_set.load(*pair).sha256 for pair in unique
                                if not refusals(problems.get(pair, []))}, left_out, suite_tasks, unique, selection)
    for trial, (domain, task_id) in ((t, pair) for t in range(1, config.trials + 1) for pair in unique):
        task_dir = config.layout.task_dir(domain, task_id, trial)
        state = task_state(task_dir) if config.resume else TaskState.NEW
        found = problems.get((domain, task_id), [])
        planned = PlannedTask(domain, task_id, state, refusals(found), [p for p in found if p.warning], trial)
        if state is TaskState.DONE:
            plan.skipped.append(planned)  # its score stands: it ran with the file as it was then
        elif planned.problems:
            plan.invalid.append(planned)
        elif state is TaskState.ERROR and not config.retry_errors and not refused_by_plan(task_dir):
            plan.skipped.append(planned)
        else:
            plan.to_run.append(planned)
    return plan
