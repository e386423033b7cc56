"""The one scheduling loop of a run, whatever runs the tasks (osworld_harness/execution/backend.py).

It owns: which task runs next (the plan's order; a lost task that may be retried goes first),
marking a task "running" in its folder before a worker gets it (so a run killed from then on
leaves it to be re-run), the tally and the fatal-error breaker (RunSummary), the progress
events, booking how each task ended (through osworld_harness/results/task_folder.py), and stopping: on Ctrl-C, when
the breaker trips, or when the backend cannot go on. A stopped run cuts off the tasks still
running: each folder keeps saying "running", with why (`cut_off`), and the next run re-runs it.
With --trials K each trial of a task is a task of its own here, with its own folder.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from osworld_harness.results.task_folder import RunLayout, record_cut_off, record_worker_died, start_task

from .backend import Assignment, Backend, BackendStopped, TaskDone, TaskLost
from .events import Finished, Interrupted, Reporter, Retrying, Started, Stopped
from .plan import PlannedTask, RunSummary
from .task_result import TaskResult

POLL_S = 0.5  # how long one wait for the backend lasts; nothing depends on it but responsiveness
INTERRUPTED = "the run was interrupted (Ctrl-C) while this task ran"


def another_task_likely(waiting: int, workers: int) -> bool:
    """Whether a worker just handed a task can count on another after it (the local provider then boots
    the next task's desktop meanwhile, its warm spare). Only while at least one task waits for each
    worker: with fewer, the workers that finish first take them, and a spare booted by one that finishes
    later is never used (a run on 2 desktops wasted one boot at its end, 4 CPU-seconds). The price is a
    cold boot for a tail task that a worker without a spare takes."""
    return waiting >= max(workers, 1)


def run_tasks(to_run: Iterable[PlannedTask], layout: RunLayout, backend: Backend, summary: RunSummary,
              report: Reporter, workers: int = 1) -> RunSummary:
    """Runs `to_run` on `backend` (already started with `workers` workers) and stops it; returns `summary`,
    tallied."""
    pending = deque((p.domain, p.task_id, p.trial) for p in to_run)
    attempts: dict[tuple[str, str, int], int] = {}
    running: dict[tuple[str, str, int], Assignment] = {}
    cut_off_reason = INTERRUPTED
    clean = False

    def finish(worker: int, task: Assignment, result: TaskResult) -> None:
        running.pop(task.key, None)
        summary.count(result)
        report(Finished(worker, task.domain, task.task_id, result, task.trial))

    try:
        while (pending or running) and not summary.stopped:
            while pending and backend.free() > 0:
                key = pending.popleft()
                domain, task_id, trial = key
                attempts[key] = attempts.get(key, 0) + 1
                task_dir = layout.task_dir(domain, task_id, trial)
                previous = start_task(task_dir, task_id, attempts[key], trial)
                task = Assignment(domain, task_id, task_dir, previous, attempts[key], trial,
                                  more_to_come=another_task_likely(len(pending), workers))
                running[key] = task
                report(Started(backend.submit(task), domain, task_id, trial))
            outcome = backend.wait(POLL_S, waiting=len(pending))
            if isinstance(outcome, TaskDone):
                finish(outcome.worker, outcome.task, outcome.result)
            elif isinstance(outcome, TaskLost):
                task = outcome.task
                record_worker_died(task.task_dir, task.task_id, outcome.reason, attempt=task.attempt)
                if outcome.retriable and task.attempt <= backend.retries:
                    running.pop(task.key)
                    pending.appendleft(task.key)  # its error record goes to its history
                    report(Retrying(outcome.worker, task.domain, task.task_id, outcome.reason, task.trial))
                else:
                    finish(outcome.worker, task, TaskResult.failed(outcome.reason))
            elif isinstance(outcome, BackendStopped):
                summary.stopped = outcome.reason
        if summary.stopped:
            cut_off_reason = f"the run stopped while this task ran: {summary.stopped}"
            report(Stopped(summary.stopped))
        clean = not running
    except KeyboardInterrupt:
        report(Interrupted())
        raise
    finally:
        backend.stop(clean)  # first: no worker writes to a folder after this
        for task in running.values():
            record_cut_off(task.task_dir, task.task_id, cut_off_reason, task.previous_errors)
    return summary
