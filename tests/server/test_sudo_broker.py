"""The sudo broker (desktop_env/server/sudo_broker.py) answers every malformed request with an error.

The broker runs as root inside a desktop; here its connection handler serves one end of a
socket pair in a thread, as the broker's accept loop would, with this test's uid among the
sudoers. A request the broker cannot use must get {"error": ...} naming the field, never a
dead thread and a silent hang-up.
"""
from __future__ import annotations

import json
import os
import socket
import threading

import pytest

from desktop_env.server import sudo_broker

PASSWORD = "password"


def ask(monkeypatch, *requests: object, fds: bool = True) -> list[dict | None]:
    """Sends `requests` (each a line; the last with stdin, stdout and stderr attached) and returns the replies
    (None where the broker hung up without one)."""
    monkeypatch.setattr(sudo_broker, "SUDOERS", (*sudo_broker.SUDOERS, os.getuid()))
    client, broker = socket.socketpair()
    thread = threading.Thread(target=sudo_broker.handle, args=(broker, PASSWORD), daemon=True)
    thread.start()
    replies: list[dict | None] = []
    with client, open(os.devnull, "rb") as stdin, open(os.devnull, "wb") as out:
        client.settimeout(10)
        reader = client.makefile("rb")
        for i, request in enumerate(requests):
            line = (request if isinstance(request, bytes) else json.dumps(request).encode()) + b"\n"
            if fds and i == len(requests) - 1:
                socket.send_fds(client, [line], [stdin.fileno(), out.fileno(), out.fileno()])
            else:
                client.sendall(line)
            answer = reader.readline()
            replies.append(json.loads(answer) if answer else None)
    thread.join(10)
    assert not thread.is_alive()
    return replies


AUTH = {"op": "auth", "password": PASSWORD}


@pytest.mark.parametrize("field, value", [("env", ["PATH=/tmp"]), ("env", [1, 2]), ("set_env", ["A=1"]),
                                          ("argv", "true"), ("argv", [["true"]]), ("user", 0), ("cwd", ["/"])])
def test_a_run_request_with_a_field_of_the_wrong_type_gets_an_error_naming_it(monkeypatch, field, value):
    request = {"op": "run", "argv": ["true"], "user": "root", "cwd": "/", "env": {}, "set_env": {}, field: value}
    auth, reply = ask(monkeypatch, AUTH, request)
    assert auth == {"ok": True}
    assert set(reply) == {"error"} and field in reply["error"], reply


@pytest.mark.parametrize("line", [b"[1, 2]", b'"run"', b"{not json"])
def test_a_message_that_is_not_a_json_object_gets_an_error(monkeypatch, line):
    reply, = ask(monkeypatch, line, fds=False)
    assert set(reply) == {"error"}, reply


def test_a_well_formed_request_still_runs(monkeypatch):
    request = {"op": "run", "argv": ["true"], "user": f"#{os.getuid()}", "cwd": "/", "env": {"LANG": "C"}}
    if os.getuid() != 0:
        pytest.skip("running a command as another user needs root")
    assert ask(monkeypatch, AUTH, request) == [{"ok": True}, {"status": 0}]
