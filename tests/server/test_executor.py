"""PersistentInterpreter and extract_pyautogui_code, without a desktop.

The parent side needs only the standard library and the child only what its preload imports,
so these tests run the child on the test's own interpreter with a preload that skips pyautogui.
"""
from __future__ import annotations

import shlex
import shutil
import sys
import tempfile
import threading
import time

import pytest

from desktop_env.server.executor import ExecutionResult, PersistentInterpreter, extract_pyautogui_code

OSWORLD_PREFIX = "import pyautogui; import time; pyautogui.FAILSAFE = False; "
# A stand-in pyautogui module, so the tunables reset can be checked without an X display.
FAKE_PYAUTOGUI_PRELOAD = (
    "import sys, types\n"
    "pyautogui = types.ModuleType('pyautogui')\n"
    "pyautogui.PAUSE = 0.1\n"
    "pyautogui.FAILSAFE = False\n"
    "sys.modules['pyautogui'] = pyautogui\n"
    "PRELOADED = 41\n"
)


@pytest.fixture
def interpreter():
    with PersistentInterpreter(sys.executable, preload=FAKE_PYAUTOGUI_PRELOAD) as it:
        yield it


def test_output_error_and_returncode(interpreter):
    result = interpreter.run("import sys; print('out'); print('err', file=sys.stderr)")
    assert result == ExecutionResult(output="out\n", error="err\n", returncode=0)


def test_process_persists_between_calls(interpreter):
    first = interpreter.run("import os, sys; sys.modules['marker'] = os.getpid(); print(os.getpid())")
    second = interpreter.run("import os, marker; print(os.getpid())")
    assert first.returncode == second.returncode == 0
    assert first.output == second.output == f"{interpreter.pid}\n"


def test_each_call_gets_a_fresh_namespace_built_by_the_preload(interpreter):
    assert interpreter.run("leaked = 1; PRELOADED = 0").returncode == 0
    result = interpreter.run("print(PRELOADED, __name__); print(leaked)")
    assert result.output == "41 __main__\n"
    assert result.error.endswith("NameError: name 'leaked' is not defined\n")


def test_the_osworld_action_prefix_runs(interpreter):
    result = interpreter.run(OSWORLD_PREFIX + "print(pyautogui.FAILSAFE, time.time() > 0)")
    assert result == ExecutionResult("False True\n", "", 0)


def test_exception_gives_returncode_1_and_python_c_traceback(interpreter):
    result = interpreter.run("x = 1\n1 / 0")
    assert result == ExecutionResult("", 'Traceback (most recent call last):\n'
                                         '  File "<string>", line 2, in <module>\n'
                                         'ZeroDivisionError: division by zero\n', 1)


def test_syntax_error_is_reported_like_python_c(interpreter):
    result = interpreter.run("print('unclosed'")
    assert result.returncode == 1
    assert result.error.startswith('  File "<string>", line 1\n')
    assert "SyntaxError" in result.error


@pytest.mark.parametrize(("code", "returncode", "error"), [
    ("import sys; sys.exit(4)", 4, ""),
    ("import sys; sys.exit()", 0, ""),
    ("import sys; sys.exit(-1)", 255, ""),
    ("import sys; sys.exit('bye')", 1, "bye\n"),
    ("raise SystemExit(7)", 7, ""),
])
def test_sys_exit_sets_returncode_without_killing_the_interpreter(interpreter, code, returncode, error):
    pid = interpreter.pid
    assert interpreter.run(code) == ExecutionResult("", error, returncode)
    assert interpreter.pid == pid
    assert interpreter.run("print('alive')").output == "alive\n"


def test_a_dying_interpreter_is_reported_and_replaced(interpreter):
    old_pid = interpreter.pid
    result = interpreter.run("print('last words', flush=True); import os; os._exit(3)")
    assert result.returncode == 3
    assert result.output == "last words\n"
    assert "exited with status 3" in result.error
    after = interpreter.run("import os; print(os.getpid())")
    assert after.returncode == 0
    assert int(after.output) != old_pid


def test_a_segfault_is_reported_with_its_signal(interpreter):
    result = interpreter.run("import ctypes; ctypes.string_at(0)")
    assert result.returncode == -11
    assert "Segmentation fault" in result.error
    assert interpreter.run("print(1)").output == "1\n"


def test_timeout_kills_restarts_and_keeps_partial_output(interpreter):
    old_pid = interpreter.pid
    started = time.monotonic()
    result = interpreter.run("import time; print('started', flush=True); time.sleep(9999)", timeout=1.0)
    assert time.monotonic() - started < 5
    assert result.returncode != 0
    assert "timed out after 1 s" in result.error
    assert result.output == "started\n"
    after = interpreter.run("import os; print(os.getpid())")
    assert after.returncode == 0
    assert int(after.output) != old_pid


def test_output_of_subprocesses_is_captured(interpreter):
    result = interpreter.run("import os; os.system('echo from-shell; echo oops >&2')")
    assert result == ExecutionResult("from-shell\n", "oops\n", 0)


def test_a_background_process_holding_stdout_does_not_block_the_reply(interpreter):
    started = time.monotonic()
    result = interpreter.run("import subprocess; p = subprocess.Popen(['sleep', '30']); print(p.pid)")
    assert time.monotonic() - started < 5
    assert result.returncode == 0
    interpreter.run(f"import os, signal; os.kill({int(result.output)}, signal.SIGKILL)")


def test_a_fork_of_the_code_ends_with_the_code_and_leaves_the_protocol_alone(interpreter):
    result = interpreter.run(
        "import os\n"
        "pid = os.fork()\n"
        "if pid:\n"
        "    os.waitpid(pid, 0)\n"
        "    print('parent')\n"
        "else:\n"
        "    print('child')\n")
    assert result == ExecutionResult("child\nparent\n", "", 0)
    assert interpreter.run("print('next')").output == "next\n"


def test_process_state_is_restored_after_each_call(interpreter):
    before = interpreter.run("import os, sys; print(os.getcwd(), os.environ.get('EXEC_TEST'), sys.argv)").output
    changed = interpreter.run(
        "import os, sys, io\n"
        "os.chdir('/'); os.environ['EXEC_TEST'] = '1'; sys.argv.append('x')\n"
        "pyautogui.PAUSE = 0; pyautogui.FAILSAFE = True\n"
        "sys.stdout = io.StringIO()\n")
    assert changed.returncode == 0
    after = interpreter.run("import os, sys; print(os.getcwd(), os.environ.get('EXEC_TEST'), sys.argv)")
    assert after.output == before
    assert before.endswith("None ['-c']\n")
    assert interpreter.run("print(pyautogui.PAUSE, pyautogui.FAILSAFE)").output == "0.1 False\n"


@pytest.mark.parametrize("text", [
    "quotes ' \" ''' \"\"\"", "backslash \\ \\n", "new\nlines\r\n", "unicode é 中文 🙂", "x" * 300_000,
], ids=["quotes", "backslashes", "newlines", "unicode", "larger-than-a-pipe-buffer"])
def test_code_and_output_are_transported_verbatim(interpreter, text):
    result = interpreter.run(f"import sys; sys.stdout.write({text!r})")
    assert result == ExecutionResult(text, "", 0)


def test_calls_from_many_threads_are_serialised(interpreter):
    results: dict[int, ExecutionResult] = {}

    def call(token: int) -> None:
        results[token] = interpreter.run(f"import time; print({token}); time.sleep(0.01); print({token})")

    threads = [threading.Thread(target=call, args=(token,)) for token in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {token: ExecutionResult(f"{token}\n{token}\n", "", 0) for token in range(16)}


def test_a_failing_preload_is_reported_by_run():
    with PersistentInterpreter(sys.executable, preload="import no_such_module_here") as it:
        result = it.run("print('never')")
        assert result.returncode == 1
        assert result.error.startswith("interpreter preload failed:\n")
        assert "ModuleNotFoundError: No module named 'no_such_module_here'" in result.error


def test_losing_the_capture_folder_is_harmless(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with PersistentInterpreter(sys.executable, preload="") as it:
        assert it.run("print(1)").output == "1\n"
        for folder in tmp_path.iterdir():
            shutil.rmtree(folder)
        assert it.run("print(2)") == ExecutionResult("2\n", "", 0)


def test_restart_and_close():
    it = PersistentInterpreter(sys.executable, preload="")
    old_pid = it.pid
    it.restart()
    assert it.pid != old_pid
    assert it.run("print(2)").output == "2\n"
    it.close()
    it.close()
    with pytest.raises(RuntimeError):
        it.run("print(3)")


def test_an_empty_preload_and_a_cwd():
    with PersistentInterpreter(sys.executable, preload="", cwd="/") as it:
        assert it.run("import os; print(os.getcwd())").output == "/\n"


# --- extract_pyautogui_code ---------------------------------------------------------------

ACTION = OSWORLD_PREFIX + "pyautogui.click(x=10, y=20)"


@pytest.mark.parametrize("interpreter_name", ["python", "python3", "python3.11"])
def test_osworld_action_lists_are_recognised(interpreter_name):
    assert extract_pyautogui_code([interpreter_name, "-c", ACTION], False) == ACTION
    assert extract_pyautogui_code([interpreter_name, "-c", ACTION], True) == ACTION


def test_multiline_and_quoted_action_code_is_recognised():
    code = "import pyautogui\npyautogui.typewrite('it\\'s \"x\"\\n')"
    assert extract_pyautogui_code(["python3", "-c", code], False) == code


@pytest.mark.parametrize("command", [
    ["echo", "hi"],
    ["python3", "-c", "print(1)"],
    ["python3", "-c", "import pyautoguix; pyautoguix.go()"],
    ["python3", "script.py"],
    ["python3", "-u", "-c", ACTION],
    ["/usr/bin/python3", "-c", ACTION],
    ["python3", "-c", ACTION, "extra"],
    ["bash", "-c", ACTION],
    [],
])
def test_other_lists_are_not_actions(command):
    assert extract_pyautogui_code(command, False) is None


def test_strings_without_shell_are_split_like_the_server_does():
    assert extract_pyautogui_code(shlex.join(["python3", "-c", ACTION]), False) == ACTION
    assert extract_pyautogui_code('python -c "import pyautogui; pyautogui.click()"', False) == \
        "import pyautogui; pyautogui.click()"
    assert extract_pyautogui_code('python -c "unbalanced', False) is None


def test_shell_strings_are_recognised_only_when_the_shell_leaves_the_code_literal():
    assert extract_pyautogui_code(shlex.join(["python3", "-c", ACTION]), True) == ACTION
    code_with_quote = OSWORLD_PREFIX + "pyautogui.typewrite(\"it's $5\")"
    assert extract_pyautogui_code(shlex.join(["python3", "-c", code_with_quote]), True) == code_with_quote
    assert extract_pyautogui_code(f'python3 -c "{ACTION}"', True) == ACTION
    # The shell would expand these or run more than python.
    assert extract_pyautogui_code('python3 -c "import pyautogui; print(\'$HOME\')"', True) is None
    assert extract_pyautogui_code('python3 -c "import pyautogui; print(`id`)"', True) is None
    assert extract_pyautogui_code(f"{shlex.join(['python3', '-c', ACTION])}; rm -rf /tmp/x", True) is None
    assert extract_pyautogui_code(f"{shlex.join(['python3', '-c', ACTION])} | cat", True) is None
    assert extract_pyautogui_code("echo hi", True) is None
