"""A desktop someone else runs: any server speaking desktop_env/server/PROTOCOL.md at a URL (e.g. an OSWorld VM)."""
from __future__ import annotations

import os
import socket
import urllib.parse
from typing import Any

from ..controllers.transport import Endpoint
from ..errors import ProviderError, ProviderOptionError, ServiceUnreachable
from .base import DesktopOptions, Provider

PROBE_TIMEOUT_S = 5.0
# The apps behind a VM's service ports, by process name (pgrep -x). Where none runs, a closed port
# is what the VM shows too (the agent closed the app): the getters find nothing and the task scores 0.
PORT_OWNERS = {9222: ("Chrome's DevTools", "chrome|chromium|google-chrome|socat"),
               8080: ("VLC's HTTP interface", "vlc")}


class RemoteProvider(Provider):
    """`token`: sent as a bearer token with every request, for a server that requires one
    (`osworld env serve --token`, default $OSWORLD_SERVER_TOKEN)."""

    def __init__(self, url: str, token: str | None = None):
        parsed = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ProviderError(f"remote provider needs an http:// URL of an env server, got {url!r}")
        self.url = urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, parsed.path.rstrip("/"), "", ""))
        self.host = parsed.hostname
        self.token = token if token is not None else os.environ.get("OSWORLD_SERVER_TOKEN") or None

    @classmethod
    def check_options(cls, desktop: DesktopOptions) -> None:
        if not desktop.path_to_vm:
            raise ProviderOptionError("path_to_vm", "provider remote needs the env server's URL, e.g. "
                                                    "--path-to-vm http://VM_IP:5000")

    @classmethod
    def from_options(cls, desktop: DesktopOptions, **options: Any) -> RemoteProvider:
        """The server at `url`, else at the desktop's path_to_vm."""
        url = options.pop("url", None) or desktop.path_to_vm
        if not url:
            raise ProviderError("provider 'remote' needs the env server's URL (path_to_vm or url)")
        return cls(url, **options)

    def start_emulator(self, path_to_vm, headless=True, os_type="Ubuntu") -> None:
        pass  # someone else keeps it running; readiness is checked by the controller

    def get_ip_address(self, path_to_vm=None) -> Endpoint:
        return Endpoint(url=self.url, token=self.token)

    def save_state(self, path_to_vm, snapshot_name) -> None:
        raise ProviderError("the remote provider cannot save snapshots; the desktop's owner manages its state")

    def revert_to_snapshot(self, path_to_vm, snapshot_name) -> None:
        # No revert: the desktop is reused as it is. Tasks that need a clean state
        # should run on a provider that can revert (local, docker, vmware...).
        return None

    def stop_emulator(self, path_to_vm=None) -> None:
        pass

    def service_endpoint(self, port: int) -> tuple[str, int]:
        """The desktop's own address and `port`, as an OSWorld VM exposes 9222 and 8080.

        Raises ServiceUnreachable, naming the endpoint, when the port does not answer while its app
        runs on the desktop (a desktop that does not expose the port, like `osworld env serve`
        without --vm-address), and ProviderError when the app is not running at all."""
        try:
            socket.create_connection((self.host, port), timeout=PROBE_TIMEOUT_S).close()
            return self.host, port
        except OSError as e:
            failure = e.strerror or str(e) or type(e).__name__
        what, owners = PORT_OWNERS.get(port, (f"port {port}", None))
        if owners is not None and self._runs(owners) is False:
            raise ProviderError(f"{what} at {self.host}:{port} does not answer ({failure}): no {owners} process "
                                "runs on the desktop")
        raise ServiceUnreachable(f"{what} at {self.host}:{port} does not answer ({failure}) although the desktop at "
                                 f"{self.url} runs it: the desktop must expose port {port} at its own address, as an "
                                 "OSWorld VM does (osworld env serve --vm-address)")

    def _runs(self, process_names: str) -> bool | None:
        """Whether a process of one of these names runs on the desktop; None when it cannot be asked."""
        import requests  # heavy at import (allow-listed): only this check uses it

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        try:
            answer = requests.post(f"{self.url}/execute", json={"command": ["pgrep", "-x", process_names],
                                                                 "shell": False}, headers=headers, timeout=30)
            return answer.json().get("returncode") == 0 if answer.status_code == 200 else None
        except (requests.RequestException, ValueError):
            return None
