"""A page of another origin cannot read the view, open its stream or answer for the person, even in a
browser that holds the view's cookie (a page on another port of 127.0.0.1 is same-site, so the cookie goes
with its requests); the env server's public listener is tested the same way (tests/server/test_public_listener.py).
Checked in a real headless Chromium, and request by request as a browser would send them."""
from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator

import pytest
import requests

from tests.live_view.chromium import CHROMIUM, Chromium, colour_share
from tests.live_view.conftest import GREEN

ATTACK = """<!doctype html><html><body><script>
window.results = {};
const view = '%(view)s';
fetch(view + '/state', {credentials: 'include'}).then(r => r.text()).then(
  t => results.state = 'read: ' + t, e => results.state = 'refused: ' + e);
fetch(view + '/answer', {method: 'POST', mode: 'no-cors', credentials: 'include',
                         headers: {'Content-Type': 'text/plain'}, body: '{"answer": "done"}'}).then(
  () => results.answer = 'sent', e => results.answer = 'refused: ' + e);
const socket = new WebSocket(view.replace('http', 'ws') + '/rfb', ['binary']);
socket.onopen = () => results.stream = 'open';
socket.onerror = () => results.stream = 'refused';
const frame = document.createElement('iframe');
frame.src = view;
document.body.appendChild(frame);
</script></body></html>"""


@pytest.fixture
def attacker(view) -> Iterator[str]:
    page = (ATTACK % {"view": view.server.view_url(view.desktop.name)}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_a_page_of_another_origin_gets_nothing_from_a_browser_that_holds_the_view(view, attacker):
    browser = Chromium()
    try:
        browser.navigate(view.entry)  # the person's browser: it has the view's cookie now
        browser.wait_for("document.getElementById('status').textContent === 'your turn'")
        assert browser.evaluate("location.href") == view.server.view_url(view.desktop.name)
        streams = view.server.streams_opened
        assert streams == 1
        browser.navigate(attacker)
        results = browser.wait_for("results.state && results.answer && results.stream && results")
        assert results["state"].startswith("refused"), results
        assert results["stream"] == "refused"
        assert browser.evaluate("document.querySelector('iframe').contentDocument") is None  # not framed
        assert colour_share(browser.screenshot(), GREEN) == 0  # the desktop shows nowhere on the page
    finally:
        browser.close()
    assert view.server.streams_opened == streams
    assert view.desktop.answer is None


def test_the_entry_url_trades_the_token_for_a_cookie_of_the_desktop_s_path(view):
    entry = requests.get(view.entry, allow_redirects=False, timeout=10)
    assert entry.status_code == 303
    assert entry.headers["Location"] == f"/view/{view.desktop.name}"
    cookie = entry.headers["Set-Cookie"]
    assert f"Path=/view/{view.desktop.name}" in cookie and "HttpOnly" in cookie and "SameSite" in cookie
    page = requests.get(view.server.view_url(view.desktop.name), cookies=entry.cookies, timeout=10)
    assert page.status_code == 200
    assert view.desktop.token not in page.text
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]


def test_the_entry_url_wins_over_a_cookie_an_earlier_run_left(view):
    entry = requests.get(view.entry, cookies={view.desktop.cookie: "from-an-earlier-run"}, allow_redirects=False,
                         timeout=10)
    assert entry.status_code == 303
    assert entry.cookies[view.desktop.cookie] == view.desktop.token


def cookie_of(view) -> dict[str, str]:
    return {view.desktop.cookie: view.desktop.token}


def same_origin(view) -> dict[str, str]:
    return {"Origin": view.server.origin, "Sec-Fetch-Site": "same-origin"}


def test_the_page_s_own_requests_are_answered(view):
    state = requests.get(f"{view.server.view_url(view.desktop.name)}/state", cookies=cookie_of(view),
                         headers=same_origin(view), timeout=10)
    assert state.json()["instruction"] == "Type hello."
    answer = requests.post(f"{view.server.view_url(view.desktop.name)}/answer", json={"answer": "give-up"},
                           cookies=cookie_of(view), headers=same_origin(view), timeout=10)
    assert answer.status_code == 200
    assert view.desktop.answer == "give-up"


@pytest.mark.parametrize("headers, status", [
    ({"Origin": "http://127.0.0.1:1"}, 403),                 # another port: same-site, not same-origin
    ({"Origin": "https://evil.example"}, 403),
    ({"Origin": "null"}, 403),
    ({"Sec-Fetch-Site": "same-site"}, 403),
    ({"Sec-Fetch-Site": "cross-site"}, 403),
    ({"Host": "evil.example"}, 421),                         # DNS rebinding
    ({"Host": "127.0.0.1.nip.io"}, 421),
])
def test_requests_a_browser_sends_for_another_site_are_refused(view, headers, status):
    base = view.server.view_url(view.desktop.name)
    for method, path, body in (("GET", "/state", None), ("POST", "/answer", {"answer": "done"}),
                               ("GET", "/rfb", None)):
        sent = {**same_origin(view), **headers, "Upgrade": "websocket", "Connection": "Upgrade",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"}
        response = requests.request(method, base + path, json=body, cookies=cookie_of(view), headers=sent, timeout=10)
        assert response.status_code == status, (method, path, response.text)
    assert view.server.streams_opened == 0
    assert view.desktop.answer is None


@pytest.mark.parametrize("cookies", [{}, {"osworld-view-desktop-1": "wrong"}])
def test_without_the_token_nothing_is_shown(view, cookies):
    base = view.server.view_url(view.desktop.name)
    assert requests.get(base, cookies=cookies, timeout=10).status_code == 403
    assert requests.get(base + "?token=wrong", timeout=10).status_code == 403
    assert requests.get(base + "/state", cookies=cookies, headers=same_origin(view), timeout=10).status_code == 403
    answer = requests.post(base + "/answer", json={"answer": "done"}, cookies=cookies, headers=same_origin(view),
                           timeout=10)
    assert answer.status_code == 403
    assert view.desktop.answer is None


def test_the_page_cannot_be_framed_or_embedded(view):
    page = requests.get(view.server.view_url(view.desktop.name), cookies=cookie_of(view),
                        headers={"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "cross-site"}, timeout=10)
    assert page.status_code == 403


def test_a_connection_that_never_sends_its_request_is_closed(view, monkeypatch):
    monkeypatch.setattr(view.server.RequestHandlerClass, "timeout", 0.5)
    with socket.create_connection(view.server.server_address[:2], timeout=5) as idle:
        idle.sendall(b"GET /view/desktop-1 HTTP/1.1\r\n")
        assert idle.recv(100) == b""  # closed, not waited on forever


def test_the_view_serves_only_the_loopback_and_only_novnc_s_files(view):
    assert view.server.server_address[0] == "127.0.0.1"
    assert requests.get(f"{view.server.origin}/novnc/core/rfb.js", timeout=10).status_code == 200
    for path in ("/novnc/../../../etc/passwd", "/novnc/%2e%2e/%2e%2e/etc/passwd", "/etc/passwd"):
        assert requests.get(view.server.origin + path, timeout=10).status_code == 404, path
