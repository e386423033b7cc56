"""The X connection /health keeps between polls: reused while the display lives, opened anew once the
display has gone and come back. On a bare Xvfb (no desktop), in the env server's own Python (python-xlib
is the desktop's, not the harness's)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from desktop_env.providers.local.build.server_venv import ensure_server_venv

REPO = Path(__file__).resolve().parents[2]

# Uses the connection while Xvfb runs, after it was stopped, and once it runs again on the same display.
SCRIPT = """
import json, subprocess, sys, time
from desktop_env.server import ewmh

display = sys.argv[1]
def start():
    return subprocess.Popen(["Xvfb", display, "-screen", "0", "320x240x24", "-nolisten", "tcp"],
                            stderr=subprocess.DEVNULL)
def width(kept):
    with kept.use() as connection:
        return connection.screen().root.get_geometry().width
def connection_of(kept):
    with kept.use() as connection:
        return connection

seen = {}
xvfb = start()
kept = ewmh.KeptConnection(display)
try:
    deadline = time.monotonic() + 20
    while True:  # Xvfb takes a moment to take connections; until then each use says it cannot open it
        try:
            seen["width"] = width(kept)
            break
        except ewmh.WindowControlError as problem:
            seen["before_up"] = str(problem)
            assert time.monotonic() < deadline
            time.sleep(0.05)
    first = connection_of(kept)
    seen["same_while_up"] = all(connection_of(kept) is first for _ in range(3))
    xvfb.terminate(); xvfb.wait(10)
    try:
        width(kept)
    except ewmh.WindowControlError as problem:
        seen["after_stop"] = str(problem)
    xvfb = start()
    deadline = time.monotonic() + 20
    while True:
        try:
            seen["width_again"] = width(kept)
            break
        except ewmh.WindowControlError as problem:
            assert time.monotonic() < deadline, problem
            time.sleep(0.05)
    seen["new_after_restart"] = connection_of(kept) is not first
finally:
    kept.close()
    xvfb.terminate(); xvfb.wait(10)
print(json.dumps(seen))
"""


def free_display() -> str:
    number = 200 + os.getpid() % 500
    while Path(f"/tmp/.X11-unix/X{number}").exists() or Path(f"/tmp/.X{number}-lock").exists():
        number += 1
    return f":{number}"


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="no Xvfb here")
def test_one_connection_serves_every_poll_and_a_new_one_follows_a_restarted_display():
    python = ensure_server_venv() / "bin" / "python"
    display = free_display()
    done = subprocess.run([str(python), "-c", SCRIPT, display], capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), "XAUTHORITY": "/dev/null"})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["width"] == seen["width_again"] == 320
    assert seen["same_while_up"] and seen["new_after_restart"]
    assert f"X display {display}" in seen["after_stop"], seen
