"""The one wait loop (the env server's, which the harness reaches too): it asks a condition every
interval until it holds, and gives up at the timeout, timed on a FakeClock."""
from __future__ import annotations

import pickle

import pytest

from desktop_env.server.waiting import WaitTimeout, poll_until, wait_until
from tests.fake_clock import FakeClock


class TrueOnCall:
    """A condition that holds from its n-th call on, returning `value`; `calls` counts the calls."""

    def __init__(self, n: int, value: object = "ready"):
        self.n, self.value, self.calls = n, value, 0

    def __call__(self) -> object:
        self.calls += 1
        return self.value if self.calls >= self.n else None


def test_the_conditions_own_value_is_returned_as_soon_as_it_holds():
    clock = FakeClock()
    condition = TrueOnCall(3, {"pid": 42})
    assert wait_until(condition, 10, 0.5, "the server", clock=clock, sleep=clock.sleep) == {"pid": 42}
    assert condition.calls == 3
    assert clock.slept == [0.5, 0.5]


def test_a_condition_that_holds_at_once_costs_no_sleep():
    clock = FakeClock()
    assert wait_until(lambda: True, 10, 0.5, "anything", clock=clock, sleep=clock.sleep) is True
    assert clock.slept == []


def test_it_asks_every_interval_and_once_more_at_the_deadline():
    clock = FakeClock()
    condition = TrueOnCall(1000)
    assert poll_until(condition, 1.0, 0.3, clock=clock, sleep=clock.sleep) is None
    assert clock.slept == [0.3, 0.3, 0.3, 0.1]  # the last sleep is cut to end at the deadline
    assert clock.now == pytest.approx(1.0)
    assert condition.calls == 5


def test_a_timeout_names_what_was_waited_for_and_how_long():
    clock = FakeClock()
    with pytest.raises(WaitTimeout) as raised:
        wait_until(lambda: False, 2.5, 0.25, "a window titled 'Untitled'", clock=clock, sleep=clock.sleep)
    assert str(raised.value) == "timed out after 2.5 s waiting for a window titled 'Untitled'"
    assert (raised.value.what, raised.value.timeout_s) == ("a window titled 'Untitled'", 2.5)
    assert isinstance(raised.value, TimeoutError)
    assert clock.now == pytest.approx(2.5)


def test_falsy_values_do_not_count_as_holding():
    clock = FakeClock()
    answers = iter([0, "", [], {}, False, "done"])
    assert poll_until(lambda: next(answers), 10, 1, clock=clock, sleep=clock.sleep) == "done"
    assert clock.slept == [1, 1, 1, 1, 1]


def test_an_exception_from_the_condition_ends_the_wait_at_once():
    clock = FakeClock()

    def condition():
        raise RuntimeError("the sandbox exited")

    with pytest.raises(RuntimeError, match="the sandbox exited"):
        wait_until(condition, 10, 1, "the sandbox", clock=clock, sleep=clock.sleep)
    assert clock.slept == []


def test_a_zero_timeout_asks_once():
    clock = FakeClock()
    condition = TrueOnCall(2)
    assert poll_until(condition, 0, 1, clock=clock, sleep=clock.sleep) is None
    assert condition.calls == 1 and clock.slept == []


def test_the_timeout_crosses_a_process_boundary_intact():
    again = pickle.loads(pickle.dumps(WaitTimeout("the a11y bus", 5.0)))
    assert (type(again), str(again), again.what) == (WaitTimeout, "timed out after 5 s waiting for the a11y bus",
                                                      "the a11y bus")
