"""The server's side of WebSocket (RFC 6455) as far as the view needs it: the handshake's answer, and
binary frames read from a browser (masked, maybe fragmented) and written to it."""
from __future__ import annotations

import base64
import hashlib
import io
import struct
from collections.abc import Callable
from typing import IO

from ..errors import DesktopEnvError

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0, 1, 2, 8, 9, 10
MAX_FRAME = 1 << 20  # a viewer's messages are a few bytes; a megabyte is past anything honest


class WebSocketClosed(DesktopEnvError):
    """The browser closed the connection or broke the framing."""


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1(key.encode("ascii") + GUID).digest()).decode("ascii")


def _read(stream: io.BufferedIOBase | IO[bytes], n: int) -> bytes:
    data = stream.read(n)
    if data is None or len(data) < n:
        raise WebSocketClosed("the connection ended inside a frame")
    return data


def read_message(stream: io.BufferedIOBase | IO[bytes], send_pong: Callable[[bytes], None]) -> bytes:
    """The next data message's payload; pings are answered on the way."""
    payload = b""
    while True:
        first, second = _read(stream, 2)
        opcode, masked, length = first & 0x0F, second & 0x80, second & 0x7F
        if length == 126:
            length = struct.unpack(">H", _read(stream, 2))[0]
        elif length == 127:
            length = struct.unpack(">Q", _read(stream, 8))[0]
        if not masked:
            raise WebSocketClosed("a browser's frames must be masked")
        if length > MAX_FRAME:
            raise WebSocketClosed(f"a frame of {length} bytes is past the view's {MAX_FRAME}")
        mask = _read(stream, 4)
        data = bytes(b ^ mask[i % 4] for i, b in enumerate(_read(stream, length)))
        if opcode == OP_CLOSE:
            raise WebSocketClosed("the browser closed the view")
        if opcode == OP_PING:
            send_pong(data)
            continue
        if opcode == OP_PONG:
            continue
        payload += data
        if first & 0x80:
            return payload


def frame(payload: bytes, opcode: int = OP_BINARY) -> bytes:
    length = len(payload)
    if length < 126:
        head = struct.pack(">BB", 0x80 | opcode, length)
    elif length < 1 << 16:
        head = struct.pack(">BBH", 0x80 | opcode, 126, length)
    else:
        head = struct.pack(">BBQ", 0x80 | opcode, 127, length)
    return head + payload
