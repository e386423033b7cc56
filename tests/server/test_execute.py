"""POST /execute on a real desktop: OSWorld's action commands run in the persistent interpreter,
anything else in a subprocess. (Timeouts and crashes are covered in tests/server/test_executor.py.)"""
from __future__ import annotations

import pytest

from desktop_env.actions import to_pyautogui

pytestmark = pytest.mark.desktop

# What OSWorld's PythonController puts in front of every action.
OSWORLD_PREFIX = "import pyautogui; import time; pyautogui.FAILSAFE = False; "


def execute(desktop, command, shell: bool = False) -> dict:
    response = desktop.post("/execute", json={"command": command, "shell": shell})
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["status"] == "success", result
    return result


def action_command(code: str, interpreter: str = "python3") -> list[str]:
    return [interpreter, "-c", OSWORLD_PREFIX + code]


def test_actions_share_one_persistent_interpreter(desktop):
    pids = [execute(desktop, action_command("import os; print(os.getpid())", interpreter))
            for interpreter in ("python3", "python", "python3")]
    assert [result["returncode"] for result in pids] == [0, 0, 0]
    assert pids[0]["output"].strip().isdigit()
    assert pids[0]["output"] == pids[1]["output"] == pids[2]["output"]


def test_other_python_commands_run_in_their_own_process(desktop):
    code = "import os; print(os.getpid())"
    first, second = (execute(desktop, ["python3", "-c", code]) for _ in range(2))
    assert first["returncode"] == second["returncode"] == 0
    assert first["output"] != second["output"]


def test_an_exception_gives_returncode_1_and_the_traceback(desktop):
    result = execute(desktop, action_command("x = 1\n1 / 0"))
    assert result["returncode"] == 1
    assert result["error"].startswith("Traceback (most recent call last):\n")
    assert result["error"].endswith("ZeroDivisionError: division by zero\n")
    assert execute(desktop, action_command("print('still alive')"))["output"] == "still alive\n"


def test_sys_exit_sets_the_returncode(desktop):
    assert execute(desktop, action_command("import sys; sys.exit(3)"))["returncode"] == 3


def test_output_is_returned(desktop):
    result = execute(desktop, action_command("print('it\\'s', '中文'); import sys; print('warn', file=sys.stderr)"))
    assert (result["output"], result["error"], result["returncode"]) == ("it's 中文\n", "warn\n", 0)


def test_a_plain_command_runs_as_a_subprocess(desktop):
    result = execute(desktop, ["echo", "hi"])
    assert (result["output"], result["returncode"]) == ("hi\n", 0)


def test_pyautogui_really_moves_the_pointer(desktop):
    execute(desktop, action_command(to_pyautogui({"action_type": "MOVE_TO", "parameters": {"x": 123, "y": 234}})))
    assert desktop.get("/cursor_position").json() == [123, 234]
    execute(desktop, action_command(to_pyautogui({"action_type": "CLICK", "parameters": {"x": 40, "y": 50}})))
    assert desktop.get("/cursor_position").json() == [40, 50]


def test_action_code_may_start_with_a_block_statement(desktop):
    result = desktop.execute("for _ in range(2):\n    pyautogui.moveRel(5, 0)\nprint(pyautogui.position().x)")
    assert result["returncode"] == 0, result["error"]
    assert result["output"].strip().isdigit()


def test_pyautogui_calls_in_one_action_are_still_a_pause_apart(desktop):
    code = ("import time\nt0 = time.monotonic()\npyautogui.moveTo(10, 10)\nt1 = time.monotonic()\n"
            "pyautogui.moveTo(20, 20)\nt2 = time.monotonic()\nprint(round(t2 - t1 - pyautogui.PAUSE, 3) >= 0)")
    assert desktop.execute(code)["output"].strip() == "True"
