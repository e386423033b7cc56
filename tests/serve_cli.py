"""Running `osworld env serve` (and other commands) as a user runs them, for tests that need a served desktop."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def osworld(*args: str, **kwargs) -> subprocess.Popen:
    """`osworld ARGS` in a child process, its output merged and wide enough not to wrap."""
    return subprocess.Popen([sys.executable, "-m", "osworld_cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "200"}, **kwargs)


def wait_until_served(proc: subprocess.Popen, timeout: float) -> str:
    """What `env serve` printed up to its "Ctrl-C stops" line (the desktop is then up)."""
    assert proc.stdout is not None  # osworld() pipes it
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        assert line, f"serve exited early: {''.join(lines)}"
        lines.append(line)
        if "Ctrl-C stops" in line:
            break
    return "".join(lines)


def interrupt(proc: subprocess.Popen, timeout: float) -> str:
    """Ctrl-C to `proc`, then the rest of its output; a command still running after `timeout` is
    killed (never left behind with its desktop) and the wait's TimeoutExpired raised."""
    proc.send_signal(signal.SIGINT)
    try:
        rest, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.terminate()  # serve's SIGTERM stops its desktop as Ctrl-C would
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        raise
    return rest or ""
