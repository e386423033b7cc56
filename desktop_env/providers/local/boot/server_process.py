"""The desktop's env server as a host process: whether it still runs, seen from the host's /proc.

The harness learns the server's pid inside the sandbox from its first /health answer (before
any agent code runs), finds the host process that has it, and from then on can tell without
asking the server that it died or was stopped (SIGSTOP, a debugger): agent code runs as the
same user inside and can do either, and a server that is gone must cost seconds, not the 150 s
a request would wait for it.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

STOPPED_STATES = {"T": "stopped (SIGSTOP)", "t": "stopped by a debugger"}
DEAD_STATES = ("Z", "X")


def _stat_fields(path: str) -> list[str] | None:
    """The fields of a /proc stat file after the command name (state first), or None when it is gone."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return text[text.rfind(")") + 2:].split()  # the name may hold spaces and parentheses


def _inner_pid(host_pid: int) -> int | None:
    """The pid the process has in its innermost PID namespace (what os.getpid() says inside)."""
    try:
        with open(f"/proc/{host_pid}/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return None


@dataclass(frozen=True)
class ServerProcess:
    pid: int          # on the host
    start_time: str   # field 22 of /proc/<pid>/stat: tells a reused pid apart

    @classmethod
    def find(cls, inner_pid: int, host_pids: Iterable[int]) -> ServerProcess | None:
        """The process among `host_pids` (the sandbox's) whose pid inside is `inner_pid`."""
        for pid in host_pids:
            if _inner_pid(pid) == inner_pid:
                fields = _stat_fields(f"/proc/{pid}/stat")
                if fields is not None and len(fields) > 19:
                    return cls(pid, fields[19])
        return None

    def gone(self) -> str:
        """Why the server no longer serves ("" while it runs): it died, or a thread of it is stopped."""
        fields = _stat_fields(f"/proc/{self.pid}/stat")
        if fields is None or len(fields) <= 19 or fields[19] != self.start_time or fields[0] in DEAD_STATES:
            return f"the env server (host pid {self.pid}) died"
        try:
            threads = os.listdir(f"/proc/{self.pid}/task")
        except OSError:
            threads = []
        for thread in threads:
            state = (_stat_fields(f"/proc/{self.pid}/task/{thread}/stat") or ["?"])[0]
            if state in STOPPED_STATES:
                return f"the env server (host pid {self.pid}) was {STOPPED_STATES[state]}"
        return ""
