"""pyautogui's PAUSE, served before the next call instead of after the last one.

pyautogui sleeps PAUSE (0.1 s) at the end of every call so that apps see input events
spaced out. Within one action that spacing matters; after the action's last call it
only makes every action 100 ms slower, since the harness waits between actions anyway.
`defer_pause` keeps the guarantee within an action (at least PAUSE between the end of
one pyautogui call and the start of the next) and drops the idle wait at the end.
Between actions the spacing is the harness's: DesktopEnv.step's `pause`, as in OSWorld.
The env server calls `pyautogui.osworld_new_action()` before each action's code.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class PyAutoGUIHooks(Protocol):
    """The parts of the pyautogui module that defer_pause reads and replaces."""
    PAUSE: float
    failSafeCheck: Callable[[], None]
    _handlePause: Callable[[bool], None]
    osworld_new_action: Callable[[], None]  # added by defer_pause


def defer_pause(pyautogui: PyAutoGUIHooks, clock: Callable[[], float] = time.monotonic,
                sleep: Callable[[float], None] = time.sleep) -> None:
    original_check = pyautogui.failSafeCheck
    last_end = [float("-inf")]

    def owe_pause(_pause: bool) -> None:  # replaces pyautogui._handlePause
        if _pause:
            last_end[0] = clock()

    def pay_pause_then_check() -> None:  # replaces pyautogui.failSafeCheck (run before every call)
        owed = pyautogui.PAUSE - (clock() - last_end[0])
        if owed > 0:
            sleep(owed)
        original_check()

    def new_action() -> None:
        last_end[0] = float("-inf")

    pyautogui._handlePause = owe_pause
    pyautogui.failSafeCheck = pay_pause_then_check
    pyautogui.osworld_new_action = new_action
