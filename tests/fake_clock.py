"""A clock for tests of waiting code: time moves only when the code under test sleeps, so a wait's
length is asserted exactly and costs nothing."""
from __future__ import annotations


class FakeClock:
    """Call it for the time; pass its `sleep` where the code sleeps. `slept` lists each sleep, rounded to ms."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += seconds
