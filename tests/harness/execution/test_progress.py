"""The progress display reads the run's typed events; what a task or model said is printed as text, never markup."""
from __future__ import annotations

import io

from rich.console import Console

from osworld_harness.execution.events import Finished, Note, Planned, Retrying, Started, StepTaken, Stopped
from osworld_harness.execution.plan import PlannedTask
from osworld_harness.execution.progress import RunProgress
from osworld_harness.execution.task_result import TaskResult
from osworld_harness.results.task_folder import TaskState


def test_a_run_as_plain_lines():
    out = io.StringIO()
    progress = RunProgress(Console(file=out, width=200), live=False)
    with progress:
        warned = PlannedTask("os", "b", TaskState.NEW, warnings=["[b]examine_x[/b] is ignored by the metric"])
        progress(Planned(to_run=[PlannedTask("os", "a", TaskState.NEW), warned],
                         skipped=[PlannedTask("os", "c", TaskState.DONE)]))
        progress(Started(0, "os", "a"))
        progress(StepTaken(0, "os", "a", 2))
        progress(Finished(0, "os", "a", TaskResult("ok", 1.0, steps=2)))
        progress(Started(0, "os", "b"))
        progress(Finished(0, "os", "b", TaskResult.failed("[bold]HTTP 401[/bold] from the model")))
        progress(Retrying(1, "os", "c", "the Ray worker died"))
        progress(Note("the cluster holds 1 desktop(s)"))
        progress(Stopped("2 tasks in a row failed the same way"))
    text = out.getvalue()
    assert "2 task(s) to run, 1 already done or errored (skipped)" in text
    assert "warning    os/b: [b]examine_x[/b] is ignored by the metric" in text
    assert "finished os/a: score 1 in 2 step(s)" in text
    assert "os/b: [bold]HTTP 401[/bold] from the model" in text  # as the error said it
    assert "retrying os/c: the Ray worker died" in text and "stopping the run" in text
    assert (progress.done, progress.ok, progress.errors) == (2, 1, 1)


def test_two_trials_of_one_task_run_side_by_side_each_under_its_own_name():
    out = io.StringIO()
    progress = RunProgress(Console(file=out, width=200), live=False)
    with progress:
        progress(Started(0, "os", "a"))
        progress(Started(1, "os", "a", trial=2))
        progress(StepTaken(1, "os", "a", 3, trial=2))
        assert progress.running == {"os/a": 0, "os/a #2": 3}
        progress(Finished(1, "os", "a", TaskResult("ok", 0.0, steps=3), trial=2))
        assert progress.running == {"os/a": 0}
    assert "started  os/a #2" in out.getvalue() and "finished os/a #2: score 0 in 3 step(s)" in out.getvalue()
