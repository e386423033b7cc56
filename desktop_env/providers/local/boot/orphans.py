"""Killing a sandbox whose outer bwrap is gone.

bwrap's --die-with-parent asks the kernel to kill the sandbox's init when the outer bwrap dies, but
that request does not always hold (it is dropped when the init changes its credentials before the
outer process dies, and races with an owner killed while the sandbox starts). An init that outlives
its outer bwrap keeps a whole desktop running with no one to stop it, so the harness kills the init
itself: killing a PID namespace's init makes the kernel kill everything in the namespace.
"""
from __future__ import annotations

import os
import signal
from pathlib import Path


def is_namespace_init(pid: int) -> bool:
    """Whether `pid` is the first process (pid 1) of a PID namespace other than ours."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    ids = next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])
    return len(ids) > 1 and ids[-1] == "1"


def kill_namespace_init(pid: int) -> bool:
    """SIGKILLs `pid` if it is still a namespace's init (a pid reused by another process is left
    alone); whether a signal was sent."""
    if not is_namespace_init(pid):
        return False
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True


def sandboxes_of(env_dir: Path) -> list[int]:
    """PIDs of the bwrap processes (outer and init) whose arguments name a path in `env_dir`."""
    prefix = os.fsencode(str(env_dir)) + b"/"
    return [pid for pid, argv in _bwrap_processes() if any(arg.startswith(prefix) for arg in argv)]


def _bwrap_processes() -> list[tuple[int, list[bytes]]]:
    """(pid, arguments) of every bwrap process on the host."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"bwrap"):
            found.append((int(entry), argv))
    return found


def kill_sandboxes_of(env_dir: Path) -> list[int]:
    """SIGKILLs every bwrap process of `env_dir` (its owner is gone); the PIDs signalled."""
    return _kill_all(sandboxes_of(env_dir))


def kill_sandboxes_without_env_dir(root: Path) -> list[int]:
    """SIGKILLs every bwrap process whose env folder under `root` is gone; the PIDs signalled."""
    return _kill_all(sandboxes_without_env_dir(root))


def sandboxes_without_env_dir(root: Path) -> list[int]:
    """PIDs of bwrap processes whose arguments name an env folder under `root` that is gone: a
    harness removes the folder only after killing its sandboxes, so these outlived theirs."""
    prefix = os.fsencode(str(root)) + b"/env-"
    found = []
    for pid, argv in _bwrap_processes():
        folders = {prefix + arg[len(prefix):].split(b"/", 1)[0] for arg in argv if arg.startswith(prefix)}
        if folders and not all(os.path.isdir(folder) for folder in folders):
            found.append(pid)
    return found


def _kill_all(pids: list[int]) -> list[int]:
    killed = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        killed.append(pid)
    return killed
