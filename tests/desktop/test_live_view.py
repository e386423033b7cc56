"""The live view on a real desktop, in a real headless Chromium: the page shows the desktop's pixels (a window
the task opened, found in a screenshot of the page); with `--agent human` what is typed in the page goes into
the desktop's text editor, the desktop waits while the person leaves the page and comes back, Done ends the
task, the task scores 1, traj.jsonl holds the typed keys, and the replay agent playing that traj.jsonl on a
fresh desktop scores 1 too. The view's token is in no result file. A watched run is view-only."""
from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
import requests
from click.testing import CliRunner

from desktop_env.controllers.python import PythonController
from desktop_env.controllers.transport import Endpoint
from desktop_env.desktop_env import DesktopEnv
from desktop_env.live_view.desktop import full_url
from desktop_env.live_view.server import shared_server
from desktop_env.waiting import poll_until
from osworld_cli.main import cli
from osworld_harness.execution.run import run_benchmark
from osworld_harness.execution.worker_pool import ThreadBackend
from osworld_harness.results.config import RunConfig
from tests.live_view.chromium import CHROMIUM, Chromium, colour_share, press_with_control
from tests.serve_cli import interrupt, osworld, wait_until_served

pytestmark = [pytest.mark.desktop, pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")]

GREEN = (0x12, 0xAB, 0x34)
TYPED = "hello human"
TASK: dict[str, Any] = {
    "id": "live-type-note",
    "snapshot": "os",
    "instruction": f"Type '{TYPED}' into the note open in the Text Editor and save it.",
    "source": "osworld-test",
    "config": [
        {"type": "execute", "parameters": {"command": ["bash", "-c", "printf '' > /home/user/note.txt"]}},
        # a window of one colour the test looks for in the page's screenshot, beside the editor
        {"type": "launch", "parameters": {"command": [
            "python3", "-c", "import tkinter; w = tkinter.Tk(); w.title('green'); w.geometry('500x400+1300+300');"
            " w.configure(bg='#12ab34'); w.mainloop()"]}},
        {"type": "launch", "parameters": {"command": ["gedit", "/home/user/note.txt"]}},
        # the editor has the keys before the person types (a loaded desktop left them with the green window)
        {"type": "activate_window", "parameters": {"window_name": "note.txt"}},
    ],
    "related_apps": ["gedit"],
    "evaluator": {
        "func": "exact_match",
        "result": {"type": "vm_command_line", "shell": True, "command": "tr -d '\\n' < /home/user/note.txt"},
        "expected": {"type": "rule", "rules": {"expected": TYPED}},
    },
}


@pytest.fixture
def meta(tmp_path) -> str:
    root = tmp_path / "tasks"
    (root / "examples" / "os").mkdir(parents=True)
    (root / "examples" / "os" / f"{TASK['id']}.json").write_text(json.dumps(TASK))
    (root / "test_live.json").write_text(json.dumps({"os": [TASK["id"]]}))
    return str(root / "test_live.json")


def config(meta: str, result_dir: Path, **overrides: Any) -> RunConfig:
    options: dict[str, Any] = dict(tasks=meta, observation_type="screenshot", result_dir=str(result_dir),
                                   cache_dir=str(result_dir / "cache"), max_steps=50)
    return RunConfig(**{**options, **overrides})


def task_folder(result_dir: Path, model: str) -> Path:
    return result_dir / "pyautogui" / "screenshot" / model / "os" / TASK["id"]


def start_run(run_config: RunConfig, results: Path) -> tuple[threading.Thread, dict[str, Any]]:
    """The run in a thread of its own on local desktops; its summary lands in the dict under "summary"."""
    backend = ThreadBackend.with_env_factory(run_config, lambda: DesktopEnv(
        provider_name="local", action_space="pyautogui", require_a11y_tree=False, cache_dir=str(results / "cache")))
    ran: dict[str, Any] = {}
    run = threading.Thread(target=lambda: ran.setdefault("summary", run_benchmark(run_config, backend=backend)))
    run.start()
    return run, ran


def test_a_person_in_the_browser_does_the_task_and_its_trajectory_replays_to_the_same_score(meta, tmp_path):
    results = tmp_path / "results"
    human = config(meta, results, agent="human", model="human")
    run, ran = start_run(human, results)
    server = shared_server()
    assert poll_until(lambda: any(d.human is not None for d in list(server.desktops.values())), 240, 0.5), \
        "the task's view never opened"
    desktop = next(d for d in server.desktops.values() if d.human is not None)
    assert server.server_address[0] == "127.0.0.1"
    status = task_folder(results, "human") / "status.json"
    assert poll_until(lambda: json.loads(status.read_text()).get("live_view") == server.view_url(desktop.name), 10,
                      0.1), "status.json does not name the task's live view (the report links it)"
    browser = Chromium()
    try:
        browser.navigate(full_url(desktop))
        assert browser.evaluate("location.search") == ""  # the token left the address bar for a cookie
        browser.wait_for("document.getElementById('status').textContent === 'your turn'")
        assert TASK["instruction"] in browser.evaluate("document.getElementById('instruction').textContent")
        assert poll_until(lambda: colour_share(browser.screenshot(), GREEN) > 0.02, 30, 0.5), \
            "the task's green window is not in the page's screenshot"
        browser.evaluate("document.querySelector('#screen canvas').focus()")
        browser.type_text(TYPED)
        browser.key("Enter", "Enter", 13)
        # the person leaves and comes back (the cookie lets the URL without the token in): the desktop waited
        browser.navigate("about:blank")
        browser.navigate(server.view_url(desktop.name))
        browser.wait_for("document.getElementById('status').textContent === 'your turn'")
        browser.evaluate("document.querySelector('#screen canvas').focus()")
        press_with_control(browser, "s")
        assert poll_until(lambda: not desktop.human.pending(), 20, 0.2)
        done = browser.evaluate("(() => { const r = document.getElementById('done').getBoundingClientRect();"
                                " return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        browser.click(*done)
        run.join(300)
    finally:
        browser.close()
    assert not run.is_alive()
    summary = ran["summary"]
    assert (summary.ran, summary.ok, summary.score_sum) == (1, 1, 1.0)
    folder = task_folder(results, "human")
    assert (folder / "result.txt").read_text().strip() == "1.0"
    assert "live_view" not in json.loads((folder / "status.json").read_text())
    assert (folder / "recording.mp4").stat().st_size > 0
    summarized = CliRunner().invoke(cli, ["summarize", str(folder.parent.parent)], terminal_width=300)
    assert summarized.exit_code == 0 and "100.0%" in summarized.output  # beside any model's run
    steps = [json.loads(line) for line in (folder / "traj.jsonl").read_text().splitlines()]
    actions = [step["action"] for step in steps]
    assert f"pyautogui.typewrite({TYPED!r})" in actions
    assert "pyautogui.press('enter')" in actions and "pyautogui.hotkey('ctrl', 's')" in actions
    assert actions[-1] == "DONE"
    assert all((folder / step["screenshot_file"]).is_file() for step in steps if step["screenshot_file"])
    # each step's response lists its actions with the time of the input each was made of (every line of the
    # step carries it)
    responses = {step["step_num"]: step["response"] for step in steps}
    timed = [entry for _, response in sorted(responses.items()) for entry in response["input"]]
    assert [entry["code"] for entry in timed] == actions[:-1]
    assert [entry["seconds"] for entry in timed] == sorted(entry["seconds"] for entry in timed)
    assert responses[max(responses)]["answer"] == "done"
    for path in results.rglob("*"):
        if path.is_file():
            assert desktop.token.encode() not in path.read_bytes(), f"the view's token is in {path}"

    replayed = run_benchmark(config(meta, results, agent="replay", model="replay-of-human",
                                    agent_args={"trajectories": str(folder.parent), "pacing": 1.0}, record=False))
    assert (replayed.ran, replayed.ok, replayed.score_sum) == (1, 1, 1.0)
    assert (task_folder(results, "replay-of-human") / "result.txt").read_text().strip() == "1.0"


PROCEED = threading.Semaphore(0)


class WaitingAgent:
    """Answers DONE once the test lets it (one release per task), so the test watches a task that runs."""

    def __init__(self, **kwargs: Any) -> None:
        pass

    def reset(self, logger: Any = None) -> None:
        pass

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[str, list[str]]:
        assert PROCEED.acquire(timeout=240), "the test never let the agent go on"
        return "done", ["DONE"]


UNTOUCHED = {**TASK, "instruction": "Leave the note empty.", "evaluator": {
    "func": "exact_match",
    "result": {"type": "vm_command_line", "shell": True,
               "command": "[ -s /home/user/note.txt ] && printf typed || printf empty"},
    "expected": {"type": "rule", "rules": {"expected": "empty"}}}}


def test_a_watched_run_shows_each_task_s_desktop_and_ignores_the_page_s_input(tmp_path):
    root = tmp_path / "tasks"
    (root / "examples" / "os").mkdir(parents=True)
    ids = ["watch-first", "watch-second"]
    for number, task_id in enumerate(ids, 1):
        task = {**UNTOUCHED, "id": task_id, "instruction": f"Task {number}: leave the note empty."}
        (root / "examples" / "os" / f"{task_id}.json").write_text(json.dumps(task))
    (root / "test_watch.json").write_text(json.dumps({"os": ids}))
    results = tmp_path / "results"
    watched = config(str(root / "test_watch.json"), results, agent=f"{__name__}:WaitingAgent", model="waiting",
                     watch=True, record=False)
    run, ran = start_run(watched, results)
    server = shared_server()

    def watching(task_id: str):
        found = [d for d in list(server.desktops.values()) if d.task_id == task_id]
        return found[0] if found else None

    assert poll_until(lambda: watching(ids[0]), 240, 0.5), "the first task's view never opened"
    desktop = watching(ids[0])
    assert desktop.human is None
    browser = Chromium()
    try:
        browser.navigate(full_url(desktop))
        browser.wait_for("document.getElementById('status').textContent === 'watching'")
        assert browser.evaluate("document.getElementById('answers').className") == ""  # no answer bar
        assert poll_until(lambda: colour_share(browser.screenshot(), GREEN) > 0.02, 30, 0.5)
        browser.evaluate("document.querySelector('#screen canvas').focus()")
        browser.type_text("zzz")
        press_with_control(browser, "s")
        PROCEED.release()
        browser.wait_for("document.getElementById('instruction').textContent.startsWith('Task 2')", timeout=240)
        browser.wait_for("document.getElementById('status').textContent === 'watching'", timeout=60)
        assert poll_until(lambda: colour_share(browser.screenshot(), GREEN) > 0.02, 30, 0.5), \
            "the second task's desktop is not in the page"
        PROCEED.release()
        run.join(300)
    finally:
        browser.close()
    assert not run.is_alive()
    summary = ran["summary"]
    assert (summary.ran, summary.ok, summary.score_sum) == (2, 2, 2.0)  # nothing typed in the page reached a note
    for task_id in ids:
        steps = (results / "pyautogui" / "screenshot" / "waiting" / "os" / task_id / "traj.jsonl").read_text()
        assert [json.loads(line)["action"] for line in steps.splitlines()] == ["DONE"]
    for path in results.rglob("*"):
        if path.is_file():
            assert desktop.token.encode() not in path.read_bytes(), f"the view's token is in {path}"


def test_env_serve_watch_prints_a_view_that_shows_the_served_desktop():
    proc = osworld("env", "serve", "--watch", "--screen-size", "1024x768", "--desktop-disk", "96M")
    try:
        output = wait_until_served(proc, timeout=90)
        entry = re.search(r"live view: (http://127\.0\.0\.1:\d+/view/\S+\?token=\S+)", output).group(1)
        page = requests.get(entry, timeout=10)  # the token traded for the cookie, then the page
        assert page.status_code == 200 and page.url == entry.split("?")[0]
        state = requests.get(page.url + "/state", cookies=page.history[0].cookies, timeout=10).json()
        assert state["input"] is False and state["instruction"] == "the desktop of osworld env serve"
        server = PythonController(Endpoint(unix_socket=re.search(r"env server: unix:(\S+)", output).group(1)))
        server.launch(TASK["config"][1]["parameters"]["command"])  # the green window
        browser = Chromium()
        try:
            browser.navigate(entry)
            browser.wait_for("document.getElementById('status').textContent === 'watching'")
            assert poll_until(lambda: colour_share(browser.screenshot(), GREEN) > 0.02, 30, 0.5)
        finally:
            browser.close()
            server.close()
    finally:
        rest = interrupt(proc, timeout=30)
    assert proc.returncode == 0, rest
