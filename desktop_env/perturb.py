"""UI perturbations for the robustness analysis: disturb the desktop after a task's setup.

- `layout`: every normal application window gets a random size (40-90 % of the work area
  each way) and a random position: its top edge stays inside the work area (the title bar
  can still be grabbed), at most a quarter of it may hang off the left, right or bottom edge.
- `clutter`: 2-3 unrelated windows (a text editor with a short note, a file manager on the
  home folder, a terminal; whichever of them the desktop has) are opened at random places
  on top of the task's windows. Apps the task does not show are preferred; one it does show
  is asked for a separate window, so the task's own window stays as it was.

Everything goes through the env server protocol (POST /execute with Python code), so it
works on any OSWorld-compatible desktop, a VM too. The code talks EWMH through the env
server's ewmh.py, sent along with it, over python-xlib, which pyautogui itself needs on Linux,
so it is wherever actions run; wmctrl/xdotool are not needed. The random choices are made
here, from an RNG derived from "seed:task_id" with SHA-256 (never the salted hash()), so the
same seed, task and windows give the same record. Geometries are frame rectangles (the window
as a user sees it, title bar and borders included), {x, y, width, height} in screen pixels.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import DesktopEnvError

if TYPE_CHECKING:
    from .server import ewmh  # on the desktop, the module desktop_source() sends along

KINDS = ("layout", "clutter")
RESULT_MARKER = "OSWORLD-PERTURBATION "
NOTES_FILE = "/tmp/osworld-clutter/groceries.txt"  # outside the home folder, where tasks keep their files
NOTES_TEXT = "Groceries\n- oat milk\n- rye bread\n- apples\n\nCall the dentist on Thursday.\n"
SETTLE_TIMEOUT_S = 10.0
WINDOW_TIMEOUT_S = 30.0
# How long the clutter windows must hold still before they are recorded.
CLUTTER_STILL_S = 0.5
EWMH_MODULE = Path(__file__).with_name("server") / "ewmh.py"


class PerturbationError(DesktopEnvError):
    """The desktop could not be perturbed; the message carries what the env server said."""


@dataclass(frozen=True)
class ClutterApp:
    name: str
    command: tuple[str, ...]
    classes: tuple[str, ...]  # WM_CLASS names (lower case) its windows carry


# One role per line, the apps that can fill it in order of preference: GNOME's (the local
# desktop and a stock OSWorld Ubuntu VM), then the generic fallback. Each command opens a
# new window even when the app already runs (never a tab in a task's window).
CLUTTER_ROLES: tuple[tuple[str, tuple[ClutterApp, ...]], ...] = (
    ("text editor", (ClutterApp("gedit", ("gedit", "--new-window", NOTES_FILE), ("gedit", "org.gnome.gedit")),)),
    ("file manager", (ClutterApp("nautilus", ("nautilus", "--new-window", "~"), ("nautilus", "org.gnome.nautilus")),)),
    ("terminal", (ClutterApp("gnome-terminal", ("gnome-terminal",), ("gnome-terminal", "gnome-terminal-server")),
                  ClutterApp("xterm", ("xterm",), ("xterm",)))),
)


# -- inside the desktop -----------------------------------------------------------------------
# The class and functions below are sent as source to the desktop's Python and run there
# (standard library, python-xlib and the `ewmh` module sent along, no annotations a 3.8 interpreter
# would reject). So their waits are written out: any OSWorld desktop runs them, where desktop_env.waiting is not.

class XDesktop:
    """The window manager's view of the desktop, read and changed through the server's EWMH module
    (`ewmh`, which run_on_desktop sends along)."""

    def __init__(self):
        from Xlib import X, display
        self.X = X
        self.display = display.Display()
        self.root = self.display.screen().root

    def close(self):
        self.display.close()

    def window(self, wid):
        return self.display.create_resource_object("window", wid)

    def client_list(self):
        return ewmh.client_list(self.display) or []

    def stacking(self):
        return ewmh.stacking_list(self.display)

    def screen(self):
        screen = self.display.screen()
        return {"width": screen.width_in_pixels, "height": screen.height_in_pixels}

    def workarea(self):
        area = list(ewmh.workarea(self.display))
        if len(area) < 4:
            size = self.screen()
            area = [0, 0, size["width"], size["height"]]
        return {"x": area[0], "y": area[1], "width": area[2], "height": area[3]}

    def geometry(self, window):
        """The frame rectangle: the client area in root coordinates, grown by the frame extents."""
        x, y, width, height = ewmh.frame_geometry(self.display, window.id)
        return {"x": x, "y": y, "width": width, "height": height}

    def is_normal(self, window):
        """An application's main window, as EWMH defines one (untyped and not transient counts)."""
        types = ewmh.atom_names(self.display, window.id, "_NET_WM_WINDOW_TYPE")
        if "_NET_WM_STATE_HIDDEN" in ewmh.atom_names(self.display, window.id, "_NET_WM_STATE"):
            return False
        if types:
            return types[0] == "_NET_WM_WINDOW_TYPE_NORMAL"
        return window.get_wm_transient_for() is None

    def is_viewable(self, window):
        return window.get_attributes().map_state == self.X.IsViewable

    def describe(self, wid):
        instance, class_name = ewmh.wm_class(self.display, wid)
        states = ewmh.atom_names(self.display, wid, "_NET_WM_STATE")
        return {"id": wid, "instance": instance, "class": class_name, "title": ewmh.title(self.display, wid),
                "geometry": self.geometry(self.window(wid)),
                "maximized": any(s.startswith("_NET_WM_STATE_MAXIMIZED") or s == "_NET_WM_STATE_FULLSCREEN"
                                 for s in states)}

    def normal_windows(self):
        return [self.describe(wid) for wid in self.client_list() if self.is_normal(self.window(wid))]

    def unmaximize(self, window):
        remove, atom = 0, self.display.intern_atom
        ewmh.send_message(self.display, window.id, "_NET_WM_STATE",
                          [remove, atom("_NET_WM_STATE_MAXIMIZED_VERT"), atom("_NET_WM_STATE_MAXIMIZED_HORZ"),
                           ewmh.SOURCE_PAGER])
        ewmh.send_message(self.display, window.id, "_NET_WM_STATE",
                          [remove, atom("_NET_WM_STATE_FULLSCREEN"), 0, ewmh.SOURCE_PAGER])
        self.display.flush()

    def move_resize(self, window, frame):
        """Asks the window manager to give `window` the frame rectangle `frame`."""
        left, right, top, bottom = ewmh.frame_extents(self.display, window.id)
        static_gravity, x_y_width_height, source_pager = 10, 0xF << 8, ewmh.SOURCE_PAGER << 12
        ewmh.send_message(self.display, window.id, "_NET_MOVERESIZE_WINDOW",
                          [static_gravity | x_y_width_height | source_pager, frame["x"] + left, frame["y"] + top,
                           max(1, frame["width"] - left - right), max(1, frame["height"] - top - bottom)])
        self.display.flush()

    def activate(self, window):
        ewmh.send_message(self.display, window.id, "_NET_ACTIVE_WINDOW", [ewmh.SOURCE_PAGER, self.X.CurrentTime, 0])
        self.display.flush()


def wait_until_placed(desktop, moved, timeout):
    """Polls until the window manager has applied every move: each window's frame left its old
    rectangle (or reached its target) and then held still for 0.2 s (an app may still adjust
    its size to its own steps, as a terminal does to its character cells)."""
    import time
    deadline = time.monotonic() + timeout
    history = {wid: [] for wid in moved}
    while True:
        for wid in moved:
            window = desktop.window(wid)
            seen = desktop.geometry(window) if desktop.is_viewable(window) else None
            history[wid] = (history[wid] + [seen])[-8:]
        placed = {wid for wid, (before, target) in moved.items()
                  if len(history[wid]) == 8 and history[wid][0] is not None
                  and all(g == history[wid][0] for g in history[wid])
                  and (history[wid][0] != before or history[wid][0] == target)}
        if len(placed) == len(moved):
            return {wid: seen[-1] for wid, seen in history.items()}
        if time.monotonic() > deadline:
            pending = {hex(wid): {"target": moved[wid][1], "last": history[wid][-1]}
                       for wid in moved if wid not in placed}
            raise TimeoutError(f"the window manager did not apply the geometry within {timeout:g} s: {pending}")
        time.sleep(0.025)


def wait_until_normal(desktop, wid, timeout, still=0.2):
    """Polls until the window is neither maximized nor full screen and its frame (with its extents)
    has then held still for `still` seconds: the state changes before the window manager and the
    toolkit have finished the unmaximized frame, and a move sent meanwhile is computed from the
    maximized frame's extents and lands off its target."""
    import time
    deadline = time.monotonic() + timeout
    window = desktop.window(wid)
    while desktop.describe(wid)["maximized"]:
        if time.monotonic() > deadline:
            raise TimeoutError(f"window {hex(wid)} stayed maximized or full screen for {timeout:g} s")
        time.sleep(0.025)
    held_still(lambda: desktop.geometry(window), deadline, still)


def held_still(read, deadline, still):
    """What `read()` returns once it has not changed for `still` seconds (or at `deadline`, a monotonic time)."""
    import time
    seen, since = read(), time.monotonic()
    while time.monotonic() - since < still and time.monotonic() < deadline:
        time.sleep(0.025)
        now = read()
        if now != seen:
            seen, since = now, time.monotonic()
    return seen


def misses_target(desktop, window, frame, target):
    """Whether `frame` is off `target` by more than the app's own size steps (a terminal sizes
    itself in whole character cells, so it may stop short of a target by less than one cell)."""
    hints = window.get_wm_normal_hints()
    steps = {"width": max(1, getattr(hints, "width_inc", 1) or 1) if hints else 1,
             "height": max(1, getattr(hints, "height_inc", 1) or 1) if hints else 1}
    return (frame["x"] != target["x"] or frame["y"] != target["y"]
            or any(abs(frame[k] - target[k]) >= steps[k] for k in steps))


def settled_windows(desktop, timeout=5.0, still=0.2):
    """The normal windows once none has changed for `still` seconds (at most `timeout`): a window the
    setup just opened may still be maximizing, or its toolkit still setting its frame extents."""
    import time
    return held_still(desktop.normal_windows, time.monotonic() + timeout, still)


def describe_desktop(params):
    import shutil
    desktop = XDesktop()
    try:
        windows = settled_windows(desktop)
        return {"screen": desktop.screen(), "workarea": desktop.workarea(), "windows": windows,
                "programs": {name: shutil.which(name) is not None for name in params["programs"]}}
    finally:
        desktop.close()


def apply_layout(params):
    desktop = XDesktop()
    try:
        original, moved = {}, {}
        for move in params["moves"]:
            window = desktop.window(move["id"])
            original[move["id"]] = desktop.geometry(window)
            if desktop.describe(move["id"])["maximized"]:
                desktop.unmaximize(window)
                wait_until_normal(desktop, move["id"], params["timeout"])
            moved[move["id"]] = (desktop.geometry(window), move["target"])
            desktop.move_resize(window, move["target"])
        after = wait_until_placed(desktop, moved, params["timeout"])
        # A window whose toolkit redrew its frame after the move was computed (its extents changed
        # under a loaded desktop) is asked once more, from where it now is.
        again = {wid: (after[wid], target) for wid, (_, target) in moved.items()
                 if misses_target(desktop, desktop.window(wid), after[wid], target)}
        for wid, (_, target) in again.items():
            desktop.move_resize(desktop.window(wid), target)
        if again:
            try:
                after.update(wait_until_placed(desktop, again, params["timeout"]))
            except TimeoutError:  # it cannot get closer (a minimum size, say): record where it is
                after.update({wid: desktop.geometry(desktop.window(wid)) for wid in again})
        return {"windows": [{"id": wid, "before": original[wid], "after": after[wid]} for wid in moved]}
    finally:
        desktop.close()


def open_clutter(params):
    import os
    import subprocess
    import time
    desktop = XDesktop()
    try:
        os.makedirs(os.path.dirname(params["notes_file"]), exist_ok=True)
        with open(params["notes_file"], "w") as f:
            f.write(params["notes_text"])
        task_windows = [w["id"] for w in desktop.normal_windows()]
        opened = []
        for plan in params["windows"]:
            known = set(desktop.client_list())
            command = [os.path.expanduser(arg) for arg in plan["command"]]
            process = subprocess.Popen(command, cwd=os.path.expanduser("~"), stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            deadline = time.monotonic() + params["window_timeout"]
            wid = None
            while wid is None:
                for candidate in desktop.client_list():
                    window = desktop.window(candidate)
                    wm_class = [name.lower() for name in (window.get_wm_class() or ())]
                    if (candidate not in known and set(wm_class) & set(plan["classes"])
                            and desktop.is_viewable(window)):
                        wid = candidate
                if wid is None:
                    if process.poll():
                        raise RuntimeError(f"{command} exited with status {process.returncode} before opening a window")
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{command} opened no window of class {plan['classes']} within "
                                           f"{params['window_timeout']:g} s")
                    time.sleep(0.05)
            window = desktop.window(wid)
            if desktop.describe(wid)["maximized"]:
                desktop.unmaximize(window)
                wait_until_normal(desktop, wid, params["timeout"])
            before = desktop.geometry(window)
            desktop.move_resize(window, plan["target"])
            desktop.activate(window)
            wait_until_placed(desktop, {wid: (before, plan["target"])}, params["timeout"])
            opened.append(wid)
        deadline = time.monotonic() + params["timeout"]
        while True:
            stacking = desktop.stacking()
            lowest_clutter = min(stacking.index(wid) for wid in opened) if opened else len(stacking)
            if all(stacking.index(wid) < lowest_clutter for wid in task_windows if wid in stacking):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"the clutter windows did not come on top of the task's within "
                                   f"{params['timeout']:g} s; stacking bottom to top: {[hex(w) for w in stacking]}")
            time.sleep(0.025)
        unplaced = [w for w in desktop.normal_windows() if w["id"] not in task_windows and w["id"] not in opened]
        if unplaced:
            raise RuntimeError(f"windows opened that were not asked for, so the record would miss them: {unplaced}")
        # Recorded once every window it opened has held still: a window that loses the focus to the next
        # one is redrawn without the focused shadow, and its toolkit then moves and resizes its frame
        # (by 13 px, seen on a loaded desktop after the frame had been recorded).
        return {"opened": held_still(lambda: [desktop.describe(wid) for wid in opened],
                                     time.monotonic() + params["timeout"], params["still"])}
    finally:
        desktop.close()


DESKTOP_CODE = (XDesktop, wait_until_placed, wait_until_normal, held_still, misses_target, settled_windows,
                describe_desktop, apply_layout, open_clutter)


# -- on the harness side ----------------------------------------------------------------------

def rng_key(seed: int, task_id: str) -> str:
    return f"{seed}:{task_id}"


def derive_rng(seed: int, task_id: str) -> tuple[int, random.Random]:
    """The effective seed and its RNG: stable across processes and Python versions."""
    effective = int.from_bytes(hashlib.sha256(rng_key(seed, task_id).encode()).digest()[:8], "big")
    return effective, random.Random(effective)


def desktop_source() -> str:
    """The code sent to the desktop: the server's EWMH module, compiled there as a module of its own
    (the desktop need not have our package, and its `from __future__` import must open a module),
    then the desktop-side functions above."""
    ewmh_source = EWMH_MODULE.read_text()
    loader = ("import sys\nimport types\newmh = types.ModuleType('ewmh')\nsys.modules['ewmh'] = ewmh\n"
              f"exec(compile({ewmh_source!r}, 'ewmh.py', 'exec'), ewmh.__dict__)\n")
    return loader + "\n\n".join(inspect.getsource(part) for part in DESKTOP_CODE)


def run_on_desktop(env: Any, entry: str, params: dict, timeout: float = 120.0) -> dict:
    """Runs one of the desktop-side functions through POST /execute and returns what it returned."""
    call = f"{entry}(json.loads({json.dumps(params)!r}))"
    code = f"import json\n{desktop_source()}\n\nprint({RESULT_MARKER!r} + json.dumps({call}))\n"
    reply = env.controller.execute_python_command(code, timeout=timeout)
    lines = [line for line in (reply.get("output") or "").splitlines() if line.startswith(RESULT_MARKER)]
    if reply.get("returncode") != 0 or not lines:
        raise PerturbationError(f"{entry} failed on the desktop (returncode {reply.get('returncode')}):\n"
                                f"{(reply.get('error') or '').strip()[-3000:]}\n"
                                f"output: {(reply.get('output') or '').strip()[-1000:]}")
    return json.loads(lines[-1][len(RESULT_MARKER):])


def random_frame(rng: random.Random, workarea: dict, size_range: tuple[float, float], overhang: float) -> dict:
    """A frame rectangle of random size within `size_range` of the work area, placed so that its
    top and left edges are inside the work area and at most `overhang` of it hangs off the right
    and bottom edges. (GNOME Shell does not let a window slide under the dock on the left, so
    a target there would not be where the window ends up.)"""
    width = round(rng.uniform(*size_range) * workarea["width"])
    height = round(rng.uniform(*size_range) * workarea["height"])
    slack_x, slack_y = int(width * overhang), int(height * overhang)
    x = rng.randint(workarea["x"], workarea["x"] + workarea["width"] - width + slack_x)
    y = rng.randint(workarea["y"], workarea["y"] + workarea["height"] - height + slack_y)
    return {"x": x, "y": y, "width": width, "height": height}


def window_order(window: dict) -> tuple:
    """Windows are perturbed in an order that does not depend on X ids or mapping order."""
    g = window["geometry"]
    return window["class"], window["instance"], window["title"], g["x"], g["y"], g["width"], g["height"]


def public(window: dict) -> dict:
    return {"class": window["class"], "instance": window["instance"], "title": window["title"]}


def perturb_layout(env: Any, rng: random.Random, desktop: dict) -> dict:
    windows = sorted(desktop["windows"], key=window_order)
    # inside the work area: GNOME Shell pulls a window that a pager moves past the screen's edge back
    # on screen, so a target hanging off it would not be where the window ends up
    targets = [random_frame(rng, desktop["workarea"], (0.4, 0.9), overhang=0.0) for _ in windows]
    moves = [{"id": w["id"], "target": t} for w, t in zip(windows, targets, strict=True)]
    applied: dict[str, Any] = {"windows": []}
    if moves:
        applied = run_on_desktop(env, "apply_layout", {"moves": moves, "timeout": SETTLE_TIMEOUT_S})
    by_id = {w["id"]: w for w in applied["windows"]}
    return {"windows": [{**public(w), "was_maximized": w["maximized"], "before": by_id[w["id"]]["before"],
                         "target": t, "after": by_id[w["id"]]["after"]} for w, t in zip(windows, targets, strict=True)]}


def clutter_apps(desktop: dict) -> list[ClutterApp]:
    """Per role, the first app the desktop has."""
    installed = [next((app for app in apps if desktop["programs"].get(app.command[0])), None)
                 for _, apps in CLUTTER_ROLES]
    if not any(installed):
        looked_for = ", ".join(app.command[0] for _, apps in CLUTTER_ROLES for app in apps)
        raise PerturbationError(f"clutter needs an app to open, but none of {looked_for} is installed on the desktop")
    return [app for app in installed if app]


def pick_clutter(rng: random.Random, desktop: dict) -> list[ClutterApp]:
    """2 or 3 of the desktop's clutter apps (fewer if it has fewer), those the task does not show first."""
    apps = clutter_apps(desktop)
    count = rng.choice((2, 3))
    rng.shuffle(apps)
    shown = {name.lower() for w in desktop["windows"] for name in (w["class"], w["instance"])}
    apps.sort(key=lambda app: bool(shown & set(app.classes)))  # stable: keeps the shuffled order otherwise
    return apps[:count]


def perturb_clutter(env: Any, rng: random.Random, desktop: dict) -> dict:
    picked = pick_clutter(rng, desktop)
    targets = [random_frame(rng, desktop["workarea"], (0.3, 0.5), overhang=0.0) for _ in picked]
    plans = [{"command": list(app.command), "classes": list(app.classes), "target": target}
             for app, target in zip(picked, targets, strict=True)]
    params = {"windows": plans, "notes_file": NOTES_FILE, "notes_text": NOTES_TEXT,
              "timeout": SETTLE_TIMEOUT_S, "window_timeout": WINDOW_TIMEOUT_S, "still": CLUTTER_STILL_S}
    budget = len(plans) * (WINDOW_TIMEOUT_S + SETTLE_TIMEOUT_S) + SETTLE_TIMEOUT_S + 30
    opened = run_on_desktop(env, "open_clutter", params, timeout=budget)["opened"]
    task_windows = sorted(desktop["windows"], key=window_order)
    return {"task_windows": [{**public(w), "geometry": w["geometry"]} for w in task_windows],
            # no titles: a terminal's changes as its shell starts, and the record must not race it
            "opened": [{"app": app.name, "command": list(app.command), "class": window["class"],
                        "instance": window["instance"], "target": target, "after": window["geometry"]}
                       for app, target, window in zip(picked, targets, opened, strict=True)]}


def apply_perturbation(env: Any, kind: str, seed: int, task_id: str) -> dict:
    """Perturbs the desktop of `env` (a DesktopEnv, or anything with an OSWorld `controller`)
    and returns a JSON-able record of exactly what was done."""
    if kind not in KINDS:
        raise ValueError(f"perturbation kind must be one of {', '.join(KINDS)}, got {kind!r}")
    effective_seed, rng = derive_rng(seed, task_id)
    programs = sorted({app.command[0] for _, apps in CLUTTER_ROLES for app in apps})
    desktop = run_on_desktop(env, "describe_desktop", {"programs": programs})
    details = perturb_layout(env, rng, desktop) if kind == "layout" else perturb_clutter(env, rng, desktop)
    return {"kind": kind, "seed": seed, "task_id": task_id, "rng_key": rng_key(seed, task_id),
            "effective_seed": effective_seed, "screen": desktop["screen"], "workarea": desktop["workarea"], **details}
