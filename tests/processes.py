"""Processes as the tests see them in /proc: whether one has ended, and which are a process's children."""
from __future__ import annotations

import subprocess
from pathlib import Path


def ended(pid: int) -> bool:
    """Gone, or a zombie nobody has reaped yet (this container's init may not reap an orphan's zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"  # the state follows the name, which may hold spaces and ")"


def child_pids(pid: int) -> list[int]:
    return [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()]
