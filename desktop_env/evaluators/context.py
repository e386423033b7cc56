"""What a getter sees of the desktop: a small, typed evaluation context.

Getters are `getter(ctx: EvalContext, config: dict)`. The context offers the few
things getters ask of a desktop (read a file, run a command, the accessibility tree,
the screen and window sizes, the wallpaper, a folder's tree, the desktop's home, an
HTTP request to a service inside it such as VLC's web interface) and of the harness
(the task's cache and task folders, the time of the evaluation). Because every
question goes through these few methods, a `RecordingContext`
(`desktop_env.evaluators.recording`) can keep each question and its answer during a
live evaluation and a `ReplayContext` can answer them again offline: that is how
`osworld rescore` works, for built-in and plugin getters alike.

`LiveContext` answers from a running `DesktopEnv` (its controller and provider).
Getters written the old way, `getter(env, config)` reaching into `env.controller`,
keep working for now: `ctx.controller`, `ctx.provider` and `ctx.env` reach the env
(deprecated), but what goes through them is not recorded, so such a task cannot be
rescored.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import DesktopEnvError, ProviderError, ServiceUnreachable
from ..safe_paths import cache_folder, join_under, task_file_of, write_under

# Services inside the desktop a getter may talk to, by name: the desktop port each listens on.
SERVICE_PORTS: dict[str, int] = {
    "chrome_devtools": 9222,   # Chrome's remote-debugging port (tasks forward 9222 to Chrome's 1337)
    "vlc_http": 8080,          # VLC's HTTP interface (started with --extraintf http)
}
HTTP_TIMEOUT_S = 10.0


class ServiceUnavailable(DesktopEnvError):
    """Nothing answers on a service's port in the desktop (the app is closed, or the provider cannot reach it)."""


class NotRecorded(DesktopEnvError):
    """A replayed evaluation asked for something the live one did not record: the task is not rescorable."""


@dataclass(frozen=True)
class CommandResult:
    """What a command run in the desktop gave: its output, its error output and exit status."""
    output: str = ""
    error: str = ""
    returncode: int | None = None

    @classmethod
    def from_reply(cls, reply: dict) -> CommandResult:
        return cls(reply.get("output") or "", reply.get("error") or "", reply.get("returncode"))

    def to_json(self) -> dict:
        return {"output": self.output, "error": self.error, "returncode": self.returncode}


@dataclass(frozen=True)
class HttpAnswer:
    """An HTTP answer of a service inside the desktop."""
    status: int
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.body)


def service_port(service: str) -> int:
    try:
        return SERVICE_PORTS[service]
    except KeyError:
        raise ValueError(f"unknown desktop service {service!r}; known: {', '.join(SERVICE_PORTS)}") from None


class EvalContext(ABC):
    """The desktop and the task's folders as a getter sees them; see the module's docstring."""

    # Who is asking, for messages ("result getter 'vm_file' of metric 'compare_table'"); set by run_getter.
    asking: str = "a getter"

    # -- the task ---------------------------------------------------------------------------------
    @property
    @abstractmethod
    def task_config(self) -> dict:
        """The task being evaluated (its id and evaluator name fields in error messages)."""

    @property
    @abstractmethod
    def task_dir(self) -> str | None:
        """The folder of the task file: task-relative resource paths resolve against it."""

    @property
    @abstractmethod
    def cache_dir(self) -> Path:
        """The task's cache folder, where getters put what they fetch."""

    @abstractmethod
    def now(self) -> dt.datetime:
        """When the evaluation ran (timezone-aware): relative dates ("tomorrow") count from it."""

    # -- the desktop ------------------------------------------------------------------------------
    @abstractmethod
    def read_file(self, path: str) -> bytes | None:
        """A desktop file's bytes, None when there is no such file."""

    @abstractmethod
    def run_command(self, command: list[str] | str, shell: bool = False) -> CommandResult:
        """Runs a command in the desktop (as the desktop's user) and waits for it."""

    @abstractmethod
    def run_python(self, code: str) -> CommandResult:
        """Runs Python code in the desktop the way actions run (pyautogui imported)."""

    @abstractmethod
    def accessibility_tree(self) -> str:
        """The desktop's accessibility tree as XML."""

    @abstractmethod
    def terminal_output(self) -> str | None:
        """The text of the desktop's terminal, None when none is open."""

    @abstractmethod
    def screen_size(self) -> dict:
        """{"width": ..., "height": ...} of the desktop's screen."""

    @abstractmethod
    def window_size(self, app_class_name: str) -> dict | None:
        """{"width", "height"} of the window of that class, None when there is none."""

    @abstractmethod
    def wallpaper(self) -> bytes | None:
        """The desktop's wallpaper image, None when it has none."""

    @abstractmethod
    def directory_tree(self, path: str) -> dict | None:
        """{"name", "type", "children"} of a desktop folder, None when it is not one."""

    @abstractmethod
    def desktop_path(self) -> str:
        """The desktop's Desktop folder (e.g. /home/user/Desktop)."""

    @abstractmethod
    def http(self, service: str, path: str, method: str = "GET", auth: tuple[str, str] | None = None) -> HttpAnswer:
        """An HTTP request to a service inside the desktop (SERVICE_PORTS); ServiceUnavailable when
        nothing answers. Answers are recorded, so getters that use this can be rescored."""

    @abstractmethod
    def endpoint(self, service: str) -> str:
        """The base URL ("http://host:port") of a service inside the desktop, for clients that
        cannot go through `http` (websockets: Chrome's DevTools protocol). Live only: what is
        said over it is not recorded, so a getter that uses it cannot be rescored."""

    @abstractmethod
    def cached_file(self, name: str, field: str | None = None) -> Path | None:
        """A file an earlier step (e.g. an execute step's `stdout`) left in the task's cache folder,
        None when it is not there. `field` names the task-file field for error messages."""

    # -- derived: the same for every context ----------------------------------------------------------
    def home(self) -> PurePosixPath:
        """The desktop user's home folder. The desktop names its own home; OSWorld's server does
        not expand "~" in paths."""
        return PurePosixPath(self.desktop_path()).parent

    @property
    def task_file(self) -> str | None:
        return task_file_of(self)

    def cache_path(self, name: Any, field: str | None = None) -> Path:
        """Where `name` (a task file's `dest`) is in the task's cache folder; UnsafeTaskPath when it
        would leave the folder (absolute, '..', a symlink out)."""
        return join_under(self.cache_dir, name, field, self.task_file)

    def save_to_cache(self, name: Any, data: bytes, field: str | None = None) -> Path:
        """Writes `data` under `name` in the task's cache folder (never through a symlink)."""
        return write_under(self.cache_dir, name, data, field, self.task_file)

    @contextlib.contextmanager
    def getter_scope(self, label: str, config: dict) -> Iterator[None]:
        """While one getter runs: `asking` names it in messages."""
        previous, self.asking = self.asking, label
        try:
            yield
        finally:
            self.asking = previous

    # -- the old way, kept for a while ----------------------------------------------------------------
    @property
    @abstractmethod
    def env(self) -> Any:
        """Deprecated: the DesktopEnv itself, for getters written as getter(env, config)."""

    @property
    def controller(self) -> Any:
        """Deprecated (use the context's methods): the env's controller."""
        return self.env.controller

    @property
    def provider(self) -> Any:
        """Deprecated (use `http`/`endpoint`): the env's provider."""
        return self.env.provider


class LiveContext(EvalContext):
    """The context of a running desktop: answers come from a DesktopEnv's controller and provider."""

    def __init__(self, env: Any):
        self._env = env
        self._started = dt.datetime.now(dt.timezone.utc)

    @property
    def task_config(self) -> dict:
        return getattr(self._env, "task_config", None) or {}

    @property
    def task_dir(self) -> str | None:
        return getattr(self._env, "task_dir", None)

    @property
    def cache_dir(self) -> Path:
        return cache_folder(self._env)

    def now(self) -> dt.datetime:
        return self._started

    @property
    def _controller(self) -> Any:
        return self._env.controller

    def read_file(self, path: str) -> bytes | None:
        return self._controller.get_file(path)

    def run_command(self, command: list[str] | str, shell: bool = False) -> CommandResult:
        return CommandResult.from_reply(self._controller.run_command(command, shell=shell))

    def run_python(self, code: str) -> CommandResult:
        return CommandResult.from_reply(self._controller.execute_python_command(code))

    def accessibility_tree(self) -> str:
        return self._controller.get_accessibility_tree()

    def terminal_output(self) -> str | None:
        return self._controller.get_terminal_output()

    def screen_size(self) -> dict:
        return self._controller.get_vm_screen_size()

    def window_size(self, app_class_name: str) -> dict | None:
        return self._controller.get_vm_window_size(app_class_name)

    def wallpaper(self) -> bytes | None:
        return self._controller.get_vm_wallpaper()

    def directory_tree(self, path: str) -> dict | None:
        return self._controller.get_vm_directory_tree(path)

    def desktop_path(self) -> str:
        return self._controller.get_vm_desktop_path()

    def endpoint(self, service: str) -> str:
        port = service_port(service)
        try:
            host, local_port = self._env.provider.service_endpoint(port)
        except ServiceUnreachable:
            raise  # the app runs but its port is not exposed: an error of the desktop, never a score
        except (NotImplementedError, ProviderError) as e:
            raise ServiceUnavailable(f"{service} (port {port} of the desktop) is not reachable: {e}") from e
        return f"http://{host}:{local_port}"

    def http(self, service: str, path: str, method: str = "GET", auth: tuple[str, str] | None = None) -> HttpAnswer:
        import requests

        url = self.endpoint(service) + path
        try:
            response = requests.request(method, url, auth=auth, timeout=HTTP_TIMEOUT_S)
        except requests.RequestException as e:
            raise ServiceUnavailable(f"{service} did not answer {method} {path}: {e}") from e
        return HttpAnswer(response.status_code, response.content)

    def cached_file(self, name: str, field: str | None = None) -> Path | None:
        path = self.cache_path(name, field)
        return path if path.is_file() else None

    @property
    def env(self) -> Any:
        warnings.warn("getters should use the evaluation context's methods, not the env (ctx.env, ctx.controller, "
                      "ctx.provider): what they ask that way cannot be recorded for a rescore",
                      DeprecationWarning, stacklevel=3)
        return self._env


def context_for(target: Any) -> EvalContext:
    """The context getters of this evaluation use: `target` itself when it is one, the one a
    DesktopEnv made for its current evaluation, else a live context over an env-like object."""
    if isinstance(target, EvalContext):
        return target
    current = getattr(target, "evaluation_context", None)
    if isinstance(current, EvalContext):
        return current
    return LiveContext(target)
