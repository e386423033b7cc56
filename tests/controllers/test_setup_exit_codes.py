"""Setup commands: one that cannot start fails its step; any other non-zero exit is a warning."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from desktop_env.controllers.setup import SetupError, run_steps


class Controller:
    def __init__(self, *results: dict):
        self.results = list(results)
        self.commands: list = []

    def run_command(self, command, shell=False):
        self.commands.append(command)
        return self.results.pop(0) if len(self.results) > 1 else self.results[0]


def env_with(*results: dict, tmp_path) -> SimpleNamespace:
    return SimpleNamespace(controller=Controller(*results), screen_size=(1920, 1080), client_password="pw",
                           cache_dir=str(tmp_path))


def execute(command, **more) -> dict:
    return {"type": "execute", "parameters": {"command": command, "shell": True, **more}}


@pytest.mark.parametrize("code, what", [(127, "command not found"), (126, "command cannot be executed")])
def test_a_command_that_cannot_start_fails_the_step(tmp_path, code, what):
    env = env_with({"output": "", "error": "bash: no_such_program: command not found\n", "returncode": code},
                   tmp_path=tmp_path)
    with pytest.raises(SetupError) as info:
        run_steps(env, [execute("true"), execute("no_such_program --flag")])
    message = str(info.value)
    assert message.startswith("setup step 0 (execute)") and what in message and f"exit {code}" in message
    assert "no_such_program: command not found" in message


def test_another_non_zero_exit_is_a_warning_naming_the_step(tmp_path):
    env = env_with({"output": "", "error": "", "returncode": 0}, {"output": "", "error": "no process found\n",
                                                                   "returncode": 1}, tmp_path=tmp_path)
    run_steps(env, [execute("true"), execute("pkill -f nothing")])
    assert env.setup_warnings == [{"message": "'pkill -f nothing' exited with code 1: no process found",
                                   "returncode": 1, "field": "config[1]", "type": "execute"}]


def test_postconfig_warnings_name_their_section(tmp_path):
    env = env_with({"output": "", "error": "", "returncode": 2}, tmp_path=tmp_path)
    run_steps(env, [{"type": "command", "parameters": {"command": ["false"]}}], phase="postconfig")
    assert env.setup_warnings[0]["field"] == "evaluator.postconfig[0]" and env.setup_warnings[0]["type"] == "command"


def test_until_stops_at_once_on_a_missing_program_and_an_asked_for_exit_code_is_no_warning(tmp_path):
    missing = env_with({"output": "", "error": "", "returncode": 127}, tmp_path=tmp_path)
    with pytest.raises(SetupError, match="command not found"):
        run_steps(missing, [execute("no_such_program", until={"stdout": "ready"})])
    assert len(missing.controller.commands) == 1
    asked = env_with({"output": "", "error": "", "returncode": 1}, tmp_path=tmp_path)
    run_steps(asked, [execute("test -f ~/x", until={"returncode": 1})])
    assert asked.setup_warnings == []
