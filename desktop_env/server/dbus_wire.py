"""A small D-Bus client that pipelines thousands of method calls (standard library only).

Why not Gio or libatspi: a synchronous libatspi call costs a round trip (60-100 us here,
mostly waiting), and GDBus from Python spends about 50 us of CPU per call, so the ten
to twenty thousand AT-SPI calls of a LibreOffice window take seconds. Writing many calls
at once over one socket and parsing the replies with `struct` costs about 25 us of CPU
per call while the application works through its queue on the other core, and a peer
that stops answering costs the timeout of the calls sent to it, never a hung thread.

What is implemented is what AT-SPI clients need: unix-socket addresses, EXTERNAL auth,
method calls with basic-typed arguments, and parsing any reply body.
"""
from __future__ import annotations

import collections
import functools
import logging
import os
import select
import socket
import struct
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import unquote

METHOD_CALL, METHOD_RETURN, ERROR = 1, 2, 3
_FIELD_PATH, _FIELD_INTERFACE, _FIELD_MEMBER, _FIELD_ERROR_NAME = 1, 2, 3, 4
_FIELD_REPLY_SERIAL, _FIELD_DESTINATION, _FIELD_SIGNATURE = 5, 6, 8
_MAX_MESSAGE = 128 * 1024 * 1024
log = logging.getLogger(__name__)
_ALIGNMENT = {"y": 1, "b": 4, "n": 2, "q": 2, "i": 4, "u": 4, "x": 8, "t": 8, "d": 8, "h": 4,
              "s": 4, "o": 4, "g": 1, "a": 4, "(": 8, "{": 8, "v": 1}
_FIXED_FORMATS = {"y": "B", "b": "I", "n": "h", "q": "H", "i": "i", "u": "I", "x": "q", "t": "Q",
                  "d": "d", "h": "I"}


class DBusConnectionError(OSError):
    """The address is unusable, the peer refused us, or the connection broke."""


class CallFailed(Exception):
    """A method call got no usable reply: an error reply, a timeout or a lost connection."""

    def __init__(self, name: str, message: str = ""):
        super().__init__(f"{name}: {message}" if message else name)
        self.name = name


CALL_TIMED_OUT = "org.freedesktop.DBus.Error.Timeout"
CONNECTION_LOST = "org.freedesktop.DBus.Error.Disconnected"
MALFORMED_REPLY = "osworld.Error.MalformedReply"  # a reply whose body does not follow its signature


class MethodCall(NamedTuple):  # a NamedTuple: thousands are made per tree dump
    path: str
    interface: str
    member: str
    signature: str = ""
    args: tuple = ()
    destination: str | None = None


# ---------------------------------------------------------------- marshalling


def _pad(offset: int, alignment: int) -> int:
    return (alignment - offset % alignment) % alignment


def split_signature(signature: str) -> list[str]:
    """Splits a signature into its complete types: 'a{sv}(ii)s' -> ['a{sv}', '(ii)', 's']."""
    types, index = [], 0
    while index < len(signature):
        end = _complete_type_end(signature, index)
        types.append(signature[index:end])
        index = end
    return types


def _complete_type_end(signature: str, index: int) -> int:
    code = signature[index]
    if code == "a":
        return _complete_type_end(signature, index + 1)
    if code in "({":
        closing, depth = ")" if code == "(" else "}", 0
        for end in range(index, len(signature)):
            if signature[end] == code:
                depth += 1
            elif signature[end] == closing:
                depth -= 1
                if depth == 0:
                    return end + 1
        raise ValueError(f"unbalanced D-Bus signature {signature!r}")
    if code in _ALIGNMENT:
        return index + 1
    raise ValueError(f"unknown type code {code!r} in D-Bus signature {signature!r}")


class _Writer:
    """Marshals basic-typed values (little-endian), which is all AT-SPI arguments need."""

    def __init__(self):
        self.data = bytearray()

    def align(self, alignment: int) -> None:
        self.data += b"\0" * _pad(len(self.data), alignment)

    def write(self, type_code: str, value: Any) -> None:
        if type_code in ("s", "o"):
            encoded = value.encode()
            self.align(4)
            self.data += struct.pack("<I", len(encoded)) + encoded + b"\0"
        elif type_code == "g":
            encoded = value.encode()
            self.data += bytes((len(encoded),)) + encoded + b"\0"
        elif type_code in _FIXED_FORMATS:
            self.align(_ALIGNMENT[type_code])
            self.data += struct.pack("<" + _FIXED_FORMATS[type_code], value)
        else:
            raise ValueError(f"cannot marshal D-Bus type {type_code!r}: only basic types are supported")


def encode_call(call: MethodCall, serial: int) -> bytes:
    """The wire bytes of `call` (little-endian) with the given serial number."""
    body = _encode_body(call.signature, call.args)
    fields = _constant_fields(call.interface, call.member, call.signature, call.destination)
    # The path goes last so that the other fields can be encoded once per kind of call.
    fields += b"\0" * _pad(len(fields), 8) + _string_field(_FIELD_PATH, "o", call.path)
    header = struct.pack("<cBBBIII", b"l", METHOD_CALL, 0, 1, len(body), serial, len(fields)) + fields
    return header + b"\0" * _pad(len(header), 8) + body


def _string_field(code: int, type_code: str, value: str) -> bytes:
    """One header field (a `(yv)` struct at an 8-aligned offset) holding a string."""
    encoded = value.encode()
    if type_code == "g":
        return struct.pack("<BB1sxB", code, 1, b"g", len(encoded)) + encoded + b"\0"
    return struct.pack("<BB1sxI", code, 1, type_code.encode(), len(encoded)) + encoded + b"\0"


@functools.lru_cache(maxsize=512)
def _constant_fields(interface: str, member: str, signature: str, destination: str | None) -> bytes:
    fields = [(_FIELD_MEMBER, "s", member)]
    if interface:
        fields.append((_FIELD_INTERFACE, "s", interface))
    if destination:
        fields.append((_FIELD_DESTINATION, "s", destination))
    if signature:
        fields.append((_FIELD_SIGNATURE, "g", signature))
    encoded = b""
    for code, type_code, value in fields:
        encoded += b"\0" * _pad(len(encoded), 8) + _string_field(code, type_code, value)
    return encoded


def _encode_body(signature: str, args: tuple) -> bytes:
    return _body_encoder(signature)(args)


@functools.lru_cache(maxsize=256)
def _body_encoder(signature: str) -> Callable[[tuple], bytes]:
    types = split_signature(signature)
    if all(code in "iub" for code in types):  # no padding between 4-byte values
        packer = struct.Struct("<" + "".join(_FIXED_FORMATS[code] for code in types))
        return lambda args: packer.pack(*args)

    def encode(args: tuple) -> bytes:
        if len(args) != len(types):
            raise ValueError(f"D-Bus signature {signature!r} does not match {len(args)} arguments")
        body = _Writer()
        for type_code, value in zip(types, args, strict=True):
            body.write(type_code, value)
        return bytes(body.data)
    return encode


Reader = Callable[[bytes, int], tuple[Any, int]]
_readers: dict[tuple[str, str], Reader] = {}


def _reader(type_code: str, prefix: str) -> Reader:
    """A parser for one complete type: (buffer, offset) -> (value, next offset). Cached."""
    key = (type_code, prefix)
    if key not in _readers:
        _readers[key] = _build_reader(type_code, prefix)
    return _readers[key]


def _build_reader(type_code: str, prefix: str) -> Reader:
    code = type_code[0]
    if code in _FIXED_FORMATS:
        unpack, size, alignment = struct.Struct(prefix + _FIXED_FORMATS[code]).unpack_from, \
            struct.calcsize(_FIXED_FORMATS[code]), _ALIGNMENT[code]
        as_bool = code == "b"

        def read_fixed(data, offset):
            offset += (alignment - offset % alignment) % alignment
            value = unpack(data, offset)[0]
            return (bool(value) if as_bool else value), offset + size
        return read_fixed

    if code in "so":
        unpack_length = struct.Struct(prefix + "I").unpack_from

        def read_string(data, offset):
            offset += (4 - offset % 4) % 4
            length = unpack_length(data, offset)[0]
            start = offset + 4
            return data[start:start + length].decode("utf-8", "replace"), start + length + 1
        return read_string

    if code == "g":
        return _read_signature

    if code == "v":
        def read_variant(data, offset):
            length = data[offset]
            signature = data[offset + 1:offset + 1 + length].decode("ascii")
            read = _readers.get((signature, prefix)) or _reader(signature, prefix)
            return read(data, offset + 2 + length)
        return read_variant

    if code == "(" and all(member in "iub" for member in type_code[1:-1]):
        # Structs of 4-byte values (like extents) have no inner padding: one unpack.
        unpack_struct = struct.Struct(prefix + "".join(_FIXED_FORMATS[c] for c in type_code[1:-1]))
        size = unpack_struct.size

        def read_fixed_struct(data, offset):
            offset += -offset & 7
            return unpack_struct.unpack_from(data, offset), offset + size
        return read_fixed_struct

    if code == "(":
        members = [_reader(member, prefix) for member in split_signature(type_code[1:-1])]

        def read_struct(data, offset):
            offset += (8 - offset % 8) % 8
            values = []
            for read in members:
                value, offset = read(data, offset)
                values.append(value)
            return tuple(values), offset
        return read_struct

    if code == "a":
        element = type_code[1:]
        unpack_length = struct.Struct(prefix + "I").unpack_from
        element_alignment = _ALIGNMENT[element[0]]
        if element[0] == "{":
            key_type, value_type = split_signature(element[1:-1])
            read_key, read_value = _reader(key_type, prefix), _reader(value_type, prefix)
            string_keys = key_type == "s"

            def read_dict(data, offset):
                offset += -offset & 3
                length = unpack_length(data, offset)[0]
                offset += 4
                offset += -offset & 7
                end, result = offset + length, {}
                while offset < end:
                    offset += -offset & 7
                    if string_keys:  # inlined: nearly every dict AT-SPI sends has string keys
                        start = offset + 4
                        offset = start + unpack_length(data, offset)[0]
                        key = data[start:offset].decode("utf-8", "replace")
                        offset += 1
                    else:
                        key, offset = read_key(data, offset)
                    result[key], offset = read_value(data, offset)
                return result, end
            return read_dict

        if element in ("s", "o"):  # interface lists and the like: the hot path
            def read_strings(data, offset):
                offset += -offset & 3
                end = offset + 4 + unpack_length(data, offset)[0]
                offset += 4
                values = []
                while offset < end:
                    offset += -offset & 3
                    start = offset + 4
                    stop = start + unpack_length(data, offset)[0]
                    values.append(data[start:stop].decode("utf-8", "replace"))
                    offset = stop + 1
                return values, end
            return read_strings

        if element in ("u", "i"):
            code_char = _FIXED_FORMATS[element]

            def read_numbers(data, offset):
                offset += -offset & 3
                length = unpack_length(data, offset)[0]
                values = struct.unpack_from(f"{prefix}{length // 4}{code_char}", data, offset + 4)
                return list(values), offset + 4 + length
            return read_numbers

        read_element = _reader(element, prefix)

        def read_array(data, offset):
            offset += (4 - offset % 4) % 4
            length = unpack_length(data, offset)[0]
            offset += 4
            offset += (element_alignment - offset % element_alignment) % element_alignment
            end, values = offset + length, []
            while offset < end:
                value, offset = read_element(data, offset)
                values.append(value)
            return values, end
        return read_array

    raise ValueError(f"cannot parse D-Bus type {type_code!r}")


def _read_signature(data: bytes, offset: int) -> tuple[str, int]:
    length = data[offset]
    return data[offset + 1:offset + 1 + length].decode("ascii"), offset + length + 2


def decode_body(data: bytes, offset: int, signature: str, prefix: str) -> tuple:
    return _body_reader(signature, prefix)(data, offset)


@functools.lru_cache(maxsize=256)
def _body_reader(signature: str, prefix: str) -> Callable[[bytes, int], tuple]:
    readers = [_reader(type_code, prefix) for type_code in split_signature(signature)]

    def read_body(data, offset):
        values = []
        for read in readers:
            value, offset = read(data, offset)
            values.append(value)
        return tuple(values)
    return read_body


class Message(NamedTuple):
    kind: int
    serial: int
    reply_serial: int | None
    error_name: str | None
    body: tuple


_BODY_ERRORS = (ValueError, IndexError, struct.error)
_UINT32 = {"<": struct.Struct("<I").unpack_from, ">": struct.Struct(">I").unpack_from}
_WANTED_FIELDS = (_FIELD_ERROR_NAME, _FIELD_REPLY_SERIAL, _FIELD_SIGNATURE)


def decode_message(data: bytes) -> Message:
    """Parses one complete message (as framed by `message_length`).

    A body that does not follow its own signature becomes an ERROR reply named
    MALFORMED_REPLY to the call it answers: the header frames the message, so the
    connection stays usable. (Chromium sends such bodies: its atk-bridge answers
    Properties.GetAll with a dictionary entry that lacks its variant.)
    """
    prefix = "<" if data[0:1] == b"l" else ">"
    uint32 = _UINT32[prefix]
    kind = data[1]
    serial, fields_length = uint32(data, 8)[0], uint32(data, 12)[0]
    end = 16 + fields_length
    if data[16] == _FIELD_REPLY_SERIAL and data[24] == _FIELD_SIGNATURE and end == 30 + data[28]:
        # The usual reply from a direct connection: (reply serial, signature) only.
        signature = data[29:29 + data[28]].decode("ascii")
        reply_serial = uint32(data, 20)[0]
        try:
            body = decode_body(data, end + (-end & 7), signature, prefix)
        except _BODY_ERRORS as error:
            return _malformed(serial, reply_serial, signature, error)
        return Message(kind, serial, reply_serial, None, body)
    header: dict[int, Any] = {}
    offset = 16
    # Header fields are 8-aligned (code, variant) structs whose variant type is one
    # character, so every value starts at a 4-aligned offset.
    while offset < end:
        offset += -offset & 7
        code, type_code = data[offset], chr(data[offset + 2])
        offset += 4
        if type_code in "so":
            length = uint32(data, offset)[0]
            if code in _WANTED_FIELDS:
                header[code] = data[offset + 4:offset + 4 + length].decode("utf-8", "replace")
            offset += 5 + length
        elif type_code == "g":
            length = data[offset]
            header[code] = data[offset + 1:offset + 1 + length].decode("ascii")
            offset += 2 + length
        else:
            header[code], offset = _reader(type_code, prefix)(data, offset)
    signature = header.get(_FIELD_SIGNATURE, "")
    try:
        body = decode_body(data, end + (-end & 7), signature, prefix)
    except _BODY_ERRORS as error:
        return _malformed(serial, header.get(_FIELD_REPLY_SERIAL), signature, error)
    return Message(kind, serial, header.get(_FIELD_REPLY_SERIAL), header.get(_FIELD_ERROR_NAME), body)


def _malformed(serial: int, reply_serial: int | None, signature: str, error: Exception) -> Message:
    return Message(ERROR, serial, reply_serial, MALFORMED_REPLY,
                   (f"the reply's body does not match its signature {signature!r}: {error}",))


def message_length(data: bytes | bytearray, offset: int) -> int | None:
    """Total length of the message starting at `offset`, or None until its header is in."""
    if len(data) - offset < 16:
        return None
    prefix = "<" if data[offset:offset + 1] == b"l" else ">"
    body_length, _, fields_length = struct.unpack_from(prefix + "III", data, offset + 4)
    total = 16 + fields_length + _pad(16 + fields_length, 8) + body_length
    if total > _MAX_MESSAGE:
        raise DBusConnectionError(f"refusing a {total}-byte D-Bus message")
    return total


# ---------------------------------------------------------------- connections


def _socket_addresses(address: str) -> list[str | bytes]:
    """Socket addresses for a D-Bus address string ('unix:path=...;unix:abstract=...')."""
    result: list[str | bytes] = []
    for entry in address.split(";"):
        transport, _, options = entry.partition(":")
        if transport != "unix":
            continue
        values = dict(option.split("=", 1) for option in options.split(",") if "=" in option)
        if "path" in values:
            result.append(unquote(values["path"]))
        elif "abstract" in values:
            result.append(b"\0" + unquote(values["abstract"]).encode())
    if not result:
        raise DBusConnectionError(f"no usable unix socket in D-Bus address {address!r}")
    return result


class Connection:
    """One authenticated D-Bus connection: to a bus (with Hello) or peer to peer."""

    def __init__(self, address: str, *, bus: bool, timeout: float):
        self.address = address
        self.sock = self._connect(address, timeout)
        self.unique_name: str | None = None
        self._serial = 0
        self._outgoing = bytearray()
        self._incoming = bytearray()
        try:
            self._authenticate(timeout)
            self.sock.setblocking(False)
            if bus:
                (self.unique_name,) = self.call(
                    MethodCall("/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello",
                               destination="org.freedesktop.DBus"), timeout)
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _connect(address: str, timeout: float) -> socket.socket:
        errors = []
        for target in _socket_addresses(address):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            try:
                sock.connect(target)
                return sock
            except OSError as error:
                sock.close()
                errors.append(f"{target!r}: {error}")
        raise DBusConnectionError(f"cannot connect to D-Bus address {address!r}: {'; '.join(errors)}")

    def _authenticate(self, timeout: float) -> None:
        uid = str(os.geteuid()).encode().hex()
        reply = b""
        try:
            self.sock.sendall(b"\0AUTH EXTERNAL " + uid.encode() + b"\r\n")
            while not reply.endswith(b"\r\n"):
                chunk = self.sock.recv(512)
                if not chunk:
                    break
                reply += chunk
            if reply.startswith(b"OK "):
                self.sock.sendall(b"BEGIN\r\n")
        except TimeoutError as error:
            raise DBusConnectionError(f"{self.address}: no answer to authentication within {timeout} s") from error
        except OSError as error:  # e.g. the peer exited meanwhile
            raise DBusConnectionError(f"{self.address}: authentication failed: {error}") from error
        if not reply.startswith(b"OK "):
            raise DBusConnectionError(f"{self.address}: EXTERNAL authentication refused: {reply!r}")

    def fileno(self) -> int:
        return self.sock.fileno()

    def close(self) -> None:
        self.sock.close()

    def queue(self, call: MethodCall) -> int:
        """Adds `call` to the outgoing buffer; returns its serial. `flush` sends it."""
        self._serial += 1
        self._outgoing += encode_call(call, self._serial)
        return self._serial

    @property
    def has_outgoing(self) -> bool:
        return bool(self._outgoing)

    def flush(self) -> None:
        """Sends as much of the outgoing buffer as the socket takes without blocking."""
        while self._outgoing:
            try:
                sent = self.sock.send(self._outgoing)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                raise DBusConnectionError(f"{self.address}: {error}") from error
            del self._outgoing[:sent]

    def receive(self) -> list[Message]:
        """Reads what is available without blocking and returns the complete messages."""
        while True:
            try:
                chunk = self.sock.recv(1 << 20)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as error:
                raise DBusConnectionError(f"{self.address}: {error}") from error
            if not chunk:
                raise DBusConnectionError(f"{self.address}: connection closed by the peer")
            self._incoming += chunk
            if len(chunk) < 1 << 20:
                break
        messages, offset = [], 0
        try:
            while (length := message_length(self._incoming, offset)) is not None \
                    and len(self._incoming) - offset >= length:
                messages.append(decode_message(bytes(self._incoming[offset:offset + length])))
                offset += length
        except (ValueError, IndexError, struct.error) as error:
            raise DBusConnectionError(f"{self.address}: malformed message: {error}") from error
        del self._incoming[:offset]
        return messages

    def call(self, call: MethodCall, timeout: float) -> tuple:
        """One blocking call (for setup); raises CallFailed on an error reply or timeout."""
        serial = self.queue(call)
        deadline = time.monotonic() + timeout
        while True:  # blocks in select() for the reply, not a poll
            self.flush()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CallFailed(CALL_TIMED_OUT, f"{call.interface}.{call.member} on {self.address}")
            select.select([self], [self] if self.has_outgoing else [], [], remaining)
            for message in self.receive():
                if message.reply_serial == serial:
                    if message.kind == ERROR:
                        raise CallFailed(message.error_name or "error", str(message.body[0]) if message.body else "")
                    return message.body


# ---------------------------------------------------------------- pipelining

Result = Any  # a reply body (tuple), or a CallFailed instance
Task = Generator[list[MethodCall], list[Result], None]
Peer = tuple[Connection, "str | None"]  # a connection and the destination on it


@dataclass(eq=False)
class _Batch:
    """The calls one task yielded, and their results as they come in."""
    task: Task
    peer: Peer
    timeout: float
    results: list
    remaining: int


@dataclass
class _PeerProgress:
    waiting: int = 0
    last_progress: float = 0.0
    timeout: float = 0.0


class Pipeline:
    """Runs tasks that yield lists of calls and are resumed with their results.

    Every yielded call is written at once, so thousands are in flight together. A peer
    that has calls waiting but sends no reply at all for its task's timeout is marked
    unresponsive: its waiting calls fail, and later calls to it fail at once. (A busy
    peer working through a long queue keeps replying, so it is never cut off.)
    """

    def __init__(self, call_timeout: float, deadline: float):
        self.call_timeout = call_timeout
        self.deadline = deadline
        self.unresponsive: set[Peer] = set()
        self._ready: collections.deque = collections.deque()  # (batch, results or None to start)
        self._waiting: dict[tuple[Connection, int], tuple[_Batch, int]] = {}
        self._peers: dict[Peer, _PeerProgress] = {}
        self._connections: set[Connection] = set()

    def spawn(self, connection: Connection, task: Task, destination: str | None = None,
              timeout: float | None = None) -> None:
        """Starts `task`; its calls go to `destination` over `connection`."""
        self._connections.add(connection)
        self._ready.append((_Batch(task, (connection, destination), timeout or self.call_timeout, [], 0), None))

    def run(self) -> None:
        while self._ready or self._waiting:
            self._resume_ready()
            if not self._waiting:
                continue
            now = time.monotonic()
            if now >= self.deadline:
                self._fail_peers([peer for peer, progress in self._peers.items() if progress.waiting])
                continue
            waiting = [(peer, progress) for peer, progress in self._peers.items() if progress.waiting]
            wake = min([self.deadline] + [progress.last_progress + progress.timeout for _, progress in waiting])
            busy = list({peer[0] for peer, _ in waiting})
            writers = [connection for connection in busy if connection.has_outgoing]
            readable, writable, _ = select.select(busy, writers, [], max(0.0, wake - now))
            for connection in writable:
                self._guard(connection, connection.flush)
            for connection in readable:
                self._guard(connection, functools.partial(self._receive, connection))
            now = time.monotonic()
            self._fail_peers([peer for peer, progress in waiting
                              if progress.waiting and now - progress.last_progress > progress.timeout])

    def _resume_ready(self) -> None:
        while self._ready:
            batch, results = self._ready.popleft()
            try:
                calls = batch.task.send(results) if results is not None else next(batch.task)
            except StopIteration:
                continue
            except Exception:  # a reply shaped unlike the spec: lose that task, not the run
                log.exception("a D-Bus task failed on a reply from %s", batch.peer[1] or batch.peer[0].address)
                continue
            self._submit(_Batch(batch.task, batch.peer, batch.timeout, [None] * len(calls), len(calls)), calls)
        for connection in list(self._connections):
            if connection.has_outgoing:
                self._guard(connection, connection.flush)

    def _submit(self, batch: _Batch, calls: list[MethodCall]) -> None:
        connection, destination = batch.peer
        if batch.peer in self.unresponsive or not calls:
            failure = CallFailed(CALL_TIMED_OUT, f"{destination or connection.address} is unresponsive")
            self._ready.append((batch, [failure] * len(calls)))
            return
        progress = self._peers.setdefault(batch.peer, _PeerProgress())
        if not progress.waiting:
            progress.last_progress = time.monotonic()
        progress.timeout = batch.timeout
        progress.waiting += len(calls)
        for index, call in enumerate(calls):
            if call.destination != destination:
                call = call._replace(destination=destination)
            self._waiting[(connection, connection.queue(call))] = (batch, index)

    def _resolve(self, key: tuple[Connection, int], result: Result) -> None:
        batch, index = self._waiting.pop(key)
        progress = self._peers[batch.peer]
        progress.waiting -= 1
        progress.last_progress = time.monotonic()
        batch.results[index] = result
        batch.remaining -= 1
        if batch.remaining == 0:
            self._ready.append((batch, batch.results))

    def _receive(self, connection: Connection) -> None:
        self._deliver(connection, connection.receive())

    def _deliver(self, connection: Connection, messages: Iterable[Message]) -> None:
        for message in messages:
            key = (connection, message.reply_serial)
            if message.kind not in (METHOD_RETURN, ERROR) or key not in self._waiting:
                continue
            if message.kind == ERROR:
                text = str(message.body[0]) if message.body else ""
                self._resolve(key, CallFailed(message.error_name or "error", text))
            else:
                self._resolve(key, message.body)

    def _guard(self, connection: Connection, action: Callable[[], None]) -> None:
        try:
            action()
        except DBusConnectionError:
            self._connections.discard(connection)
            self._fail_peers([peer for peer in self._peers if peer[0] is connection], CONNECTION_LOST)

    def _fail_peers(self, peers: list[Peer], reason: str = CALL_TIMED_OUT) -> None:
        if not peers:
            return
        self.unresponsive.update(peers)
        for key, (batch, _) in list(self._waiting.items()):
            if batch.peer in self.unresponsive:
                self._resolve(key, CallFailed(reason, "no reply"))
