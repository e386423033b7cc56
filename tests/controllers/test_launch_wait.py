"""A launched app is waited for before the next step that acts on its window, not before a step that only
writes files: on the VM such a step ran while the app was still starting (and the app read what it wrote)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from desktop_env.controllers.setup import SetupError, run_steps


class Controller:
    def __init__(self, report: dict | None):
        self.report = report
        self.calls: list[tuple] = []

    def launch(self, command, shell=False):
        self.calls.append(("launch", command))

    def run_command(self, command, shell=False):
        self.calls.append(("execute", command))
        return {"output": "", "error": "", "returncode": 0}

    def settle(self, timeout, hold=None):
        self.calls.append(("settle",))
        return self.report


SETTLED = {"settled": True, "waited_s": 2.5, "waiting_for": []}
LAUNCH = {"type": "launch", "parameters": {"command": ["vlc"]}}
WRITE_CONFIG = {"type": "execute", "parameters": {"command": "sed -i s/x/y/ ~/.config/vlc/vlcrc", "shell": True}}
PRESS_KEYS = {"type": "execute",
              "parameters": {"command": ["python", "-c", "import pyautogui; pyautogui.press('f10')"]}}


def env_with(report: dict | None, tmp_path) -> SimpleNamespace:
    return SimpleNamespace(controller=Controller(report), screen_size=(1920, 1080), client_password="pw",
                           cache_dir=str(tmp_path))


def test_a_step_that_writes_files_runs_at_once_and_one_that_presses_keys_waits(tmp_path):
    env = env_with(SETTLED, tmp_path)
    run_steps(env, [LAUNCH, WRITE_CONFIG, PRESS_KEYS, PRESS_KEYS])
    assert [call[0] for call in env.controller.calls] == ["launch", "execute", "settle", "execute", "execute"]
    assert env.settle_waits == [{"field": "config[0]", "started": "vlc", "before": "config[2]", "waited_s": 2.5,
                                 "settled": True}]


def test_an_app_that_shows_no_window_fails_its_launch_step(tmp_path):
    env = env_with({"settled": False, "waited_s": 60, "waiting_for": ["a window of 'vlc'"]}, tmp_path)
    with pytest.raises(SetupError, match=r"^setup step 0 \(launch\): no window appeared within 60 s"):
        run_steps(env, [LAUNCH, PRESS_KEYS])
    assert ("execute", PRESS_KEYS["parameters"]["command"]) not in env.controller.calls


def test_a_server_that_cannot_tell_is_not_waited_for(tmp_path):
    env = env_with(None, tmp_path)
    run_steps(env, [LAUNCH, PRESS_KEYS])
    assert [call[0] for call in env.controller.calls] == ["launch", "settle", "execute"]
    assert getattr(env, "settle_waits", []) == []
