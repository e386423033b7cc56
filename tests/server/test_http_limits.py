"""What a hostile client can send the env server's HTTP layer, and how it fails safely:
huge uploads (streamed, memory bounded), oversized bodies, broken framing, chunked
bodies, piles of idle connections. The server runs in a subprocess of its own, so its
memory and threads can be read from /proc."""
from __future__ import annotations

import hashlib
import http.client
import json
import socket
import threading
import time

import pytest
import requests

from desktop_env.server.httpd import Response, Router, make_server
from tests.server.serverproc import raw_exchange, read_responses, serve, wait_until

MiB = 1 << 20
BOUNDARY = "osworldtestboundary"


def multipart_head(file_path: str) -> bytes:
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file_path\"\r\n\r\n{file_path}\r\n"
            f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file_data\"; filename=\"big.bin\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()


MULTIPART_TAIL = f"\r\n--{BOUNDARY}--\r\n".encode()


def pattern_chunks(total: int, chunk: int = MiB):
    """Deterministic, boundary-free bytes (the boundary text never appears in them)."""
    block = bytes(range(256)) * (chunk // 256)
    sent = 0
    while sent < total:
        piece = block[:min(chunk, total - sent)]
        sent += len(piece)
        yield piece


def digest_of(total: int) -> str:
    h = hashlib.sha256()
    for piece in pattern_chunks(total):
        h.update(piece)
    return h.hexdigest()


def post_streamed_upload(server, file_path: str, size: int, chunked: bool = False) -> tuple[int, bytes]:
    head, tail = multipart_head(file_path), MULTIPART_TAIL
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    headers = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}

    def body():
        yield head
        yield from pattern_chunks(size)
        yield tail

    if chunked:
        connection.request("POST", "/setup/upload", body=body(), headers=headers, encode_chunked=True)
    else:
        headers["Content-Length"] = str(len(head) + size + len(tail))
        connection.request("POST", "/setup/upload", body=body(), headers=headers)
    response = connection.getresponse()
    result = response.status, response.read()
    connection.close()
    return result


def test_a_300_mb_upload_is_streamed_to_disk_with_bounded_memory(server):
    assert server.get("/platform").status_code == 200
    before = server.status("VmHWM")
    size = 300 * MiB
    status, body = post_streamed_upload(server, "~/uploads/big.bin", size)
    assert status == 200, body
    target = server.home / "uploads" / "big.bin"
    assert target.stat().st_size == size
    h = hashlib.sha256()
    with open(target, "rb") as f:
        while chunk := f.read(4 * MiB):
            h.update(chunk)
    assert h.hexdigest() == digest_of(size)
    grown_kb = server.status("VmHWM") - before
    assert grown_kb < 64 * 1024, f"server peak memory grew by {grown_kb} kB during a 300 MB upload"
    assert [p.name for p in target.parent.iterdir()] == ["big.bin"]  # no temporary file left beside it


def test_a_chunked_upload_is_decoded_and_streamed(server):
    size = 20 * MiB + 123
    status, body = post_streamed_upload(server, "chunked.bin", size, chunked=True)
    assert status == 200, body
    assert (server.home / "chunked.bin").stat().st_size == size


def test_an_upload_cut_short_leaves_no_file_behind(server):
    head = multipart_head("~/cut/partial.bin")
    with server.connect() as sock:
        sock.sendall(b"POST /setup/upload HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: multipart/form-data; boundary=" + BOUNDARY.encode() + b"\r\n"
                     b"Content-Length: " + str(len(head) + 50 * MiB).encode() + b"\r\n\r\n" + head)
        for piece in pattern_chunks(5 * MiB):
            sock.sendall(piece)
        time.sleep(0.3)
    # The server notices the client is gone, answers nobody and removes its temporary file.
    assert wait_until(lambda: not any((server.home / "cut").glob("*")) if (server.home / "cut").exists() else True,
                      timeout=20)
    assert not (server.home / "cut" / "partial.bin").exists()
    assert server.get("/platform").text == "Linux"


def test_the_file_part_may_come_before_its_destination(server):
    files = [("file_data", ("x.bin", b"\x00\x01payload")), ("file_path", (None, "later/x.bin"))]
    response = requests.post(server.url + "/setup/upload", files=files, timeout=30)
    assert response.status_code == 200, response.text
    assert (server.home / "later" / "x.bin").read_bytes() == b"\x00\x01payload"


def test_an_oversized_json_body_is_413_and_the_server_stays_small(server):
    before = server.status("VmHWM")
    body = json.dumps({"command": ["echo", "x" * (40 * MiB)]}).encode()
    try:
        response = requests.post(server.url + "/execute", data=body,
                                 headers={"Content-Type": "application/json"}, timeout=60)
        assert response.status_code == 413
        assert response.json()["status"] == "error"
    except requests.ConnectionError:
        pass  # the server may close before the client finished sending; it must not have read it all
    assert server.status("VmHWM") - before < 32 * 1024
    assert server.get("/platform").text == "Linux"


@pytest.mark.parametrize("header", [b"Content-Length: abc", b"Content-Length: -5", b"Content-Length: 1e3",
                                    b"Content-Length: 5\r\nContent-Length: 6"])
def test_a_malformed_content_length_is_400_naming_the_header(server, header):
    with server.connect() as sock:
        responses = raw_exchange(sock, b"POST /execute HTTP/1.1\r\nHost: 127.0.0.1\r\n" + header + b"\r\n\r\n{}")
    (status, headers, body), = responses
    assert status == 400
    message = json.loads(body)["message"]
    assert "Content-Length" in message
    assert headers["connection"] == "close"


def test_a_chunked_body_keeps_the_connection_in_step(server, tmp_path):
    payload = json.dumps({"command": ["echo", "first"], "shell": False}).encode()
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (payload[:10], payload[10:])) + b"0\r\n\r\n"
    request = (b"POST /execute HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n" + chunked +
               b"GET /platform HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    with server.connect() as sock:
        sock.sendall(request)
        responses = read_responses(sock, count=2)
    assert [status for status, _, _ in responses] == [200, 200]
    assert json.loads(responses[0][2])["output"] == "first\n"
    assert responses[1][2] == b"Linux"


@pytest.mark.parametrize("framing, status", [
    (b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", 400),        # not a hex size
    (b"Transfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n", 400),           # no CRLF after the data
    (b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
    (b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n", 400),
])
def test_broken_or_unsupported_framing_closes_the_connection(server, framing, status):
    with server.connect() as sock:
        sock.sendall(b"POST /execute HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + framing +
                     b"GET /platform HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        responses = read_responses(sock)
    assert [s for s, _, _ in responses] == [status]  # the smuggled second request is never answered
    assert responses[0][1]["connection"] == "close"
    assert json.loads(responses[0][2])["status"] == "error"


def test_an_unread_small_body_is_skipped_and_the_connection_kept(server):
    # 404 before the body is read: the server skips it and the next request still parses.
    with server.connect() as sock:
        sock.sendall(b"POST /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
                     b"GET /platform HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        responses = read_responses(sock, count=2)
    assert [s for s, _, _ in responses] == [404, 200]


def test_many_idle_connections_neither_block_clients_nor_stay_forever(tmp_path):
    with serve(tmp_path / "home", "--idle-timeout", "2", "--max-connections", "64") as server:
        idle = [server.connect() for _ in range(100)]
        try:
            # A client arriving now is served: it takes the place of the longest-idle connection.
            assert server.get("/platform", timeout=10).text == "Linux"
            with requests.Session() as session:
                for _ in range(3):
                    assert session.post(server.url + "/execute", json={"command": ["true"]}).status_code == 200
            assert server.status("Threads") <= 64 + 8
            # Every idle connection is closed by the idle timeout (or was turned away at once).
            for sock in idle:
                sock.settimeout(10)
                try:
                    data = sock.recv(4096)
                except ConnectionResetError:
                    data = b""
                assert data == b"" or data.startswith(b"HTTP/1.1 503"), data[:100]
            assert wait_until(lambda: server.status("Threads") <= 4, timeout=10)
        finally:
            for sock in idle:
                sock.close()


def test_a_long_request_is_not_cut_by_the_idle_timeout(tmp_path):
    with serve(tmp_path / "home", "--idle-timeout", "1") as server:
        with requests.Session() as session:
            response = session.post(server.url + "/execute", json={"command": "sleep 3; echo done", "shell": True})
            assert response.json()["output"] == "done\n"
            # The kept-alive connection is closed after 1 s idle; requests reconnects.
            time.sleep(1.5)
            assert session.get(server.url + "/platform").text == "Linux"


def test_connections_beyond_the_cap_while_all_are_busy_get_503(tmp_path):
    with serve(tmp_path / "home", "--max-connections", "2") as server:
        busy = []
        for _ in range(2):
            sock = server.connect()
            body = json.dumps({"command": "sleep 3", "shell": True}).encode()
            sock.sendall(b"POST /execute HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            busy.append(sock)
        time.sleep(0.5)
        with server.connect() as extra:
            responses = raw_exchange(extra, b"GET /platform HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert [s for s, _, _ in responses] == [503]
        assert json.loads(responses[0][2])["status"] == "error"
        for sock in busy:
            assert [s for s, _, _ in read_responses(sock, count=1)] == [200]
            sock.close()
        assert server.get("/platform").text == "Linux"


@pytest.mark.parametrize("family", [socket.AF_UNIX, socket.AF_INET])
def test_make_server_serves_on_a_socket_it_is_handed(tmp_path, family):
    router = Router()
    router.route("/ping")(lambda request: Response.text("pong"))
    listener = socket.socket(family, socket.SOCK_STREAM)
    address = str(tmp_path / "s.sock") if family == socket.AF_UNIX else ("127.0.0.1", 0)
    listener.bind(address)
    listener.listen(8)
    server = make_server(router, sock=listener)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        client = socket.socket(family, socket.SOCK_STREAM)
        client.connect(listener.getsockname())
        with client:
            (status, _, body), = raw_exchange(client,
                                              b"GET /ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        assert (status, body) == (200, b"pong")
    finally:
        server.shutdown()
        server.server_close()
