"""What the scheduler asks of a backend (worker processes, threads, Ray actors), and what it gets back.

The scheduler (osworld_harness/execution/scheduler.py) decides which task runs next, marks it "running" and books
how it ended; a backend only owns workers: it starts them, hands a task to a free one, and
says when a task finished (its folder written), was lost with its worker, or when it cannot go
on at all. Keeping that split is what lets every backend resume, stop and record alike.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from osworld_harness.results.task_folder import PreviousError

from .events import Reporter
from .task_result import TaskResult


@dataclass(frozen=True)
class Assignment:
    """One trial of a task handed to a worker: where its folder is and the errors of its earlier runs."""
    domain: str
    task_id: str
    task_dir: Path
    previous_errors: list[PreviousError] = field(default_factory=list)
    attempt: int = 1
    trial: int = 1
    # Whether this worker can count on another task after this one (scheduler.another_task_likely: a task
    # still waited for each worker when this one was handed out): a desktop readies the next task's desktop
    # while this one runs (the local provider's warm spare) only then. A hint: a task retried later, or
    # one taken by a worker that was told no, still runs, on a desktop booted for it.
    more_to_come: bool = True

    @property
    def key(self) -> tuple[str, str, int]:
        return self.domain, self.task_id, self.trial


@dataclass(frozen=True)
class TaskDone:
    """The worker finished the task; its folder holds its record."""
    worker: int
    task: Assignment
    result: TaskResult


@dataclass(frozen=True)
class TaskLost:
    """The worker (process, thread, actor or node) went away under the task, or failed outside it.
    `retriable`: the worker was lost, not the task at fault, so running it again may succeed."""
    worker: int
    task: Assignment
    reason: str
    retriable: bool = True


@dataclass(frozen=True)
class BackendStopped:
    """The backend cannot run any more tasks (workers that die as they start, a cluster with no room)."""
    reason: str


Outcome = TaskDone | TaskLost | BackendStopped


class TaskRunner(Protocol):
    """One desktop and one agent that run tasks one after another
    (osworld_harness.execution.task_worker.DesktopWorker)."""

    def run_task(self, domain: str, task_id: str, task_dir: Path, previous_errors: list[PreviousError],
                 on_step: Callable[[int], None] = ..., trial: int = 1, more_to_come: bool = ...) -> TaskResult: ...

    def close(self) -> None: ...


class Backend(Protocol):
    retries: int  # how many more times a lost task (TaskLost.retriable) is run

    def start(self, workers: int, report: Reporter) -> None:
        """Starts up to `workers` workers; raises (e.g. RayUnavailable) when none can ever run.
        `report` takes the events the backend sees itself (StepTaken, Note)."""

    def free(self) -> int:
        """How many tasks `submit` can take now."""

    def submit(self, task: Assignment) -> int:
        """Hands `task` (already marked "running") to a free worker; returns that worker's number."""

    def wait(self, timeout: float, waiting: int) -> Outcome | None:
        """The next finished or lost task, or BackendStopped; None after `timeout` seconds without one.
        `waiting` is how many tasks are still to submit: workers lost on the way are replaced only for them."""

    def stop(self, clean: bool) -> None:
        """Ends every worker: `clean` lets idle ones close their desktops; otherwise running tasks are cut off."""
