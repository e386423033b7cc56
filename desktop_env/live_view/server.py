"""The view server: one per harness process, on the loopback, serving each registered desktop's page and
its RFB stream over WebSocket, with noVNC (Debian's `novnc`, /usr/share/novnc) as the page's client.

Who may see a desktop: whoever holds its token. The token comes once, in the URL the run prints
(`/view/<id>?token=...`); the server answers with a cookie of the desktop's own path and sends the browser
to the URL without it, so the token never rests in the address bar, the history, a referrer or a report.
What a page of another origin can do is what the env server's public listener allows it
(desktop_env/server/access_policy.py), for the same reasons: a Host header naming anything but the
loopback address it listens on is refused (DNS rebinding); the stream, the state and the answer refuse
any request whose Origin is not the view's own or whose Sec-Fetch-Site is not same-origin (a page on
another port of 127.0.0.1 is same-site, so its requests carry the cookie: the origin is what tells it
apart); the page itself may be opened by a link from anywhere (the report) but never framed
(X-Frame-Options, frame-ancestors), so a page cannot lay itself over the Done button."""
from __future__ import annotations

import contextlib
import hmac
import json
import logging
import mimetypes
import secrets
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..errors import DesktopEnvError
from . import websocket
from .human_input import HumanInput
from .page import VIEW_JS, page_html
from .rfb import ClientStream, RFBProtocolError

log = logging.getLogger("osworld.live_view")

NOVNC_DIR = Path("/usr/share/novnc")
ANSWERS = ("done", "infeasible", "give-up")
MAX_BODY = 4096


class LiveViewUnavailable(DesktopEnvError, RuntimeError):
    """A desktop cannot be shown live here; the message says why."""


@dataclass
class LiveDesktop:
    """One desktop as the view shows it. `connect` opens a new stream to its VNC server; `human` is set
    while a person works on it (the page then takes input and shows the answer bar)."""
    name: str
    connect: Callable[[], socket.socket]
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)
    human: HumanInput | None = None
    task_id: str = ""
    instruction: str = ""
    answer: str | None = None
    answered: threading.Event = field(default_factory=threading.Event)
    generation: int = 0     # tells the page a new task began (and a new desktop behind it)

    @property
    def cookie(self) -> str:
        return f"osworld-view-{self.name}"

    def start_task(self, task_id: str, instruction: str, human: HumanInput | None) -> None:
        self.task_id, self.instruction, self.human = task_id, instruction, human
        self.answer = None
        self.answered.clear()
        self.generation += 1

    def end_task(self) -> None:
        self.start_task("", "", None)

    def give_answer(self, answer: str) -> None:
        if self.answer is None:
            self.answer = answer
            self.answered.set()


class ViewServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str = "127.0.0.1", port: int = 0, novnc_dir: Path = NOVNC_DIR):
        if not (novnc_dir / "core" / "rfb.js").is_file():
            raise LiveViewUnavailable(f"noVNC is not installed ({novnc_dir}/core/rfb.js is missing): "
                                      "apt-get install novnc")
        if host not in ("127.0.0.1", "::1"):
            raise LiveViewUnavailable(f"the live view listens on the loopback only, not {host}")
        super().__init__((host, port), ViewHandler)
        self.host = host
        self.novnc_dir = novnc_dir
        self.desktops: dict[str, LiveDesktop] = {}
        self.lock = threading.Lock()
        self.streams_opened = 0   # RFB streams the server opened to a desktop: what a refused page never gets

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.server_address[1]}"

    def hosts(self) -> set[str]:
        port = self.server_address[1]
        return {f"127.0.0.1:{port}", f"localhost:{port}"}

    def add(self, desktop: LiveDesktop) -> str:
        """Registers `desktop`; returns its view URL with the token (for the terminal, never for a file)."""
        with self.lock:
            self.desktops[desktop.name] = desktop
        return f"{self.view_url(desktop.name)}?token={desktop.token}"

    def view_url(self, name: str) -> str:
        """The desktop's page without its token: what a report may link to."""
        return f"{self.origin}/view/{name}"

    def remove(self, name: str) -> None:
        with self.lock:
            self.desktops.pop(name, None)


_shared: ViewServer | None = None
_shared_lock = threading.Lock()


def shared_server() -> ViewServer:
    """This process's view server, started on first use on a free loopback port."""
    global _shared
    with _shared_lock:
        if _shared is None:
            server = ViewServer()
            threading.Thread(target=server.serve_forever, name="live-view", daemon=True).start()
            _shared = server
        return _shared


SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class ViewHandler(BaseHTTPRequestHandler):
    server: ViewServer
    protocol_version = "HTTP/1.1"
    timeout = 15  # seconds a connection may be silent before its request is in; a stream then waits as long as it likes

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's name)
        log.debug("%s %s", self.address_string(), format % args)

    def _send(self, status: int, body: bytes = b"", content_type: str = "text/plain; charset=utf-8",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in {**SECURITY_HEADERS, **(headers or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _refuse(self, status: int, why: str) -> None:
        self.close_connection = True  # a body it did not read must not be taken for the next request
        self._send(status, (why + "\n").encode())

    def _same_origin(self, origin_required: bool) -> str | None:
        """Why this request is not from the view's own page; None when it is."""
        origin = self.headers.get("Origin")
        if origin is None and origin_required:
            return "this request needs the Origin header of the view's own page"
        if origin is not None and origin not in {f"http://{host}" for host in self.server.hosts()}:
            return f"a page of {origin} may not use the view"
        site = self.headers.get("Sec-Fetch-Site")
        if site not in (None, "same-origin"):
            return f"a {site} request may not use the view"
        return None

    def _page_desktop(self, name: str, origin_required: bool) -> LiveDesktop | None:
        """The desktop `name` for a request of its own page holding its token; None once refused."""
        why = self._same_origin(origin_required=origin_required)
        if why:
            self._refuse(403, why)
            return None
        return self._desktop(name)

    def _desktop(self, name: str, entry: bool = False) -> LiveDesktop | None:
        """The desktop `name` if the request holds its token (the cookie, or the URL's on the entry)."""
        desktop = self.server.desktops.get(name)
        if desktop is None:
            self._refuse(404, "no live desktop of that name (its run may have ended)")
            return None
        given = ""
        for part in self.headers.get("Cookie", "").split(";"):
            key, _, value = part.strip().partition("=")
            if key == desktop.cookie:
                given = value
        if entry:  # the URL's token wins over a cookie an earlier run left
            given = parse_qs(urlsplit(self.path).query).get("token", [given])[0]
        if not hmac.compare_digest(given.encode(), desktop.token.encode()):
            self._refuse(403, "open the view URL the run printed (it carries the desktop's token)")
            return None
        return desktop

    def _checked(self) -> list[str] | None:
        host = self.headers.get("Host", "")
        if host not in self.server.hosts():
            self._refuse(421, f"the view answers for {sorted(self.server.hosts())}, not Host {host!r}")
            return None
        return [part for part in urlsplit(self.path).path.split("/") if part]

    def do_GET(self) -> None:
        parts = self._checked()
        if parts is None:
            return
        if parts[:1] == ["novnc"]:
            self._static(parts[1:])
        elif parts == ["live", "view.js"]:
            self._send(200, VIEW_JS.encode(), "text/javascript; charset=utf-8")
        elif len(parts) == 2 and parts[0] == "view":
            self._page(parts[1])
        elif len(parts) == 3 and parts[0] == "view" and parts[2] == "state":
            self._state(parts[1])
        elif len(parts) == 3 and parts[0] == "view" and parts[2] == "rfb":
            self._stream(parts[1])
        else:
            self._refuse(404, "not a page of the view")

    def do_POST(self) -> None:
        parts = self._checked()
        if parts is None:
            return
        if not (len(parts) == 3 and parts[0] == "view" and parts[2] == "answer"):
            self._refuse(404, "not a page of the view")
            return
        desktop = self._page_desktop(parts[1], origin_required=True)
        if desktop is None:
            return
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            self._refuse(415, "the answer is JSON (Content-Type: application/json)")
            return
        length_header = self.headers.get("Content-Length") or "0"
        length = int(length_header) if length_header.isdigit() else MAX_BODY + 1
        if length > MAX_BODY:
            self._refuse(413, f"an answer is under {MAX_BODY} bytes")
            return
        try:
            answer = json.loads(self.rfile.read(length)).get("answer")
        except (ValueError, AttributeError):
            answer = None
        if answer not in ANSWERS or desktop.human is None:
            self._refuse(400, f"answer must be one of {ANSWERS}, for a desktop a person works on")
            return
        desktop.give_answer(answer)
        self._send(200, b'{"ok": true}', "application/json")

    def _static(self, parts: list[str]) -> None:
        root = self.server.novnc_dir.resolve()
        path = root.joinpath(*parts).resolve()
        if not path.is_relative_to(root) or not path.is_file() or any(p.startswith(".") for p in parts):
            self._refuse(404, "not a file of noVNC")
            return
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if path.suffix == ".js":
            kind = "text/javascript"
        self._send(200, path.read_bytes(), kind)

    def _page(self, name: str) -> None:
        if self.headers.get("Sec-Fetch-Dest", "document") != "document":
            self._refuse(403, "the view is a page of its own; it may not be framed or embedded")
            return
        desktop = self._desktop(name, entry=True)
        if desktop is None:
            return
        if "token" in parse_qs(urlsplit(self.path).query):
            cookie = f"{desktop.cookie}={desktop.token}; Path=/view/{name}; HttpOnly; SameSite=Lax"
            self._send(303, b"", headers={"Location": f"/view/{name}", "Set-Cookie": cookie})
            return
        csp = ("default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
               f"connect-src 'self' ws://{self.headers['Host']}; frame-ancestors 'none'; base-uri 'none'; "
               "form-action 'none'")
        self._send(200, page_html(name).encode(), "text/html; charset=utf-8", {"Content-Security-Policy": csp})

    def _state(self, name: str) -> None:
        desktop = self._page_desktop(name, origin_required=False)
        if desktop is None:
            return
        state = {"name": name, "task_id": desktop.task_id, "instruction": desktop.instruction,
                 "input": desktop.human is not None, "answer": desktop.answer, "generation": desktop.generation}
        self._send(200, json.dumps(state).encode(), "application/json")

    def _stream(self, name: str) -> None:
        desktop = self._page_desktop(name, origin_required=True)
        if desktop is None:
            return
        key = self.headers.get("Sec-WebSocket-Key")
        if self.headers.get("Upgrade", "").lower() != "websocket" or not key:
            self._refuse(400, "the stream is a WebSocket")
            return
        try:
            vnc = desktop.connect()
        except OSError as e:
            self._refuse(503, f"the desktop's VNC server does not answer: {e}")
            return
        with self.server.lock:
            self.server.streams_opened += 1
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", websocket.accept_key(key))
        if "binary" in [p.strip() for p in self.headers.get("Sec-WebSocket-Protocol", "").split(",")]:
            self.send_header("Sec-WebSocket-Protocol", "binary")
        self.end_headers()
        self.close_connection = True
        self.connection.settimeout(None)  # a desktop that shows nothing new sends nothing, nor does its viewer
        self._relay(desktop, vnc)

    def _relay(self, desktop: LiveDesktop, vnc: socket.socket) -> None:
        send_lock = threading.Lock()

        def send(payload: bytes, opcode: int = websocket.OP_BINARY) -> None:
            with send_lock:
                self.wfile.write(websocket.frame(payload, opcode))
                self.wfile.flush()

        def desktop_to_browser() -> None:
            with contextlib.suppress(OSError):
                while data := vnc.recv(65536):
                    send(data)
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

        threading.Thread(target=desktop_to_browser, name="live-view-out", daemon=True).start()
        stream = ClientStream()
        human = desktop.human
        try:
            while True:
                message = websocket.read_message(self.rfile, lambda data: send(data, websocket.OP_PONG))
                for item in stream.feed(message):
                    if isinstance(item, bytes):
                        if item:
                            vnc.sendall(item)
                    elif human is not None and desktop.human is human and desktop.answer is None:
                        human.feed(item)
        except (websocket.WebSocketClosed, RFBProtocolError, OSError) as e:
            log.info("view of %s closed: %s", desktop.name, e)
        finally:
            with contextlib.suppress(OSError):
                vnc.shutdown(socket.SHUT_RDWR)
            vnc.close()
