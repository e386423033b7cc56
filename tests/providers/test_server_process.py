"""The env server's process, seen from the host: found by its pid inside, then told running, stopped
(SIGSTOP) or dead without asking it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from desktop_env.providers.local.boot.server_process import ServerProcess


def state_of(process: ServerProcess, wanted: str, timeout: float = 5.0) -> str:
    """process.gone() once it mentions `wanted` ("" for running), or what it said last."""
    deadline = time.monotonic() + timeout
    while True:
        said = process.gone()
        if (wanted in said if wanted else said == "") or time.monotonic() > deadline:
            return said
        time.sleep(0.02)


def test_a_server_process_is_told_running_stopped_or_dead():
    child = subprocess.Popen([sys.executable, "-c", "import threading, time\n"
                              "threading.Thread(target=time.sleep, args=(60,)).start()\ntime.sleep(60)"])
    try:
        # in this test's PID namespace the pid inside is the pid itself; another process's pid matches nothing
        assert ServerProcess.find(child.pid, [os.getpid()]) is None
        server = ServerProcess.find(child.pid, [os.getpid(), child.pid])
        assert server is not None and server.pid == child.pid
        assert state_of(server, "") == ""
        child.send_signal(signal.SIGSTOP)
        assert state_of(server, "stopped") == f"the env server (host pid {child.pid}) was stopped (SIGSTOP)"
        child.send_signal(signal.SIGCONT)
        assert state_of(server, "") == ""
        child.kill()
        assert state_of(server, "died") == f"the env server (host pid {child.pid}) died"  # a zombie, not yet reaped
        child.wait()
        assert server.gone() == f"the env server (host pid {child.pid}) died"
    finally:
        child.kill()
        child.wait()
