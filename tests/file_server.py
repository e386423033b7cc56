"""A real HTTP file server on loopback for tests of downloads: it answers Range requests as a file
host does (206 with Content-Range, 416 past the end), and can be told to cut a file's body short
once (an interrupted download) or to declare a size it does not send."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class FileServer:
    files: dict[str, bytes] = field(default_factory=dict)   # path (e.g. "/a/b.pptx") -> content
    cut_once: dict[str, int] = field(default_factory=dict)   # path -> bytes sent before the connection drops, once
    declared: dict[str, int] = field(default_factory=dict)   # path -> Content-Length claimed instead of the true one
    requests: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Range header) of each GET
    url: str = ""

    def __enter__(self) -> FileServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                wanted = self.headers.get("Range")
                server.requests.append((self.path, wanted))
                body = server.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                start, status = 0, 200
                if wanted and wanted.startswith("bytes=") and wanted.endswith("-"):
                    start = int(wanted[len("bytes="):-1])
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    status = 206
                part = body[start:]
                self.send_response(status)
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                self.send_header("Content-Length", str(server.declared.get(self.path, len(part))))
                self.end_headers()
                cut = server.cut_once.pop(self.path, None)
                self.wfile.write(part if cut is None else part[:cut])
                if cut is not None or self.path in server.declared:
                    self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
