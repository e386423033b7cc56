"""What a run reports as it goes, to a progress display or any callable: one small type per event.

The scheduler (osworld_harness/execution/scheduler.py) sends them all but StepTaken, which the workers send through
their backend. `worker` is the backend's number for the worker, process, thread or Ray actor.
`result` in Finished is the task's outcome as the worker gives it (TaskResult).
`trial` says which of the run's --trials K an event is about.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .task_result import TaskResult

if TYPE_CHECKING:
    from .plan import PlannedTask


@dataclass(frozen=True)
class Planned:
    to_run: list[PlannedTask] = field(default_factory=list)
    skipped: list[PlannedTask] = field(default_factory=list)
    invalid: list[PlannedTask] = field(default_factory=list)


@dataclass(frozen=True)
class Started:
    worker: int
    domain: str
    task_id: str
    trial: int = 1


@dataclass(frozen=True)
class StepTaken:
    worker: int
    domain: str
    task_id: str
    step: int
    trial: int = 1


@dataclass(frozen=True)
class Finished:
    worker: int
    domain: str
    task_id: str
    result: TaskResult
    trial: int = 1


@dataclass(frozen=True)
class Retrying:
    worker: int
    domain: str
    task_id: str
    reason: str
    trial: int = 1


@dataclass(frozen=True)
class Note:
    message: str


@dataclass(frozen=True)
class Stopped:
    reason: str


@dataclass(frozen=True)
class Interrupted:
    pass


Event = Planned | Started | StepTaken | Finished | Retrying | Note | Stopped | Interrupted
Reporter = Callable[[Event], None]
