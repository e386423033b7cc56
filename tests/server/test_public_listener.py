"""A public listener (a TCP port a browser on the machine can reach) refuses what a web
page can make a browser send, and needs the token when one is set; OSWorld's own client
(python requests: json=, data= for /file, files= for uploads) keeps working."""
from __future__ import annotations

import json
import socket
import time

import pytest
import requests

from desktop_env.server import app
from desktop_env.server.access_policy import is_local_host_header
from desktop_env.server.httpd import Router, make_server
from desktop_env.server.state import ServerState
from tests.server.serverproc import raw_exchange, serve


def marker_command(server, name: str = "marker") -> tuple[dict, object]:
    marker = server.home / name
    return {"command": f"touch {marker}", "shell": True}, marker


def test_a_cross_site_text_plain_post_does_not_execute(public_server):
    body, marker = marker_command(public_server)
    response = public_server.post("/execute", data=json.dumps(body), headers={"Content-Type": "text/plain"})
    assert response.status_code == 415
    assert response.json()["status"] == "error"
    assert not marker.exists()


def test_a_form_post_with_an_origin_does_not_execute(public_server):
    body, marker = marker_command(public_server)
    response = public_server.post("/execute", data=body, headers={"Origin": "https://evil.example"})
    assert response.status_code == 403
    assert "Origin" in response.json()["message"]
    # Even JSON is refused when a page sent it.
    response = public_server.post("/execute", json=body, headers={"Origin": "null"})
    assert response.status_code == 403
    assert not marker.exists()


@pytest.mark.parametrize("headers", [
    {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}, {"Sec-Fetch-Mode": "no-cors"},
    {"Sec-Fetch-Mode": "navigate"}, {"Host": "evil.example"}, {"Host": "evil.example:5000"},
    {"Host": "127.0.0.1.nip.io"}, {"Host": "localhost.evil.example"},
])
def test_browser_and_rebinding_headers_are_refused(public_server, headers):
    body, marker = marker_command(public_server)
    response = public_server.post("/execute", json=body, headers=headers)
    assert response.status_code == 403, response.text
    assert response.json()["status"] == "error"
    assert not marker.exists()


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:5000", "127.0.0.1", "127.0.0.1:80", "[::1]:5000",
                                  "::1", "10.0.0.5:5000"])
def test_ip_literals_and_localhost_are_fine_hosts(public_server, host):
    assert is_local_host_header(host)
    response = public_server.get("/platform", headers={"Host": host, "Sec-Fetch-Site": "same-origin"})
    assert response.status_code == 200


def test_a_refused_request_leaves_the_connection_usable(public_server):
    with public_server.connect() as sock:
        responses = raw_exchange(sock, b"POST /execute HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://a.example\r\n"
                                       b"Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}"
                                       b"GET /platform HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert [status for status, _, _ in responses] == [403, 200]


def test_osworld_style_client_calls_are_accepted(public_server):
    home = public_server.home
    session = requests.Session()  # as OSWorld's controllers: no Origin, no Sec-Fetch-*
    url = public_server.url
    result = session.post(url + "/execute", json={"command": ["echo", "hi"], "shell": False}, timeout=30).json()
    assert result["output"] == "hi\n"
    # setup controller style: a JSON string with an explicit header
    result = session.post(url + "/setup/execute", data=json.dumps({"command": "echo $HOME", "shell": True}),
                          headers={"Content-Type": "application/json"}, timeout=30).json()
    assert result["output"] == f"{home}\n"
    upload = session.post(url + "/setup/upload", data={"file_path": str(home / "up.txt")},
                          files={"file_data": ("up.txt", b"uploaded")}, timeout=30)
    assert upload.status_code == 200, upload.text
    assert session.post(url + "/file", data={"file_path": str(home / "up.txt")}, timeout=30).content == b"uploaded"
    tree = session.post(url + "/list_directory", json={"path": str(home)}, timeout=30).json()["directory_tree"]
    assert {"type": "file", "name": "up.txt"} in tree["children"]
    assert session.post(url + "/desktop_path", timeout=30).status_code == 200
    # /window_size takes a form; without an X server it fails further on, but is not refused.
    assert session.post(url + "/window_size", data={"app_class_name": "x"}, timeout=30).status_code not in (403, 415)


def test_a_post_takes_its_fields_from_the_body_only(public_server):
    marker = public_server.home / "from-query"
    response = public_server.post(f"/execute?command=touch%20{marker}&shell=true")
    assert response.status_code == 400
    assert not marker.exists()


def test_json_only_endpoints_refuse_forms_and_multipart(public_server):
    body, marker = marker_command(public_server)
    assert public_server.post("/execute", data=body).status_code == 415
    assert public_server.post("/execute", files={"command": (None, body["command"])}).status_code == 415
    assert public_server.post("/setup/upload", data={"file_path": "x"}).status_code == 415
    assert not marker.exists()


def test_the_private_listener_keeps_todays_behaviour(server):
    body, marker = marker_command(server)
    response = server.post("/execute", data=json.dumps(body), headers={"Content-Type": "text/plain",
                                                                        "Origin": "http://a.example"})
    assert response.status_code == 200
    assert marker.exists()


@pytest.mark.parametrize("public", [True, False])
def test_a_token_is_required_when_set(tmp_path, public):
    with serve(tmp_path / "home", "--token", "s3cret-token", *(["--public"] if public else [])) as server:
        body, marker = marker_command(server)
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic czNjcmV0LXRva2Vu"},
                        {"X-OSWorld-Token": "s3cret-toke"}, {"Authorization": "Bearer s3cret-token2"}):
            response = server.post("/execute", json=body, headers=headers)
            assert response.status_code == 401, headers
            assert response.json()["status"] == "error"
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert not marker.exists()
        assert server.post("/execute", json=body, headers={"Authorization": "Bearer s3cret-token"}).status_code == 200
        assert marker.exists()
        assert server.get("/platform", headers={"X-OSWorld-Token": "s3cret-token"}).text == "Linux"
        assert server.get("/platform", headers={"authorization": "bearer  s3cret-token "}).text == "Linux"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "myhost.example"])
def test_main_refuses_a_non_loopback_host_without_a_token(host, capsys, monkeypatch):
    monkeypatch.delenv("OSWORLD_SERVER_TOKEN", raising=False)
    assert app.main(["--host", host, "--port", "0"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "--token" in error and host in error


def test_main_serves_its_tcp_port_as_a_public_listener(monkeypatch):
    servers = []

    class Stop(Exception):
        pass

    def build_server(env, unix_socket=None, host="127.0.0.1", port=5000):
        server = make_server(Router(), host="127.0.0.1", port=0)
        server.serve_forever = lambda poll_interval: (_ for _ in ()).throw(Stop())
        servers.append(server)
        return server, ServerState(env={}, runtime_dir="/tmp")

    monkeypatch.setattr(app, "build_server", build_server)
    monkeypatch.setenv("OSWORLD_SERVER_TOKEN", "from-env")
    with pytest.raises(Stop):
        app.main(["--host", "0.0.0.0", "--port", "0"])
    (server,) = servers
    server.server_close()
    assert server.access_policy.public and server.access_policy.token == "from-env"


# -- unauthenticated clients cannot hold a token listener ---------------------------------------

def trickle_heads(server, count: int) -> list[socket.socket]:
    """`count` connections that have begun a request and never finish its head."""
    held = []
    for _ in range(count):
        sock = server.connect()
        sock.sendall(b"GET /platform HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        held.append(sock)
    return held


def test_connections_that_never_finish_their_heads_cannot_keep_the_token_holder_out(tmp_path):
    with serve(tmp_path / "home", "--public", "--token", "s3cret-token") as server:
        held = trickle_heads(server, 64)  # the server's cap of connections
        try:
            time.sleep(0.5)
            for sock in held:  # still trickling: each sends a byte well within every per-read timeout
                sock.sendall(b"x")
            for _ in range(3):
                response = server.get("/platform", headers={"Authorization": "Bearer s3cret-token"}, timeout=10)
                assert (response.status_code, response.text) == (200, "Linux")
            # a client without the token gets no such favour once the held ones are gone or evicted
            assert server.get("/platform", timeout=10).status_code == 401
        finally:
            for sock in held:
                sock.close()


def test_a_request_head_has_a_deadline_however_it_trickles(tmp_path):
    with serve(tmp_path / "home", "--head-timeout", "1") as server:
        sock, = trickle_heads(server, 1)
        with sock:
            started = time.monotonic()
            answer = b""
            sock.settimeout(0.2)
            while time.monotonic() - started < 10:
                try:
                    sock.sendall(b"x")
                    chunk = sock.recv(4096)
                except TimeoutError:
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    break
                if not chunk:
                    break
                answer += chunk
            assert time.monotonic() - started < 3
            assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:100]
        assert server.get("/platform").text == "Linux"
