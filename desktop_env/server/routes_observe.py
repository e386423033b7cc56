"""Observing the desktop: screenshot, a11y tree, terminal, sizes, recording, health."""
from __future__ import annotations

import os
import platform
import time
from pathlib import Path

from .httpd import HTTPError, Request, Response, Router
from .state import ServerState

# WM_CLASS names of the windows each desktop component shows once it is up: GNOME Shell's
# desktop icons (the ding extension's gjs window, made once the shell's start-up is complete).
COMPONENT_WINDOW_CLASSES = {"gnome-shell": "gjs"}
# Components that say when they are ready (Session.announced): GNOME Shell's top bar and
# dock take input only once its start-up is complete; the media keys daemon's shortcuts
# (Ctrl+Alt+T) work once the shell has grabbed them.
ANNOUNCING_COMPONENTS = ("gnome-shell", "gsd-media-keys")


# The work area (the screen less the top bar and the dock) must have held still this long: the
# dock reserves its strut in steps while it slides in, and an agent's first screenshot or a
# perturbation's window targets must see the settled desktop.
WORKAREA_SETTLED_S = 0.3


def desktop_status(state: ServerState) -> tuple[bool, set[str], tuple[int, ...]]:
    """(an EWMH window manager announced itself, WM_CLASS classes of the managed windows, the
    first work area's x, y, width, height, or () when none is set)."""
    from Xlib import error

    from . import ewmh

    try:
        with ewmh.connect(state.display) as connection:
            classes: set[str] = set()
            for window_id in ewmh.client_list(connection) or []:
                try:
                    classes.update(name.lower() for name in ewmh.wm_class(connection, window_id) if name)
                except error.XError:
                    continue
            return ewmh.window_manager_present(connection), classes, ewmh.workarea(connection)
    except ewmh.WindowControlError:
        return False, set(), ()


def register(router: Router, state: ServerState) -> None:
    @router.route("/screenshot", methods=("GET",))
    def screenshot(request: Request) -> Response:
        return Response(state.screen.screenshot_png(), content_type="image/png")

    @router.route("/accessibility", methods=("GET",))
    def accessibility(request: Request) -> Response:
        from .accessibility import dump_accessibility_tree
        with state.a11y_lock:
            return Response.json({"AT": dump_accessibility_tree()})

    @router.route("/terminal", methods=("GET",))
    def terminal(request: Request) -> Response:
        from .accessibility import settled_terminal_text
        with state.a11y_lock:
            return Response.json({"output": settled_terminal_text(), "status": "success"})

    @router.route("/platform", methods=("GET",))
    def get_platform(request: Request) -> Response:
        return Response.text(platform.system())

    @router.route("/cursor_position", methods=("GET",))
    def cursor_position(request: Request) -> Response:
        return Response.json(list(state.screen.cursor_position()))

    @router.route("/screen_size", methods=("POST", "GET"))
    def screen_size(request: Request) -> Response:
        width, height = state.screen.size()
        return Response.json({"width": width, "height": height})

    @router.route("/window_size", methods=("POST",), accepts=("json", "form"))
    def window_size(request: Request) -> Response:
        from . import windows
        name = request.require("app_class_name")
        size = windows.window_size(name)
        if size is None:
            raise HTTPError(404, f"no window with WM_CLASS {name!r}")
        return Response.json({"width": size[0], "height": size[1]})

    @router.route("/start_recording", methods=("POST",))
    def start_recording(request: Request) -> Response:
        recorder = state.recorder
        if recorder.recording:
            raise HTTPError(400, "a recording is already in progress")
        recorder.start(state.new_recording_path())
        return Response.json({"status": "success", "message": "Started recording."})

    @router.route("/end_recording", methods=("POST",))
    def end_recording(request: Request) -> Response:
        recorder = state.recorder
        if not recorder.recording:
            raise HTTPError(400, "no recording in progress")
        path = Path(recorder.stop())
        if not path.is_file() or path.stat().st_size == 0:
            raise HTTPError(500, f"recording ended but {path} is missing or empty; see the ffmpeg log beside it")
        return Response.from_file(path, "video/mp4", {"Content-Disposition": 'attachment; filename="recording.mp4"'})

    @router.route("/health", methods=("GET",))
    def health(request: Request) -> Response:
        """Readiness: the harness polls this after a (re)start instead of sleeping."""
        dead = sorted(name for name, proc in state.children.items() if proc.poll() is not None)
        wm, classes, workarea = desktop_status(state)
        waiting_for = sorted({name for name, wm_class in COMPONENT_WINDOW_CLASSES.items()
                              if name in state.children and wm_class not in classes}
                             | {name for name in ANNOUNCING_COMPONENTS
                                if name in state.children and name not in state.announced})
        if wm and not waiting_for and not state.workarea_settled(workarea, WORKAREA_SETTLED_S):
            waiting_for.append("work area")
        ready = wm and not waiting_for and "Xvfb" not in dead
        return Response.json({
            "status": "ok" if ready else "starting",
            "ready": ready,
            "display": state.display,
            "window_manager": wm,
            "waiting_for": waiting_for,
            "dead_processes": dead,
            "uptime_s": round(time.monotonic() - state.started, 3),
            "pid": os.getpid(),
        })
