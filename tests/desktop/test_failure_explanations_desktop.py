"""On a real desktop: a built-in task run by the no-op agent leaves status.json with the metric's
explanation of its 0, and `osworld summarize --failures` prints it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from desktop_env.tasks.loader import BUILTIN_ROOT
from osworld_cli.main import cli
from osworld_harness.execution.run import run_benchmark
from osworld_harness.results.config import RunConfig

pytestmark = pytest.mark.desktop

TASK = "os-organize-invoices"  # check_include_exclude over `ls` of ~/Documents/Invoices and ~/Downloads


def test_noop_run_records_why_it_scored_zero_and_summarize_failures_shows_it(tmp_path: Path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for name in ("examples", "solutions", "files"):
        (tasks / name).symlink_to(BUILTIN_ROOT / name)
    (tasks / "test_os.json").write_text(json.dumps({"os": [TASK]}))
    results = tmp_path / "results"
    run_benchmark(RunConfig(agent="noop", model="noop", observation_type="screenshot",
                            tasks=str(tasks / "test_os.json"), result_dir=str(results),
                            cache_dir=str(tmp_path / "cache"), record=False))

    folder = results / "pyautogui" / "screenshot" / "noop" / "os" / TASK
    status = json.loads((folder / "status.json").read_text())
    assert status["status"] == "ok" and (folder / "result.txt").read_text().strip() == "0.0"
    evaluation = status["evaluation"]
    assert evaluation["score"] == 0.0
    assert [part["func"] for part in evaluation["metrics"]] == ["check_include_exclude"]
    # The agent did nothing, so the invoices are still in Downloads: the text lacks the wanted listing.
    explanation = evaluation["explanation"]
    assert "lacks" in explanation and "invoices:Invoice March.pdf" in explanation
    assert "downloads:" in explanation  # and it quotes what the desktop actually showed

    shown = CliRunner().invoke(cli, ["summarize", "--failures", str(results)], terminal_width=400)
    assert shown.exit_code == 0, shown.output
    assert f"os/{TASK}" in shown.output and "lacks" in shown.output
