"""HTTP to the env server over a Unix socket or TCP, with keep-alive per thread.

The standard library's http.client is enough and adds no dependency; a persistent
connection per thread saves a connect per request (the server speaks HTTP/1.1).
A server known to be gone is let go of at once (`abort`): every request waiting on it
fails, and no new one is sent.
"""
from __future__ import annotations

import http.client
import json
import socket
import threading
import urllib.parse
import uuid
from dataclasses import dataclass
from typing import Any

# A server that is there accepts a connection at once (the kernel does, whatever its process is
# doing); a connect that takes longer is to a host that is gone.
CONNECT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Endpoint:
    """Where an env server listens: a Unix socket path, or an http:// base URL (with the
    bearer token its public listener requires, if any)."""
    unix_socket: str | None = None
    url: str | None = None
    token: str | None = None

    def __str__(self) -> str:
        return f"unix:{self.unix_socket}" if self.unix_socket else str(self.url)


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def error_message(self) -> str:
        try:
            data = self.json()
            if isinstance(data, dict) and data.get("message"):
                return str(data["message"])
        except ValueError:
            pass
        return self.text[:500]


def encode_multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
                     + value.encode() + b"\r\n")
    for name, (filename, data) in files.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                     f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


class Transport:
    def __init__(self, endpoint: Endpoint, timeout: float = 150.0):
        self.endpoint = endpoint
        self.timeout = timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        self._in_flight: dict[int, socket.socket] = {}  # thread id -> the socket its request waits on
        self.aborted: str | None = None  # why the server was let go of (`abort`)
        if endpoint.url:
            parsed = urllib.parse.urlsplit(endpoint.url)
            self._host, self._port = parsed.hostname or "localhost", parsed.port or 80
            self._prefix = parsed.path.rstrip("/")

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self.endpoint.unix_socket:
                conn = UnixHTTPConnection(self.endpoint.unix_socket, self.timeout)
            else:
                conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
            self._local.conn = conn
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def request(self, method: str, path: str, *, json_body: Any = None, form: dict[str, str] | None = None,
                files: dict[str, tuple[str, bytes]] | None = None, timeout: float | None = None) -> RawResponse:
        """One request. Raises OSError / http.client.HTTPException when the server is unreachable."""
        headers: dict[str, str] = {}
        if self.endpoint.token:
            headers["Authorization"] = f"Bearer {self.endpoint.token}"
        body: bytes | None = None
        if files is not None:
            body, headers["Content-Type"] = encode_multipart(form or {}, files)
        elif form is not None:
            body = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif json_body is not None:
            body = json.dumps(json_body).encode()
            headers["Content-Type"] = "application/json"
        if self.endpoint.url:
            path = self._prefix + path
        # A kept-alive connection may have been closed by the server in between: one
        # silent reconnect is the normal keep-alive dance, not a retry of the request's effect.
        for attempt in (0, 1):
            conn = self._connection()
            try:
                self._connect(conn, timeout or self.timeout)
                conn.request(method, path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self._drop_connection()
                if attempt == 0 and getattr(self._local, "reused", False) and self.aborted is None:
                    self._local.reused = False
                    continue
                raise
            except BaseException:
                self._drop_connection()
                raise
            finally:
                with self._lock:
                    self._in_flight.pop(threading.get_ident(), None)
            self._local.reused = True
            if resp.will_close:
                self._drop_connection()
                self._local.reused = False
            return RawResponse(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
        raise AssertionError("unreachable")

    def _connect(self, conn: http.client.HTTPConnection, timeout: float) -> None:
        """Connects `conn` if it is not (within CONNECT_TIMEOUT_S) and lists its socket as waiting, so that
        `abort` can end the request."""
        if conn.sock is None:
            conn.timeout = min(timeout, CONNECT_TIMEOUT_S)
            conn.connect()
        conn.timeout = timeout
        sock = conn.sock
        sock.settimeout(timeout)
        with self._lock:
            if self.aborted is not None:
                raise ConnectionAbortedError(f"the env server at {self.endpoint} was let go of: {self.aborted}")
            self._in_flight[threading.get_ident()] = sock

    def abort(self, reason: str) -> None:
        """Lets go of a server known to be gone, from any thread: each request waiting on it fails at once
        (its socket is shut down), and every later one before it is sent."""
        with self._lock:
            self.aborted = reason
            waiting = list(self._in_flight.values())
        for sock in waiting:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by its own thread

    def close(self) -> None:
        self._drop_connection()
