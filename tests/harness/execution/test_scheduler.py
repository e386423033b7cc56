"""The one scheduling loop (osworld_harness/execution/scheduler.py) on ThreadBackend: order, resume marking, the
breaker,
Ctrl-C, lost tasks and workers that cannot start, with task runners that write real records."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from osworld_harness.execution.events import Finished, Interrupted, Retrying, Started, Stopped
from osworld_harness.execution.run import run_benchmark
from osworld_harness.execution.task_result import TaskResult
from osworld_harness.execution.worker_pool import ThreadBackend
from osworld_harness.results.config import RunConfig
from osworld_harness.results.task_folder import (
    ErrorRecord,
    TaskState,
    TaskStatus,
    read_status,
    read_task,
    task_state,
    write_score,
    write_status,
)

TASKS = ["os-organize-invoices", "os-install-photoshop", "os-find-copy-lease", "os-make-script-executable"]
AUTH = {"kind": "auth", "signature": "auth openai m http://x", "message": "openai model 'm': HTTP 401"}


class ScriptedRunner:
    """A task runner whose outcome per task id is given: a score, "fatal" (a 401), "raise" (a bug that
    kills its worker) or a threading.Event to wait for first. It writes its folder as the episode does."""

    def __init__(self, script: dict, seen: list, trials: list | None = None):
        self.script, self.seen = script, seen
        self.trials = [] if trials is None else trials

    def run_task(self, domain, task_id, task_dir: Path, previous_errors, on_step=lambda n: None, trial=1,
                 more_to_come=True):
        self.seen.append((task_id, read_status(task_dir), list(previous_errors)))
        self.trials.append((task_id, trial, task_dir))
        what = self.script.get(task_id, 1.0)
        if isinstance(what, threading.Event):
            what.wait(30)
            what = 1.0
        if what == "raise":
            raise RuntimeError("the runner's own bug")
        on_step(1)
        status = TaskStatus("ok", task_id=task_id, steps=1, previous_errors=list(previous_errors))
        if what == "fatal":
            status.status, status.error = "error", ErrorRecord("LLMError", AUTH["message"], "", AUTH)
            write_status(task_dir, status)
            return TaskResult.failed(AUTH["message"], AUTH, steps=1)
        write_score(task_dir, what)
        write_status(task_dir, status)
        return TaskResult("ok", what, steps=1)

    def close(self):
        pass


def run(tmp_path, script=None, num_envs=1, report=lambda e: None, make_runner=None, **options):
    seen: list = []
    config = RunConfig(agent="noop", model="m", observation_type="screenshot", task_ids=options.pop("task_ids", TASKS),
                       num_envs=num_envs, result_dir=str(tmp_path), **options)
    backend = ThreadBackend(make_runner or (lambda: ScriptedRunner(script or {}, seen)))
    return run_benchmark(config, report, backend), config, seen


class HintedRunner(ScriptedRunner):
    def __init__(self, hints: list):
        super().__init__({}, [])
        self.hints = hints

    def run_task(self, domain, task_id, task_dir, previous_errors, on_step=lambda n: None, trial=1,
                 more_to_come=True):
        self.hints.append((task_id, more_to_come))
        return super().run_task(domain, task_id, task_dir, previous_errors, on_step, trial)


@pytest.mark.parametrize("num_envs, hinted", [(1, 3), (2, 2), (4, 0)])
def test_a_task_says_another_is_coming_only_while_one_waits_for_each_desktop(tmp_path, num_envs, hinted):
    hints: list = []
    run(tmp_path, num_envs=num_envs, make_runner=lambda: HintedRunner(hints))
    # a desktop readies the next task's desktop (local: the warm spare) only while a task waits for each
    # desktop: on one desktop every task but the last; on two, the first two of four (the last two go to
    # whichever desktops finish first, and a spare of the other would be booted for nothing); on four
    # desktops with four tasks, none
    assert sorted(hints) == sorted([(t, True) for t in TASKS[:hinted]] + [(t, False) for t in TASKS[hinted:]])


def test_tasks_run_in_the_plans_order_each_marked_running_before_its_worker_gets_it(tmp_path):
    events = []
    summary, config, seen = run(tmp_path, {TASKS[1]: 0.0}, report=events.append)
    assert [task_id for task_id, _, _ in seen] == TASKS
    assert all(status.status == "running" and status.attempt == 1 for _, status, _ in seen)
    assert [e.task_id for e in events if isinstance(e, Started)] == TASKS
    assert [e.task_id for e in events if isinstance(e, Finished)] == TASKS
    assert (summary.ran, summary.ok, summary.score_sum, summary.stopped) == (4, 4, 3.0, None)
    assert [read_task(config.layout.task_dir("os", t)).score for t in TASKS] == [1.0, 0.0, 1.0, 1.0]


def test_a_retried_error_carries_its_record_into_the_running_mark_and_the_new_record(tmp_path):
    summary, config, _ = run(tmp_path, {TASKS[0]: "fatal"}, task_ids=TASKS[:1])
    assert summary.errors == 1
    summary, config, seen = run(tmp_path, task_ids=TASKS[:1], retry_errors=True)
    (_, mark, previous), = seen
    assert [p.error.type for p in mark.previous_errors] == ["LLMError"] == [p.error.type for p in previous]
    status = read_status(config.layout.task_dir("os", TASKS[0]))
    assert status.status == "ok" and status.previous_errors[0].error.message == AUTH["message"]


def test_the_breaker_stops_the_run_and_tasks_never_started_have_no_folder(tmp_path):
    events = []
    summary, config, seen = run(tmp_path, {t: "fatal" for t in TASKS}, report=events.append, stop_after_fatal=2)
    assert summary.stopped.startswith("2 tasks in a row failed the same way: openai model 'm': HTTP 401")
    assert [type(e) for e in events if isinstance(e, (Finished, Stopped))] == [Finished, Finished, Stopped]
    assert len(seen) == 2
    assert [task_state(config.layout.task_dir("os", t)) for t in TASKS] == [TaskState.ERROR] * 2 + [TaskState.NEW] * 2
    assert not (config.layout.model_dir / "os" / TASKS[2]).exists()


def test_a_task_cut_off_by_the_breaker_says_so_and_runs_again_next_time(tmp_path):
    release = threading.Event()
    script = {TASKS[0]: "fatal", TASKS[1]: "fatal", TASKS[2]: release}
    try:  # held until the end: a thread cannot be killed as a worker process is
        summary, config, _ = run(tmp_path, script, num_envs=2, stop_after_fatal=2,
                                 task_ids=[TASKS[0], TASKS[2], TASKS[1]])
        assert summary.stopped
        cut = read_status(config.layout.task_dir("os", TASKS[2]))
        assert cut.status == "running" and cut.cut_off.startswith("the run stopped while this task ran: 2 tasks")
        assert task_state(config.layout.task_dir("os", TASKS[2])) is TaskState.INTERRUPTED
    finally:
        release.set()


def test_ctrl_c_cuts_off_the_running_task_and_a_resume_finishes_the_rest(tmp_path):
    release = threading.Event()
    events = []

    def report(event):
        events.append(event)
        if isinstance(event, Started) and event.task_id == TASKS[1]:
            raise KeyboardInterrupt

    try:  # a thread cannot be killed: the cut-off task is held until the end, as a killed process would be
        with pytest.raises(KeyboardInterrupt):
            run(tmp_path, {TASKS[1]: release}, report=report)
        assert isinstance(events[-1], Interrupted)
        config = RunConfig(agent="noop", model="m", observation_type="screenshot", task_ids=TASKS,
                           result_dir=str(tmp_path))
        states = [task_state(config.layout.task_dir("os", t)) for t in TASKS]
        assert states[:2] == [TaskState.DONE, TaskState.INTERRUPTED] and states[2:] == [TaskState.NEW] * 2

        summary, config, seen = run(tmp_path)
        assert [task_id for task_id, _, _ in seen] == TASKS[1:]  # the finished one is not run again
    finally:
        release.set()
    history = read_status(config.layout.task_dir("os", TASKS[1])).to_json()["previous_errors"]
    assert history == [{"error": {"type": "Interrupted",
                                  "message": "the run was interrupted (Ctrl-C) while this task ran"}, "finished": None}]


def test_a_task_whose_worker_dies_is_an_error_record_and_a_new_worker_runs_the_rest(tmp_path):
    events = []
    summary, config, seen = run(tmp_path, {TASKS[1]: "raise"}, report=events.append)
    assert (summary.ran, summary.ok, summary.errors) == (4, 3, 1)
    status = read_status(config.layout.task_dir("os", TASKS[1]))
    assert status.status == "error" and status.error.type == "WorkerDied"
    assert status.error.message == ("the worker thread running this task died "
                                          "(RuntimeError: the runner's own bug)")
    workers = {e.task_id: e.worker for e in events if isinstance(e, Started)}
    assert workers[TASKS[2]] != workers[TASKS[1]]
    assert not any(isinstance(e, Retrying) for e in events)  # a local worker's task is not retried


def test_workers_that_cannot_start_stop_the_run_and_leave_the_task_to_the_next_run(tmp_path):
    def broken():
        raise ImportError("no module named 'desktop_thing'")

    summary, config, _ = run(tmp_path, make_runner=broken, task_ids=TASKS[:1])
    assert summary.ran == 0
    assert summary.stopped == ("3 worker threads in a row died before running a task "
                               "(last ImportError: no module named 'desktop_thing')")
    status = read_status(config.layout.task_dir("os", TASKS[0]))
    assert status.status == "running" and status.cut_off.startswith("the run stopped while this task ran")
