"""The env server in a subprocess of its own, without a desktop, for probing its HTTP layer.

Routes that need no X server (/execute with plain commands, files, /list_directory...)
work as on a desktop; its memory and threads can be read from /proc/<pid>/status. It
runs on the system Python when there is one, as the real server does (see serve_bare.py).
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[2]
SERVER_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


@dataclass
class ServedProcess:
    process: subprocess.Popen
    port: int
    home: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def status(self, key: str) -> int:
        """A number from /proc/<pid>/status (VmHWM and VmRSS in kB, Threads)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name == key:
                return int(value.split()[0])
        raise KeyError(key)

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=30)

    def post(self, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", 60)
        return requests.post(self.url + path, **kwargs)

    def get(self, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", 60)
        return requests.get(self.url + path, **kwargs)


@contextlib.contextmanager
def serve(home: Path, *options: str):
    home.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen([SERVER_PYTHON, "-m", "tests.server.serve_bare", str(home), *options],
                               cwd=REPO, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    assert process.stdout is not None  # piped above
    try:
        line = process.stdout.readline()
        if not line.startswith("READY "):
            raise RuntimeError(f"test server did not start: {line!r}")
        yield ServedProcess(process, int(line.split()[1]), home)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()


Response = tuple[int, dict[str, str], bytes]  # status, headers (lower-case names), body


def raw_exchange(sock: socket.socket, data: bytes, timeout: float = 30) -> list[Response]:
    """Sends `data` on a raw socket and reads back every response until the server closes or goes quiet."""
    sock.sendall(data)
    return read_responses(sock, timeout)


def read_responses(sock: socket.socket, timeout: float = 30, count: int | None = None) -> list[Response]:
    sock.settimeout(timeout)
    buffer = b""
    responses: list[Response] = []
    while count is None or len(responses) < count:
        while b"\r\n\r\n" not in buffer:
            try:
                chunk = sock.recv(65536)
            except (TimeoutError, ConnectionResetError):
                chunk = b""
            if not chunk:
                return responses
            buffer += chunk
        head, _, buffer = buffer.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
        length = int(headers.get("content-length", "0"))
        while len(buffer) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            buffer += chunk
        body, buffer = buffer[:length], buffer[length:]
        responses.append((int(status_line.split()[1]), headers, body))
        if headers.get("connection", "").lower() == "close":
            return responses
        if count is None:
            sock.settimeout(0.5)  # more responses, if any, follow at once
    return responses


def wait_until(predicate, timeout: float = 30.0, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()
