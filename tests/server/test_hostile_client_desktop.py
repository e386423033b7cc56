"""The hostile-client probes against a real sandboxed desktop's env server, over its TCP port."""
from __future__ import annotations

import http.client
import time
import urllib.parse
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.server.test_http_limits import MiB, post_streamed_upload

pytestmark = pytest.mark.desktop


def server_pid(desktop) -> int:
    for pid in desktop.provider.process_ids():
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"desktop_env.server.session" in cmdline:
            return pid
    pytest.fail("no env server process found in the sandbox")


def peak_memory_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise KeyError("VmHWM")


def test_a_200_mb_upload_keeps_the_desktop_server_small(desktop):
    pid = server_pid(desktop)
    before = peak_memory_kb(pid)
    status, body = post_streamed_upload(SimpleNamespace(port=urllib.parse.urlsplit(desktop.base_url).port),
                                        "/home/user/big-upload.bin", 200 * MiB)
    assert status == 200, body
    size = desktop.post("/execute", json={"command": ["stat", "-c", "%s", "/home/user/big-upload.bin"]}).json()
    assert size["output"].strip() == str(200 * MiB)
    grown_kb = peak_memory_kb(pid) - before
    assert grown_kb < 64 * 1024, f"the server's peak memory grew by {grown_kb} kB"
    desktop.post("/execute", json={"command": ["rm", "/home/user/big-upload.bin"]})


def test_sleep_in_the_background_returns_at_once_and_keeps_running(desktop):
    started = time.monotonic()
    result = desktop.post("/execute", json={"command": "sleep 150 & echo started; echo $!", "shell": True}).json()
    assert time.monotonic() - started < 10
    first, pid = result["output"].split()
    assert first == "started"
    alive = desktop.post("/execute", json={"command": ["kill", "-0", pid]}).json()
    assert alive["returncode"] == 0
    desktop.post("/execute", json={"command": ["kill", pid]})


@pytest.mark.parametrize("path, body, field", [
    ("/run_bash_script", {"script": "true", "timeout": "abc"}, "timeout"),
    ("/run_bash_script", {"script": "true", "working_dir": [".."]}, "working_dir"),
    ("/execute_with_verification", {"command": "true", "shell": True, "max_wait_time": "x"}, "max_wait_time"),
    ("/execute_with_verification", {"command": "true", "shell": True, "check_interval": "x"}, "check_interval"),
    ("/setup/open_file", {"path": "/home/user", "timeout": []}, "timeout"),
])
def test_malformed_fields_are_4xx_naming_the_field(desktop, path, body, field):
    response = desktop.post(path, json=body)
    assert 400 <= response.status_code < 500, response.text
    assert field in response.json()["message"]


def test_a_malformed_content_length_is_400(desktop):
    parsed = urllib.parse.urlsplit(desktop.base_url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    connection.putrequest("POST", "/execute")
    connection.putheader("Content-Length", "abc")
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 400 and b"Content-Length" in response.read()
    connection.close()


def test_listing_proc_is_bounded(desktop):
    response = desktop.post("/list_directory", json={"path": "/proc"})
    assert response.status_code in (200, 413)
    assert desktop.get("/platform").text == "Linux"
