"""Waiting for the desktop: `wait_until` a condition holds (or `poll_until`, which gives up quietly).

The loop itself is the env server's (`desktop_env.server.waiting`, which must stand alone inside the
desktop); here a timeout is the harness's own error, a DesktopEnvError.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from .errors import DesktopEnvError
from .server.waiting import WaitTimeout, poll_until

__all__ = ["WaitTimedOut", "poll_until", "wait_until"]

T = TypeVar("T")


class WaitTimedOut(DesktopEnvError, WaitTimeout):
    """Something the harness waited for on the desktop did not happen in time."""


def wait_until(condition: Callable[[], T], timeout_s: float, interval_s: float, what: str, *,
               clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], object] = time.sleep) -> T:
    """The truthy value `condition` returns within `timeout_s` (asked every `interval_s`); WaitTimedOut
    naming `what` and the timeout when it returns none."""
    value = poll_until(condition, timeout_s, interval_s, clock=clock, sleep=sleep)
    if value is None:
        raise WaitTimedOut(what, timeout_s)
    return value
