"""Presses a desktop shortcut right after each reset, on a busy machine, and says how often its
window never came: the probe for Ctrl+Alt+T presses that are sometimes lost under load.

Each round resets the desktop (a warm spare takes over), presses the keys as an agent's action
does, and waits for a window whose WM_CLASS holds `--window-class`. A lost press prints the tail
of the desktop's own logs. In them, gsd-media-keys says "Received accel id" for every shortcut that
reached it.

    .venv/bin/python scripts/shortcut_probe.py --rounds 16 --hogs 5
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_env.desktop_env import DesktopEnv  # noqa: E402  (after the path it is found by)
from desktop_env.waiting import poll_until  # noqa: E402

LOG_NAMES = ("gsd-media-keys.log", "gnome-shell.log", "dbus.log")


def window_came(env: DesktopEnv, window_class: str, timeout: float) -> float | None:
    """Seconds until a window of `window_class` is listed, None if none came within `timeout`."""
    started = time.monotonic()

    def listed() -> bool:
        return window_class.lower() in env.controller.run_command(["wmctrl", "-lx"])["output"].lower()

    return time.monotonic() - started if poll_until(listed, timeout, 0.3) else None


@click.command()
@click.option("--rounds", default=16, show_default=True, help="Resets, each followed by one press.")
@click.option("--hogs", default=5, show_default=True, help="Busy-looping shells beside the desktop.")
@click.option("--keys", default="ctrl,alt,t", show_default=True, help="pyautogui key names, comma-separated.")
@click.option("--window-class", default="gnome-terminal", show_default=True)
@click.option("--timeout", default=25.0, show_default=True, help="Seconds to wait for the window.")
def main(rounds: int, hogs: int, keys: str, window_class: str, timeout: float) -> None:
    hotkey = ", ".join(repr(key.strip()) for key in keys.split(","))
    busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(hogs)]
    env = DesktopEnv(screen_size=(1920, 1080), warm_spare=True)
    lost = 0
    try:
        for round_no in range(1, rounds + 1):
            env.reset({"id": "shortcut-probe", "instruction": "", "config": []})
            env.step(f"pyautogui.hotkey({hotkey})", pause=0)
            seconds = window_came(env, window_class, timeout)
            came = f"window {seconds:.1f} s after the step returned" if seconds is not None else "LOST"
            click.echo(f"{round_no}: {came}")
            if seconds is None:
                lost += 1
                logs = env.desktop_logs()
                for name in LOG_NAMES:
                    click.echo(f"===== {name} =====\n{logs.get(name, '')[-2500:]}")
    finally:
        env.close()
        for hog in busy:
            hog.kill()
    click.echo(f"lost {lost} of {rounds}")


if __name__ == "__main__":
    main()
