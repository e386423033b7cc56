"""A tiny stand-in for an OSWorld env server: GET /screenshot (a PNG) and GET /platform.

Run as a program by the fake `docker` (one per fake container, on the published host
port of container port 5000), or in-process by tests via `serve_in_thread()`.
"""
from __future__ import annotations

import argparse
import base64
import os
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# A 1x1 PNG.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
                       "AAAABJRU5ErkJggg==")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 - http.server's naming
        self.server.hits.append(self.path)
        if self.server.fail_first > 0:
            self.server.fail_first -= 1
            return self._send(503, b"booting", "text/plain")
        if self.path == "/screenshot":
            return self._send(200, PNG, "image/png")
        if self.path == "/platform":
            return self._send(200, b"Linux", "text/plain")
        return self._send(404, b"not found", "text/plain")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class FakeEnvServer(ThreadingHTTPServer):
    """`fail_first`: answer 503 that many times first (a desktop still booting); `hits`: paths asked."""
    daemon_threads = True

    def __init__(self, address: tuple[str, int], fail_first: int = 0):
        super().__init__(address, Handler)
        self.fail_first = fail_first
        self.hits: list[str] = []


def make_server(host: str, port: int, fail_first: int = 0) -> FakeEnvServer:
    return FakeEnvServer((host, port), fail_first)


def serve_in_thread(host: str = "127.0.0.1", port: int = 0, fail_first: int = 0) -> FakeEnvServer:
    server = make_server(host, port, fail_first)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before listening (a booting VM)")
    parser.add_argument("--fail-first", type=int, default=0)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    time.sleep(args.delay)
    host = "0.0.0.0" if args.host in ("", "0.0.0.0") else args.host
    server = make_server(host, args.port, args.fail_first)
    server.serve_forever()


if __name__ == "__main__":
    main()
