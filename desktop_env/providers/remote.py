"""A desktop someone else runs: any server speaking PROTOCOL.md at a URL (e.g. an OSWorld VM)."""
from __future__ import annotations

import os
import urllib.parse

from ..controllers.transport import Endpoint
from ..errors import ProviderError
from .base import Provider


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
        return self.host, port  # an OSWorld VM exposes 9222/8080 directly
