"""Where desktops come from. The interface follows OSWorld's providers."""
from __future__ import annotations

from abc import ABC, abstractmethod

from ..controllers.transport import Endpoint


class Provider(ABC):
    """Creates, reverts and stops one desktop whose env server speaks desktop_env/server/PROTOCOL.md."""

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
