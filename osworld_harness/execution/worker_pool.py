"""Backends whose workers run on this machine: LocalBackend (one spawned process per desktop, what
`osworld run` uses) and ThreadBackend (threads in this process, for tests and for Python callers
that make their own environments).

Each worker has its own task queue, so the pool always knows which worker holds which task; a
worker says when it begins a task and when it finished it. A worker that dies under a task
loses that task (TaskLost); one that dies before beginning its task (at start-up) hands the task
to a replacement, and after WORKER_START_ATTEMPTS of those in a row the pool gives up
(BackendStopped) instead of replacing workers forever.
"""
from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import wait as wait_for_ready
from multiprocessing.process import BaseProcess
from typing import Any

from .backend import Assignment, BackendStopped, Outcome, TaskDone, TaskLost, TaskRunner
from .events import Reporter, StepTaken
from .task_result import TaskResult
from .task_worker import DesktopWorker

WORKER_CLOSE_TIMEOUT_S = 60  # for workers to stop their desktops at the end of a run
WORKER_KILL_TIMEOUT_S = 30   # for a terminated worker process to go before it is killed
WORKER_START_ATTEMPTS = 3    # workers that die before beginning a task, in a row, before the pool gives up


@dataclass(frozen=True)
class Began:
    worker: int


@dataclass(frozen=True)
class Done:
    worker: int
    result: TaskResult


def step_reporter(worker_id: int, task: Assignment, events: Any) -> Callable[[int], None]:
    return lambda step: events.put(StepTaken(worker_id, task.domain, task.task_id, step, task.trial))


def serve(worker_id: int, make_runner: Callable[[], TaskRunner], tasks: Any, events: Any) -> None:
    """A worker's life: take tasks from its own queue until None, saying when each begins and ends."""
    runner = make_runner()
    try:
        while True:
            task: Assignment | None = tasks.get()
            if task is None:
                return
            events.put(Began(worker_id))
            result = runner.run_task(task.domain, task.task_id, task.task_dir, task.previous_errors,
                                     on_step=step_reporter(worker_id, task, events), trial=task.trial,
                                     more_to_come=task.more_to_come)
            events.put(Done(worker_id, result))
    finally:
        runner.close()


class PoolWorker:
    """One worker as the pool sees it: its queue, its task, and whether it is still there."""

    def __init__(self, worker_id: int, tasks: Any):
        self.id = worker_id
        self.tasks = tasks
        self.task: Assignment | None = None
        self.begun = False

    def alive(self) -> bool:
        raise NotImplementedError

    def how_it_ended(self) -> str:
        raise NotImplementedError

    def ended_cleanly(self) -> bool:
        raise NotImplementedError


class WorkerPool:
    """What LocalBackend and ThreadBackend share: everything but how a worker is started and ended."""

    retries = 0          # a lost local worker takes its task with it: the record says so, no retry
    worker_kind, worker_kind_plural = "worker", "workers"
    how_to_see_why = ""

    def __init__(self) -> None:
        self.workers: dict[int, PoolWorker] = {}
        self.size = 0
        self.next_id = 0
        self.died_starting = 0  # workers in a row that died before beginning a task
        self.report: Reporter = lambda event: None
        self.events: Any = None

    # -- what subclasses provide
    def _spawn(self, worker_id: int) -> PoolWorker:
        raise NotImplementedError

    def _end(self, workers: list[PoolWorker], clean: bool) -> None:
        raise NotImplementedError

    # -- the Backend protocol
    def start(self, workers: int, report: Reporter) -> None:
        self.size, self.report = workers, report
        for _ in range(workers):
            self._add()

    def free(self) -> int:
        idle = sum(1 for w in self.workers.values() if w.task is None)
        return idle + max(0, self.size - len(self.workers))

    def submit(self, task: Assignment) -> int:
        worker = next((w for w in self.workers.values() if w.task is None), None) or self._add()
        worker.task, worker.begun = task, False
        worker.tasks.put(task)
        return worker.id

    def wait(self, timeout: float, waiting: int) -> Outcome | None:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:  # a steady stream of step events must not keep a dead worker from being noticed
                event = self.events.get(timeout=left) if left > 0 else None
            except queue.Empty:
                event = None
            if event is None:
                return self._check_workers()
            outcome = self._on_event(event)
            if outcome is not None:
                return outcome

    def stop(self, clean: bool) -> None:
        workers = list(self.workers.values())
        self.workers.clear()
        for worker in workers:
            if worker.task is None or not clean:
                worker.tasks.put(None)  # a worker still running a task is ended by _end, not asked
        self._end(workers, clean)

    # -- the books
    def _add(self) -> PoolWorker:
        worker = self._spawn(self.next_id)
        self.workers[worker.id] = worker
        self.next_id += 1
        return worker

    def _on_event(self, event: Any) -> Outcome | None:
        worker_id = getattr(event, "worker", None)
        worker = self.workers.get(worker_id) if isinstance(worker_id, int) else None
        if isinstance(event, StepTaken):
            self.report(event)
        elif isinstance(event, Began) and worker is not None:
            worker.begun = True
            self.died_starting = 0
        elif isinstance(event, Done) and worker is not None and worker.task is not None:
            task, worker.task = worker.task, None
            return TaskDone(worker.id, task, event.result)
        return None

    def _check_workers(self) -> Outcome | None:
        for worker in list(self.workers.values()):
            if worker.alive() or (worker.task is None and worker.ended_cleanly()):
                continue
            del self.workers[worker.id]
            how = worker.how_it_ended()
            if worker.task is not None and worker.begun:
                return TaskLost(worker.id, worker.task, f"the {self.worker_kind} running this task died ({how})",
                                retriable=False)
            self.died_starting += 1
            if self.died_starting >= WORKER_START_ATTEMPTS:  # a new one would die the same way
                return BackendStopped(f"{self.died_starting} {self.worker_kind_plural} in a row died before running a "
                                      f"task (last {how}){self.how_to_see_why}")
            if worker.task is not None:  # it never began: a new worker takes it
                self.submit(worker.task)
        return None


# -- worker processes -------------------------------------------------------------------------------
def _die_with_parent() -> None:
    """Makes this worker SIGTERM itself when the run's main process dies (even by kill -9), two ways, and exits
    at once if it died already: a spawned worker takes a second or more to get here, and a parent killed
    meanwhile sends no signal (the worker is then init's child and would boot a desktop for nobody).

    The kernel's parent-death signal comes at once, but a worker of a run killed in make test once never got
    it: it finished its task and waited for the next for good, its desktop up. So a thread also waits on the
    pipe spawn left between the two processes, whose far end only the parent holds: it ends when the parent
    does, however the parent died."""
    parent = mp.parent_process()
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    if parent is None:
        return
    if parent.pid is not None and os.getppid() != parent.pid:
        sys.exit(143)

    def parent_gone() -> None:
        wait_for_ready([parent.sentinel])  # readable (at its end) once the parent is gone
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=parent_gone, name="osworld-parent-watch", daemon=True).start()


def _process_main(worker_id: int, config: Any, tasks: mp.Queue[Any], events: mp.Queue[Any]) -> None:
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and tells us to stop

    def terminated(*_: object) -> None:
        # Stopped by the pool, or the run's main process died (kill -9 included): nobody waits for this worker's
        # last events. Without this its exit waited for their feeder thread, and a worker of a killed run
        # stayed alive (idle, its desktop closed) until the machine rebooted.
        events.cancel_join_thread()
        sys.exit(143)

    signal.signal(signal.SIGTERM, terminated)

    serve(worker_id, lambda: DesktopWorker(config), tasks, events)


class ProcessWorker(PoolWorker):
    def __init__(self, worker_id: int, tasks: Any, process: BaseProcess):
        super().__init__(worker_id, tasks)
        self.process = process

    def alive(self) -> bool:
        return self.process.is_alive()

    def ended_cleanly(self) -> bool:
        return self.process.exitcode == 0

    def how_it_ended(self) -> str:
        return f"exit code {self.process.exitcode}"


class LocalBackend(WorkerPool):
    """One spawned process per desktop; Ctrl-C or a stop terminates them, and their desktops with them."""

    worker_kind, worker_kind_plural = "worker process", "worker processes"
    how_to_see_why = "; run one task with -v to see why"

    def __init__(self, config: Any):
        super().__init__()
        self.config = config
        self.ctx = mp.get_context("spawn")
        self.events = self.ctx.Queue()

    def _spawn(self, worker_id: int) -> PoolWorker:
        tasks = self.ctx.Queue()
        process = self.ctx.Process(target=_process_main, args=(worker_id, self.config, tasks, self.events),
                                   name=f"osworld-worker-{worker_id}")
        process.start()
        return ProcessWorker(worker_id, tasks, process)

    def _end(self, workers: list[PoolWorker], clean: bool) -> None:
        processes = [w.process for w in workers if isinstance(w, ProcessWorker)]
        if clean:  # each has its stop marker: let it close its desktop and remove its folders
            deadline = time.monotonic() + WORKER_CLOSE_TIMEOUT_S
            for process in processes:
                process.join(timeout=max(0.0, deadline - time.monotonic()))
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=WORKER_KILL_TIMEOUT_S)
            if process.is_alive():
                process.kill()


# -- threads ----------------------------------------------------------------------------------------
class ThreadWorker(PoolWorker):
    def __init__(self, worker_id: int, tasks: Any):
        super().__init__(worker_id, tasks)
        self.failure: str | None = None
        self.thread: threading.Thread | None = None

    def alive(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def ended_cleanly(self) -> bool:
        return self.failure is None

    def how_it_ended(self) -> str:
        return self.failure or "it ended"


class ThreadBackend(WorkerPool):
    """Workers as threads of this process, each with a TaskRunner from `make_runner` (called in its thread).

    A thread cannot be killed: on Ctrl-C or a stop, a task still running finishes in the background
    (its threads are daemons, so they do not hold the process up)."""

    worker_kind, worker_kind_plural = "worker thread", "worker threads"

    def __init__(self, make_runner: Callable[[], TaskRunner]):
        super().__init__()
        self.make_runner = make_runner
        self.events = queue.Queue()

    @classmethod
    def with_env_factory(cls, config: Any, env_factory: Callable[[], Any]) -> ThreadBackend:
        """Desktop workers whose environment comes from `env_factory` (called once per worker)."""
        return cls(lambda: DesktopWorker(config, env_factory=env_factory))

    def _spawn(self, worker_id: int) -> PoolWorker:
        worker = ThreadWorker(worker_id, queue.Queue())

        def main() -> None:
            try:
                serve(worker_id, self.make_runner, worker.tasks, self.events)
            except BaseException as e:  # the thread's end, as a process's exit code would say it
                worker.failure = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__

        worker.thread = threading.Thread(target=main, name=f"osworld-worker-{worker_id}", daemon=True)
        worker.thread.start()
        return worker

    def _end(self, workers: list[PoolWorker], clean: bool) -> None:
        if clean:
            deadline = time.monotonic() + WORKER_CLOSE_TIMEOUT_S
            for worker in workers:
                if isinstance(worker, ThreadWorker) and worker.thread is not None:
                    worker.thread.join(timeout=max(0.0, deadline - time.monotonic()))
