"""The sockets a boot's desktop serves on: bound by the harness in a folder only it can enter, handed to
the sandbox as listening fds, so the desktop never sees (or can replace) the files. New ones per boot:
the previous desktop's server may live on for a moment after a reset and must not answer for the new one."""
from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Sequence
from pathlib import Path


def socket_path(sockets: Path, name: str, generation: int) -> Path:
    """Boot `generation`'s socket `name` ("server", "public" or "port-<n>") in the host-only folder."""
    return sockets / f"{name}-{generation}.sock"


def bind_listeners(sockets: Path, generation: int, forward_ports: Sequence[int]) -> dict[str, socket.socket]:
    listeners = {}
    try:
        for name in ("server", "public", *(f"port-{port}" for port in forward_ports)):
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listeners[name] = listener
            listener.bind(str(socket_path(sockets, name, generation)))
            listener.listen(128)
    except BaseException:
        close_listeners(listeners)
        raise
    return listeners


def listen_fds(listeners: dict[str, socket.socket]) -> dict[str, int]:
    return {name: listener.fileno() for name, listener in listeners.items()}


def close_listeners(listeners: dict[str, socket.socket]) -> None:
    for listener in listeners.values():
        path = listener.getsockname()
        listener.close()
        if path:
            with contextlib.suppress(OSError):
                os.unlink(path)
    listeners.clear()
