"""The terminal's text is read once it holds still: a command typed just before the read has printed its answer."""
from __future__ import annotations

from desktop_env.server.accessibility import TERMINAL_HOLD_S, TERMINAL_SETTLE_BOUND_S, settled_terminal_text
from tests.fake_clock import FakeClock


def reads(*texts):
    """The terminal as it is drawn read after read; the last text stays."""
    shown = list(texts)
    return lambda: shown.pop(0) if len(shown) > 1 else shown[0]


def test_a_command_whose_answer_comes_after_the_first_read_is_read_with_its_answer():
    clock = FakeClock()
    text = settled_terminal_text(reads("$ stty size", "$ stty size\n43 132\n$"), clock, clock.sleep)
    assert text == "$ stty size\n43 132\n$"
    assert clock.now == 2 * TERMINAL_HOLD_S  # once the answer was there, one more look to see it held


def test_a_still_terminal_costs_one_more_look():
    clock = FakeClock()
    assert settled_terminal_text(reads("$ "), clock, clock.sleep) == "$ "
    assert clock.now == TERMINAL_HOLD_S


def test_a_terminal_that_never_holds_still_is_read_when_the_bound_passes():
    clock = FakeClock()
    counter = iter(range(1000))
    text = settled_terminal_text(lambda: f"line {next(counter)}", clock, clock.sleep)
    assert text.startswith("line ")
    assert TERMINAL_SETTLE_BOUND_S <= clock.now < TERMINAL_SETTLE_BOUND_S + TERMINAL_HOLD_S + 1e-9


def test_no_terminal_stays_none():
    clock = FakeClock()
    assert settled_terminal_text(lambda: None, clock, clock.sleep) is None
