"""Byte relays between a Unix socket and a TCP port, in both directions.

The sandbox has its own network namespace, so nothing inside it is reachable over
TCP from the host. Inside, `UnixToTcpRelay` exposes a TCP service of the sandbox
(Chrome's debugging port, VLC's HTTP interface) as a Unix socket in the runtime
folder; on the host, `TcpToUnixRelay` exposes such a socket (or the env server's
own) on a loopback TCP port for clients that only speak TCP.

Standard library only: both the harness and the env server import it.
"""
from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable

_CHUNK = 1 << 16


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(_CHUNK)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        # Half-close so the peer sees EOF while the other direction may still flow.
        for sock, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            try:
                sock.shutdown(how)
            except OSError:
                pass


def _no_delay(sock: socket.socket) -> socket.socket:
    """Relayed request/response traffic is latency-bound: turn Nagle off on TCP legs."""
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _splice(a: socket.socket, b: socket.socket) -> None:
    back = threading.Thread(target=_pipe, args=(b, a), daemon=True)
    back.start()
    _pipe(a, b)
    back.join()
    a.close()
    b.close()


class _Relay:
    """Accepts on `listener`; each connection is joined to a new upstream socket."""

    def __init__(self, listener: socket.socket, connect_upstream: Callable[[], socket.socket]):
        self._listener = listener
        self._connect_upstream = connect_upstream
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept_loop, daemon=True, name=f"relay-{self.describe()}")
        self._thread.start()

    def describe(self) -> str:
        return str(self._listener.getsockname())

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = self._connect_upstream()
        except OSError:
            client.close()  # the service behind the relay is not up (yet): the client sees a reset
            return
        _splice(_no_delay(client), _no_delay(upstream))

    def close(self) -> None:
        self._closed.set()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()


class UnixToTcpRelay(_Relay):
    """Accepts on a Unix socket (a path to bind, or a listening socket handed over by the
    harness) and connects each client to host:port."""

    def __init__(self, socket_path: str | None, host: str, port: int, listener: socket.socket | None = None):
        if listener is None:
            if socket_path is None:
                raise ValueError("UnixToTcpRelay needs a socket path or a listening socket")
            listener = _bind_unix(socket_path)
        self.socket_path = socket_path

        def connect() -> socket.socket:
            upstream = socket.create_connection((host, port), timeout=5)
            upstream.settimeout(None)  # the timeout was for connecting; idle streams are fine
            return upstream

        super().__init__(listener, connect)


def _bind_unix(socket_path: str) -> socket.socket:
    if os.path.lexists(socket_path):
        os.unlink(socket_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        listener.bind(socket_path)
    finally:
        os.umask(old_umask)
    listener.listen(64)
    return listener


def tcp_peer_uid(client: socket.socket) -> int | None:
    """The uid owning the other end of a loopback TCP connection, from /proc/net/tcp{,6}:
    the peer's socket is listed there with our address as its remote end. None when the
    peer is not on this machine (or not in this network namespace)."""
    try:
        peer_host, peer_port = client.getpeername()[:2]
        local_host, local_port = client.getsockname()[:2]
    except OSError:
        return None
    want_local, want_remote = f"{peer_port:04X}", f"{local_port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if len(fields) < 8:
                        continue
                    local, remote = fields[1], fields[2]
                    if local.endswith(":" + want_local) and remote.endswith(":" + want_remote):
                        return int(fields[7])
        except OSError:
            continue
    return None


class TcpToUnixRelay(_Relay):
    """Listens on host:port (port 0 picks a free one) and connects each client to a Unix socket.

    `allowed_uids`: when given, only connections from local processes of these uids are
    relayed (loopback only); anyone else on the machine is cut off at once. A TCP port on
    loopback is otherwise open to every local user and to every web page a local browser
    shows.
    """

    def __init__(self, socket_path: str, host: str = "127.0.0.1", port: int = 0,
                 allowed_uids: frozenset[int] | None = None):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(64)
        self.host, self.port = listener.getsockname()[:2]
        self.socket_path = socket_path
        self.allowed_uids = allowed_uids

        def connect() -> socket.socket:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                upstream.connect(self.socket_path)
            except OSError:
                upstream.close()
                raise
            return upstream

        super().__init__(listener, connect)

    def _serve(self, client: socket.socket) -> None:
        if self.allowed_uids is not None and tcp_peer_uid(client) not in self.allowed_uids:
            client.close()
            return
        super()._serve(client)
