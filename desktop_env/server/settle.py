"""Waiting until the desktop shows what a task's setup started, as OSWorld's VM shows it after its wait.

OSWorld's runner sleeps 60 s after a reset before the agent's first screenshot, and its task files
press keys a fixed time after launching an app: on the VM, the apps are up by then. Here a reset takes
a second and a busy machine can take longer than those sleeps, so the harness asks instead
(`POST /setup/settle`) and this module answers once the desktop holds still:

- every app a setup step launched (`/setup/launch`, `/setup/open_file`) that is a desktop app has a
  window of its own that is not a splash screen (an app that hands its work to a running instance
  and exits is done once its instance made the window, or a moment after it exited);
- no splash screen is mapped;
- no window has moved or changed size for `hold` seconds (a window the window manager maximizes
  after mapping it has its final size);
- the screen has not changed for `hold` seconds, but for a caret or a clock digit, or a region that
  keeps changing in place (a video playing) while the windows hold still;
- no thread is running or waiting for a CPU in the apps showing those windows or the active one, in
  GNOME Shell (menus, the overview, the apps it starts) or in a process started in the last few
  seconds (input_pacing.processes_to_watch: an app a click is starting, before it has a window): an
  app starved by a busy machine draws nothing and would pass a still screen. One that stays busy long
  after the windows held still, and has had the CPU time to do real work meanwhile (a player decoding a
  video), is not waited for; one that stays busy because it gets almost no CPU (keys a setup typed,
  queued behind other desktops' work) is, for the VM would have handled them within its fixed sleeps.

Everything is bounded by the caller's timeout; the answer says what was still awaited.
"""
from __future__ import annotations

import os
import shlex
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import ImageChops
from Xlib import error as xerror
from Xlib.display import Display

from . import ewmh
from .input_pacing import cpu_seconds, processes_to_watch
from .input_pacing import running as threads_running
from .waiting import poll_until

POLL_S = 0.25
MIN_POLL_S = 0.05
HOLD_S = 1.0
# A launched program gone without a new window had a running instance make it; the window comes soon.
EXITED_GRACE_S = 5.0
# Changes smaller than this many pixels (full-size) are a caret blinking or the clock's minute.
STILL_PIXELS = 2400
# A region changing in place this long, with every window holding still, is an animation or a video.
STEADY_ANIMATION_S = 3.0
# An app still busy this long after its window held still is working on something that does not end...
STEADY_BUSY_S = 5.0
# ...once it has also used this much CPU time meanwhile: busy without it, it is starved, not endless.
STEADY_BUSY_CPU_S = 1.0
SPLASH = "_NET_WM_WINDOW_TYPE_SPLASH"
# Window types that are part of an app's main window set; menus, tooltips and notifications are not.
MAIN_TYPES = frozenset({"_NET_WM_WINDOW_TYPE_NORMAL", "_NET_WM_WINDOW_TYPE_DIALOG"})
# Programs that start a desktop app without being named in an app entry's Exec line.
EXTRA_GUI_PROGRAMS = frozenset({"soffice", "libreoffice", "localc", "lowriter", "loimpress", "google-chrome",
                                "google-chrome-stable", "chromium", "code", "xdg-open", "gio"})


@dataclass(frozen=True)
class WindowState:
    id: int
    title: str
    wm_class: str
    types: frozenset[str]
    geometry: tuple[int, int, int, int]    # x, y, width, height of the client area, in root coordinates
    pid: int | None
    hidden: bool                           # minimized

    @property
    def splash(self) -> bool:
        return SPLASH in self.types

    @property
    def main(self) -> bool:
        return not self.hidden and (not self.types or bool(self.types & MAIN_TYPES))

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "class": self.wm_class, "geometry": list(self.geometry),
                "splash": self.splash, "hidden": self.hidden}


def _window_state(connection: Display, window_id: int) -> WindowState | None:
    try:
        instance, class_name = ewmh.wm_class(connection, window_id)
        return WindowState(id=window_id, title=ewmh.title(connection, window_id), wm_class=class_name or instance,
                           types=frozenset(ewmh.atom_names(connection, window_id, "_NET_WM_WINDOW_TYPE")),
                           geometry=ewmh.client_geometry(connection, window_id),
                           pid=ewmh.cardinal(connection, window_id, "_NET_WM_PID"),
                           hidden="_NET_WM_STATE_HIDDEN" in ewmh.atom_names(connection, window_id, "_NET_WM_STATE"))
    except ewmh.WINDOW_GONE:
        return None


def windows_now(connection: Display) -> dict[int, WindowState]:
    """The window manager's client windows, by id (none while no window manager runs)."""
    found = {}
    for window_id in ewmh.client_list(connection) or []:
        state = _window_state(connection, window_id)
        if state is not None:
            found[state.id] = state
    return found


def client_ids(display: str) -> frozenset[int]:
    connection = Display(display)
    try:
        return frozenset(windows_now(connection))
    finally:
        connection.close()


def program_of(command: list[str] | str) -> str:
    """The program a launch runs: the first word that is not a VAR=value assignment, as its file name."""
    words = shlex.split(command) if isinstance(command, str) else list(command)
    for word in words:
        if "=" in word.split("/")[0] and not word.startswith(("/", ".")):
            continue
        return os.path.basename(word)
    return ""


def real_name(program: str, path: str | None) -> str:
    """The file name `program` is found as on PATH, symlinks followed (`gimp` is `gimp-2.10`)."""
    found = shutil.which(program, path=path) if program else None
    return os.path.basename(os.path.realpath(found)) if found else program


def gui_programs(data_dirs: Iterable[str], path: str | None = None) -> frozenset[str]:
    """File names of the programs the desktop's app entries start (Exec and TryExec of applications/*.desktop),
    as named there and as found on PATH."""
    names = set(EXTRA_GUI_PROGRAMS)
    for folder in data_dirs:
        for entry in Path(folder, "applications").glob("*.desktop"):
            try:
                text = entry.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                key, _, value = line.partition("=")
                if key.strip() in ("Exec", "TryExec") and value.strip():
                    try:
                        words = shlex.split(value)
                    except ValueError:
                        continue
                    program = program_of(words) if words else ""
                    if program and program != "env":
                        names.update((program, real_name(program, path)))
    return frozenset(names)


@dataclass
class Launch:
    """A program a setup step started, and what has been seen of it."""
    command: str
    pid: int
    gui: bool
    started: float
    windows_before: frozenset[int]
    poll: Callable[[], int | None]          # the process's exit code, None while it runs
    exited_at: float | None = None
    window_at: float | None = None
    screen_before: Any = None               # the screen at the launch (quarter size, grey), to tell its window drawn
    drawn: bool = False

    def to_json(self) -> dict[str, Any]:
        shown = None if self.window_at is None else round(self.window_at - self.started, 2)
        return {"command": self.command[:200], "gui": self.gui, "window_after_s": shown}


def _changed_box(before: Any, after: Any) -> tuple[int, int, int, int] | None:
    """The bounding box (in full-size pixels) of what differs between two quarter-size greyscale images."""
    if before.size != after.size:
        return (0, 0, before.size[0] * 4, before.size[1] * 4)
    box = ImageChops.difference(before, after).point(lambda v: 255 if v > 8 else 0).getbbox()
    return None if box is None else (box[0] * 4, box[1] * 4, box[2] * 4, box[3] * 4)


def _area(box: tuple[int, int, int, int]) -> int:
    return (box[2] - box[0]) * (box[3] - box[1])


def _inside(box: tuple[int, int, int, int], region: tuple[int, int, int, int]) -> bool:
    return region[0] <= box[0] and region[1] <= box[1] and box[2] <= region[2] and box[3] <= region[3]


def _union(a: tuple[int, int, int, int] | None, b: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    return b if a is None else (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


@dataclass
class SettleReport:
    settled: bool
    waited_s: float
    waiting_for: list[str]
    windows: list[dict[str, Any]]
    launches: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"settled": self.settled, "waited_s": round(self.waited_s, 2), "waiting_for": self.waiting_for,
                "windows": self.windows, "launches": self.launches}


@dataclass
class _Watch:
    """What one settle call has seen so far."""
    geometry: dict[int, tuple[int, int, int, int]] = field(default_factory=dict)
    geometry_since: float = 0.0
    picture: Any = None
    still_since: float = 0.0
    moving: tuple[int, int, int, int] | None = None   # where the screen keeps changing while windows hold still
    moving_grew: float = 0.0
    busy_seen: dict[int, bool] = field(default_factory=dict)
    cpu_at_first_look: dict[int, float] = field(default_factory=dict)


class Settler:
    """The launches of this desktop's setup, and the wait until the desktop shows them settled."""

    def __init__(self, display: str, grab: Callable[[], Any], data_dirs: Iterable[str], path: str | None = None,
                 clock: Callable[[], float] = time.monotonic, own_pids: Callable[[], set[int]] = lambda: set(),
                 proc: str = "/proc"):
        self.display = display
        self._own_pids, self._proc = own_pids, proc
        self._grab = grab
        self._data_dirs = list(data_dirs)
        self._path = path
        self._gui: frozenset[str] | None = None
        self.clock = clock
        self.launches: list[Launch] = []
        self._lock = threading.Lock()

    def is_gui(self, program: str) -> bool:
        if self._gui is None:
            self._gui = gui_programs(self._data_dirs, self._path)
        return program in self._gui or real_name(program, self._path) in self._gui

    def windows_before_launch(self) -> frozenset[int]:
        try:
            return client_ids(self.display)
        except (xerror.DisplayError, xerror.ConnectionClosedError, OSError):
            return frozenset()

    def _picture(self) -> Any:
        return self._grab().convert("L").reduce(4)

    def note_launch(self, command: list[str] | str, pid: int, poll: Callable[[], int | None],
                    windows_before: frozenset[int], program: str | None = None) -> Launch:
        text = command if isinstance(command, str) else shlex.join(command)
        try:
            program = program if program is not None else program_of(command)
        except ValueError:  # unbalanced quotes: the shell will say so; nothing to wait for
            program = ""
        gui = self.is_gui(program)
        launch = Launch(text, pid, gui, self.clock(), windows_before, poll)
        if gui:
            try:
                launch.screen_before = self._picture()
            except Exception:  # no picture: the window counts as drawn once it is there
                launch.screen_before = None
        with self._lock:
            self.launches.append(launch)
        return launch

    def settle(self, timeout: float, hold: float = HOLD_S, launches: list[Launch] | None = None) -> SettleReport:
        """Polls until the desktop is settled (see the module's docstring) or `timeout` seconds passed."""
        start = self.clock()
        with self._lock:
            watched = list(self.launches if launches is None else launches)
        watch = _Watch(geometry_since=start, still_since=start, moving_grew=start)
        connection = Display(self.display)
        now = start
        windows: dict[int, WindowState] = {}
        waiting: list[str] = []

        def settled() -> bool:
            nonlocal now, windows, waiting
            now = self.clock()
            windows = windows_now(connection)
            waiting = self._look(now, windows, ewmh.active_window(connection), watched, watch, hold)
            return not waiting

        try:
            poll_until(settled, timeout, min(POLL_S, max(MIN_POLL_S, hold / 3)),  # a short hold is looked at more often
                       clock=self.clock)
        finally:
            connection.close()
        return SettleReport(not waiting, now - start, waiting, [w.to_json() for w in windows.values() if not w.hidden],
                            [launch.to_json() for launch in watched])

    def _look(self, now: float, windows: dict[int, WindowState], active: int | None, watched: list[Launch],
              watch: _Watch, hold: float) -> list[str]:
        waiting = [f"a window of {launch.command[:80]!r}" for launch in watched if self._window_pending(
            launch, now, windows)]
        waiting += [f"the splash screen {w.title or w.wm_class!r} to go" for w in windows.values() if w.splash]
        geometry = {w.id: w.geometry for w in windows.values() if not w.hidden}
        if geometry != watch.geometry:
            watch.geometry, watch.geometry_since, watch.moving, watch.moving_grew = geometry, now, None, now
        if now - watch.geometry_since < hold:
            waiting.append("the windows to hold still")
        if not self._screen_still(now, watch, hold):
            waiting.append("the screen to hold still")
        waiting += self._undrawn(windows, watched, watch.picture)
        busy = self._busy_apps(now, windows, active, watched, watch)
        waiting += [f"{name} to finish drawing (busy)" for name in busy]
        return waiting

    def _window_pending(self, launch: Launch, now: float, windows: dict[int, WindowState]) -> bool:
        if launch.window_at is not None or not launch.gui:
            return False
        if any(w.main and not w.splash and w.id not in launch.windows_before for w in windows.values()):
            launch.window_at = now
            return False
        if launch.exited_at is None and launch.poll() is not None:
            launch.exited_at = now
        return launch.exited_at is None or now - launch.exited_at < EXITED_GRACE_S

    def _undrawn(self, windows: dict[int, WindowState], watched: list[Launch], picture: Any) -> list[str]:
        """Launches whose window is listed but shows nothing yet where it stands: the screen there is still what
        it was at the launch (a window the compositor has not painted yet, on a busy machine)."""
        waiting = []
        for launch in watched:
            if launch.window_at is None or launch.drawn or launch.screen_before is None or picture is None:
                continue
            new = [w for w in windows.values() if w.main and not w.splash and w.id not in launch.windows_before]
            for window in new:
                x, y, width, height = (v // 4 for v in window.geometry)
                box = (max(0, x), max(0, y), min(picture.size[0], x + width), min(picture.size[1], y + height))
                if box[2] - box[0] < 2 or box[3] - box[1] < 2:
                    launch.drawn = True  # off the screen: nothing to see drawn
                    continue
                changed = _changed_box(launch.screen_before.crop(box), picture.crop(box))
                if changed is not None and _area(changed) > STILL_PIXELS:
                    launch.drawn = True
            if new and not launch.drawn:
                waiting.append(f"the window of {launch.command[:80]!r} to be drawn")
        return waiting

    def _screen_still(self, now: float, watch: _Watch, hold: float) -> bool:
        picture = self._picture()
        previous, watch.picture = watch.picture, picture
        if previous is None:
            watch.still_since = now
            return False
        box = _changed_box(previous, picture)
        if box is not None and _area(box) > STILL_PIXELS:
            watch.still_since = now
            if watch.moving is None or not _inside(box, watch.moving):
                watch.moving, watch.moving_grew = _union(watch.moving, box), now
        if now - watch.still_since >= hold:
            return True
        # Changing in place (a video) while every window has held still for a while: as settled as it gets.
        return watch.moving is not None and now - watch.geometry_since >= STEADY_ANIMATION_S \
            and now - watch.moving_grew >= STEADY_ANIMATION_S - hold

    def _busy_apps(self, now: float, windows: dict[int, WindowState], active: int | None, watched: list[Launch],
                   watch: _Watch) -> list[str]:
        """Apps showing a window a launch made, and the app of the active window, that were busy at this look and
        the one before it."""
        new = set().union(*(set(windows) - launch.windows_before for launch in watched)) if watched else set()
        if active is not None:
            new.add(active)
        pids: dict[int, str] = {w.pid: w.title or w.wm_class for w in windows.values() if w.id in new and w.pid}
        # GNOME Shell draws the menus and the overview an action opens, and starts the apps it launches; an app
        # started moments ago (by a click on a menu or the dock) may not have made its window yet.
        for pid, name in processes_to_watch(self._own_pids(), self._proc):
            pids.setdefault(pid, name)
        busy = []
        for pid, name in pids.items():
            running = threads_running(pid, self._proc)
            was = watch.busy_seen.get(pid, False)
            watch.busy_seen[pid] = running
            used = cpu_seconds(pid, self._proc)
            first = watch.cpu_at_first_look.setdefault(pid, used)
            if running and was and (now - watch.geometry_since < STEADY_BUSY_S or used - first < STEADY_BUSY_CPU_S):
                busy.append(repr(name))
        return busy

