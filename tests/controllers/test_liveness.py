"""A server that died or froze is given up on in seconds, not after the request's whole timeout; a live
server is waited for however long its request takes; a server let go of gets no further request."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from desktop_env.controllers.liveness import LivenessPolicy
from desktop_env.controllers.python import PythonController
from desktop_env.controllers.transport import Endpoint
from desktop_env.errors import EnvServerGone

# An env server in its own process (so that it can be stopped): /execute takes the seconds it is asked
# to, everything else answers at once; it prints its port, then each request it gets.
SERVER = textwrap.dedent("""
    import json, sys, time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self, body):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            print(self.command, self.path, flush=True)

        def do_GET(self):
            self.answer(b"Linux")

        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(request["seconds"])
            self.answer(json.dumps({"status": "success", "output": "", "error": "", "returncode": 0}).encode())

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
""")
QUICK = LivenessPolicy(check_every=0.05, probe_after=0.2, probe_every=0.2, give_up_after=1.0)


@pytest.fixture
def server():
    process = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    port = int(process.stdout.readline())
    seen: list[str] = []
    threading.Thread(target=lambda: seen.extend(iter(process.stdout.readline, "")), daemon=True).start()
    yield process, f"http://127.0.0.1:{port}", seen
    os.kill(process.pid, signal.SIGCONT)
    process.kill()
    process.wait()


def execute(controller: PythonController, seconds: float) -> dict:
    return controller.request("POST", "/execute", json_body={"seconds": seconds}).json()


def test_a_long_request_to_a_live_server_is_waited_for(server):
    _, url, seen = server
    controller = PythonController(Endpoint(url=url), liveness=QUICK)
    assert execute(controller, 2.5)["status"] == "success"  # the probes beside it were answered
    assert seen.count("GET /platform\n") >= 3 and not controller.watch.dead


def test_a_server_stopped_during_a_request_is_given_up_in_seconds_and_sent_nothing_more(server):
    process, url, seen = server
    controller = PythonController(Endpoint(url=url), liveness=QUICK)
    threading.Timer(0.5, os.kill, (process.pid, signal.SIGSTOP)).start()
    started = time.monotonic()
    with pytest.raises(EnvServerGone, match=r"POST /execute was given up .* it answered nothing for 1 s"):
        execute(controller, 120)
    assert time.monotonic() - started < 10  # the request itself would have waited 120 s, its timeout 150 s
    os.kill(process.pid, signal.SIGCONT)
    time.sleep(0.2)
    sent = len(seen)
    started = time.monotonic()
    with pytest.raises(EnvServerGone, match="was not sent"):
        controller.get_screenshot()  # an end-of-task call: refused at once, without retries
    assert time.monotonic() - started < 0.5 and len(seen) == sent


def test_a_server_its_provider_knows_gone_is_given_up_at_once(server):
    _, url, _ = server
    verdict = [""]
    controller = PythonController(Endpoint(url=url), gone=lambda: verdict[0], liveness=LivenessPolicy())
    threading.Timer(0.3, verdict.__setitem__, (0, "the desktop's sandbox exited with status 137")).start()
    started = time.monotonic()
    with pytest.raises(EnvServerGone, match="sandbox exited with status 137"):
        execute(controller, 60)
    assert time.monotonic() - started < 2
