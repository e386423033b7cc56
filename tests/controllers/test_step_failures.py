"""What a failed setup or postconfig step does, as OSWorld's controller has it: its launch, execute, window and
wallpaper steps log a step that did not do what it asked and go on; every other type ends the episode. A
program that is not there stays an error whatever the type (the local desktop lacks what the VM has)."""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from desktop_env import extensions
from desktop_env.controllers import setup
from desktop_env.controllers.setup import LOGGED_BY_OSWORLD, SetupError, run_steps, step_names
from desktop_env.errors import ServerRequestError

TASKS_DOC = Path(__file__).parents[2] / "docs" / "TASKS.md"


class Response:
    def __init__(self, found: bool, active: bool = True):
        self.headers = {"x-osworld-window-found": "1" if found else "0",
                        "x-osworld-window-active": "1" if active else "0"}


class Desktop:
    """An env server's answers: which window titles exist (and have the focus), what commands return."""

    def __init__(self, windows: dict[str, bool] | None = None, returncode: int = 0, refuse: tuple[str, ...] = ()):
        self.windows = windows or {}
        self.returncode = returncode
        self.refuse = refuse
        self.calls: list[tuple[str, object]] = []

    def request(self, method, path, json_body=None, **kwargs):
        self.calls.append((path, json_body))
        if path in self.refuse:
            raise ServerRequestError(method, path, 500, "it could not be done")
        name = (json_body or {}).get("window_name", "")
        matches = [title for title in self.windows if name in title]
        return Response(bool(matches), all(self.windows[t] for t in matches) if matches else False)

    def run_command(self, command, shell=False):
        self.calls.append(("run_command", command))
        return {"output": "", "error": "", "returncode": self.returncode}


def env_on(desktop: Desktop, tmp_path) -> SimpleNamespace:
    return SimpleNamespace(controller=desktop, screen_size=(1920, 1080), client_password="pw", cache_dir=str(tmp_path))


@pytest.fixture(autouse=True)
def short_waits(monkeypatch):
    monkeypatch.setattr(setup, "WAIT_FOR_WINDOW_S", 0.3)
    monkeypatch.setattr(setup, "WAIT_FOR_WINDOW_AFTER_AGENT_S", 0.2)
    monkeypatch.setattr(setup, "EXECUTE_UNTIL_S", 0.3)


ACTIVATE_GIMP = {"type": "activate_window", "parameters": {"window_name": "GNU Image Manipulation Program"}}
SAVE_KEYS = {"type": "execute", "parameters": {"command": "python3 -c 'print(1)'", "shell": True}}


def test_a_postconfig_activation_of_a_window_that_is_not_there_is_recorded_and_the_next_step_runs(tmp_path):
    desktop = Desktop({"[cat] (imported)-1.0 (RGB color 8-bit gamma integer, GIMP built-in sRGB, 1 layer) 64x64 "
                       "- GIMP": True})
    env = env_on(desktop, tmp_path)
    run_steps(env, [ACTIVATE_GIMP, SAVE_KEYS], phase="postconfig")
    assert ("run_command", SAVE_KEYS["parameters"]["command"]) in desktop.calls
    assert env.setup_warnings == [{
        "message": "timed out after 0.2 s waiting for a window matching 'GNU Image Manipulation Program'",
        "failed": True, "phase": "postconfig", "field": "evaluator.postconfig[0]", "type": "activate_window"}]


def test_a_window_behind_a_modal_dialog_that_never_takes_the_focus_is_recorded_not_raised(tmp_path):
    desktop = Desktop({"Students_Class_Subject_Marks.xlsx - LibreOffice Calc": False})
    env = env_on(desktop, tmp_path)
    run_steps(env, [{"type": "activate_window", "parameters": {
        "window_name": "Students_Class_Subject_Marks.xlsx - LibreOffice Calc", "strict": True}}], phase="postconfig")
    assert env.setup_warnings[0]["message"] == ("a window matching 'Students_Class_Subject_Marks.xlsx - LibreOffice "
                                                "Calc' was found but did not get the focus within 0.2 s")


def test_before_the_agent_acts_a_window_is_waited_for_longer_and_a_missing_one_is_recorded_too(tmp_path):
    env = env_on(Desktop(), tmp_path)
    run_steps(env, [{"type": "close_window", "parameters": {"window_name": "Message Filters"}}, SAVE_KEYS])
    [failed] = env.setup_warnings
    assert failed["field"] == "config[0]" and failed["phase"] == "setup" and failed["failed"] is True
    assert failed["message"].startswith("timed out after 0.3 s")
    assert env.controller.calls[-1][0] == "run_command"


def test_a_window_the_server_refuses_to_activate_is_recorded(tmp_path):
    env = env_on(Desktop({"notes.txt - gedit": True}, refuse=("/setup/activate_window",)), tmp_path)
    run_steps(env, [{"type": "activate_window", "parameters": {"window_name": "notes.txt"}}])
    assert env.setup_warnings[0]["message"] == "/setup/activate_window for 'notes.txt': it could not be done"


def test_a_command_whose_until_is_never_met_is_recorded_and_the_steps_go_on(tmp_path):
    env = env_on(Desktop(returncode=1), tmp_path)
    wait = {"type": "execute", "parameters": {"command": "test -f ~/ready", "shell": True, "until": {"returncode": 0}}}
    run_steps(env, [wait, SAVE_KEYS])
    assert env.setup_warnings[0]["failed"] is True and "did not meet {'returncode': 0}" in env.setup_warnings[0][
        "message"]
    assert env.setup_warnings[1]["message"].endswith("exited with code 1")  # the next step ran, and exited 1 too


def test_a_wallpaper_the_desktop_refuses_is_recorded(tmp_path):
    env = env_on(Desktop(refuse=("/setup/change_wallpaper",)), tmp_path)
    run_steps(env, [{"type": "change_wallpaper", "parameters": {"path": "/home/user/missing.png"}}])
    assert env.setup_warnings[0]["message"] == ("the wallpaper was not changed to '/home/user/missing.png': "
                                                "it could not be done")


def test_a_step_type_osworld_raises_on_still_ends_the_steps(tmp_path):
    env = env_on(Desktop(refuse=("/setup/open_file",)), tmp_path)
    with pytest.raises(SetupError, match=r"^postconfig step 0 \(open\) failed: POST /setup/open_file failed"):
        run_steps(env, [{"type": "open", "parameters": {"path": "/home/user/a.xlsx"}}, SAVE_KEYS], phase="postconfig")
    assert ("run_command", SAVE_KEYS["parameters"]["command"]) not in env.controller.calls


def test_a_missing_program_is_an_error_even_in_a_step_osworld_logs(tmp_path):
    env = env_on(Desktop(returncode=127), tmp_path)
    with pytest.raises(SetupError, match="command not found"):
        run_steps(env, [SAVE_KEYS], phase="postconfig")


def test_the_step_table_in_tasks_md_says_for_every_step_type_what_a_failure_does():
    rows = {}
    for line in TASKS_DOC.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"`[a-z_]+`(, `[a-z_]+`)*", cells[0]):
            for name in re.findall(r"`([a-z_]+)`", cells[0]):
                rows[name] = cells[3]
    refused = [entry.name for entry in extensions.unsupported_entries("setup_step")]
    assert sorted(rows) == sorted(step_names() + refused)
    assert all(rows[name].startswith("refused") for name in refused)
    logged = {name for name, failure in rows.items() if failure.startswith("logged")}
    assert logged == LOGGED_BY_OSWORLD
