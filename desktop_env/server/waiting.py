"""Waiting for a condition inside the desktop: one loop instead of a deadline written out at each wait.

The env server cannot import the harness, so the loop lives here, in the server's package (copied
into each desktop with it); the harness reaches it through `desktop_env.waiting`, which raises the
harness's own error type.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class WaitTimeout(TimeoutError):
    """A condition did not hold within its time; `what` says what was waited for."""

    def __init__(self, what: str, timeout_s: float):
        super().__init__(f"timed out after {timeout_s:g} s waiting for {what}")
        self.what = what
        self.timeout_s = timeout_s

    def __reduce__(self) -> tuple:
        return (type(self), (self.what, self.timeout_s))


def poll_until(condition: Callable[[], T], timeout_s: float, interval_s: float, *,
               clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], object] = time.sleep) -> T | None:
    """Calls `condition` every `interval_s` until it returns something truthy, and returns that; None
    once `timeout_s` has passed without. It is called at least once, and once more at the deadline
    (the last sleep is cut short to end there)."""
    deadline = clock() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        left = deadline - clock()
        if left <= 0:
            return None
        sleep(min(interval_s, left))


def wait_until(condition: Callable[[], T], timeout_s: float, interval_s: float, what: str, *,
               clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], object] = time.sleep) -> T:
    """`poll_until` for a condition that must come true: raises WaitTimeout naming `what` when it does not."""
    value = poll_until(condition, timeout_s, interval_s, clock=clock, sleep=sleep)
    if value is None:
        raise WaitTimeout(what, timeout_s)
    return value
