"""`osworld verify` is two ordinary runs and a comparison: what a run refuses, verify reports as not sound."""
from __future__ import annotations

import json

from click.testing import CliRunner

from osworld_cli.errors import TASK_ERRORS
from osworld_cli.main import cli
from osworld_harness.experiments.verify import Verdict


def test_a_task_that_cannot_run_is_not_sound_and_says_why(tmp_path):
    examples = tmp_path / "tasks" / "examples" / "os"
    examples.mkdir(parents=True)
    (examples / "t.json").write_text(json.dumps({"id": "t", "instruction": "Do it.", "evaluator": {"func": "nope"}}))
    (tmp_path / "tasks" / "test_all.json").write_text(json.dumps({"os": ["t"]}))
    result = CliRunner().invoke(cli, ["verify", "--tasks", str(tmp_path / "tasks" / "test_all.json"),
                                      "--result-dir", str(tmp_path / "results")], terminal_width=300)
    assert result.exit_code == TASK_ERRORS, result.output
    assert "NOT SOUND os/t reference=None noop=None" in result.output
    assert "reference: InvalidTask: the task cannot run:" in result.output
    assert "evaluator.func = 'nope'" in result.output


def test_soundness():
    assert Verdict("os", "t", 1.0, 0.0).sound
    assert not Verdict("os", "t", 1.0, 1.0).sound and not Verdict("os", "t", 0.0, 0.0).sound
    assert not Verdict("os", "t", 1.0, 0.0, error="no-op: WorkerDied: gone").sound
