"""TCP ports on the host reaching the current boot's sockets: a forwarded service, the env server's public
listener, or the whole desktop as an OSWorld VM is reached. On loopback only this user's (and root's)
processes get through. Each relay follows the desktop across resets (to the new boot's socket)."""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from ....errors import ProviderError
from ....server.access_policy import is_loopback
from ....server.relay import TcpToUnixRelay

VM_SERVER_PORT = 5000  # where OSWorld's client finds the env server on a VM


class Relays:
    def __init__(self, socket_path: Callable[[str], Path], lock: threading.RLock):
        self._socket_path = socket_path  # the current boot's socket of a name
        self._lock = lock                # the provider's: a reset does not switch boots under a new relay
        # (socket name, host, port) -> relay; the name says which of this boot's sockets it reaches
        self._relays: dict[tuple[str, str, int], TcpToUnixRelay] = {}

    def open(self, name: str, host: str, port: int) -> tuple[str, int]:
        """A relay from host:port (port 0 picks a free one) to socket `name`, made once; where it listens."""
        with self._lock:
            key = (name, host, port)
            if key not in self._relays:
                self._relays[key] = self._relay(*key)
            relay = self._relays[key]
            return relay.host, relay.port

    def like_vm(self, address: str, forward_ports: Sequence[int]) -> str:
        """The env server at address:5000 and each forwarded service at its own port number there, on
        the first loopback address 127.0.0.N (N >= 2) where all are free for "auto"; the address."""
        candidates = [f"127.0.0.{n}" for n in range(2, 255)] if address == "auto" else [address]
        names = [("public", VM_SERVER_PORT), *((f"port-{p}", p) for p in forward_ports)]
        for candidate in candidates:
            if not is_loopback(candidate):
                raise ProviderError(f"a VM-like address must be a loopback address (127.x.y.z), got {candidate}: "
                                    "Chrome's and VLC's ports have no authentication of their own")
            made = []
            try:
                with self._lock:
                    for name, port in names:
                        key = (name, candidate, port)
                        self._relays[key] = self._relay(*key)
                        made.append(key)
                return candidate
            except OSError as e:
                with self._lock:
                    for key in made:
                        self._relays.pop(key).close()
                if address != "auto":
                    raise ProviderError(f"cannot serve the desktop at {candidate}: {e}") from None
        raise ProviderError("no loopback address 127.0.0.2-254 has ports "
                            f"{', '.join(str(p) for _, p in names)} all free")

    def follow(self) -> None:
        """Points every relay at the current boot's sockets (after a reset)."""
        for (name, _, _), relay in self._relays.items():
            relay.socket_path = str(self._socket_path(name))

    def close(self) -> None:
        for relay in self._relays.values():
            relay.close()
        self._relays.clear()

    def _relay(self, name: str, host: str, port: int) -> TcpToUnixRelay:
        return TcpToUnixRelay(str(self._socket_path(name)), host, port,
                              allowed_uids=frozenset({os.getuid(), 0}) if is_loopback(host) else None)
