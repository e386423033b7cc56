"""Where desktops come from. The interface follows OSWorld's providers."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..controllers.transport import Endpoint
from ..desktop_defaults import DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE


@dataclass(frozen=True)
class DesktopOptions:
    """What a run asks of its desktops, whichever provider makes them; each provider takes what it can honour
    (a VM's screen is the VM's). `own`: the provider's own options (an instance of its `Options`), or None
    for its defaults."""
    screen_size: tuple[int, int] = DEFAULT_SCREEN_SIZE
    network: bool = False
    client_password: str = DEFAULT_PASSWORD
    path_to_vm: str | None = None
    own: Any = None


class Provider(ABC):
    """Creates, reverts and stops one desktop whose env server speaks desktop_env/server/PROTOCOL.md.

    The classmethods are what the harness asks of a provider by name, before it has one: whether options can
    work, what to build before any desktop starts, and the provider made from a run's options."""

    # The dataclass of the provider's own run options (its fields named as RunConfig's), or None: it has none.
    Options: ClassVar[type | None] = None

    @classmethod
    def check_options(cls, desktop: DesktopOptions) -> None:
        """Raises ProviderOptionError when no desktop can be made with these options."""
        return None

    @classmethod
    def prepare_for(cls, tasks: Sequence[dict[str, Any]]) -> None:
        """Builds what these task configs need before any desktop starts (once per run; nothing by default)."""
        return None

    @classmethod
    def from_options(cls, desktop: DesktopOptions, **options: Any) -> Provider:
        """The provider for a run's desktop options; `options` are the caller's own keyword arguments for it.
        By default only those: a provider that honours the desktop options takes them here."""
        return cls(**options)

    @abstractmethod
    def start_emulator(self, path_to_vm: str | None, headless: bool, os_type: str) -> None:
        """Brings the desktop up and returns once its env server is ready."""

    @abstractmethod
    def get_ip_address(self, path_to_vm: str | None) -> Endpoint:
        """Where the env server listens (OSWorld returns an IP; we return an Endpoint)."""

    @abstractmethod
    def save_state(self, path_to_vm: str | None, snapshot_name: str) -> None: ...

    @abstractmethod
    def revert_to_snapshot(self, path_to_vm: str | None, snapshot_name: str) -> str | None:
        """Returns the desktop to its initial state and waits until it is ready."""

    @abstractmethod
    def stop_emulator(self, path_to_vm: str | None) -> None:
        """Stops the desktop and removes everything it created."""

    def server_gone(self) -> str:
        """Why the desktop's env server is known to be gone (its process exited or was stopped) without
        asking it, or "" (also when the provider cannot tell: the controller then probes the server)."""
        return ""

    def desktop_logs(self) -> dict[str, str]:
        """{name: last lines} of the running desktop's own logs (its shell, settings daemons, buses),
        {} when the provider keeps none or the desktop is gone."""
        return {}

    def service_endpoint(self, port: int) -> tuple[str, int]:
        """A (host, port) on this machine that reaches TCP `port` inside the desktop."""
        raise NotImplementedError(f"{type(self).__name__} cannot forward port {port}")
