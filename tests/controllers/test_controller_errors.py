"""The controller tells a dead desktop from a refused request, and never returns garbage silently."""
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from desktop_env.controllers.python import PythonController
from desktop_env.controllers.transport import Endpoint
from desktop_env.errors import DesktopUnavailable, ServerRequestError


def test_missing_socket_raises_desktop_unavailable_after_retries(tmp_path):
    controller = PythonController(Endpoint(unix_socket=str(tmp_path / "gone.sock")), retries=2, backoff_s=0.01)
    with pytest.raises(DesktopUnavailable, match="after 3 attempt"):
        controller.get_screenshot()


class _Flaky(BaseHTTPRequestHandler):
    calls = 0

    def do_GET(self):
        type(self).calls += 1
        if self.path == "/screenshot" and type(self).calls == 1:
            self.send_response(503)
            self.end_headers()
            return
        status = 500 if self.path == "/accessibility" else 200
        body = b'{"status": "error", "message": "tree failed"}' if status == 500 else b"PNG"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        self.send_response(404)
        body = b'{"status": "error", "message": "file not found"}'
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def flaky_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_503_is_retried_and_500_raises_with_the_servers_message(flaky_server):
    controller = PythonController(Endpoint(url=flaky_server), backoff_s=0.01)
    assert controller.get_screenshot() == b"PNG"
    with pytest.raises(ServerRequestError, match="HTTP 500: tree failed"):
        controller.get_accessibility_tree()


def test_404_on_a_file_means_none(flaky_server):
    assert PythonController(Endpoint(url=flaky_server)).get_file("/nope") is None
