"""A started sandbox on the host: its outer bwrap process, the tail of what it printed, its init's pid
(the PID namespace every desktop process lives in) and, once ready, its env server's process; and
killing it, which takes every process of the namespace with it."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ....waiting import poll_until
from .desktop_storage import OutputTail
from .orphans import kill_namespace_init
from .server_process import ServerProcess

NAMESPACE_GONE_S = 10.0  # a killed sandbox's PID namespace is torn down within a second or two


@dataclass
class Sandbox:
    process: subprocess.Popen
    output: OutputTail      # the last of what it wrote to its stdout and stderr
    child_pid: int | None = None
    started: float = field(default_factory=time.monotonic)
    server: ServerProcess | None = None  # its env server's process, once it answered ready

    def running(self) -> bool:
        return self.process.poll() is None


def namespace_pids(sandbox: Sandbox) -> list[int]:
    """Host PIDs of every process in a sandbox's PID namespace, bwrap included."""
    if sandbox.child_pid is None:
        return []
    try:
        namespace = os.readlink(f"/proc/{sandbox.child_pid}/ns/pid")
    except OSError:
        return []
    pids = [sandbox.process.pid]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") == namespace:
                    pids.append(int(entry))
            except OSError:
                continue
    return sorted(set(pids))


def kill_sandbox(sandbox: Sandbox, folders: Sequence[Path], wait: bool = True) -> threading.Thread | None:
    """Kills a sandbox. Without `wait`, reaping it and deleting its `folders` happen in a thread,
    returned (the kernel takes a second or two to tear down a PID namespace)."""
    if sandbox.process.poll() is None:
        sandbox.process.send_signal(signal.SIGKILL)
    if sandbox.child_pid is not None:
        # the sandbox's init is killed too rather than trusted to die with bwrap (orphans.py);
        # the kernel then kills every process left in its PID namespace
        kill_namespace_init(sandbox.child_pid)

    def reap() -> None:
        sandbox.process.wait()
        if sandbox.child_pid is not None:
            poll_until(lambda: not os.path.exists(f"/proc/{sandbox.child_pid}"), NAMESPACE_GONE_S, 0.01)
        if not wait:
            for folder in folders:
                if folder.is_dir():
                    shutil.rmtree(folder, ignore_errors=True)
                else:
                    folder.unlink(missing_ok=True)

    if wait:
        reap()
        return None
    reaper = threading.Thread(target=reap, name="sandbox-reaper", daemon=True)
    reaper.start()
    return reaper
