"""A setup that drove an app with keys must not leave the task already solved: that is a setup that did not
take (an error naming the step), never a free pass for the agent."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from desktop_env.controllers.setup import drives_input
from desktop_env.controllers.setup_check import SetupNotTaken, check_setup_took

KEYS_STEP = {"type": "execute", "parameters": {"command": [
    "python", "-c", "import pyautogui; import time; time.sleep(5); pyautogui.press('f10')"]}}
PLAIN_STEP = {"type": "execute", "parameters": {"command": "mkdir -p ~/Desktop/x", "shell": True}}


class Controller:
    def __init__(self, output: str):
        self.output = output
        self.commands: list = []

    def run_command(self, command, shell=False):
        self.commands.append(command)
        return {"output": self.output, "error": "", "returncode": 0}


def env_answering(output: str, tmp_path) -> SimpleNamespace:
    return SimpleNamespace(controller=Controller(output), cache_dir=str(tmp_path), task_dir=None,
                           task_config={"id": "t"})


def task(*steps: dict, func: str = "check_include_exclude") -> dict:
    return {"id": "t", "config": list(steps), "evaluator": {
        "func": func, "postconfig": [{"type": "execute", "parameters": {"command": "pkill -f soffice", "shell": True}}],
        "result": {"type": "vm_command_line", "command": "gsettings get org.example pane", "shell": True},
        "expected": {"type": "rule", "rules": {"include": ["visible"], "exclude": []}}}}


def test_a_start_state_the_evaluator_accepts_is_a_setup_that_did_not_take(tmp_path):
    env = env_answering("'visible'\n", tmp_path)
    with pytest.raises(SetupNotTaken, match=r"setup step 1 \(execute\) did not take: before the agent acted"):
        check_setup_took(env, task(PLAIN_STEP, KEYS_STEP))
    assert env.controller.commands == ["gsettings get org.example pane"]  # the postconfig did not run


def test_a_start_state_the_evaluator_refuses_is_where_the_agent_starts(tmp_path):
    check_setup_took(env_answering("'hidden'\n", tmp_path), task(PLAIN_STEP, KEYS_STEP))


def test_setups_without_keys_and_infeasible_tasks_are_not_checked(tmp_path):
    env = env_answering("'visible'\n", tmp_path)
    check_setup_took(env, task(PLAIN_STEP))
    check_setup_took(env, task(KEYS_STEP, func="infeasible"))
    assert env.controller.commands == []


def test_steps_that_drive_input_are_told_from_others():
    assert drives_input(KEYS_STEP) and not drives_input(PLAIN_STEP)
    assert drives_input({"type": "command", "parameters": {"command": "python3 -c 'import pyautogui'"}})
    assert not drives_input({"type": "launch", "parameters": {"command": ["pyautogui-looking-app"]}})
    assert drives_input({"type": "activate_window", "parameters": {"window_name": "Visual Studio Code"}})
    assert drives_input({"type": "execute", "parameters": {"command": "xdotool key ctrl+s", "shell": True}})
