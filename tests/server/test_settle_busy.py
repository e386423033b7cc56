"""The settle's wait for busy apps: an app that stays busy is let go 5 s after the windows held still once it has
also used 1 CPU-second meanwhile (a video playing), and not while it gets next to no CPU (keys queued behind a
busy machine). Over a /proc of our own making and a clock of our own, in the env server's own Python (the
settle imports python-xlib, the desktop's, not the harness's)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from desktop_env.providers.local.build.server_venv import ensure_server_venv

REPO = Path(__file__).resolve().parents[2]

# One app (pid 10) showing the active window, always running; its CPU time grows as argv[2] says per look.
SCRIPT = """
import json, os, sys
from desktop_env.server.settle import STEADY_BUSY_CPU_S, STEADY_BUSY_S, Settler, WindowState, _Watch

proc, cpu_per_look = sys.argv[1], float(sys.argv[2])
ticks = os.sysconf("SC_CLK_TCK")

def write_stat(cpu_seconds):
    fields = ["R"] + ["0"] * 40
    fields[11] = str(round(cpu_seconds * ticks))  # utime; stime (fields[12]) stays 0, start time (fields[19]) long ago
    for path in (f"{proc}/10/stat", f"{proc}/10/task/10/stat"):
        with open(path, "w") as stat:
            stat.write("10 (the app) " + " ".join(fields) + "\\n")

os.makedirs(f"{proc}/10/task/10")
settler = Settler(":0", lambda: None, [], clock=lambda: 0.0, proc=proc)
window = WindowState(id=1, title="Document", wm_class="app", types=frozenset(), geometry=(0, 0, 100, 100),
                     pid=10, hidden=False)
watch = _Watch()
used, now, waited_until = 0.0, 0.0, None
while now < 30:
    write_stat(used)
    if not settler._busy_apps(now, {1: window}, 1, [], watch) and now > 0:
        waited_until = now
        break
    now, used = now + 0.25, used + cpu_per_look
print(json.dumps({"waited_until": waited_until, "steady_s": STEADY_BUSY_S, "cpu_s": STEADY_BUSY_CPU_S}))
"""


def let_go_after(tmp_path: Path, cpu_per_look: float) -> dict:
    python = ensure_server_venv() / "bin" / "python"
    done = subprocess.run([str(python), "-c", SCRIPT, str(tmp_path / "proc"), str(cpu_per_look)],
                          capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_an_app_busy_with_real_work_is_let_go_once_the_windows_held_still_long_enough(tmp_path):
    seen = let_go_after(tmp_path, cpu_per_look=0.25)  # a whole CPU: 1 CPU-second well within the 5 s
    assert seen["waited_until"] == seen["steady_s"]


def test_an_app_starved_of_cpu_is_waited_for_until_it_has_used_a_cpu_second(tmp_path):
    seen = let_go_after(tmp_path, cpu_per_look=0.01)  # 4% of a CPU: 1 CPU-second after 25 s
    assert seen["waited_until"] == 25.0 and seen["waited_until"] > seen["steady_s"]
