"""Run action code in a persistent Python interpreter instead of a new process per action.

OSWorld's client sends every action as `python -c "import pyautogui; ...; <code>"`. Starting
Python and importing pyautogui costs a few hundred milliseconds; a child interpreter that
imported pyautogui once answers in a few milliseconds.

Semantics follow `python -c` as closely as a shared process allows:
- each call runs in a fresh copy of the namespace the preload built, so user variables never
  leak from one action into the next, while imported modules (and pyautogui's X connection)
  stay warm;
- process state that `python -c` would get fresh is restored after every call: working
  directory, environment variables, sys.argv, sys.path, the sys.std* objects and pyautogui's
  tunables (PAUSE, FAILSAFE, ...);
- stdout and stderr are captured at the file-descriptor level, so output of subprocesses the
  code starts is captured too, and a background process that keeps the descriptor open cannot
  hold the reply back (it writes into an already unlinked file);
- an exception gives returncode 1 and the traceback `python -c` would print, `sys.exit(n)` gives
  n, a crash of the interpreter gives its exit status and a new interpreter for the next call.

This module is imported by the env server (parent side, standard library only) and is also the
script the child runs (`python executor.py --child ...`).
"""
from __future__ import annotations

import builtins
import contextlib
import faulthandler
import json
import os
import re
import select
import shlex
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass

DEFAULT_PRELOAD = "import pyautogui\npyautogui.FAILSAFE = False\n"

# The interpreter names OSWorld's PythonController puts in front of `-c`. Absolute paths are
# deliberately not recognised: a caller naming one wants that exact interpreter.
_PYTHON_NAME = re.compile(r"python(3(\.\d+)?)?")
# OSWorld prefixes action code with "import pyautogui; import time; pyautogui.FAILSAFE = False; ".
_ACTION_CODE = re.compile(r"\s*import\s+pyautogui\s*(;|\n|$)")
# Characters that a POSIX shell still interprets inside double quotes.
_DOUBLE_QUOTE_SPECIALS = frozenset('"\\$`')

_CHILD_FLAG = "--child"
_HEADER = struct.Struct(">Q")
_PYAUTOGUI_TUNABLES = ("PAUSE", "FAILSAFE", "MINIMUM_DURATION", "MINIMUM_SLEEP",
                       "DARWIN_CATCH_UP_TIME", "LOG_SCREENSHOTS", "LOG_SCREENSHOTS_LIMIT")


@dataclass(frozen=True)
class ExecutionResult:
    output: str
    error: str
    returncode: int


def extract_pyautogui_code(command: list[str] | str, shell: bool) -> str | None:
    """The Python code of an OSWorld action command, or None when `command` is anything else.

    Recognised: ["python"|"python3"|"python3.N", "-c", "import pyautogui; ..."], the same as one
    string (shlex-split when not `shell`), and as a shell string whose quoting leaves the code
    literal (single-quoted the way shlex.join does it, or double-quoted without $ ` \\ ").
    A list is read the same way with or without `shell`: the server shlex-joins lists for the
    shell, which preserves every argument. The code is returned whole, prefix included, so it
    runs exactly as `python -c` would have run it.
    """
    if isinstance(command, list):
        argv = command
    elif isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError:
            return None
    else:
        return None
    if not (len(argv) == 3 and all(isinstance(arg, str) for arg in argv)):
        return None
    interpreter, flag, code = argv
    if not (_PYTHON_NAME.fullmatch(interpreter) and flag == "-c" and _ACTION_CODE.match(code)):
        return None
    if isinstance(command, str) and shell and not _shell_keeps_literal(command.strip(), interpreter, code):
        return None
    return code


def _shell_keeps_literal(command: str, interpreter: str, code: str) -> bool:
    if command == shlex.join([interpreter, "-c", code]):
        return True
    return command == f'{interpreter} -c "{code}"' and not _DOUBLE_QUOTE_SPECIALS.intersection(code)


class _Timeout(Exception):
    pass


class _ChildExited(Exception):
    pass


class PersistentInterpreter:
    """A child `python` that runs code on request; see the module docstring for semantics.

    `python` must be able to run `preload` (the env server passes its venv interpreter, which has
    pyautogui). The child starts at construction so pyautogui's import overlaps with whatever
    the server does next; a failing preload is reported by the first `run`.
    """

    def __init__(self, python: str, env: dict[str, str] | None = None,
                 preload: str = DEFAULT_PRELOAD, cwd: str | None = None) -> None:
        self._python = python
        self._env = dict(os.environ if env is None else env)
        self._preload = preload
        self._cwd = cwd
        self._lock = threading.Lock()
        self._capture_dir = tempfile.mkdtemp(prefix="osworld-interpreter-")
        self._process: subprocess.Popen | None = None
        self._to_child = -1
        self._from_child = -1
        self._ready = False
        self._closed = False
        self._spawn()

    def __enter__(self) -> PersistentInterpreter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def run(self, code: str, timeout: float = 120.0) -> ExecutionResult:
        with self._lock:
            if self._closed:
                raise RuntimeError("PersistentInterpreter.run() after close()")
            if self._process is None:
                self._spawn()
            deadline = time.monotonic() + timeout
            try:
                if not self._ready:
                    preload = self._receive(deadline)
                    if preload["returncode"] != 0:
                        self._stop()
                        return ExecutionResult(preload["output"], "interpreter preload failed:\n" + preload["error"],
                                               preload["returncode"])
                    self._ready = True
                self._send({"code": code})
                reply = self._receive(deadline)
            except _Timeout:
                output, error = self._stop_and_collect()
                self._spawn()
                return ExecutionResult(output, _append_line(error, f"timed out after {timeout:g} s; the interpreter "
                                                                   "was killed and a new one started"),
                                       -signal.SIGKILL)
            except _ChildExited:
                assert self._process is not None  # spawned above; only _stop() clears it
                status = self._process.wait()
                output, error = self._stop_and_collect()
                self._spawn()
                return ExecutionResult(output, _append_line(error, f"the interpreter exited with status {status}; "
                                                                   "a new one was started"), status)
            return ExecutionResult(reply["output"], reply["error"], reply["returncode"])

    def restart(self) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("PersistentInterpreter.restart() after close()")
            self._stop()
            self._spawn()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stop()
            shutil.rmtree(self._capture_dir, ignore_errors=True)

    def _spawn(self) -> None:
        child_reads, parent_writes = os.pipe()
        parent_reads, child_writes = os.pipe()
        try:
            self._process = subprocess.Popen(
                [self._python, os.path.abspath(__file__), _CHILD_FLAG,
                 str(child_reads), str(child_writes), self._capture_dir],
                pass_fds=(child_reads, child_writes), stdin=subprocess.DEVNULL,
                env=self._env, cwd=self._cwd)
        except BaseException:
            for fd in (parent_writes, parent_reads):
                os.close(fd)
            raise
        finally:
            os.close(child_reads)
            os.close(child_writes)
        self._to_child, self._from_child = parent_writes, parent_reads
        self._ready = False
        # The child reads this first, while the parent goes on; run() collects the answer,
        # and also notices a child that died before reading it.
        with contextlib.suppress(_ChildExited):
            self._send({"code": self._preload})

    def _stop(self) -> None:
        if self._process is None:
            return
        for fd in (self._to_child, self._from_child):
            os.close(fd)
        self._to_child = self._from_child = -1
        # A child waiting for a request exits on EOF; one stuck in user code is killed.
        try:
            self._process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    def _stop_and_collect(self) -> tuple[str, str]:
        """Kill the child and return what the interrupted call had written so far."""
        if self._process is not None:
            self._process.kill()
        self._stop()
        output, error = (_take_capture(os.path.join(self._capture_dir, name)) for name in ("stdout", "stderr"))
        return output, error

    def _send(self, message: dict) -> None:
        data = json.dumps(message).encode()
        view = memoryview(_HEADER.pack(len(data)) + data)
        try:
            while view:
                view = view[os.write(self._to_child, view):]
        except BrokenPipeError:
            raise _ChildExited from None

    def _receive(self, deadline: float) -> dict:
        (length,) = _HEADER.unpack(self._read_exactly(_HEADER.size, deadline))
        return json.loads(self._read_exactly(length, deadline))

    def _read_exactly(self, size: int, deadline: float) -> bytes:
        chunks = []
        while size:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._from_child], [], [], remaining)[0]:
                raise _Timeout
            chunk = os.read(self._from_child, min(size, 1 << 20))
            if not chunk:
                raise _ChildExited
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)


def _append_line(text: str, line: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    return text + line + "\n"


def _take_capture(path: str) -> str:
    try:
        # Never through a symlink someone planted in place of the capture file.
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK), "rb") as f:
            data = f.read() if stat.S_ISREG(os.fstat(f.fileno()).st_mode) else b""
        os.unlink(path)
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except OSError:  # a symlink (ELOOP) or worse: not ours to read
        with contextlib.suppress(OSError):
            os.unlink(path)
        return ""
    return data.decode("utf-8", "replace")


def _create_capture(capture_dir: str, path: str) -> int:
    """A new, empty capture file, created by this call: whatever sits at `path` (a stale
    capture, a symlink or FIFO the code under test planted) is removed first and never
    followed, and a capture folder replaced by a symlink is made anew."""
    # A /tmp cleaner (or a careless rm) must not break every later call.
    os.makedirs(capture_dir, mode=0o700, exist_ok=True)
    if os.path.islink(capture_dir) or not os.path.isdir(capture_dir):
        with contextlib.suppress(OSError):
            os.unlink(capture_dir)
        os.makedirs(capture_dir, mode=0o700, exist_ok=True)
    for _ in range(10):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:  # something raced us to the name: remove it again
            continue
    raise RuntimeError(f"cannot create the capture file {path}")


# ---------------------------------------------------------------------------------------------
# Child side: everything below runs in the interpreter started by PersistentInterpreter._spawn.

class _ProcessState:
    """The per-process state `python -c` would start with, restored after every call."""

    def __init__(self) -> None:
        self.cwd = os.getcwd()
        self.environ = dict(os.environ)
        self.argv = list(sys.argv)
        self.path = list(sys.path)
        self.streams = (sys.stdin, sys.stdout, sys.stderr)
        pyautogui = sys.modules.get("pyautogui")
        self.tunables = {name: getattr(pyautogui, name) for name in _PYAUTOGUI_TUNABLES
                         if hasattr(pyautogui, name)} if pyautogui else {}

    def restore(self) -> None:
        sys.stdin, sys.stdout, sys.stderr = self.streams
        sys.argv[:] = self.argv
        sys.path[:] = self.path
        if dict(os.environ) != self.environ:
            os.environ.clear()
            os.environ.update(self.environ)
        with contextlib.suppress(OSError):
            os.chdir(self.cwd)
        pyautogui = sys.modules.get("pyautogui")
        for name, value in self.tunables.items():
            setattr(pyautogui, name, value)


def _execute(code: str, namespace: dict, capture_dir: str, saved_fds: tuple[int, int], owner_pid: int) -> dict:
    paths = [os.path.join(capture_dir, name) for name in ("stdout", "stderr")]
    for fd, path in zip((1, 2), paths, strict=True):
        capture = _create_capture(capture_dir, path)
        os.dup2(capture, fd)
        os.close(capture)
    returncode = 1
    try:
        returncode = _exec_like_python_c(code, namespace)
    finally:
        # The code may have replaced sys.stdout/err; the originals can hold its output too.
        for stream in {sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__}:
            with contextlib.suppress(Exception):
                if stream is not None:  # sys.__stdout__ is None without a stdout
                    stream.flush()
        if os.getpid() != owner_pid:
            # The code forked and this is the fork: end it the way `python -c` would end, before
            # it touches the interpreter's capture files or pipes.
            os._exit(returncode)
        for fd, saved in zip((1, 2), saved_fds, strict=True):
            os.dup2(saved, fd)
    output, error = (_take_capture(path) for path in paths)
    return {"output": output, "error": error, "returncode": returncode}


def _exec_like_python_c(code: str, namespace: dict) -> int:
    try:
        exec(compile(code, "<string>", "exec"), namespace)
    except SystemExit as exit_:
        return _exit_status(exit_.code)
    except BaseException as error:
        # Drop this function's own frame so the traceback starts at <string>, like python -c's.
        caught_here = error.__traceback__  # never None for a caught exception
        traceback.print_exception(type(error), error, caught_here.tb_next if caught_here else None, file=sys.stderr)
        return 1
    return 0


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _child_read(fd: int, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = os.read(fd, size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _child_write(fd: int, message: dict) -> None:
    data = json.dumps(message).encode()
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _child_main(requests_fd: int, replies_fd: int, capture_dir: str) -> None:
    # Programs the code starts (os.system, fork) must not hold the pipes, or the parent would
    # never see EOF when this interpreter dies.
    os.set_inheritable(requests_fd, False)
    os.set_inheritable(replies_fd, False)
    # Look like `python -c`: the script's folder must not shadow modules, argv is ['-c'].
    sys.path[0] = ""
    sys.argv[:] = ["-c"]
    # A fatal error during a call dumps its traceback into that call's captured stderr.
    faulthandler.enable()
    saved_fds = (os.dup(1), os.dup(2))
    owner_pid = os.getpid()
    namespace = {"__name__": "__main__", "__doc__": None, "__builtins__": builtins}
    first = True
    while True:
        header = _child_read(requests_fd, _HEADER.size)
        if header is None:
            return
        body = _child_read(requests_fd, _HEADER.unpack(header)[0])
        if body is None:
            return
        code = json.loads(body)["code"]
        if first:
            # The preload builds the namespace every later call starts from.
            reply = _execute(code, namespace, capture_dir, saved_fds, owner_pid)
            state = _ProcessState()
            first = False
        else:
            reply = _execute(code, dict(namespace), capture_dir, saved_fds, owner_pid)
            state.restore()
        _child_write(replies_fd, reply)


if __name__ == "__main__" and sys.argv[1:2] == [_CHILD_FLAG]:
    _child_main(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
