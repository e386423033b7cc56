"""Exceptions of the desktop side. Messages name the thing, the value and what to do."""
from __future__ import annotations


class DesktopEnvError(Exception):
    """Base class for every error raised by desktop_env."""


class ProviderError(DesktopEnvError):
    """A provider could not create, revert or stop a desktop."""


class MissingDependency(ProviderError):
    """A program or package the local desktop needs is not installed."""


class SandboxStartError(ProviderError):
    """The sandboxed desktop did not come up; the message carries its log tail."""


class ServiceUnreachable(ProviderError):
    """A port of the desktop that a getter or setup step needs (Chrome's DevTools 9222, VLC's HTTP
    8080) does not answer at the desktop's address although its app runs: the task is an error,
    not a score of 0."""


class DesktopUnavailable(DesktopEnvError):
    """The desktop's env server cannot be reached (it died or never started)."""


class ServerRequestError(DesktopEnvError):
    """The env server answered a request with an error status."""

    def __init__(self, method: str, path: str, status: int, message: str):
        super().__init__(f"{method} {path} failed with HTTP {status}: {message}")
        self.method = method
        self.path = path
        self.status = status
        self.server_message = message


class InvalidActionError(DesktopEnvError):
    """An agent's action is not valid in the env's action space."""


class UnsafeRuntimeDir(ProviderError):
    """A folder the harness keeps private is not: another owner, a symlink, or open to others."""


class ResourceLimitExceeded(DesktopEnvError):
    """The desktop hit one of its resource limits (a process was OOM-killed, a fork refused):
    its end state is not trustworthy, so the task is an error, never a score."""
