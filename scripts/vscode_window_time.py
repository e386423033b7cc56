"""How long the first `code` of a desktop takes to show VS Code: on fresh desktops, the seconds from
`code` to a window titled "Visual Studio Code" (what OSWorld's `activate_window` setup step looks for)
and to "Welcome - Visual Studio Code" (the workbench loaded and on its Welcome page), optionally with
CPU hogs running on the host, as on a machine shared with other desktops.

    .venv/bin/python scripts/vscode_window_time.py --runs 5 --hogs 4

Prints one line per desktop and the median and worst of each (VM_DIFFERENCES.md, VS Code).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_env.desktop_env import DesktopEnv  # noqa: E402
from desktop_env.providers.local.build.vscode import ensure_vscode  # noqa: E402
from desktop_env.waiting import poll_until  # noqa: E402

WINDOW = "Visual Studio Code"
WORKBENCH = "Welcome - Visual Studio Code"
GIVE_UP_S = 150.0


def time_first_code(env: DesktopEnv) -> tuple[float, float]:
    """(seconds to the window, seconds to the Welcome page) on a fresh desktop; inf for one not seen."""
    env.reset({"id": "vscode-window-time", "instruction": "", "config": []})
    started = time.monotonic()
    env.controller.launch(["code"])
    window = workbench = float("inf")

    def welcome_shown() -> bool:
        nonlocal window, workbench
        titles = env.controller.run_command(["wmctrl", "-l"])["output"]
        now = time.monotonic() - started
        if window == float("inf") and WINDOW in titles:
            window = now
        if WORKBENCH in titles:
            workbench = now
        return WORKBENCH in titles

    poll_until(welcome_shown, GIVE_UP_S, 0.25)
    return window, workbench


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh desktops to time")
    parser.add_argument("--hogs", type=int, default=0, help="busy loops to run on the host meanwhile")
    args = parser.parse_args()
    ensure_vscode()
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(args.hogs)]
    env = DesktopEnv(screen_size=(1920, 1080), require_a11y_tree=False)
    windows, workbenches = [], []
    try:
        for run in range(args.runs):
            load = os.getloadavg()[0]
            window, workbench = time_first_code(env)
            windows.append(window)
            workbenches.append(workbench)
            print(f"desktop {run + 1}: window after {window:.1f} s, workbench after {workbench:.1f} s "
                  f"(load average {load:.1f}, {args.hogs} hogs)", flush=True)
    finally:
        env.close()
        for hog in hogs:
            hog.kill()
            hog.wait()
    summary = {name: {"median_s": round(statistics.median(values), 1), "worst_s": round(max(values), 1)}
               for name, values in (("window", windows), ("workbench", workbenches))}
    print(json.dumps({"runs": args.runs, "hogs": args.hogs, **summary}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
