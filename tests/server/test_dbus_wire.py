"""dbus_wire: messages captured from a real AT-SPI application (mousepad, GTK 3 with
atk-bridge) decode to the right values, calls survive a round trip, and the pipeline
keeps answering peers apart from silent ones."""
from __future__ import annotations

import os
import socket
import struct
import tempfile
import threading
import time

import pytest

from desktop_env.server import dbus_wire
from desktop_env.server.dbus_wire import CallFailed, Connection, MethodCall, Pipeline

# Replies captured from mousepad over its direct AT-SPI connection.
GET_STATE = "6c0201010c000000020000001000000005017500020000000801670002617500080000000001204300000000"
GET_CHILDREN = ("6c020101370000000300000013000000050175000300000008016700056128736f290000000000002f0000000000"
                "0000040000003a312e32000000001e0000002f6f72672f613131792f61747370692f61636365737369626c652f31"
                "323100")
GET_EXTENTS = ("6c0201011000000004000000140000000501750004000000080167000628696969692900000000007b0200001b01"
               "00008a02000002020000")
GET_ALL = ("6c02010141010000050000001300000005017500050000000801670005617b73767d000000000000390100000000"
           "000006000000506172656e74000428736f290000000000000000040000003a312e32000000001f0000002f6f72672f"
           "613131792f61747370692f61636365737369626c652f726f6f7400040000004e616d650001730015000000556e7469"
           "746c65642031202d204d6f7573657061640000000b0000004465736372697074696f6e000173000000000000000000"
           "00000000000a000000417474726962757465730005617b73737d000000330000000000000007000000746f6f6c6b69"
           "74000300000067746b00000000000b00000077696e646f772d7479706500060000006e6f726d616c000000000000"
           "0a0000004368696c64436f756e7400016900000001000000060000004c6f63616c6500017300000007000000432e"
           "5554462d3800000000000c00000041636365737369626c654964000173000000000000")
GET_INTERFACES = ("6c020101620000000600000010000000050175000600000008016700026173005e000000190000006f72672e61"
                  "3131792e61747370692e41636365737369626c65000000180000006f72672e613131792e61747370692e436f"
                  "6d706f6e656e7400000000190000006f72672e613131792e61747370692e436f6c6c656374696f6e00")
# Chromium's answer to Properties.GetAll on Value: the MinimumValue entry lacks its variant.
CHROMIUM_VALUE_GET_ALL = ("6c020101980000003b00000013000000050175003b0000000801670005617b73767d000000000000900000000000"
                          "00000400000054657874000173000000000000000000000000000c0000004d6178696d756d56616c75650001"
                          "64000000000000000000000000000c00000043757272656e7456616c75650001640000000000000000000000"
                          "00000c0000004d696e696d756d56616c75650000000000000000100000004d696e696d756d496e6372656d65"
                          "6e74000164000000000000000000")
UNKNOWN_METHOD = ("6c0301015f000000070000004700000004017300280000006f72672e667265656465736b746f702e4442757"
                  "32e4572726f722e556e6b6e6f776e4d6574686f640000000000000000050175000700000008016700017300"
                  "005a0000004d6574686f642022476574526f6c65222077697468207369676e6174757265202222206f6e2069"
                  "6e7465726661636520226f72672e613131792e61747370692e41636365737369626c652220646f65736e2774"
                  "2065786973740a00")


def decode(hex_message: str) -> dbus_wire.Message:
    data = bytes.fromhex(hex_message)
    assert dbus_wire.message_length(data, 0) == len(data)
    return dbus_wire.decode_message(data)


def test_split_signature_into_complete_types():
    assert dbus_wire.split_signature("") == []
    assert dbus_wire.split_signature("a{sv}(ii)s") == ["a{sv}", "(ii)", "s"]
    assert dbus_wire.split_signature("a((so)(so)ias)u") == ["a((so)(so)ias)", "u"]
    with pytest.raises(ValueError):
        dbus_wire.split_signature("(ii")


def test_a_call_survives_encoding_and_decoding():
    call = MethodCall("/org/a11y/atspi/accessible/7", "org.a11y.atspi.Text", "GetText", "ii", (0, -1), ":1.42")
    message = dbus_wire.decode_message(dbus_wire.encode_call(call, 9))
    assert (message.kind, message.serial, message.body) == (dbus_wire.METHOD_CALL, 9, (0, -1))
    properties = MethodCall("/a", "org.freedesktop.DBus.Properties", "Get", "ss", ("org.a11y.atspi.Accessible", "Nämé"))
    assert dbus_wire.decode_message(dbus_wire.encode_call(properties, 10)).body == ("org.a11y.atspi.Accessible", "Nämé")
    with pytest.raises(ValueError):
        dbus_wire.encode_call(MethodCall("/a", "i.f", "M", "ss", ("one",)), 11)


def test_real_replies_decode_to_python_values():
    assert decode(GET_STATE).body == ([1126170880, 0],)
    assert decode(GET_STATE).reply_serial == 2
    assert decode(GET_CHILDREN).body == ([(":1.2", "/org/a11y/atspi/accessible/121")],)
    assert decode(GET_EXTENTS).body == ((635, 283, 650, 514),)
    assert decode(GET_INTERFACES).body == (["org.a11y.atspi.Accessible", "org.a11y.atspi.Component",
                                            "org.a11y.atspi.Collection"],)
    (properties,) = decode(GET_ALL).body
    assert properties["Name"] == "Untitled 1 - Mousepad"
    assert properties["ChildCount"] == 1
    assert properties["Attributes"] == {"toolkit": "gtk", "window-type": "normal"}
    assert properties["Parent"] == (":1.2", "/org/a11y/atspi/accessible/root")


def test_an_error_reply_carries_its_name_and_message():
    message = decode(UNKNOWN_METHOD)
    assert message.kind == dbus_wire.ERROR
    assert message.error_name == "org.freedesktop.DBus.Error.UnknownMethod"
    assert message.body[0].startswith('Method "GetRole"')


def test_a_body_unlike_its_signature_is_an_error_reply_to_its_call():
    message = decode(CHROMIUM_VALUE_GET_ALL)
    assert (message.kind, message.reply_serial) == (dbus_wire.ERROR, 0x3b)
    assert message.error_name == dbus_wire.MALFORMED_REPLY
    assert "a{sv}" in message.body[0]


def test_message_length_waits_for_a_whole_header():
    data = bytes.fromhex(GET_STATE) + bytes.fromhex(GET_EXTENTS)
    assert dbus_wire.message_length(data[:10], 0) is None
    first = dbus_wire.message_length(data, 0)
    assert dbus_wire.message_length(data, first) == len(data) - first


def test_addresses_name_unix_sockets():
    assert dbus_wire._socket_addresses("unix:path=/run/user/0/bus,guid=ab") == ["/run/user/0/bus"]
    assert dbus_wire._socket_addresses("unix:abstract=/tmp/dbus-x%2cy") == [b"\0/tmp/dbus-x,y"]
    with pytest.raises(dbus_wire.DBusConnectionError):
        dbus_wire._socket_addresses("tcp:host=localhost,port=1")


# ---------------------------------------------------------------- the pipeline


def method_return(serial: int, reply_serial: int, value: int | None) -> bytes:
    body = b"" if value is None else struct.pack("<i", value)  # None: no int where the signature says one
    fields = struct.pack("<BB1sxI", 5, 1, b"u", reply_serial) + struct.pack("<BB1sxB", 8, 1, b"g", 1) + b"i\0"
    header = struct.pack("<cBBBIII", b"l", dbus_wire.METHOD_RETURN, 0, 1, len(body), serial, len(fields)) + fields
    return header + b"\0" * (-len(header) % 8) + body


class FakePeer:
    """A peer-to-peer D-Bus server whose one method doubles its int argument: after
    `delay` seconds, and never for negative numbers (a hung application)."""

    def __init__(self, delay: float = 0.0, malformed: frozenset[int] = frozenset()):
        self.delay = delay
        self.malformed = malformed  # arguments answered with a body that lacks its int
        self.directory = tempfile.mkdtemp()
        self.path = os.path.join(self.directory, "peer")
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(1)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        return f"unix:path={self.path}"

    def serve(self) -> None:
        connection, _ = self.server.accept()
        buffer = b""
        while b"BEGIN\r\n" not in buffer:
            buffer += connection.recv(4096)
            if b"AUTH" in buffer and b"OK" not in buffer:
                connection.sendall(b"OK 0123456789abcdef0123456789abcdef\r\n")
                buffer += b"OK"
        buffer = buffer.split(b"BEGIN\r\n", 1)[1]
        serial = 1000
        while True:
            length = dbus_wire.message_length(buffer, 0)
            if length is None or len(buffer) < length:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                buffer += chunk
                continue
            call, buffer = dbus_wire.decode_message(buffer[:length]), buffer[length:]
            (value,) = call.body
            if value >= 0:
                time.sleep(self.delay)
                serial += 1
                connection.sendall(method_return(serial, call.serial, None if value in self.malformed else value * 2))


def doubling(values: list[int], results: dict) -> dbus_wire.Task:
    replies = yield [MethodCall("/", "test.Peer", "Double", "i", (value,)) for value in values]
    results["replies"] = replies


def run_doubling(peer: FakePeer, values: list[int], call_timeout: float = 2) -> tuple[list, Pipeline, Connection]:
    """Asks `peer` to double every value in one batch; (replies, the pipeline, the connection)."""
    connection = Connection(peer.address, bus=False, timeout=2)
    results: dict = {}
    pipeline = Pipeline(call_timeout=call_timeout, deadline=time.monotonic() + 10)
    pipeline.spawn(connection, doubling(values, results))
    pipeline.run()
    connection.close()
    return results["replies"], pipeline, connection


def test_the_pipeline_keeps_many_calls_in_flight():
    replies, pipeline, _ = run_doubling(FakePeer(), list(range(2000)))
    assert replies == [(value * 2,) for value in range(2000)]
    assert not pipeline.unresponsive


def test_a_malformed_reply_fails_its_call_only():
    replies, pipeline, _ = run_doubling(FakePeer(malformed=frozenset({3})), list(range(6)))
    assert isinstance(replies[3], CallFailed) and replies[3].name == dbus_wire.MALFORMED_REPLY
    assert replies[:3] + replies[4:] == [(0,), (2,), (4,), (8,), (10,)]
    assert not pipeline.unresponsive


def test_a_silent_peer_is_given_up_after_its_timeout():
    started = time.monotonic()
    (first, second), pipeline, connection = run_doubling(FakePeer(), [1, -1], call_timeout=0.3)
    assert time.monotonic() - started < 2
    assert first == (2,)
    assert isinstance(second, CallFailed) and second.name == dbus_wire.CALL_TIMED_OUT
    assert (connection, None) in pipeline.unresponsive


def test_a_slow_peer_that_keeps_answering_is_not_cut_off():
    # 20 replies take about 1 s in all, more than the timeout, but one comes every 50 ms.
    replies, _, _ = run_doubling(FakePeer(delay=0.05), list(range(20)), call_timeout=0.3)
    assert replies == [(value * 2,) for value in range(20)]
