"""pyautogui's PAUSE is kept between calls but no longer idles after the last one."""
import types

from desktop_env.server.pyautogui_pause import defer_pause
from tests.fake_clock import FakeClock


def fake_pyautogui(clock):
    """The two hooks pyautogui's public functions call, around a call that takes 10 ms."""
    module = types.SimpleNamespace(PAUSE=0.1, checks=0)
    module.failSafeCheck = lambda: setattr(module, "checks", module.checks + 1)
    module._handlePause = lambda _pause: clock.sleep(module.PAUSE) if _pause else None

    def click():
        module.failSafeCheck()
        clock.now += 0.01
        module._handlePause(True)

    module.click = click
    return module


def test_consecutive_calls_stay_a_pause_apart_but_the_last_call_returns_at_once():
    clock = FakeClock(start=100.0)
    pyautogui = fake_pyautogui(clock)
    defer_pause(pyautogui, clock=clock, sleep=clock.sleep)
    pyautogui.click()
    assert clock.slept == []                 # nothing owed before the first call, nothing after it
    pyautogui.click()
    assert clock.slept == [0.1]              # the pause is served before the second call
    clock.now += 0.5                         # the harness waited between actions
    pyautogui.click()
    assert clock.slept == [0.1]              # already more than PAUSE since the last call
    assert pyautogui.checks == 3             # the fail-safe check still runs every time


def test_a_new_action_owes_nothing_to_the_previous_one():
    clock = FakeClock(start=100.0)
    pyautogui = fake_pyautogui(clock)
    defer_pause(pyautogui, clock=clock, sleep=clock.sleep)
    pyautogui.click()
    pyautogui.osworld_new_action()
    pyautogui.click()
    assert clock.slept == []
    pyautogui.click()
    assert clock.slept == [0.1]              # within the action the spacing holds


def test_pause_zero_or_internal_calls_owe_nothing():
    clock = FakeClock(start=100.0)
    pyautogui = fake_pyautogui(clock)
    defer_pause(pyautogui, clock=clock, sleep=clock.sleep)
    pyautogui.PAUSE = 0
    pyautogui.click()
    pyautogui.click()
    assert clock.slept == []
