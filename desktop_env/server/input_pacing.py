"""Input that reaches the app it is meant for, also on a busy machine.

pyautogui sends each key and click to the X server at once, spaced only by its PAUSE (0.1 s between calls)
and an action's own `interval`s. On OSWorld's VM the app has handled a key long before the next arrives:
F10 has opened the menu bar before Right moves along it. On a machine whose cores are all busy the app may
not have run at all yet, and the next key then goes to whatever had the focus before (the document instead
of the menu that was about to open): the setup of a task or an agent's action does something else than on
the VM. So before a key or button is pressed, `pace_input` waits (bounded) until the app that will get it
(the active window's) and GNOME Shell (which owns shortcuts, menus of the top bar and focus) have no thread
running or waiting for a CPU: they have handled what came before.

It only waits before a press that starts a chord: never while a key is held (a held key would repeat after
the keyboard's repeat delay, and a hotkey's keys must arrive together). An app that stays busy longer than
ALWAYS_BUSY_S (a video playing, a long computation) is not waited for again in the same action.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any

from .waiting import poll_until

LOOK_INTERVAL_S = 0.005
IDLE_LOOKS = 2           # consecutive looks that find every watched app idle
WAIT_BOUND_S = 2.0       # the most one press waits
ALWAYS_BUSY_S = 1.0      # busy this long: not waited for again in this action
SHELL_NAMES = (b"gnome-shell",)
_TICKS = os.sysconf("SC_CLK_TCK")


def _read_stat(path: str) -> tuple[bytes, list[bytes]] | None:
    """A /proc stat file as (the name, the fields after it), None when it cannot be read. The fields are split
    after the name's last ")", for a name may hold spaces and ")": fields[0] is stat's field 3 (the state)."""
    try:
        with open(path, "rb") as stat:
            head, _, rest = stat.read().rpartition(b")")
    except OSError:
        return None
    return head.split(b"(", 1)[-1], rest.split()


def running(pid: int, proc: str = "/proc") -> bool:
    """Whether a thread of the process is running or waiting for a CPU (state R)."""
    try:
        tasks = os.listdir(f"{proc}/{pid}/task")
    except OSError:
        return False
    for task in tasks:
        stat = _read_stat(f"{proc}/{pid}/task/{task}/stat")
        if stat is not None and stat[1][:1] == [b"R"]:
            return True
    return False


def cpu_seconds(pid: int, proc: str = "/proc") -> float:
    """The CPU time the process's threads have used (user and system), 0 when it is gone."""
    stat = _read_stat(f"{proc}/{pid}/stat")
    try:
        fields = stat[1] if stat is not None else []
        return (int(fields[11]) + int(fields[12])) / _TICKS  # stat's fields 14 and 15: utime and stime, in ticks
    except (IndexError, ValueError):
        return 0.0


def find_processes(names: Iterable[bytes], proc: str = "/proc") -> list[int]:
    wanted = set(names)
    found = []
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            with open(f"{proc}/{entry}/comm", "rb") as comm:
                if comm.read().strip() in wanted:
                    found.append(int(entry))
        except OSError:
            continue
    return found


# Processes started this recently are an app an action or a setup step is starting, watched while busy.
YOUNG_S = 10.0
# Busy by their nature while a task runs: the screen recorder.
BACKGROUND_NAMES = ("ffmpeg",)


def processes_to_watch(own_pids: set[int], proc: str = "/proc") -> list[tuple[int, str]]:
    """GNOME Shell, and the desktop's processes started in the last YOUNG_S seconds (an app being started by a
    click, before it has a window), less `own_pids` (the server's, busy on the harness's behalf)."""
    found = []
    now_ticks = time.clock_gettime(time.CLOCK_BOOTTIME) * _TICKS
    for entry in os.listdir(proc):
        if not entry.isdigit() or int(entry) in own_pids:
            continue
        stat = _read_stat(f"{proc}/{entry}/stat")
        if stat is None:
            continue
        name, fields = stat
        started = int(fields[19]) if len(fields) > 19 else 0  # stat's field 22: start time, in ticks since boot
        if name in SHELL_NAMES or (now_ticks - started < YOUNG_S * _TICKS and name.decode() not in BACKGROUND_NAMES):
            found.append((int(entry), name.decode(errors="replace")))
    return found


class InputPacer:
    """Waits until the apps about to get a press have handled what they got before (see the module's docstring)."""

    def __init__(self, target_pids: Callable[[], set[int]], busy: Callable[[int], bool] = running,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        self._targets, self._busy, self._clock, self._sleep = target_pids, busy, clock, sleep
        self._always_busy: set[int] = set()
        self._busy_since: dict[int, float] = {}
        self.held: set[Any] = set()

    def new_action(self) -> None:
        self._always_busy.clear()
        self._busy_since.clear()

    def wait_until_idle(self) -> float:
        """Seconds waited (0 when a key is held, or every watched app was idle already)."""
        if self.held:
            return 0.0
        start = self._clock()
        idle_looks = 0

        def idle() -> bool:
            nonlocal idle_looks
            now = self._clock()
            watched = self._targets() - self._always_busy
            busy = {pid for pid in watched if self._busy(pid)}
            for pid in set(self._busy_since) - busy:
                del self._busy_since[pid]
            for pid in busy:
                since = self._busy_since.setdefault(pid, now)
                if now - since >= ALWAYS_BUSY_S:
                    self._always_busy.add(pid)
            idle_looks = 0 if busy else idle_looks + 1
            return idle_looks >= IDLE_LOOKS

        poll_until(idle, WAIT_BOUND_S, LOOK_INTERVAL_S, clock=self._clock, sleep=self._sleep)
        return self._clock() - start


def _x_targets(display: Any, shell_pids: list[int]) -> Callable[[], set[int]]:
    """The active window's process and GNOME Shell's, read over pyautogui's own X connection."""
    from Xlib import error as xerror

    from . import ewmh

    def targets() -> set[int]:
        pids = set(shell_pids)
        try:
            active = ewmh.active_window(display)
            pid = ewmh.cardinal(display, active, "_NET_WM_PID") if active is not None else None
            if pid is not None:
                pids.add(pid)
        except (xerror.XError, ValueError):
            pass
        return pids

    return targets


def pace_input(pyautogui: Any) -> InputPacer:
    """Wraps pyautogui's X11 key and button presses so each waits for the apps about to get it."""
    platform = pyautogui.platformModule
    pacer = InputPacer(_x_targets(platform._display, find_processes(SHELL_NAMES)))
    key_down, key_up = platform._keyDown, platform._keyUp

    def paced_key_down(key: Any) -> None:
        pacer.wait_until_idle()
        key_down(key)
        pacer.held.add(key)

    def tracked_key_up(key: Any) -> None:
        key_up(key)
        pacer.held.discard(key)

    def paced(press: Callable[..., Any]) -> Callable[..., Any]:
        def wait_then_press(*args: Any, **kwargs: Any) -> Any:
            pacer.wait_until_idle()
            return press(*args, **kwargs)
        return wait_then_press

    platform._keyDown, platform._keyUp = paced_key_down, tracked_key_up
    # A click, and each notch of a scroll (a press of a wheel button), goes through _mouseDown.
    platform._mouseDown = paced(platform._mouseDown)
    previous_new_action = getattr(pyautogui, "osworld_new_action", lambda: None)

    def new_action() -> None:
        previous_new_action()
        pacer.new_action()
        pacer.held.clear()

    pyautogui.osworld_new_action = new_action
    return pacer
