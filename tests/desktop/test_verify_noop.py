"""`osworld verify --noop-only` over a task folder: the no-op agent runs the tasks that need no network on
real desktops, and every task it passes is listed as a free pass."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from osworld_cli.errors import TASK_ERRORS
from osworld_cli.main import cli

pytestmark = pytest.mark.desktop

CHROME = ["google-chrome", "--remote-debugging-port=1337"]
TASKS = {
    # Scored on what any desktop already says: doing nothing passes.
    "os/echo": {"instruction": "Print hi.", "evaluator": {
        "func": "exact_match", "result": {"type": "vm_command_line", "command": "echo hi"},
        "expected": {"type": "rule", "rules": {"expected": "hi\n"}}}},
    # Chrome's profile after Chromium ran and exited, read as OSWorld's auto-delete getter reads it.
    "chrome/site-data": {"instruction": "Make Chrome delete site data when it closes.",
                         "config": [{"type": "launch", "parameters": {"command": CHROME}}],
                         "evaluator": {"postconfig": [{"type": "launch",
                                                       "parameters": {"command": ["pkill", "chrome"]}},
                                                      {"type": "sleep", "parameters": {"seconds": 3}}],
                                       "func": "exact_match", "result": {"type": "data_delete_automacally"},
                                       "expected": {"type": "rule", "rules": {"expected": "true"}}}},
    # Needs a live page: left out.
    "chrome/live": {"instruction": "Read the page.",
                    "config": [{"type": "chrome_open_tabs", "parameters": {"urls_to_open": ["https://www.example.org/"]}}],
                    "evaluator": {"func": "exact_match", "result": {"type": "vm_command_line", "command": "true"},
                                  "expected": {"type": "rule", "rules": {"expected": "x"}}}},
}


def test_noop_only_lists_every_task_doing_nothing_passes(tmp_path):
    index: dict[str, list[str]] = {}
    for name, fields in TASKS.items():
        domain, task_id = name.split("/")
        path = tmp_path / "tasks" / "examples" / domain / f"{task_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"id": task_id, "config": [], **fields}))
        index.setdefault(domain, []).append(task_id)
    (tmp_path / "tasks" / "test_all.json").write_text(json.dumps(index))
    result = CliRunner().invoke(cli, ["verify", "--noop-only", "--tasks", str(tmp_path / "tasks"), "--num-envs", "2",
                                      "--cache-dir", str(tmp_path / "cache"), "--result-dir", str(tmp_path / "results"),
                                      "--screen-size", "1024x768"], terminal_width=300)
    assert result.exit_code == TASK_ERRORS, result.output
    assert "running the no-op agent on 2 task(s)" in result.output and "1 left out" in result.output
    assert "FREE PASS os/echo noop=1.0" in result.output
    assert "ok chrome/site-data noop=0.0" in result.output  # current Chromium's own profile marks are no pass
    assert "1 free pass(es):" in result.output and "os/echo: the no-op agent scored 1" in result.output
    assert "reference" not in result.output.split("1 left out")[1]  # no reference run
