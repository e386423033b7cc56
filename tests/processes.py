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


def what_it_is_doing(pid: int) -> str:
    """A process's command line and, for each of its threads, its name, state and where in the kernel it waits;
    with its Python stacks where py-spy is installed: what a test that waited in vain for it to end says of it."""
    proc = Path(f"/proc/{pid}")
    try:
        command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return f"{pid}: gone"
    threads = []
    for task in sorted(proc.glob("task/*")):
        try:
            stat, wchan = (task / "stat").read_text(), (task / "wchan").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        threads.append(f"{name} {stat[stat.rindex(')') + 2]} in {wchan or '-'}")
    said = f"{pid} ({command[:160]}); threads: {', '.join(threads)}"
    try:
        stacks = subprocess.run(["py-spy", "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return said
    return f"{said}\n{stacks.stdout or stacks.stderr}"
