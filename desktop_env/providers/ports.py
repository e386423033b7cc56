"""Free host ports for desktops that publish TCP ports (the docker provider), without races.

Parallel workers (threads, `--num-envs` processes, several runs on one machine) ask for
ports at the same time. A bind test alone is racy: two workers can both find port P
free and both hand it to `docker run`, and the loser fails. So every allocation
happens under an exclusive `fcntl.flock` on `<cache>/ports.lock`, and the ports
handed out are written to a ledger, `<cache>/ports.json`, until they are released.
A port is given out only when it is in no live ledger entry and a bind test on it
succeeds. Entries of processes that died without releasing (killed with -9) are
reclaimed: each entry records its owner's pid, the owner's start time (so a recycled
pid does not keep a dead owner's ports) and the host name (a ledger on a shared
home is never judged by another machine).

The range defaults to 20000-29999 (below Linux's ephemeral range, 32768-60999, so
outgoing connections do not take our ports meanwhile); `$OSWORLD_PORT_RANGE=LOW-HIGH`
changes it.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import ProviderError

DEFAULT_RANGE = (20000, 29999)


def osworld_cache_dir() -> Path:
    """$OSWORLD_CACHE or ~/.cache/osworld, the same folder the local provider uses."""
    root = os.environ.get("OSWORLD_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "osworld")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


# -- process liveness (shared with prune.py) --------------------------------------------------
def process_start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    fields = stat[stat.rfind(")") + 2:].split()
    return fields[19] if len(fields) > 19 else None


def process_alive(pid: int, start_time: str | None = None) -> bool:
    """True when `pid` runs and, if `start_time` is given and readable, is the same process."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user
    if start_time:
        current = process_start_time(pid)
        if current is not None and current != start_time:
            return False  # the pid was recycled by another process
    return True


def owner_record() -> dict:
    """Who holds something: this process, identified across pid reuse, on this host."""
    return {"pid": os.getpid(), "start": process_start_time(os.getpid()), "host": socket.gethostname()}


def parse_port_range(text: str) -> tuple[int, int]:
    try:
        low, high = (int(part) for part in text.split("-"))
    except ValueError:
        raise ProviderError(f"OSWORLD_PORT_RANGE must look like 20000-29999, got {text!r}") from None
    if not 1024 <= low <= high <= 65535:
        raise ProviderError(f"OSWORLD_PORT_RANGE must lie within 1024-65535 with LOW <= HIGH, got {text!r}")
    return low, high


def port_is_bindable(port: int, host: str = "0.0.0.0") -> bool:
    """True when a listening socket could be bound on (host, port) right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # SO_REUSEADDR lets the test ignore TIME_WAIT leftovers (as docker-proxy does);
        # on Linux it still fails when anything listens on the port.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            if e.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
                return False
            raise
    return True


class PortAllocator:
    """Hands out host ports that no other osworld worker holds and nothing listens on."""

    def __init__(self, directory: str | os.PathLike | None = None, port_range: tuple[int, int] | None = None,
                 bind_host: str = "0.0.0.0"):
        self.directory = Path(directory) if directory is not None else osworld_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.lock_path = self.directory / "ports.lock"
        self.ledger_path = self.directory / "ports.json"
        if port_range is None:
            env = os.environ.get("OSWORLD_PORT_RANGE")
            port_range = parse_port_range(env) if env else DEFAULT_RANGE
        self.low, self.high = port_range
        self.bind_host = bind_host
        self._next = self.low  # where this allocator's next scan starts (spreads ports out)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, dict]]:
        """The ledger, read and written under the exclusive lock."""
        with open(self.lock_path, "a+") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                ledger = self._read()
                before = json.dumps(ledger, sort_keys=True)
                yield ledger
                if json.dumps(ledger, sort_keys=True) != before:
                    self._write(ledger)
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def _read(self) -> dict[str, dict]:
        try:
            data = json.loads(self.ledger_path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # a torn or foreign file: start over (bind tests still protect live ports)
        return data if isinstance(data, dict) else {}

    def _write(self, ledger: dict[str, dict]) -> None:
        tmp = self.ledger_path.with_name(f".ports.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(ledger, indent=1, sort_keys=True))
        os.replace(tmp, self.ledger_path)

    @staticmethod
    def _stale(entry: dict, host: str) -> bool:
        if entry.get("host") != host:
            return False  # another machine's entry: never judged here
        raw_pid = entry.get("pid")
        if raw_pid is None:
            return True
        try:
            pid = int(raw_pid)
        except (TypeError, ValueError):
            return True
        return not process_alive(pid, entry.get("start"))

    def _reclaim(self, ledger: dict[str, dict]) -> list[int]:
        host = socket.gethostname()
        stale = [port for port, entry in ledger.items() if self._stale(entry, host)]
        for port in stale:
            del ledger[port]
        return sorted(int(p) for p in stale)

    def allocate(self, count: int = 1, purpose: str = "") -> list[int]:
        """`count` distinct free ports, recorded as held by this process until `release`."""
        if count < 1:
            return []
        with self._locked() as ledger:
            self._reclaim(ledger)
            record = {**owner_record(), "at": round(time.time(), 3), **({"purpose": purpose} if purpose else {})}
            chosen: list[int] = []
            span = self.high - self.low + 1
            start = self._next
            for i in range(span):
                port = self.low + (start - self.low + i) % span
                if str(port) in ledger or not port_is_bindable(port, self.bind_host):
                    continue
                chosen.append(port)
                if len(chosen) == count:
                    break
            if len(chosen) < count:
                raise ProviderError(
                    f"no {count} free host port(s) in {self.low}-{self.high} ({len(ledger)} held by osworld "
                    f"workers in {self.ledger_path}); widen the range with OSWORLD_PORT_RANGE=LOW-HIGH or "
                    f"run `osworld env prune` to clear leftovers")
            for port in chosen:
                ledger[str(port)] = record
            self._next = chosen[-1] + 1 if chosen[-1] < self.high else self.low
            return chosen

    def release(self, ports: Iterable[int]) -> None:
        """Gives ports back (only those this process holds)."""
        keys = [str(p) for p in ports]
        if not keys:
            return
        me = os.getpid()
        with self._locked() as ledger:
            for port in keys:
                entry = ledger.get(port)
                if entry is not None and entry.get("pid") == me:
                    del ledger[port]

    def reclaim(self, dry_run: bool = False) -> list[int]:
        """Forgets the ports of dead owners on this host; returns them (with `dry_run`, forgets nothing)."""
        with self._locked() as ledger:
            if dry_run:
                host = socket.gethostname()
                return sorted(int(port) for port, entry in ledger.items() if self._stale(entry, host))
            return self._reclaim(ledger)

    def held(self) -> dict[int, dict]:
        with self._locked() as ledger:
            return {int(port): dict(entry) for port, entry in ledger.items()}
