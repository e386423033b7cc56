"""What the docker, vmware and virtualbox providers share: running their CLI tools with
clear errors, and waiting for a desktop's env server to answer over HTTP."""
from __future__ import annotations

import http.client
import logging
import shlex
import subprocess
import time
import urllib.parse
from collections.abc import Callable

from ..errors import MissingDependency, ProviderError

log = logging.getLogger("osworld.providers")


def run_tool(argv: list[str], *, install_hint: str, timeout: float, check: bool = True,
             hint: Callable[[str], str] | None = None) -> subprocess.CompletedProcess:
    """Runs a CLI tool; a missing tool is MissingDependency, a failure ProviderError with its output."""
    log.debug("running %s", shlex.join(argv))
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              encoding="utf-8", errors="replace", timeout=timeout)
    except FileNotFoundError:
        raise MissingDependency(f"{argv[0]} not found on PATH: {install_hint}") from None
    except PermissionError as e:
        raise MissingDependency(f"{argv[0]} cannot be executed ({e}): {install_hint}") from None
    except subprocess.TimeoutExpired:
        raise ProviderError(f"`{shlex.join(argv)}` did not finish within {timeout:g} s") from None
    if check and proc.returncode != 0:
        output = (proc.stderr.strip() or proc.stdout.strip() or "(no output)")[-3000:]
        extra = hint(output) if hint else ""
        raise ProviderError(f"`{shlex.join(argv)}` failed with exit code {proc.returncode}: {output}"
                            + (f"\n{extra}" if extra else ""))
    return proc


def probe_env_server(url: str, path: str = "/screenshot", timeout: float = 10.0) -> str | None:
    """None when GET url+path answers 200, else why not (for the timeout message)."""
    parsed = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parsed.hostname or "localhost", parsed.port or 80, timeout=timeout)
    try:
        conn.request("GET", parsed.path.rstrip("/") + path)
        response = conn.getresponse()
        response.read()
        return None if response.status == 200 else f"HTTP {response.status}"
    except (OSError, http.client.HTTPException) as e:
        return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    finally:
        conn.close()


def wait_for_env_server(url: str, timeout: float, *, path: str = "/screenshot", what: str = "the desktop",
                        still_alive: Callable[[], str | None] | None = None, liveness_interval: float = 5.0,
                        poll_interval: float = 0.25, max_poll_interval: float = 2.0) -> float:
    """Polls GET url+path until it answers 200; returns the seconds it took.

    `still_alive` (checked every `liveness_interval` s while not ready) returns None
    while the desktop can still come up, or a message that ends the wait at once.
    """
    started = time.monotonic()
    deadline = started + timeout
    next_liveness = started + liveness_interval
    delay = poll_interval
    last = "no answer yet"
    while True:  # backs off, checks liveness now and then and gives each probe the time left: not wait_until's
        remaining = deadline - time.monotonic()
        last = probe_env_server(url, path, timeout=max(0.5, min(10.0, remaining))) or ""
        if not last:
            return time.monotonic() - started
        now = time.monotonic()
        if still_alive is not None and now >= next_liveness:
            dead = still_alive()
            if dead:
                raise ProviderError(f"{what} stopped before its env server at {url} answered: {dead}")
            next_liveness = now + liveness_interval
        if now >= deadline:
            raise ProviderError(f"{what}'s env server at {url} did not answer GET {path} within {timeout:g} s "
                                f"(last: {last})")
        time.sleep(min(delay, max(0.0, deadline - now)))
        delay = min(delay * 2, max_poll_interval)
