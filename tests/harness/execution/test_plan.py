"""The plan checks every selected task before any desktop starts: a task that cannot run gets an error
record naming the file, field and value, and the others run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from osworld_cli.errors import TASK_ERRORS
from osworld_cli.main import cli
from osworld_harness.execution.plan import plan_tasks
from osworld_harness.execution.run import run_benchmark
from osworld_harness.results.config import RunConfig
from osworld_harness.results.task_folder import TaskState, read_task, task_state

GOOD_EVALUATOR = {"func": "exact_match", "result": {"type": "vm_file", "path": "/home/user/a.txt", "dest": "a.txt"},
                  "expected": {"type": "rule", "rules": {"expected": "x"}}}


def task(task_id: str, config=None, evaluator=None) -> dict:
    return {"id": task_id, "instruction": f"Do {task_id}.", "config": config or [],
            "evaluator": evaluator or GOOD_EVALUATOR}


@pytest.fixture
def task_set(tmp_path: Path) -> Path:
    """A meta file whose tasks are broken in every way a run must refuse, and one good task."""
    examples = tmp_path / "tasks" / "examples" / "os"
    examples.mkdir(parents=True)
    (tmp_path / "tasks" / "files").mkdir()
    (tmp_path / "tasks" / "files" / "there.txt").write_text("x")
    tasks = {
        "good": task("good", config=[{"type": "download", "parameters": {"files": [
            {"url": "../../files/there.txt", "path": "/home/user/there.txt"}]}}]),
        "unknown-metric": task("unknown-metric", evaluator={**GOOD_EVALUATOR, "func": "exact_mach"}),
        "unknown-getter": task("unknown-getter", evaluator={**GOOD_EVALUATOR, "result": {"type": "vm_fil"}}),
        "unknown-step": task("unknown-step", config=[{"type": "lanuch", "parameters": {"command": "x"}}]),
        "escaping": task("escaping", evaluator={**GOOD_EVALUATOR, "result": {
            "type": "vm_file", "path": "/home/user/a.txt", "dest": "/etc/cron.d/x"}}),
        "missing-download": task("missing-download", config=[{"type": "download", "parameters": {"files": [
            {"url": "../../files/not-there.txt", "path": "/home/user/a.txt"}]}}]),
        "twice": task("twice"),
    }
    for task_id, content in tasks.items():
        (examples / f"{task_id}.json").write_text(json.dumps(content))
    (examples / "not-json.json").write_text("{broken")
    ids = ["good", "not-json", "unknown-metric", "unknown-getter", "unknown-step", "escaping", "missing-download",
           "gone", "twice", "twice"]
    meta = tmp_path / "tasks" / "test_all.json"
    meta.write_text(json.dumps({"os": ids}))
    return meta


def config(meta: Path, tmp_path: Path, **more) -> RunConfig:
    return RunConfig(agent="noop", model="m", observation_type="screenshot", tasks=str(meta),
                     result_dir=str(tmp_path / "results"), **more)


def problem_fields(planned) -> list[tuple[str, str]]:
    return [(p.field, p.name) for p in planned.problems]


def test_every_task_that_cannot_run_is_found_with_its_field_and_value(task_set, tmp_path):
    plan = plan_tasks(config(task_set, tmp_path))
    assert [p.task_id for p in plan.to_run] == ["good"]
    invalid = {p.task_id: p for p in plan.invalid}
    assert set(invalid) == {"not-json", "unknown-metric", "unknown-getter", "unknown-step", "escaping",
                            "missing-download", "gone", "twice"}
    assert problem_fields(invalid["unknown-metric"]) == [("evaluator.func", "exact_mach")]
    assert "did you mean exact_match" in invalid["unknown-metric"].error
    assert problem_fields(invalid["unknown-getter"]) == [("evaluator.result.type", "vm_fil")]
    assert problem_fields(invalid["unknown-step"]) == [("config[0].type", "lanuch")]
    assert problem_fields(invalid["escaping"]) == [("evaluator.result.dest", "/etc/cron.d/x")]
    assert problem_fields(invalid["missing-download"]) == [("config[0].parameters.files[0].url",
                                                            "../../files/not-there.txt")]
    assert problem_fields(invalid["gone"]) == [("os[7]", "gone")]
    assert problem_fields(invalid["twice"]) == [("os[9]", "twice")]
    assert "listed twice" in invalid["twice"].error
    assert "not valid JSON" in invalid["not-json"].error


def test_a_run_writes_their_error_records_without_starting_a_desktop(task_set, tmp_path):
    summary = run_benchmark(config(task_set, tmp_path, task_ids=["not-json", "escaping", "gone", "twice"]))
    assert summary.ran == 0 and [p.task_id for p in summary.invalid] == ["not-json", "escaping", "gone", "twice"]
    folder = tmp_path / "results" / "pyautogui" / "screenshot" / "m" / "os"
    status = json.loads((folder / "escaping" / "status.json").read_text())
    assert status["status"] == "error" and status["error"]["type"] == "InvalidTask"
    problem = status["error"]["problems"][0]
    assert problem["file"].endswith("examples/os/escaping.json")
    assert (problem["field"], problem["value"]) == ("evaluator.result.dest", "/etc/cron.d/x")
    assert "/etc/cron.d/x" in status["error"]["message"]
    assert read_task(folder / "gone").status == "error"  # summaries count it as an error
    assert not (folder / "good").exists()


def test_a_refused_task_runs_once_it_is_fixed_and_a_refusal_is_not_stacked(task_set, tmp_path):
    run = config(task_set, tmp_path, task_ids=["unknown-metric"])
    run_benchmark(run)
    run_benchmark(run)  # refused again: the record is replaced
    task_dir = run.layout.task_dir("os", "unknown-metric")
    assert task_state(task_dir) is TaskState.ERROR
    assert "previous_errors" not in json.loads((task_dir / "status.json").read_text())
    path = task_set.parent / "examples" / "os" / "unknown-metric.json"
    path.write_text(json.dumps(task("unknown-metric")))
    plan = plan_tasks(run)
    assert [p.task_id for p in plan.to_run] == ["unknown-metric"] and not plan.invalid


def test_the_command_lists_them_and_exits_1(task_set, tmp_path):
    result = CliRunner().invoke(cli, ["run", "--agent", "noop", "--model", "m", "--obs", "screenshot",
                                      "--tasks", str(task_set), "--result-dir", str(tmp_path / "results"),
                                      "--task-id", "unknown-step", "--task-id", "gone"], terminal_width=200)
    assert result.exit_code == TASK_ERRORS, result.output
    assert "2 task(s) cannot run" in result.output
    assert "os/unknown-step:" in result.output and "config[0].type = 'lanuch'" in result.output
    assert "os/gone:" in result.output and "has no task file" in result.output


def test_validate_checks_a_meta_file_listing(task_set):
    result = CliRunner().invoke(cli, ["tasks", "validate", str(task_set)], terminal_width=300)
    assert result.exit_code == TASK_ERRORS, result.output
    assert "os[7] = 'gone': has no task file" in result.output
    assert "os[9] = 'twice': is listed twice in domain 'os' (first as os[8])" in result.output
    assert "config[0].parameters.files[0].url = '../../files/not-there.txt': not found at" in result.output
    good_only = task_set.parent / "test_good.json"
    good_only.write_text(json.dumps({"os": ["good"]}))
    assert CliRunner().invoke(cli, ["tasks", "validate", str(good_only)]).exit_code == 0
