"""A small HTTP/1.1 server for the env server: routing, request parsing, errors, limits.

The standard library's http.server is enough and keeps the server free of
dependencies the system Python may lack. It listens on a Unix socket (the local
provider's private runtime folder), on TCP (inside a VM, like OSWorld's server), or
on a listening socket it is handed.
Every request error becomes a 4xx JSON message; an unexpected exception becomes a
500 JSON message with no traceback sent to the client (the traceback is logged).

Whoever sends requests may be hostile, so nothing a client sends can make the server
hold unbounded memory or threads, or lose track of where a request ends:
- bodies are read as streams: a buffered body (JSON, form) is capped at
  MAX_BUFFERED_BODY (413 beyond); a multipart upload is streamed part by part, so a
  handler can write a file of any size through a small buffer (`Request.multipart`);
- `Content-Length` must be a plain number, `Transfer-Encoding: chunked` is decoded with
  the same caps, any other transfer coding is refused (501); a body a handler did not
  read is drained (up to DRAIN_LIMIT) or the connection is closed, so a kept-alive
  connection never desyncs;
- at most `max_connections` connections are served at once: a new one beyond that
  takes the place of the oldest connection that is waiting for a request or still
  sending a request's head and has never shown the listener's token, else of the one
  that has been idle longest; only when every connection is in the middle of a request
  is it answered 503 and closed. So clients without the token cannot hold a token
  listener, however slowly they send. A kept-alive connection idle for `idle_timeout`
  seconds between requests is closed (a request in progress is never cut by it);
- a request's head (request line and headers) must arrive within `head_timeout` seconds
  of its first byte, however it trickles (408 and closed beyond);
- a listener can be public (a TCP port a browser can reach) and/or need a token: see
  access_policy.py.
"""
from __future__ import annotations

import email.message
import email.parser
import email.policy
import io
import json
import logging
import math
import os
import re
import socket
import socketserver
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, BinaryIO, cast

from .access_policy import AccessPolicy, Refusal

log = logging.getLogger("osworld.server")

MAX_BUFFERED_BODY = 16 << 20       # JSON and form bodies, and multipart bodies of routes that do not stream
MAX_STREAMED_BODY = 64 << 30       # a streamed upload: bounded by the disk, not by memory
MAX_FIELD_BYTES = 1 << 20          # one text field of a streamed multipart body
MAX_PART_HEADER_BYTES = 16 << 10
DRAIN_LIMIT = 64 << 20             # unread body bytes skipped to keep a connection; beyond, it is closed
MAX_CHUNK_LINE = 4096
MAX_CONNECTIONS = 64
IDLE_TIMEOUT_S = 60.0              # between requests on a kept-alive connection
HEAD_TIMEOUT_S = 10.0              # from a request's first byte to the end of its headers
IO_TIMEOUT_S = 300.0               # one read or write stalled this long within a request ends the connection
_COPY_CHUNK = 1 << 20
_CONTENT_LENGTH = re.compile(r"[0-9]{1,18}")


class HTTPError(Exception):
    """Raised by a handler to answer with `status` and a JSON message."""

    def __init__(self, status: int, message: str, *, headers: dict[str, str] | None = None, **extra: Any):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.extra = extra


class BodyReader:
    """The request body as a stream that never reads past the request's end.

    Framed by Content-Length (`length`) or by chunked transfer coding (`length` None).
    `limit` caps how many body bytes the consumer may read (413 beyond); a framing error
    or a stalled client is a 400 and leaves the reader `broken`, which closes the
    connection once the response is sent.
    """

    def __init__(self, rfile: BinaryIO, length: int | None):
        self._rfile = rfile
        # Of the body (Content-Length) or of the current chunk (chunked; 0 before the first).
        self._remaining = length or 0
        self.chunked = length is None
        self.done = length == 0
        self.broken = False
        self.consumed = 0
        self.limit = MAX_BUFFERED_BODY

    @property
    def empty(self) -> bool:
        return not self.chunked and self.done and self.consumed == 0

    @property
    def declared_length(self) -> int | None:
        return None if self.chunked else self.consumed + self._remaining

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes (all that is left when negative); b"" at the end of the body."""
        if self.done or size == 0:
            return b""
        if size < 0:
            return self._read_all()
        try:
            if self.chunked and not self._remaining:
                self._next_chunk()
                if self.done:
                    return b""
            want = min(size, self._remaining)
            if self.consumed + want > self.limit:
                raise HTTPError(413, f"request body is larger than {self.limit} bytes")
            data = self._rfile.read(want)
        except (OSError, ValueError) as e:
            self.broken = True
            raise HTTPError(400, f"request body could not be read: {type(e).__name__}: {e}") from None
        if len(data) < want:
            self.broken = True
            raise HTTPError(400, f"request body ended after {self.consumed + len(data)} bytes, before its end")
        self._remaining -= len(data)
        self.consumed += len(data)
        if not self.chunked and not self._remaining:
            self.done = True
        return data

    def _read_all(self) -> bytes:
        if not self.chunked and self.consumed + self._remaining > self.limit:
            raise HTTPError(413, f"request body of {self.declared_length} bytes is larger than {self.limit} bytes")
        chunks = []
        while chunk := self.read(_COPY_CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)

    def _next_chunk(self) -> None:
        if self.consumed:  # each chunk's data ends with CRLF
            if self._rfile.read(2) != b"\r\n":
                raise ValueError("chunk data not followed by CRLF")
        line = self._rfile.readline(MAX_CHUNK_LINE + 1)
        if len(line) > MAX_CHUNK_LINE or not line.endswith(b"\n"):
            raise ValueError("chunk size line missing or too long")
        size_text = line.split(b";", 1)[0].strip()
        if not re.fullmatch(rb"[0-9A-Fa-f]{1,15}", size_text):
            raise ValueError(f"invalid chunk size {size_text[:20]!r}")
        self._remaining = int(size_text, 16)
        if self._remaining == 0:
            for _ in range(64):  # trailer fields, then the empty line
                trailer = self._rfile.readline(MAX_CHUNK_LINE + 1)
                if trailer in (b"\r\n", b"\n"):
                    self.done = True
                    return
                if not trailer.endswith(b"\n"):
                    raise ValueError("chunked body ended inside its trailer")
            raise ValueError("too many trailer fields")

    def finish(self, limit: int = DRAIN_LIMIT) -> bool:
        """Skips what the handler left unread; False when the connection cannot be reused."""
        if self.broken:
            return False
        if self.done:
            return True
        if not self.chunked and self._remaining > limit:
            return False
        self.limit = self.consumed + limit
        try:
            while self.read(_COPY_CHUNK):
                pass
        except HTTPError:
            return False
        return True


@dataclass
class UploadedFile:
    filename: str
    data: bytes


class MultipartPart:
    """One part of a multipart/form-data body, read as a stream."""

    def __init__(self, reader: _MultipartReader, headers: email.message.Message):
        self._reader = reader
        self.headers = headers
        name = headers.get_param("name", header="content-disposition")
        # The HTTP policy's headers come decoded: a str, never RFC 2231's (charset, language, value).
        self.name: str | None = name if isinstance(name, str) else None
        self.filename: str | None = headers.get_filename()

    def read(self, size: int = _COPY_CHUNK) -> bytes:
        return self._reader.read_part(size)

    def read_all(self, limit: int) -> bytes:
        data = bytearray()
        while chunk := self.read():
            data += chunk
            if len(data) > limit:
                raise HTTPError(413, f"multipart field {self.name!r} is larger than {limit} bytes")
        return bytes(data)

    def text(self, limit: int = MAX_FIELD_BYTES) -> str:
        return self.read_all(limit).decode("utf-8", "replace")


class _MultipartReader:
    """Splits a multipart body at its boundaries while holding at most a chunk in memory."""

    def __init__(self, stream: BodyReader, boundary: str):
        self._stream = stream
        self._delimiter = b"\r\n--" + boundary.encode("latin-1")
        self._buffer = b"\r\n"  # so the first boundary, at the very start, matches too
        self._in_part = False
        self._finished = False

    def parts(self) -> Iterator[MultipartPart]:
        self._in_part = True  # the preamble is skipped like the rest of a part
        while True:
            while self.read_part(_COPY_CHUNK):
                pass
            if self._finished:
                return
            headers = self._read_part_headers()
            self._in_part = True
            yield MultipartPart(self, headers)

    def read_part(self, size: int) -> bytes:
        if not self._in_part:
            return b""
        while True:
            index = self._buffer.find(self._delimiter)
            if index >= 0:
                if index:
                    data, self._buffer = self._buffer[:min(index, size)], self._buffer[min(index, size):]
                    return data
                self._buffer = self._buffer[len(self._delimiter):]
                self._in_part = False
                self._after_delimiter()
                return b""
            # Everything but a possible start of the delimiter can go to the caller.
            safe = len(self._buffer) - len(self._delimiter) + 1
            if safe > 0:
                data, self._buffer = self._buffer[:min(safe, size)], self._buffer[min(safe, size):]
                return data
            if not self._fill():
                raise HTTPError(400, "multipart body ended without its closing boundary")

    def _after_delimiter(self) -> None:
        while len(self._buffer) < 2 and self._fill():
            pass
        if self._buffer.startswith(b"--"):
            self._finished = True
            return
        line_end = self._buffer.find(b"\r\n")
        while line_end < 0:  # transport padding (spaces) may follow a boundary
            if len(self._buffer) > 1024 or not self._fill():
                raise HTTPError(400, "multipart boundary line is malformed")
            line_end = self._buffer.find(b"\r\n")
        if self._buffer[:line_end].strip(b" \t"):
            raise HTTPError(400, "multipart boundary line is malformed")
        self._buffer = self._buffer[line_end + 2:]

    def _read_part_headers(self) -> email.message.Message:
        while True:
            if self._buffer.startswith(b"\r\n"):
                raw, self._buffer = b"", self._buffer[2:]
                break
            end = self._buffer.find(b"\r\n\r\n")
            if end >= 0:
                raw, self._buffer = self._buffer[:end], self._buffer[end + 4:]
                break
            if len(self._buffer) > MAX_PART_HEADER_BYTES:
                raise HTTPError(400, "multipart part headers are too long")
            if not self._fill():
                raise HTTPError(400, "multipart body ended inside a part's headers")
        return email.parser.Parser(policy=email.policy.HTTP).parsestr(raw.decode("utf-8", "replace") + "\r\n\r\n")

    def _fill(self) -> bool:
        chunk = self._stream.read(_COPY_CHUNK)
        self._buffer += chunk
        return bool(chunk)


def _field_type_error(name: str, expected: str, value: Any) -> HTTPError:
    return HTTPError(400, f"field '{name}' must be {expected}, got {type(value).__name__}: {value!r:.80}")


_TRUE_STRINGS = frozenset({"true", "1", "yes", "on"})
_FALSE_STRINGS = frozenset({"false", "0", "no", "off", ""})


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    stream: BodyReader
    # Public listeners take parameters of a POST from its body only: a query string is
    # what a cross-site form or link can set without any body.
    query_fields: bool = True
    _body: bytes | None = field(default=None, repr=False)
    _fields: dict[str, Any] | None = field(default=None, repr=False)
    _files: dict[str, UploadedFile] = field(default_factory=dict, repr=False)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def body(self) -> bytes:
        """The whole body, at most MAX_BUFFERED_BODY bytes (413 beyond)."""
        if self._body is None:
            self.stream.limit = min(self.stream.limit, MAX_BUFFERED_BODY)
            self._body = self.stream.read()
        return self._body

    def json(self) -> dict[str, Any]:
        """The JSON object body; 400 when the body is not a JSON object."""
        if not self.body:
            return {}
        try:
            value = json.loads(self.body)
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            raise HTTPError(400, f"request body is not valid JSON: {e}") from None
        if not isinstance(value, dict):
            raise HTTPError(400, f"request body must be a JSON object, got {type(value).__name__}")
        return value

    def fields(self) -> dict[str, Any]:
        """Parameters from whichever encoding the client used: JSON, form or multipart.

        OSWorld's client mixes them (JSON for most calls, a form for /file and
        /window_size, multipart for uploads), so handlers ask for fields, not a format.
        """
        if self._fields is None:
            self._fields = dict(self.query) if self.query_fields else {}
            ctype = self.content_type
            if ctype.startswith("multipart/form-data"):
                self.stream.limit = min(self.stream.limit, MAX_BUFFERED_BODY)
                for part in self.multipart():
                    # A part without a name is read (and held to the limits) all the same.
                    if part.filename is not None:
                        upload = UploadedFile(part.filename, part.read_all(MAX_BUFFERED_BODY))
                        if part.name is not None:
                            self._files[part.name] = upload
                    else:
                        text = part.text()
                        if part.name is not None:
                            self._fields[part.name] = text
            elif ctype.startswith("application/x-www-form-urlencoded"):
                form = self.body.decode("utf-8", "replace")
                self._fields.update(urllib.parse.parse_qsl(form, keep_blank_values=True))
            elif self.body:
                self._fields.update(self.json())
        return self._fields

    def files(self) -> dict[str, UploadedFile]:
        self.fields()
        return self._files

    def multipart(self) -> Iterator[MultipartPart]:
        """The parts of a multipart/form-data body, streamed: read each before asking for the next.

        A route that streams parts to disk raises `self.stream.limit` first; everything
        else reads the body under MAX_BUFFERED_BODY.
        """
        message = email.message.Message()
        message["content-type"] = self.content_type
        if message.get_content_type() != "multipart/form-data":
            raise HTTPError(400, f"expected a multipart/form-data body, got Content-Type {self.content_type!r:.100}")
        boundary = message.get_param("boundary")
        if not isinstance(boundary, str) or not 1 <= len(boundary) <= 200:
            raise HTTPError(400, "multipart Content-Type has no valid boundary")
        for part in _MultipartReader(self.stream, boundary).parts():
            if part.name:
                yield part

    def optional(self, name: str, default: Any = None) -> Any:
        value = self.fields().get(name)
        return default if value is None else value

    def require(self, name: str, kind: type | tuple[type, ...] = str) -> Any:
        value = self.fields().get(name)
        if value is None or value == "":
            raise HTTPError(400, f"missing required field '{name}'")
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kind) or isinstance(value, bool) and bool not in kinds:
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise _field_type_error(name, names, value)
        return value

    def string(self, name: str, default: str | None = None) -> str | None:
        """An optional text field; 400 when it is there but not a string."""
        value = self.fields().get(name)
        if value is None:
            return default
        if not isinstance(value, str):
            raise _field_type_error(name, "a string", value)
        return value

    def number(self, name: str, default: float, minimum: float | None = None, maximum: float | None = None) -> float:
        """An optional number (JSON number, or numeric text from a form); 400 naming the field otherwise."""
        value = self.fields().get(name)
        if value is None or value == "":
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise _field_type_error(name, "a number", value)
        try:
            number = float(value)
        except (ValueError, OverflowError):
            raise _field_type_error(name, "a number", value) from None
        if not math.isfinite(number):
            raise _field_type_error(name, "a finite number", value)
        if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
            bounds = f"between {minimum:g} and {maximum:g}" if minimum is not None and maximum is not None \
                else f"at least {minimum:g}" if minimum is not None else f"at most {maximum:g}"
            raise HTTPError(400, f"field '{name}' must be {bounds}, got {value!r:.80}")
        return number

    def boolean(self, name: str, default: bool = False) -> bool:
        """An optional flag: JSON true/false (or 0/1), or 'true'/'false' text from a form."""
        value = self.fields().get(name)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE_STRINGS | _FALSE_STRINGS:
            return value.strip().lower() in _TRUE_STRINGS
        raise _field_type_error(name, "true or false", value)

    def mapping(self, name: str) -> dict[str, Any]:
        """An optional JSON object field ({} when absent or null)."""
        value = self.fields().get(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise _field_type_error(name, "an object", value)
        return value


@dataclass
class Response:
    body: bytes = b""
    status: int = 200
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    # A file sent from disk in chunks instead of `body`: large files never sit in memory.
    file: BinaryIO | None = None
    file_length: int = 0

    @classmethod
    def json(cls, value: Any, status: int = 200) -> Response:
        return cls(json.dumps(value).encode(), status)

    @classmethod
    def text(cls, value: str, status: int = 200) -> Response:
        return cls(value.encode(), status, "text/plain; charset=utf-8")

    @classmethod
    def from_file(cls, path: str | os.PathLike, content_type: str = "application/octet-stream",
                  headers: dict[str, str] | None = None) -> Response:
        """Streams the file at `path`; OSError (missing, unreadable) is the caller's to handle."""
        stream = open(path, "rb")
        try:
            length = os.fstat(stream.fileno()).st_size
        except OSError:
            stream.close()
            raise
        return cls(b"", 200, content_type, headers or {}, file=stream, file_length=length)


Handler = Callable[[Request], Response]


@dataclass(frozen=True)
class Route:
    handler: Handler
    # Body encodings the route takes ("json", "form", "multipart"); enforced on public listeners.
    accepts: frozenset[str]


class Router:
    def __init__(self) -> None:
        self._routes: dict[tuple[str, str], Route] = {}

    def route(self, path: str, methods: tuple[str, ...] = ("GET",),
              accepts: tuple[str, ...] = ("json",)) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            for method in methods:
                self._routes[(method, path)] = Route(handler, frozenset(accepts))
            return handler
        return register

    def paths(self) -> set[str]:
        return {path for _, path in self._routes}

    def endpoints(self) -> list[tuple[str, str]]:
        """(method, path) of every route, sorted: what PROTOCOL.md must document."""
        return sorted(self._routes)

    def lookup(self, method: str, path: str) -> Route:
        route = self._routes.get((method, path))
        if route is None:
            if path in self.paths():
                allowed = sorted(m for m, p in self._routes if p == path)
                raise HTTPError(405, f"{method} not allowed on {path}; use {', '.join(allowed)}")
            raise HTTPError(404, f"no such endpoint: {path}")
        return route

    def dispatch(self, request: Request) -> Response:
        return self.lookup(request.method, request.path).handler(request)


def error_response(status: int, message: str, headers: dict[str, str] | None = None, **extra: Any) -> Response:
    return Response(json.dumps({"status": "error", "message": message, **extra}).encode(), status,
                    headers=dict(headers or {}))


@dataclass
class _Connection:
    phase: str              # "idle" (waiting for a request), "head" (reading one's head) or "busy"
    since: float            # when it entered the phase
    authenticated: bool = False  # has shown the listener's token


class _Connections:
    """Counts a server's connections and knows what each is doing, to cap them without starving
    clients: when full, a new connection takes the place of one that waits (see `_victim`)."""

    def __init__(self, limit: int):
        self.limit = limit
        self._lock = threading.Lock()
        self._count = 0
        self._open: dict[socket.socket, _Connection] = {}  # connections not evicted yet

    def admit(self, connection: socket.socket) -> bool:
        with self._lock:
            if self._count >= self.limit:
                # Evicted connections end promptly, but their slots count until they do: stop
                # at twice the limit, whatever the rate of new connections.
                victim = self._victim() if self._count < 2 * self.limit else None
                if victim is None:
                    return False
                del self._open[victim]
                try:  # its blocked read returns end-of-file and its thread ends
                    victim.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self._count += 1
            self._open[connection] = _Connection("idle", time.monotonic())
            return True

    def _victim(self) -> socket.socket | None:
        """The oldest waiting connection that never showed the token, else the longest idle one."""
        waiting = [(c.authenticated, c.since, id(sock), sock) for sock, c in self._open.items()
                   if c.phase == "idle" or (c.phase == "head" and not c.authenticated)]
        return min(waiting)[3] if waiting else None

    def release(self, connection: socket.socket) -> None:
        with self._lock:
            self._count -= 1
            self._open.pop(connection, None)

    def enter(self, connection: socket.socket, phase: str) -> None:
        with self._lock:
            state = self._open.get(connection)
            if state is not None:
                state.phase, state.since = phase, time.monotonic()

    def authenticated(self, connection: socket.socket) -> None:
        with self._lock:
            state = self._open.get(connection)
            if state is not None:
                state.authenticated = True

    @property
    def count(self) -> int:
        with self._lock:
            return self._count


class _HeadReader:
    """Reads a request's head for parse_request: every read within one deadline, so a client
    that sends a byte now and then cannot stretch the head past it."""

    def __init__(self, rfile: io.BufferedReader, connection: socket.socket, deadline: float):
        self._rfile = rfile
        self._connection = connection
        self._deadline = deadline
        self._lines = 0

    def readline(self, limit: int = -1) -> bytes:
        line = self._readline(limit)
        if not line.endswith(b"\n") and (line or self._lines) and (limit < 0 or len(line) < limit):
            # the client closed (or was evicted) inside the head: it is no request
            raise ConnectionAbortedError("the connection ended inside a request's head")
        self._lines += 1
        return line

    def _readline(self, limit: int) -> bytes:
        line = bytearray()
        while limit < 0 or len(line) < limit:
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise _HeadTimeout()
            self._connection.settimeout(left)
            try:
                buffered = self._rfile.peek(1)  # one read on the socket at most
            except TimeoutError:
                raise _HeadTimeout() from None
            if not buffered:
                break
            room = len(buffered) if limit < 0 else min(len(buffered), limit - len(line))
            end = buffered.find(b"\n", 0, room)
            line += self._rfile.read(end + 1 if end >= 0 else room)  # from the buffer only
            if end >= 0:
                break
        return bytes(line)


class _HeadTimeout(Exception):
    """A request's head did not arrive within the server's head_timeout."""


class EnvServer(socketserver.ThreadingMixIn, socketserver.BaseServer):
    """Threads per connection, capped (see _Connections); the server's access policy and timeouts.

    A mixin for the socket servers below, which bring BaseServer after it in their MRO.
    """

    daemon_threads = True
    access_policy = AccessPolicy()
    idle_timeout = IDLE_TIMEOUT_S
    head_timeout = HEAD_TIMEOUT_S
    io_timeout = IO_TIMEOUT_S
    connections: _Connections

    def process_request(self, request, client_address):
        if not self.connections.admit(request):
            _refuse_connection(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: release its slot here
            self.connections.release(request)
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release(request)

    def handle_error(self, request, client_address):  # a client that vanished is not a server error
        log.debug("connection error", exc_info=True)


def _refuse_connection(connection: socket.socket) -> None:
    body = json.dumps({"status": "error", "message": "too many connections to the env server; retry shortly"}).encode()
    head = (f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Retry-After: 1\r\nConnection: close\r\n\r\n").encode()
    try:
        connection.setblocking(False)  # the accepting thread must never wait on a client
        connection.send(head + body)
        connection.shutdown(socket.SHUT_WR)
        connection.recv(1 << 16)  # what the client sent already: closing with it unread would reset the reply
    except OSError:
        pass
    finally:
        connection.close()


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the harness reuses one connection per thread
    server_version = "osworld-env-server"
    router: Router  # set on the subclass made by make_server
    server: EnvServer
    rfile: io.BufferedReader  # the socket's, as StreamRequestHandler makes it (buffered)

    def address_string(self) -> str:  # Unix sockets have no peer address
        return self.client_address[0] if isinstance(self.client_address, tuple) and self.client_address else "unix"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def setup(self) -> None:
        super().setup()
        self._body_left_unread = False

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        if self._body_left_unread:
            self._linger()

    def _linger(self) -> None:
        """Reads (briefly) what the client still sends, so closing does not reset the reply it has not read yet."""
        try:
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(1.0)
            received = 0
            while received < DRAIN_LIMIT:
                chunk = self.connection.recv(1 << 16)
                if not chunk:
                    break
                received += len(chunk)
        except OSError:
            pass

    def handle_one_request(self) -> None:
        # The idle timeout covers the wait for a request's first byte; its head must then
        # arrive within head_timeout; after that, reads and writes may each stall up to
        # io_timeout, and the handler itself (a 120 s /execute) is never timed out here.
        connections = self.server.connections
        connections.enter(self.connection, "idle")
        self.connection.settimeout(self.server.idle_timeout)
        try:
            begun = self.rfile.peek(1)
        except OSError:  # idle too long, evicted, or reset
            begun = b""
        if not begun:
            self.close_connection = True
            return
        connections.enter(self.connection, "head")
        if not self._read_head():
            return
        connections.enter(self.connection, "busy")
        self.connection.settimeout(self.server.io_timeout)
        try:
            method = getattr(self, "do_" + self.command, None)
            if method is None:
                self.send_error(501, f"unsupported method {self.command!r:.40}")
                return
            method()
            self.wfile.flush()
        except OSError as e:  # timed out or the client went away: nothing more can be said on it
            log.debug("connection ended during a request: %s", e)
            self.close_connection = True

    def _read_head(self) -> bool:
        """Reads and parses the request line and headers (within head_timeout); False when
        there is no request to handle (answered, or the connection is to close)."""
        rfile = self.rfile
        # parse_request reads the head with readline() only, which _HeadReader provides.
        self.rfile = cast(io.BufferedReader, _HeadReader(rfile, self.connection,
                                                         time.monotonic() + self.server.head_timeout))
        try:
            self.raw_requestline = self.rfile.readline(65537)
            if len(self.raw_requestline) > 65536:
                self.requestline = self.request_version = self.command = ""
                self.send_error(414)
                return False
            if not self.raw_requestline:
                self.close_connection = True
                return False
            return self.parse_request()
        except _HeadTimeout:
            self.requestline = self.request_version = self.command = ""
            self.connection.settimeout(1.0)  # the answer is a courtesy: a client that does not read loses it
            try:
                self.send_error(408, f"the request's head did not arrive within {self.server.head_timeout:g} s")
            except OSError:
                self.close_connection = True
            return False
        except OSError:  # evicted or reset
            self.close_connection = True
            return False
        finally:
            self.rfile = rfile

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # Only the base class calls this, on requests it could not parse: answer in JSON
        # and close, since where the next request would start is unknown.
        self.close_connection = True
        text = message or self.responses.get(code, ("error",))[0]
        self._send(error_response(code, text, headers={"Connection": "close"}))

    def _body_reader(self) -> BodyReader:
        coding = self.headers.get_all("Transfer-Encoding") or []
        lengths = self.headers.get_all("Content-Length") or []
        if coding:
            codings = [c.strip().lower() for value in coding for c in value.split(",") if c.strip()]
            if lengths:
                raise HTTPError(400, "a request must not have both Content-Length and Transfer-Encoding")
            if codings != ["chunked"]:
                raise HTTPError(501, f"Transfer-Encoding {', '.join(coding)!r:.100} is not supported; "
                                     "send Content-Length or chunked")
            return BodyReader(self.rfile, None)
        if len(set(v.strip() for v in lengths)) > 1:
            raise HTTPError(400, f"conflicting Content-Length headers: {lengths!r:.100}")
        if not lengths:
            return BodyReader(self.rfile, 0)
        text = lengths[0].strip()
        if not _CONTENT_LENGTH.fullmatch(text):
            raise HTTPError(400, f"invalid Content-Length header: {lengths[0]!r:.100}")
        return BodyReader(self.rfile, int(text))

    def _handle(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        reader: BodyReader | None = None
        policy: AccessPolicy = self.server.access_policy
        try:
            if len(self.headers.get_all("Host") or []) > 1:
                raise HTTPError(400, "more than one Host header")
            reader = self._body_reader()
            headers = {k.lower(): v for k, v in self.headers.items()}
            refusal = policy.check_headers(headers)
            if policy.shows_token(headers):  # now among the connections kept over token-less ones
                self.server.connections.authenticated(self.connection)
            if refusal is None:
                route = self.router.lookup(self.command, path)
                refusal = policy.check_body(headers, not reader.empty, route.accepts)
            if refusal is not None:
                raise _refused(refusal)
            request = Request(method=self.command, path=path, query=dict(urllib.parse.parse_qsl(url.query)),
                              headers=headers, stream=reader,
                              query_fields=not policy.public or self.command in ("GET", "HEAD"))
            response = route.handler(request)
        except HTTPError as e:
            response = error_response(e.status, e.message, e.headers, **e.extra)
        except Exception as e:  # a bug in a handler: log it, never send a traceback
            log.exception("%s %s failed", self.command, url.path)
            response = error_response(500, f"internal error: {type(e).__name__}: {e}")
        if reader is None or not reader.finish():
            self.close_connection = True
            self._body_left_unread = reader is None or not reader.done
        if self.close_connection:
            response.headers["Connection"] = "close"
        try:
            self._send(response)
        finally:
            if response.file is not None:
                response.file.close()

    def _send(self, response: Response) -> None:
        length = response.file_length if response.file is not None else len(response.body)
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(length))
        for key, value in response.headers.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command == "HEAD":
            return
        if response.file is None:
            view = memoryview(response.body)
            for start in range(0, len(view), _COPY_CHUNK):  # io_timeout applies to each write
                self.wfile.write(view[start:start + _COPY_CHUNK])
            return
        left = length
        while left > 0:
            chunk = response.file.read(min(_COPY_CHUNK, left))
            if not chunk:  # the file shrank while being sent: the length sent is now wrong
                self.close_connection = True
                raise ConnectionAbortedError("file shrank while being sent")
            self.wfile.write(chunk)
            left -= len(chunk)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle


def _refused(refusal: Refusal) -> HTTPError:
    return HTTPError(refusal.status, refusal.message, headers=refusal.headers)


class _ThreadingUnixServer(EnvServer, socketserver.UnixStreamServer):
    def get_request(self):  # BaseHTTPRequestHandler expects a (host, port)-like address
        conn, _ = super().get_request()
        return conn, ("unix", 0)


class _ThreadingTCPServer(EnvServer, socketserver.TCPServer):
    allow_reuse_address = True


class _ThreadingTCP6Server(_ThreadingTCPServer):
    address_family = socket.AF_INET6


class _TcpRequestHandler(_RequestHandler):
    # Headers and body go out in separate writes; with Nagle on, a kept-alive
    # client waits ~40 ms for the delayed ACK on every request.
    disable_nagle_algorithm = True


def make_server(router: Router, unix_socket: str | None = None, host: str = "127.0.0.1", port: int = 5000, *,
                sock: socket.socket | None = None, public: bool = False, token: str | None = None,
                max_connections: int = MAX_CONNECTIONS, idle_timeout: float = IDLE_TIMEOUT_S,
                head_timeout: float = HEAD_TIMEOUT_S) -> EnvServer:
    """A threading HTTP server for `router`, not yet serving (call serve_forever).

    It listens on `sock` when given (a bound, listening AF_UNIX or AF_INET/AF_INET6
    socket, e.g. one inherited from the harness), else on the Unix socket path
    `unix_socket` (made, owner-only), else on TCP host:port. `public` applies the
    browser-facing rules of access_policy.py; `token` requires that token on every request.
    """
    if sock is not None:
        classes: dict[int, tuple[type[_ThreadingTCPServer] | type[_ThreadingUnixServer], type[_RequestHandler]]] = {
            socket.AF_UNIX: (_ThreadingUnixServer, _RequestHandler),
            socket.AF_INET: (_ThreadingTCPServer, _TcpRequestHandler),
            socket.AF_INET6: (_ThreadingTCP6Server, _TcpRequestHandler),
        }
        if sock.family not in classes:
            raise ValueError(f"cannot serve on a socket of family {sock.family!r}")
        server_class, handler_base = classes[sock.family]
        handler = type("RequestHandler", (handler_base,), {"router": router})
        server = server_class(sock.getsockname(), handler, bind_and_activate=False)
        server.socket.close()
        server.socket = sock
        server.server_address = sock.getsockname()
    elif unix_socket:
        handler = type("RequestHandler", (_RequestHandler,), {"router": router})
        if os.path.lexists(unix_socket):
            os.unlink(unix_socket)
        old_umask = os.umask(0o177)  # the socket is for its owner only
        try:
            server = _ThreadingUnixServer(unix_socket, handler)
        finally:
            os.umask(old_umask)
    else:
        handler = type("RequestHandler", (_TcpRequestHandler,), {"router": router})
        server_class = _ThreadingTCP6Server if ":" in host else _ThreadingTCPServer
        server = server_class((host, port), handler, bind_and_activate=False)
        server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            server.server_bind()
            server.server_activate()
        except BaseException:
            server.server_close()
            raise
    server.connections = _Connections(max_connections)
    server.idle_timeout = idle_timeout
    server.head_timeout = head_timeout
    configure_access(server, public=public, token=token)
    return server


def configure_access(server: EnvServer, *, public: bool = False, token: str | None = None) -> None:
    """Sets who may use `server` (see access_policy.py); for a server built elsewhere, before it serves."""
    server.access_policy = AccessPolicy(public=public, token=token or None)
