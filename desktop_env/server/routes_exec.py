"""Running things: /execute, /execute_with_verification, /setup/launch, /run_python, /run_bash_script.

Action code (OSWorld's `python -c "import pyautogui; ...; <code>"` shape) goes to a
persistent interpreter that already imported pyautogui, so an action costs a few
milliseconds instead of a new Python process; anything else is a subprocess.

A subprocess's reply comes when the process itself exits, even if it left background
children holding its stdout/stderr (`app &`, which OSWorld's tasks use to start apps):
see `run_process`.
"""
from __future__ import annotations

import os
import selectors
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any

from .executor import extract_pyautogui_code
from .httpd import HTTPError, Request, Response, Router
from .state import ServerState
from .waiting import poll_until

EXECUTE_TIMEOUT_S = 120
RUN_PYTHON_TIMEOUT_S = 30
MAX_TIMEOUT_S = 24 * 3600
MAX_VERIFICATION_WAIT_S = 3600
VERIFY_TIMEOUT_S = 30
UPSTREAM_VERIFY_TIMEOUT_S = 5  # what OSWorld gives a `command_success` string
# Output a background child writes this soon after the command exits is still part of the reply.
BACKGROUND_GRACE_S = 0.2
MAX_OUTPUT_BYTES = 8 << 20  # per stream; the rest is read and dropped


@dataclass(frozen=True)
class ProcessResult:
    output: str
    error: str
    returncode: int
    timed_out: bool


class _Sink:
    """One thread that reads and drops what background children write to pipes nobody else reads.

    Closing those pipes instead would kill an app started with `app &` by SIGPIPE the next
    time it logs a line; leaving them unread would block it once the pipe is full.
    """

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_write, False)
        self._selector.register(self._wake_read, selectors.EVENT_READ)
        self._thread: threading.Thread | None = None

    def adopt(self, fd: int) -> None:
        with self._lock:
            self._selector.register(fd, selectors.EVENT_READ)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="output-sink", daemon=True)
                self._thread.start()
        try:
            os.write(self._wake_write, b"x")
        except BlockingIOError:
            pass

    def _run(self) -> None:
        while True:
            for key, _ in self._selector.select():
                fd = key.fd
                try:
                    data = os.read(fd, 1 << 16)
                except OSError:
                    data = b""
                if fd == self._wake_read:
                    continue
                if not data:
                    with self._lock:
                        self._selector.unregister(fd)
                    os.close(fd)


_sink = _Sink()


def _decode(data: bytearray, dropped: int) -> str:
    # As subprocess's text mode did: UTF-8 (the sandbox's locale) and universal newlines.
    text = bytes(data).decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    if dropped:
        text += f"\n[{dropped} more bytes of output were dropped]\n"
    return text


def run_process(argv: list[str] | str, *, shell: bool, env: dict[str, str], cwd: str, timeout: float) -> ProcessResult:
    """Runs a command and returns when it exits, with its output, or when `timeout` passes (it is then killed).

    Its pipes are read until the process exits; if a background child still holds them,
    reading goes on for BACKGROUND_GRACE_S only, then the pipes are handed to a sink
    that drains them for as long as the child lives.
    """
    process = subprocess.Popen(argv, shell=shell, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout, stderr = process.stdout, process.stderr
    assert stdout is not None and stderr is not None  # both PIPE
    streams = {stdout.fileno(): (bytearray(), [0]), stderr.fileno(): (bytearray(), [0])}
    # The process's own exit wakes the loop at once; without pidfds, it is polled.
    try:
        exit_fd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        exit_fd = -1
    selector = selectors.DefaultSelector()
    for fd in streams:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    if exit_fd >= 0:
        selector.register(exit_fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    timed_out = False
    open_fds = set(streams)
    try:
        while True:  # waits in select() on the process's output and exit, not by polling: not wait_until's
            now = time.monotonic()
            if exited_at is None and process.poll() is not None:
                exited_at = now
                if exit_fd >= 0:
                    selector.unregister(exit_fd)
            if exited_at is not None and (not open_fds or now - exited_at >= BACKGROUND_GRACE_S):
                break
            if exited_at is None and not timed_out and now >= deadline:
                timed_out = True
                process.kill()
            if exited_at is not None:
                wait = exited_at + BACKGROUND_GRACE_S - now
            elif timed_out or exit_fd < 0:
                wait = 0.02 if timed_out else min(0.02, deadline - now)
            else:
                wait = deadline - now
            for key, _ in selector.select(max(0.0, wait)):
                if key.fd == exit_fd:
                    continue
                try:
                    data = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not data:
                    selector.unregister(key.fd)
                    open_fds.discard(key.fd)
                    continue
                buffer, dropped = streams[key.fd]
                room = max(0, MAX_OUTPUT_BYTES - len(buffer))
                buffer += data[:room]
                dropped[0] += len(data) - len(data[:room])
        returncode = process.wait()
    finally:
        selector.close()
        if exit_fd >= 0:
            os.close(exit_fd)
        for pipe in (stdout, stderr):
            fd = pipe.fileno()
            if fd in open_fds:  # a background child still writes there
                _sink.adopt(os.dup(fd))
            pipe.close()
        if process.poll() is None:  # an exception got us here: never leave the command running unattended
            process.kill()
            process.wait()
    (out, out_dropped), (err, err_dropped) = streams.values()
    return ProcessResult(_decode(out, out_dropped[0]), _decode(err, err_dropped[0]), returncode, timed_out)


def parse_command(request: Request) -> tuple[list[str] | str, bool]:
    command = request.require("command", (list, str))
    shell = request.boolean("shell", False)
    if isinstance(command, list) and not all(isinstance(a, str) for a in command):
        raise HTTPError(400, f"field 'command' must be a list of strings, got {command!r:.120}")
    if isinstance(command, list) and not command:
        raise HTTPError(400, "field 'command' is an empty list")
    if any("\0" in arg for arg in ([command] if isinstance(command, str) else command)):
        raise HTTPError(400, "field 'command' contains a NUL byte")
    return command, shell


# What a shell runs without a program file of that name.
SHELL_BUILTINS = frozenset("""
    . : [ alias bg break cd command continue echo eval exec exit export false fg getopts hash jobs kill printf pwd
    read readonly return set shift test times trap true type ulimit umask unalias unset wait
    if then else elif fi case esac for while until do done function { ! ( source
    """.split())


def refuse_missing_program(line: str, state: ServerState) -> None:
    """A shell line whose program is not on the desktop's PATH, or not executable, is refused with the exit code
    the shell would give (127, 126) before anything runs, instead of waiting for the shell to say so."""
    from .settle import program_of

    try:
        words = shlex.split(line)
    except ValueError:
        return  # the shell will say what is wrong with the line
    program = program_of(words)
    first = next((word for word in words if not ("=" in word and not word.startswith(("/", ".")))), "")
    if not program or first in SHELL_BUILTINS or any(mark in first for mark in "$`*?(){};&|<>"):
        return
    if "/" in first:
        where: str | None = os.path.join(state.home, os.path.expanduser(first))  # a relative one runs in the home
    else:
        where = shutil.which(first, path=state.env.get("PATH"))
    if where is None or not os.path.exists(where):
        raise HTTPError(500, f"cannot launch, program not found (shell exit 127): {line!r:.200}")
    if not os.access(where, os.X_OK) or os.path.isdir(where):
        raise HTTPError(500, f"cannot launch, program cannot be executed (shell exit 126): {line!r:.200}")


def prepare_argv(command: list[str] | str, shell: bool, home: str) -> list[str] | str:
    if shell:
        return command if isinstance(command, str) else shlex.join(command)
    try:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError as e:
        raise HTTPError(400, f"field 'command' cannot be split into arguments: {e}: {command!r:.200}") from None
    if not argv:
        raise HTTPError(400, f"field 'command' has no program to run: {command!r:.80}")
    return [home + arg[1:] if arg.startswith("~/") else arg for arg in argv]


def run_command(command: list[str] | str, shell: bool, state: ServerState,
                timeout: float = EXECUTE_TIMEOUT_S) -> dict[str, Any]:
    code = extract_pyautogui_code(command, shell)
    if code is not None:
        # pyautogui's PAUSE spaces the calls within this action; the previous action's
        # last call owes nothing (the harness paces actions). See pyautogui_pause. Same
        # line as the code's leading `import pyautogui`, so traceback line numbers hold.
        code = "__import__('pyautogui').osworld_new_action(); " + code
        result = state.interpreter.run(code, timeout=timeout)
        return {"status": "success", "output": result.output, "error": result.error, "returncode": result.returncode}
    argv = prepare_argv(command, shell, state.home)
    try:
        done = run_process(argv, shell=shell, env=state.env, cwd=state.home, timeout=timeout)
    except (FileNotFoundError, PermissionError) as e:
        raise HTTPError(500, str(e)) from None  # OSWorld's text: "[Errno 2] No such file or directory: 'prog'"
    if done.timed_out:
        raise HTTPError(500, f"command timed out after {timeout:g} s: {command!r:.200}")
    return {"status": "success", "output": done.output, "error": done.error, "returncode": done.returncode}


def _verification_checks(verification: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The verification spec in one shape; 400 naming the field when it has a wrong one.

    OSWorld's client sends strings (`{"window_exists": "Calc", "command_success": "test -e ~/x"}`:
    a title substring, a shell command given 5 s); objects add options (`window_name`, `strict`,
    `by_class`; `command`, `shell`, `expected_output`). Unknown keys are ignored, as OSWorld does.
    """
    checks: dict[str, dict[str, Any]] = {}
    window = verification.get("window_exists")
    if isinstance(window, str):
        window = {"window_name": window}
    if window is not None:
        if not isinstance(window, dict):
            raise HTTPError(400, f"field 'verification.window_exists' must be a window title or an object, "
                                 f"got {window!r:.80}")
        if not isinstance(window.get("window_name", ""), str):
            raise HTTPError(400, f"field 'verification.window_exists.window_name' must be a string, "
                                 f"got {window.get('window_name')!r:.80}")
        checks["window_exists"] = window
    check = verification.get("command_success")
    if isinstance(check, str):
        check = {"command": check, "shell": True, "timeout": UPSTREAM_VERIFY_TIMEOUT_S}
    if check is not None:
        if not isinstance(check, dict):
            raise HTTPError(400, f"field 'verification.command_success' must be a shell command or an object, "
                                 f"got {check!r:.80}")
        command = check.get("command")
        if not (isinstance(command, str) and command or isinstance(command, list) and command
                and all(isinstance(a, str) for a in command)):
            raise HTTPError(400, "field 'verification.command_success.command' must be a string or a list of "
                                 f"strings, got {command!r:.80}")
        expected = check.get("expected_output")
        if expected is not None and not isinstance(expected, str):
            raise HTTPError(400, f"field 'verification.command_success.expected_output' must be a string, "
                                 f"got {expected!r:.80}")
        checks["command_success"] = check
    return checks


def verification_passed(checks: dict[str, dict[str, Any]], state: ServerState) -> bool:
    from . import windows

    window = checks.get("window_exists")
    if window:
        name = window.get("window_name", "")
        if not windows.find_windows(name, strict=bool(window.get("strict")), by_class=bool(window.get("by_class"))):
            return False
    check = checks.get("command_success")
    if check:
        try:
            result = run_command(check["command"], bool(check.get("shell", False)), state,
                                 timeout=check.get("timeout", VERIFY_TIMEOUT_S))
        except HTTPError:
            return False
        if result["returncode"] != 0:
            return False
        expected = check.get("expected_output")
        if expected is not None and expected not in result["output"]:
            return False
    return True


def register(router: Router, state: ServerState) -> None:
    @router.route("/execute", methods=("POST",))
    @router.route("/setup/execute", methods=("POST",))
    def execute(request: Request) -> Response:
        command, shell = parse_command(request)
        return Response.json(run_command(command, shell, state))

    @router.route("/execute_with_verification", methods=("POST",))
    @router.route("/setup/execute_with_verification", methods=("POST",))
    def execute_with_verification(request: Request) -> Response:
        command, shell = parse_command(request)
        verification = request.mapping("verification")
        checks = _verification_checks(verification)
        max_wait = request.number("max_wait_time", 10, minimum=0, maximum=MAX_VERIFICATION_WAIT_S)
        interval = max(0.05, request.number("check_interval", 1, minimum=0, maximum=MAX_VERIFICATION_WAIT_S))
        result = run_command(command, shell, state)
        if not checks:  # as OSWorld: nothing to verify is the plain /execute answer
            return Response.json(result)
        started = time.monotonic()
        if poll_until(lambda: verification_passed(checks, state), max_wait, interval):
            return Response.json({**result, "verification": "passed", "wait_time": time.monotonic() - started})
        return Response.json({**result, "status": "verification_failed", "verification": "failed",
                              "wait_time": max_wait,
                              "message": f"verification {verification!r:.200} not met within {max_wait:g} s"}, 500)

    @router.route("/setup/launch", methods=("POST",))
    def launch(request: Request) -> Response:
        command, shell = parse_command(request)
        argv = prepare_argv(command, shell, state.home)
        if shell:
            refuse_missing_program(str(argv), state)
        windows_before = state.settler.windows_before_launch()
        try:
            process = subprocess.Popen(argv, shell=shell, env=state.env, cwd=state.home, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        except (FileNotFoundError, PermissionError) as e:
            raise HTTPError(500, str(e)) from None  # OSWorld's status and text
        state.settler.note_launch(command, process.pid, process.poll, windows_before)
        # Answered at once, as OSWorld's server does: its task files send the next step right away, and some
        # rely on it landing while the app starts (vlc 5ac2891a edits vlcrc for VLC to read as it starts).
        return Response.text(f"{command if shell else ' '.join(argv)} launched successfully")

    @router.route("/run_python", methods=("POST",))
    def run_python(request: Request) -> Response:
        code = request.require("code")
        if "\0" in code:
            raise HTTPError(400, "field 'code' contains a NUL byte")
        # NamedTemporaryFile creates its file with O_EXCL under a random name: nothing planted in /tmp is followed.
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(code)
        try:
            done = run_process([sys.executable, f.name], shell=False, env=state.env, cwd=state.home,
                               timeout=RUN_PYTHON_TIMEOUT_S)
        finally:
            os.unlink(f.name)
        if done.timed_out:
            return Response.json({"status": "error", "message": f"script timed out after {RUN_PYTHON_TIMEOUT_S} s",
                                  "output": done.output, "error": "timeout", "return_code": -1})
        ok = done.returncode == 0
        return Response.json({"status": "success" if ok else "error",
                              "message": "script ran" if ok else f"script exited with code {done.returncode}",
                              "output": done.output, "error": done.error, "return_code": done.returncode})

    @router.route("/run_bash_script", methods=("POST",))
    def run_bash_script(request: Request) -> Response:
        script = request.require("script")
        if "\0" in script:
            raise HTTPError(400, "field 'script' contains a NUL byte")
        timeout = request.number("timeout", 100, minimum=0, maximum=MAX_TIMEOUT_S)
        workdir = os.path.expanduser(request.string("working_dir") or state.home)
        if "\0" in workdir or not os.path.isdir(workdir):
            raise HTTPError(400, f"field 'working_dir' is not a directory: {workdir!r:.200}")
        done = run_process(["bash", "-c", script], shell=False, env=state.env, cwd=workdir, timeout=timeout)
        if done.timed_out:
            return Response.json({"status": "error", "output": done.output,
                                  "error": f"script timed out after {timeout:g} s", "returncode": -1})
        return Response.json({"status": "success" if done.returncode == 0 else "error",
                              "output": done.output, "error": done.error, "returncode": done.returncode})
