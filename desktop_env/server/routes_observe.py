"""Observing the desktop: screenshot, a11y tree, terminal, sizes, recording, health."""
from __future__ import annotations

import os
import platform
import time
from pathlib import Path

from .accessibility import dump_accessibility_tree, settled_terminal_text
from .httpd import HTTPError, Request, Response, Router
from .readiness import readiness
from .state import ServerState


def register(router: Router, state: ServerState) -> None:
    @router.route("/screenshot", methods=("GET",))
    def screenshot(request: Request) -> Response:
        return Response(state.screen.screenshot_png(), content_type="image/png")

    @router.route("/accessibility", methods=("GET",))
    def accessibility(request: Request) -> Response:
        with state.a11y_lock:
            return Response.json({"AT": dump_accessibility_tree()})

    @router.route("/terminal", methods=("GET",))
    def terminal(request: Request) -> Response:
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
        from . import windows  # python-xlib: the desktop's, not the harness's, which imports this module

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
        """Readiness (readiness.py): the harness polls this after a (re)start instead of sleeping."""
        now = readiness(state)
        return Response.json({
            "status": "ok" if now.ready else "starting",
            "ready": now.ready,
            "display": state.display,
            "window_manager": now.window_manager,
            "waiting_for": now.waiting_for,
            "dead_processes": now.dead_processes,
            "exit_codes": now.exit_codes,
            "uptime_s": round(time.monotonic() - state.started, 3),
            "pid": os.getpid(),
        })
