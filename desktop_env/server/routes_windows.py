"""Window setup: open a file and wait for its window, activate and close windows."""
from __future__ import annotations

import shutil
import subprocess

from .httpd import HTTPError, Request, Response, Router
from .routes_files import os_error, resolve_path
from .state import ServerState

WINDOW_FOUND_HEADER = "X-OSWorld-Window-Found"
WINDOW_ACTIVE_HEADER = "X-OSWorld-Window-Active"  # the activated window has the focus now
OPEN_FILE_TIMEOUT_S = 60
MAX_OPEN_FILE_TIMEOUT_S = 3600
SETTLE_TIMEOUT_S = 60   # OSWorld's runner sleeps this long after a reset before its first screenshot
SETTLE_HOLD_S = 1.0


def window_target(request: Request) -> tuple[str, bool, bool]:
    return request.require("window_name"), request.boolean("strict", False), request.boolean("by_class", False)


def _window_answer(text: str, window) -> Response:
    """OSWorld's answer whether or not a window matched (its server ignores wmctrl's exit
    status); whether one did is in a header of ours, so our setup steps can wait for a
    window that is not there yet."""
    response = Response.text(text)
    response.headers[WINDOW_FOUND_HEADER] = "1" if window is not None else "0"
    return response


def register(router: Router, state: ServerState) -> None:
    from . import windows

    @router.route("/setup/activate_window", methods=("POST",))
    def activate_window(request: Request) -> Response:
        name, strict, by_class = window_target(request)
        window = windows.activate_window(name, strict=strict, by_class=by_class)
        response = _window_answer("Window activated successfully", window)
        response.headers[WINDOW_ACTIVE_HEADER] = "1" if window is not None and windows.is_active(window.id) else "0"
        return response

    @router.route("/setup/close_window", methods=("POST",))
    def close_window(request: Request) -> Response:
        name, strict, by_class = window_target(request)
        window = windows.close_window(name, strict=strict, by_class=by_class)
        return _window_answer("Window closed successfully.", window)

    @router.route("/setup/open_file", methods=("POST",))
    def open_file(request: Request) -> Response:
        raw = request.require("path")
        timeout = request.number("timeout", OPEN_FILE_TIMEOUT_S, minimum=0, maximum=MAX_OPEN_FILE_TIMEOUT_S)
        path = resolve_path(raw, state)
        try:
            exists = path.exists()
        except OSError as e:
            raise os_error(e, path, "open") from None
        if exists:
            argv, title = ["xdg-open", str(path)], path.name
        elif "/" not in raw and shutil.which(raw, path=state.env.get("PATH")):
            argv, title = [raw], raw  # OSWorld also "opens" programs on PATH by running them
        else:
            raise HTTPError(404, f"file not found: {path}")
        windows_before = state.settler.windows_before_launch()
        process = subprocess.Popen(argv, env=state.env, cwd=state.home, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        # xdg-open starts the file's app and exits: what it opened is awaited as a desktop app's window.
        state.settler.note_launch(argv, process.pid, process.poll, windows_before)
        # Apps title their window with the file's name, often without its extension.
        stem = title.rsplit(".", 1)[0] if "." in title else title
        window = windows.wait_for_window(stem, timeout)
        if window is None:
            raise HTTPError(504, f"opened {path} but no window titled like {stem!r} appeared within {timeout:g} s")
        windows.activate_window(window.title, strict=True)
        return Response.text(f"File opened successfully: {path}")

    @router.route("/setup/settle", methods=("POST",))
    def settle(request: Request) -> Response:
        """Ours: waits (bounded) until the windows the setup launched are up and the desktop holds still
        (settle.py), and says what it waited for."""
        timeout = request.number("timeout", SETTLE_TIMEOUT_S, minimum=0, maximum=MAX_OPEN_FILE_TIMEOUT_S)
        hold = request.number("hold", SETTLE_HOLD_S, minimum=0, maximum=60)
        return Response.json(state.settler.settle(timeout, hold).to_json())
