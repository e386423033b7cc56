"""The client's half of an RFB (VNC) stream, read message by message (RFC 6143), so the view server can
pass the viewer's framebuffer requests on and keep its input (keys, pointer, clipboard) for itself."""
from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import DesktopEnvError

SECURITY_NONE, SECURITY_VNC_AUTH = 1, 2


class RFBProtocolError(DesktopEnvError, ValueError):
    """The viewer sent something that is not RFB as this reader knows it; the message names the byte."""


@dataclass(frozen=True)
class KeyEvent:
    down: bool
    keysym: int


@dataclass(frozen=True)
class PointerEvent:
    buttons: int        # bit 0 left, 1 middle, 2 right, 3/4 wheel up/down, 5/6 wheel left/right
    x: int
    y: int


InputEvent = KeyEvent | PointerEvent

# Messages passed on to the VNC server: type -> (length of the fixed part, or a function of the head)
_FIXED = {0: 20, 3: 10, 150: 10, 250: 4}  # SetPixelFormat, FramebufferUpdateRequest, EnableContinuousUpdates, xvp


class ClientStream:
    """Feed it the viewer's bytes; it yields what to forward (bytes) and the viewer's input (events).
    Handshake bytes are forwarded as they are; key and pointer events and cut text never are."""

    def __init__(self) -> None:
        self._buffer = b""
        self._phase = "version"
        self._minor = 8

    def feed(self, data: bytes) -> Iterator[bytes | InputEvent]:
        self._buffer += data
        while True:
            item = self._next()
            if item is None:
                return
            yield item

    def _take(self, n: int) -> bytes | None:
        if len(self._buffer) < n:
            return None
        head, self._buffer = self._buffer[:n], self._buffer[n:]
        return head

    def _next(self) -> bytes | InputEvent | None:
        if self._phase == "version":
            version = self._take(12)
            if version is None:
                return None
            if not version.startswith(b"RFB 003.") or not version[8:11].isdigit():
                raise RFBProtocolError(f"the viewer's protocol version is {version!r}, not RFB 003.xxx")
            self._minor = int(version[8:11])
            self._phase = "security" if self._minor >= 7 else "init"
            return version
        if self._phase == "security":
            choice = self._take(1)
            if choice is None:
                return None
            if choice[0] not in (SECURITY_NONE, SECURITY_VNC_AUTH):
                raise RFBProtocolError(f"the viewer chose security type {choice[0]}, not None or VNC")
            self._phase = "auth" if choice[0] == SECURITY_VNC_AUTH else "init"
            return choice
        if self._phase == "auth":
            response = self._take(16)
            if response is not None:
                self._phase = "init"
            return response
        if self._phase == "init":
            shared = self._take(1)
            if shared is not None:
                self._phase = "messages"
            return shared
        return self._message()

    def _message(self) -> bytes | InputEvent | None:
        if not self._buffer:
            return None
        kind = self._buffer[0]
        if kind == 4:
            body = self._take(8)
            if body is None:
                return None
            down, keysym = struct.unpack(">BxxI", body[1:])
            return KeyEvent(bool(down), keysym)
        if kind == 5:
            body = self._take(6)
            if body is None:
                return None
            buttons, x, y = struct.unpack(">BHH", body[1:])
            return PointerEvent(buttons, x, y)
        length = self._length(kind)
        if length is None or len(self._buffer) < length:
            return None
        message = self._take(length)
        if kind == 6:  # ClientCutText: the viewer's clipboard stays the viewer's
            return b""
        return message

    def _length(self, kind: int) -> int | None:
        if kind in _FIXED:
            return _FIXED[kind]
        if kind == 2:  # SetEncodings
            return None if len(self._buffer) < 4 else 4 + 4 * struct.unpack(">H", self._buffer[2:4])[0]
        if kind == 6:  # ClientCutText; a negative length is the extended clipboard's, its size the absolute value
            return None if len(self._buffer) < 8 else 8 + abs(struct.unpack(">i", self._buffer[4:8])[0])
        if kind == 248:  # Fence
            return None if len(self._buffer) < 9 else 9 + self._buffer[8]
        if kind == 251:  # SetDesktopSize
            return None if len(self._buffer) < 8 else 8 + 16 * self._buffer[6]
        raise RFBProtocolError(f"the viewer sent RFB message type {kind}, which this view does not pass on")
