"""The harness's client for the env server (desktop_env/server/PROTOCOL.md).

Method names follow OSWorld's controller so its getters and runners port over,
but failures are not swallowed into None: a desktop that is gone raises
DesktopUnavailable (EnvServerGone, in seconds, once its server is known dead or
frozen: liveness.py), a request the server refuses raises ServerRequestError.
None means only what the protocol means by 404 (no such file / window).
"""
from __future__ import annotations

import http.client
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from ..errors import DesktopUnavailable, EnvServerGone, ServerRequestError
from .liveness import LivenessPolicy, ServerWatch
from .transport import Endpoint, RawResponse, Transport

log = logging.getLogger("osworld.controller")

# The command shape OSWorld's controller sends for action code; our server recognises
# it and runs the code in its persistent interpreter, an OSWorld VM runs it as is. The
# newline (OSWorld uses "; ") lets action code start with a block such as `for ...:`.
ACTION_PREFIX = "import pyautogui; import time; pyautogui.FAILSAFE = False\n"

# The `error` text with which OSWorld's server (and ours) refuses to list what is no directory.
NOT_A_DIRECTORY = "The provided path is not a directory"

# Errors that mean the request never reached a handler: safe to retry for any method.
_NOT_DELIVERED = (ConnectionRefusedError, FileNotFoundError, http.client.RemoteDisconnected)


def _json_field(response: RawResponse, key: str) -> Any:
    try:
        data = response.json()
    except ValueError:
        return None
    return data.get(key) if isinstance(data, dict) else None


# How servers without a route of ours say so: OSWorld's Flask server 404, others 405 or 501.
UNKNOWN_ROUTE = (404, 405, 501)


class PythonController:
    """`gone`: the provider's own word on whether the server is gone (Provider.server_gone)."""

    def __init__(self, endpoint: Endpoint, retries: int = 3, backoff_s: float = 0.25, timeout_s: float = 150.0,
                 gone: Callable[[], str] | None = None, liveness: LivenessPolicy | None = None):
        self.endpoint = endpoint
        self.retries = retries
        self.backoff_s = backoff_s
        self.transport = Transport(endpoint, timeout=timeout_s)
        self.watch = ServerWatch(endpoint, self.transport, gone, liveness)

    # -- plumbing ---------------------------------------------------------------------------
    def request(self, method: str, path: str, *, ok_statuses: tuple[int, ...] = (200,), idempotent: bool | None = None,
                timeout: float | None = None, **kwargs: Any) -> RawResponse:
        """Sends a request, retrying transient failures with exponential backoff and jitter.

        Any failure to deliver is retried; a timeout or a reset after the request was
        sent is retried only for idempotent requests (an action must not run twice).
        """
        idempotent = method == "GET" if idempotent is None else idempotent
        attempt = 0
        while True:
            if self.watch.dead:
                raise EnvServerGone(f"the env server at {self.endpoint} is gone, so {method} {path} was not sent: "
                                    f"{self.watch.dead}")
            try:
                with self.watch.watching():
                    response = self.transport.request(method, path, timeout=timeout, **kwargs)
            except (OSError, http.client.HTTPException) as e:
                if self.watch.dead:
                    raise EnvServerGone(f"the env server at {self.endpoint} is gone: {method} {path} was given up "
                                        f"after {attempt + 1} attempt(s): {self.watch.dead}") from e
                retryable = isinstance(e, _NOT_DELIVERED) or idempotent
                attempt += 1
                if not retryable or attempt > self.retries:
                    raise DesktopUnavailable(f"env server at {self.endpoint} unreachable for {method} {path} "
                                             f"after {attempt} attempt(s): {type(e).__name__}: {e}") from e
                delay = self.backoff_s * (2 ** (attempt - 1)) * (1 + random.random() / 2)
                log.warning("%s %s failed (%s), retry %d in %.2fs", method, path, e, attempt, delay)
                time.sleep(delay)
                continue
            if response.status in ok_statuses:
                return response
            if response.status in (502, 503) and attempt < self.retries:
                attempt += 1
                time.sleep(self.backoff_s * (2 ** (attempt - 1)))
                continue
            raise ServerRequestError(method, path, response.status, response.error_message())

    def close(self) -> None:
        self.transport.close()

    # -- observations -------------------------------------------------------------------------
    def get_screenshot(self) -> bytes:
        return self.request("GET", "/screenshot").body

    def get_accessibility_tree(self) -> str:
        return self.request("GET", "/accessibility").json()["AT"]

    def get_terminal_output(self) -> str | None:
        return self.request("GET", "/terminal").json().get("output")

    def health(self) -> dict[str, Any]:
        return self.request("GET", "/health").json()

    # -- actions --------------------------------------------------------------------------------
    def execute_python_command(self, code: str, timeout: float | None = None) -> dict[str, Any]:
        command = ["python3", "-c", ACTION_PREFIX + code]
        return self.request("POST", "/execute", json_body={"command": command, "shell": False},
                            timeout=timeout).json()

    def run_command(self, command: list[str] | str, shell: bool = False) -> dict[str, Any]:
        return self.request("POST", "/execute", json_body={"command": command, "shell": shell}).json()

    def run_bash_script(self, script: str, timeout: float = 100, working_dir: str | None = None) -> dict[str, Any]:
        body = {"script": script, "timeout": timeout, **({"working_dir": working_dir} if working_dir else {})}
        return self.request("POST", "/run_bash_script", json_body=body, timeout=timeout + 10).json()

    def run_python_script(self, code: str) -> dict[str, Any]:
        return self.request("POST", "/run_python", json_body={"code": code}).json()

    def launch(self, command: list[str] | str, shell: bool = False) -> None:
        self.request("POST", "/setup/launch", json_body={"command": command, "shell": shell})

    def settle(self, timeout: float, hold: float | None = None) -> dict[str, Any] | None:
        """Waits (at most `timeout` s) until the apps the setup launched are up and the desktop holds still
        (our server's /setup/settle); None from a server without it, such as OSWorld's own."""
        body: dict[str, Any] = {"timeout": timeout, **({"hold": hold} if hold is not None else {})}
        response = self.request("POST", "/setup/settle", json_body=body, ok_statuses=(200, *UNKNOWN_ROUTE),
                                idempotent=True, timeout=timeout + 30)
        return response.json() if response.status == 200 else None

    # -- files ----------------------------------------------------------------------------------
    def get_file(self, path: str) -> bytes | None:
        response = self.request("POST", "/file", form={"file_path": path}, ok_statuses=(200, 404), idempotent=True)
        return response.body if response.status == 200 else None

    def upload_file(self, path: str, data: bytes) -> None:
        name = path.rsplit("/", 1)[-1] or "file"
        self.request("POST", "/setup/upload", form={"file_path": path}, files={"file_data": (name, data)})

    def get_vm_directory_tree(self, path: str) -> dict[str, Any] | None:
        response = self.request("POST", "/list_directory", json_body={"path": path}, ok_statuses=(200, 400, 404),
                                idempotent=True)
        if response.status == 200:
            return response.json()["directory_tree"]
        if response.status == 400 and _json_field(response, "error") != NOT_A_DIRECTORY:
            raise ServerRequestError("POST", "/list_directory", 400, response.error_message())
        return None  # OSWorld's server (and ours) answers 400 for a path that is no directory

    # -- desktop info ---------------------------------------------------------------------------
    def get_vm_platform(self) -> str:
        return self.request("GET", "/platform").text

    def get_vm_screen_size(self) -> dict[str, int]:
        return self.request("POST", "/screen_size", idempotent=True).json()

    def get_vm_window_size(self, app_class_name: str) -> dict[str, int] | None:
        response = self.request("POST", "/window_size", form={"app_class_name": app_class_name},
                                ok_statuses=(200, 404), idempotent=True)
        return response.json() if response.status == 200 else None

    def get_vm_wallpaper(self) -> bytes | None:
        response = self.request("POST", "/wallpaper", ok_statuses=(200, 404), idempotent=True)
        return response.body if response.status == 200 else None

    def get_vm_desktop_path(self) -> str:
        return self.request("POST", "/desktop_path", idempotent=True).json()["desktop_path"]

    def get_cursor_position(self) -> tuple[int, int]:
        x, y = self.request("GET", "/cursor_position").json()
        return x, y

    # -- recording ------------------------------------------------------------------------------
    def start_recording(self) -> None:
        self.request("POST", "/start_recording")

    def end_recording(self, dest: str) -> None:
        body = self.request("POST", "/end_recording").body
        with open(dest, "wb") as f:
            f.write(body)
