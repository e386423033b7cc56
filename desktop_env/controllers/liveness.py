"""Noticing in seconds that the env server died or froze while a request waits on it.

A request to a server that is gone would otherwise wait out its whole timeout (150 s): the
local desktop's socket is held open by the harness, so a dead server's requests are accepted
by the kernel and never answered, and a stopped one answers nothing either. While a request
is pending, a watch asks the provider whether it knows the server gone (the local provider
looks at the server's process: exited, or stopped by SIGSTOP or a debugger) and, once the
request has taken a while, probes the server with a request of its own. A server that its
provider knows gone, or that answers no probe for `give_up_after` seconds, is let go of: the
request waiting on it fails at once, and so does every later one (end-of-task calls such as
ending the recording, getters), with the reason.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .transport import Endpoint, Transport

# Any answer proves the server lives; /platform is in OSWorld's protocol and costs nothing to answer.
PROBE_PATH = "/platform"


@dataclass(frozen=True)
class LivenessPolicy:
    check_every: float = 0.2     # seconds between asking the provider
    probe_after: float = 1.0     # a request pending this long gets probes beside it
    probe_every: float = 1.0     # seconds from one probe's answer to the next probe
    give_up_after: float = 7.0   # a probe unanswered this long: the server is frozen


class ServerWatch:
    """Watches one env server for the requests of one controller. `gone` is the provider's own
    verdict ("" while it knows nothing against the server); `dead` is why the server was let go of."""

    def __init__(self, endpoint: Endpoint, transport: Transport, gone: Callable[[], str] | None = None,
                 policy: LivenessPolicy | None = None) -> None:
        self.policy = policy or LivenessPolicy()
        self.transport = transport
        self._gone = gone or (lambda: "")
        self._probe = Transport(endpoint, timeout=self.policy.give_up_after + 1)
        self._lock = threading.Lock()
        self._probing = False           # a probe is in flight
        self._next_probe = 0.0          # no probe before this (monotonic time)
        self._answered = 0.0            # when the server last answered anything

    @property
    def dead(self) -> str:
        return self.transport.aborted or ""

    @contextmanager
    def watching(self) -> Iterator[None]:
        """Watches the server while the block (one request) runs."""
        done = threading.Event()
        started = time.monotonic()
        with self._lock:
            self._next_probe = max(self._next_probe, started + self.policy.probe_after)
        threading.Thread(target=self._watch, args=(done, started), name="env-server-watch", daemon=True).start()
        try:
            yield
            self._heard()
        finally:
            done.set()

    def _watch(self, done: threading.Event, started: float) -> None:
        while not done.wait(self.policy.check_every) and not self.dead:
            reason = self._gone() or self._silence(started)
            if reason:
                self.transport.abort(reason)
                return

    def _silence(self, started: float) -> str:
        """Why the server counts as frozen, if it does; sends a probe when one is due."""
        now = time.monotonic()
        with self._lock:
            silent_since = max(started, self._answered)
            if not self._probing and now >= self._next_probe:
                self._probing = True
                threading.Thread(target=self._send_probe, name="env-server-probe", daemon=True).start()
        if now - silent_since < self.policy.give_up_after:
            return ""
        return (f"it answered nothing for {now - silent_since:.0f} s, a request of {PROBE_PATH} included, "
                f"while a request waited {now - started:.0f} s")

    def _heard(self) -> None:
        with self._lock:
            self._answered = time.monotonic()

    def _send_probe(self) -> None:
        try:
            self._probe.request("GET", PROBE_PATH)
            self._heard()
        except Exception:  # no answer: the watch gives up once the server has been silent long enough
            pass
        finally:
            self._probe.close()  # this thread's connection
            with self._lock:
                self._probing = False
                self._next_probe = time.monotonic() + self.policy.probe_every
