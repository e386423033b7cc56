"""Exceptions of the desktop side. Messages name the thing, the value and what to do."""
from __future__ import annotations

from typing import Any


class DesktopEnvError(Exception):
    """Base class for every error raised by desktop_env."""


class ProviderError(DesktopEnvError):
    """A provider could not create, revert or stop a desktop."""


class ProviderOptionError(ProviderError):
    """A provider cannot work with the options given: `option` names the field of DesktopOptions
    (`path_to_vm`), the message says what would be right."""

    def __init__(self, option: str, message: str):
        super().__init__(message)
        self.option = option

    def __reduce__(self) -> tuple:
        return type(self), (self.option, str(self))


class MissingDependency(ProviderError):
    """A program or package the local desktop needs is not installed."""

    @property
    def fatal_cause(self) -> dict[str, str]:
        """No desktop of the run can start until it is installed (osworld_harness.execution.breaker)."""
        return {"kind": "desktop", "signature": f"desktop: {self}", "message": f"no desktop can start: {self}"}


class SandboxStartError(ProviderError):
    """The sandboxed desktop did not come up; the message carries its log tail."""


class DesktopPartDied(SandboxStartError):
    """A part of the desktop (GNOME Shell, Xvfb, ...) exited while the desktop started."""


class DesktopNotReady(SandboxStartError):
    """The desktop was not ready within its start timeout, every part of it still running."""


class ServiceUnreachable(ProviderError):
    """A port of the desktop that a getter or setup step needs (Chrome's DevTools 9222, VLC's HTTP
    8080) does not answer at the desktop's address although its app runs: the task is an error,
    not a score of 0."""


class DesktopUnavailable(DesktopEnvError):
    """The desktop's env server cannot be reached (it died or never started)."""


class EnvServerGone(DesktopUnavailable):
    """The env server died or froze while the harness waited on it (its process exited or was stopped,
    or it answered nothing for seconds); every later request to it fails at once with the reason."""


class ServerRequestError(DesktopEnvError):
    """The env server answered a request with an error status."""

    def __init__(self, method: str, path: str, status: int, message: str):
        super().__init__(f"{method} {path} failed with HTTP {status}: {message}")
        self.method = method
        self.path = path
        self.status = status
        self.server_message = message


class UnsafeRuntimeDir(ProviderError):
    """A folder the harness keeps private is not: another owner, a symlink, or open to others."""


class ResourceLimitExceeded(DesktopEnvError):
    """The desktop hit one of its resource limits (a process was OOM-killed, a fork refused, the home
    folder filled): its end state is not evaluated. After the agent's actions it is the agent's
    doing and the harness scores the task 0 (osworld_harness/execution/fault.py); before them, an error."""


class TaskFileError(DesktopEnvError):
    """A task or meta file that cannot be used; the message names the file, field and value."""


class UnsafeTaskPath(TaskFileError):
    """A path in a task file that would read or write outside the folder it must stay in.

    `field` and `task_file` may be filled in by callers that know them better (`locate`).
    """

    def __init__(self, value: Any, reason: str, field: str | None = None, task_file: Any = None,
                 what: str = "task file"):
        self.value = value
        self.reason = reason
        self.field = field
        self.task_file = None if task_file is None else str(task_file)
        self.what = what
        super().__init__(self._message())

    def _message(self) -> str:
        where = f"{self.what} {self.task_file}" if self.task_file else "task"
        return f"{where}: {self.field or 'path'} = {self.value!r} {self.reason}"

    def locate(self, field_prefix: str | None = None, task_file: Any = None) -> UnsafeTaskPath:
        """Prefixes the field (`config[2]` + `parameters.stdout`) and sets the task file if unknown."""
        if field_prefix:
            if not self.field:
                self.field = field_prefix
            elif self.field.startswith("["):
                self.field = field_prefix + self.field
            else:
                self.field = f"{field_prefix}.{self.field}"
        if task_file is not None and not self.task_file:
            self.task_file = str(task_file)
        self.args = (self._message(),)
        return self

    def __str__(self) -> str:
        return self._message()

    def __reduce__(self) -> tuple:
        return (type(self), (self.value, self.reason, self.field, self.task_file, self.what))
