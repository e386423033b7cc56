"""--trials K: each trial of a task is a task of its own for the scheduler, with its own folder (trial 1
at OSWorld's path, trial k in <id>/trials/<k>/), resumed, retried and summarized per (task, trial)."""
from __future__ import annotations

import json
from pathlib import Path

from osworld_harness.execution.run import run_benchmark
from osworld_harness.execution.task_result import TaskResult
from osworld_harness.execution.worker_pool import ThreadBackend
from osworld_harness.results.config import RunConfig
from osworld_harness.results.summary import find_runs
from osworld_harness.results.task_folder import (
    ErrorRecord,
    RunLayout,
    TaskState,
    TaskStatus,
    read_status,
    split_trial,
    start_task,
    task_state,
    write_score,
    write_status,
)

TASKS = ["os-find-copy-lease", "os-make-script-executable"]


class TrialRunner:
    """Writes each trial's folder as the episode does; `fail` maps (task id, trial) to an error to record."""

    def __init__(self, ran: list, fail: dict | None = None):
        self.ran, self.fail = ran, fail or {}

    def run_task(self, domain, task_id, task_dir: Path, previous_errors, on_step=lambda n: None, trial=1,
                 more_to_come=True):
        self.ran.append((task_id, trial))
        status = TaskStatus("ok", task_id=task_id, trial=trial, steps=1, previous_errors=list(previous_errors))
        if (task_id, trial) in self.fail:
            status.status, status.error = "error", ErrorRecord("RuntimeError", self.fail[(task_id, trial)], "")
            write_status(task_dir, status)
            return TaskResult.failed(status.error.message, steps=1)
        write_score(task_dir, float(trial % 2))
        write_status(task_dir, status)
        return TaskResult("ok", float(trial % 2), steps=1)

    def close(self):
        pass


def run(tmp_path, trials, fail=None, **options):
    ran: list = []
    config = RunConfig(agent="noop", model="m", observation_type="screenshot", task_ids=TASKS, trials=trials,
                       result_dir=str(tmp_path), **options)
    summary = run_benchmark(config, backend=ThreadBackend(lambda: TrialRunner(ran, fail)))
    return summary, config, ran


def test_trial_one_is_the_task_folder_and_trial_k_lives_inside_it(tmp_path):
    layout = RunLayout(tmp_path, "pyautogui", "screenshot", "org/m")
    first, third = layout.task_dir("os", "t1"), layout.task_dir("os", "t1", 3)
    assert first == tmp_path / "pyautogui/screenshot/org_m/os/t1"
    assert third == first / "trials" / "3"
    assert split_trial(first) == (first, 1) and split_trial(third) == (first, 3)
    assert split_trial(first / "trials" / "1") == (first / "trials" / "1", 1)  # trial 1 is never under trials/


def test_every_trial_runs_from_its_own_folder_first_trials_first(tmp_path):
    summary, config, ran = run(tmp_path, trials=3)
    assert ran == [(t, k) for k in (1, 2, 3) for t in TASKS]
    assert (summary.ran, summary.ok) == (6, 6)
    for task_id in TASKS:
        for trial in (1, 2, 3):
            folder = config.layout.task_dir("os", task_id, trial)
            assert (folder / "result.txt").read_text() == f"{float(trial % 2)}\n"
            assert read_status(folder).trial == trial


def test_summaries_read_each_trial_as_a_record_of_its_task(tmp_path):
    _, config, _ = run(tmp_path, trials=2)
    (only,) = find_runs(tmp_path)
    assert only.path == config.layout.model_dir and only.label == "pyautogui/screenshot/m"
    assert sorted((r.domain, r.task_id, r.trial, r.score) for r in only.records) == [
        ("os", t, k, float(k % 2)) for t in TASKS for k in (1, 2)]
    assert all(only.folder(r) == config.layout.task_dir(r.domain, r.task_id, r.trial) for r in only.records)


def test_resume_finishes_only_the_trials_that_are_missing(tmp_path):
    _, config, _ = run(tmp_path, trials=3, fail={(TASKS[0], 2): "the model API did not answer"})
    killed = config.layout.task_dir("os", TASKS[1], 3)
    start_task(killed, TASKS[1], trial=3)  # as a run killed while this trial ran leaves it
    assert task_state(killed) is TaskState.INTERRUPTED

    _, _, ran = run(tmp_path, trials=3)
    assert ran == [(TASKS[1], 3)]  # the errored trial is kept without --retry-errors
    _, _, ran = run(tmp_path, trials=3, retry_errors=True)
    assert ran == [(TASKS[0], 2)]
    status = read_status(config.layout.task_dir("os", TASKS[0], 2))
    assert status.status == "ok" and status.previous_errors[0].error.message == "the model API did not answer"


def test_rerunning_trial_one_keeps_the_other_trials(tmp_path):
    _, config, _ = run(tmp_path, trials=2, fail={(TASKS[0], 1): "Xvfb died"})
    second = config.layout.task_dir("os", TASKS[0], 2)
    before = (second / "status.json").read_text()
    _, _, ran = run(tmp_path, trials=2, retry_errors=True)
    assert ran == [(TASKS[0], 1)]
    assert (second / "status.json").read_text() == before and task_state(second) is TaskState.DONE


def test_more_trials_later_add_to_the_same_folder(tmp_path):
    run(tmp_path, trials=1)
    summary, config, ran = run(tmp_path, trials=3)
    assert ran == [(t, k) for k in (2, 3) for t in TASKS] and summary.skipped_done == 2
    assert json.loads((config.layout.model_dir / "args.json").read_text())["config"]["trials"] == 3


def test_a_task_folder_holding_only_later_trials_has_not_started_its_first(tmp_path):
    folder = tmp_path / "os" / "t1"
    (folder / "trials" / "2").mkdir(parents=True)
    assert task_state(folder) is TaskState.NEW


def test_a_task_that_cannot_run_gets_its_record_in_every_trial(tmp_path):
    examples = tmp_path / "tasks" / "examples" / "os"
    examples.mkdir(parents=True)
    (examples / "broken.json").write_text(json.dumps({"id": "broken", "instruction": "x", "config": [],
                                                      "evaluator": {"func": "no_such_metric"}}))
    meta = tmp_path / "tasks" / "test_all.json"
    meta.write_text(json.dumps({"os": ["broken"]}))
    config = RunConfig(agent="noop", model="m", observation_type="screenshot", tasks=str(meta), trials=2,
                       result_dir=str(tmp_path / "results"))
    summary = run_benchmark(config, backend=ThreadBackend(lambda: TrialRunner([])))
    assert [(p.task_id, p.trial) for p in summary.invalid] == [("broken", 1), ("broken", 2)]
    for trial in (1, 2):
        status = read_status(config.layout.task_dir("os", "broken", trial))
        assert (status.status, status.trial, status.error.type) == ("error", trial, "InvalidTask")
