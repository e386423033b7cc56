"""The report links a running task's live view (status.json's live_view, written without the token), and
nothing else a status.json could put there."""
from __future__ import annotations

import json
from pathlib import Path

from osworld_harness.results.report import build_report
from tests.harness.results.test_report import write_task

LIVE = "http://127.0.0.1:41765/view/desktop-1"


def with_live_view(folder: Path, url: str, status: str = "running") -> None:
    record = json.loads((folder / "status.json").read_text())
    (folder / "status.json").write_text(json.dumps({**record, "status": status, "live_view": url}))


def test_a_running_task_links_its_live_view_and_a_finished_one_does_not(tmp_path):
    run = tmp_path / "results" / "pyautogui" / "screenshot" / "human"
    with_live_view(write_task(run, "os", "running-task", score=None), LIVE)
    with_live_view(write_task(run, "os", "finished-task", score=1.0), LIVE.replace("1", "2"), status="ok")
    with_live_view(write_task(run, "os", "planted-task", score=None), "javascript:alert(1)//view/x")
    text = build_report([tmp_path / "results"], tmp_path / "report.html").read_text()
    assert text.count('class="live"') == 1
    assert f'<a class="live" href="{LIVE}">watch live</a>' in text
    assert 'href="javascript' not in text
