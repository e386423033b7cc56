"""The harness's wait_until: the env server's loop, its timeout a DesktopEnvError (so a run counts
it as the desktop's) that is still a TimeoutError."""
from __future__ import annotations

import pickle

import pytest

from desktop_env.errors import DesktopEnvError
from desktop_env.server.waiting import WaitTimeout
from desktop_env.waiting import WaitTimedOut, poll_until, wait_until
from tests.fake_clock import FakeClock


def test_it_returns_what_the_condition_returned():
    clock = FakeClock()
    answers = iter([None, None, "10.0.0.7"])
    assert wait_until(lambda: next(answers), 30, 2, "the guest's IP", clock=clock, sleep=clock.sleep) == "10.0.0.7"
    assert clock.slept == [2, 2]


def test_its_timeout_is_the_harness_error_naming_what_and_how_long():
    clock = FakeClock(start=500.0)
    with pytest.raises(WaitTimedOut) as raised:
        wait_until(lambda: None, 90, 0.2, "a libreoffice window", clock=clock, sleep=clock.sleep)
    assert str(raised.value) == "timed out after 90 s waiting for a libreoffice window"
    assert isinstance(raised.value, DesktopEnvError)
    assert isinstance(raised.value, WaitTimeout) and isinstance(raised.value, TimeoutError)
    assert clock.now == pytest.approx(590.0)
    assert max(clock.slept) == 0.2


def test_poll_until_gives_up_quietly():
    clock = FakeClock()
    assert poll_until(lambda: False, 1, 0.25, clock=clock, sleep=clock.sleep) is None
    assert clock.slept == [0.25] * 4


def test_the_timeout_pickles_as_itself():
    again = pickle.loads(pickle.dumps(WaitTimedOut("the desktop", 3.0)))
    assert type(again) is WaitTimedOut and str(again) == "timed out after 3 s waiting for the desktop"
