"""Drives a served desktop with OSWorld's own PythonController and SetupController, imported from OSWorld's
`desktop_env` as this interpreter finds it: the reference venv's desktop-env package
(tests/osworld_reference.py) or a checkout on PYTHONPATH, never this repository's desktop_env.

    python upstream_client_driver.py ADDRESS WORKDIR   -> prints {"call": [agreed, detail], ...} as JSON

Each call is one upstream controller call or one setup step that needs no network; "agreed" says whether
the desktop answered as a VM does, checked through the same client where it can read the effect, or is
null where this version of the client has no method the call needs (the detail names it).
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import os
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def import_upstream():
    # The setup controller imports one helper (compare_urls) from upstream's metrics package, whose
    # __init__ pulls every metric's dependencies: the package is entered without running it.
    spec = importlib.util.find_spec("desktop_env")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'desktop_env'", name="desktop_env")
    root = os.path.dirname(list(spec.submodule_search_locations)[0])
    for name in ("desktop_env.evaluators", "desktop_env.evaluators.metrics"):
        package = types.ModuleType(name)
        package.__path__ = [os.path.join(root, *name.split("."))]
        sys.modules[name] = package
    from desktop_env.controllers.python import PythonController
    # Upstream's module of that name, not ours (which has no SetupController): imported by name.
    setup = importlib.import_module("desktop_env.controllers.setup")
    return PythonController, setup.SetupController


def main(address: str, workdir: str) -> None:
    logging.basicConfig(level=logging.WARNING)
    PythonController, SetupController = import_upstream()
    work = Path(workdir)
    python = PythonController(vm_ip=address, server_port=5000)
    setup = SetupController(vm_ip=address, server_port=5000, chromium_port=9222, vlc_port=8080,
                            cache_dir=str(work), client_password="password")
    results: dict[str, list] = {}

    def check(name, call, agrees, needs=()):
        absent = [method for method in needs if not hasattr(python, method)]
        if absent:
            results[name] = [None, f"this version of OSWorld's PythonController has no {', '.join(absent)}"]
            return
        try:
            value = call()
            ok = bool(agrees(value))
            results[name] = [ok, repr(value)[:200]]
        except Exception as e:  # an upstream client raising is a disagreement, recorded with its message
            results[name] = [False, f"{type(e).__name__}: {e}"[:300]]

    def step(kind, **parameters):
        return setup.setup([{"type": kind, "parameters": parameters}])

    def shell(script):
        return (python.run_bash_script(script) or {}).get("output", "")

    def after(seconds: float, call: Callable[[], T]) -> T:
        """`call()` once `seconds` have passed: the desktop catching up with a step."""
        time.sleep(seconds)
        return call()

    home = "/home/user"
    local = work / "upload.txt"
    local.write_text("uploaded by OSWorld's client\n")
    wallpaper = work / "wall.png"
    wallpaper.write_bytes(python.get_screenshot() or b"")

    # PythonController
    check("get_screenshot", python.get_screenshot, lambda v: v[:8] == b"\x89PNG\r\n\x1a\n")
    check("get_vm_platform", python.get_vm_platform, lambda v: v == "Linux")
    check("get_vm_machine", lambda: python.get_vm_machine(), lambda v: v in ("x86_64", "aarch64"),
          needs=["get_vm_machine"])
    check("get_vm_screen_size", python.get_vm_screen_size, lambda v: v["width"] > 0 and v["height"] > 0)
    check("get_vm_desktop_path", python.get_vm_desktop_path, lambda v: v == f"{home}/Desktop")
    check("run_bash_script", lambda: python.run_bash_script("echo bash-ok"),
          lambda v: v["returncode"] == 0 and "bash-ok" in v["output"])
    check("run_python_script", lambda: python.run_python_script("print('python-ok')"),
          lambda v: "python-ok" in json.dumps(v))
    check("execute_python_command", lambda: python.execute_python_command("print('command-ok')"),
          lambda v: "command-ok" in json.dumps(v))
    check("execute_action MOVE_TO", lambda: (python.execute_action({"action_type": "MOVE_TO", "x": 123, "y": 77}),
                                             python.get_cursor_position())[1],
          lambda v: v == {"x": 123, "y": 77}, needs=["get_cursor_position"])  # the client makes [x, y] a dict
    check("get_cursor_position", lambda: python.get_cursor_position(), lambda v: len(v) == 2,
          needs=["get_cursor_position"])
    check("get_accessibility_tree", python.get_accessibility_tree, lambda v: isinstance(v, str) and "<" in v)
    check("get_terminal_output", python.get_terminal_output, lambda v: v is None or isinstance(v, str))
    check("get_vm_wallpaper", python.get_vm_wallpaper, lambda v: v is None or isinstance(v, bytes))
    check("get_vm_window_size", lambda: python.get_vm_window_size("gjs"), lambda v: v is None or "width" in v)
    check("start_recording", python.start_recording, lambda v: True)
    time.sleep(2)
    check("end_recording", lambda: (python.end_recording(str(work / "rec.mp4")), (work / "rec.mp4").stat().st_size)[1],
          lambda v: v > 0)

    # SetupController, every step type that needs no network
    check("setup execute", lambda: (step("execute", command=["mkdir", "-p", f"{home}/Desktop/made"]),
                                    shell(f"test -d {home}/Desktop/made && echo yes"))[1], lambda v: "yes" in v)
    check("setup command", lambda: (step("command", command=["touch", f"{home}/Desktop/made/cmd"]),
                                    shell(f"test -e {home}/Desktop/made/cmd && echo yes"))[1], lambda v: "yes" in v)
    check("setup execute_with_verification",
          lambda: step("execute_with_verification", command=["touch", f"{home}/verified"],
                       verification={"command_success": f"test -e {home}/verified"}), lambda v: v is True)
    check("setup upload_file", lambda: (step("upload_file", files=[{"local_path": str(local),
                                                                   "path": f"{home}/Desktop/upload.txt"}]),
                                        python.get_file(f"{home}/Desktop/upload.txt"))[1],
          lambda v: v == local.read_bytes())
    check("get_file", lambda: python.get_file(f"{home}/Desktop/upload.txt"), lambda v: v == local.read_bytes())
    check("get_vm_directory_tree", lambda: python.get_vm_directory_tree(f"{home}/Desktop"),
          lambda v: "upload.txt" in json.dumps(v))
    check("setup change_wallpaper", lambda: step("change_wallpaper", path=str(wallpaper)), lambda v: v is True)
    check("setup sleep", lambda: step("sleep", seconds=0.5), lambda v: v is True)
    # tidy_desktop is left out: OSWorld's own controller raises NotImplementedError for it.
    check("setup open", lambda: (step("open", path=f"{home}/Desktop/upload.txt"),
                                 after(3, lambda: shell("wmctrl -l")))[1], lambda v: "upload.txt" in v)
    check("setup activate_window", lambda: step("activate_window", window_name="upload.txt"), lambda v: v is True)
    check("setup close_window", lambda: (step("close_window", window_name="upload.txt"),
                                         after(2, lambda: shell("wmctrl -l")))[1], lambda v: "upload.txt" not in v)
    check("setup launch (chrome with socat, as task files do)",
          lambda: (step("launch", command=["google-chrome", "--remote-debugging-port=1337"]),
                   step("launch", command=["socat", "tcp-listen:9222,fork", "tcp:localhost:1337"]),
                   after(5, lambda: shell("pgrep -x chromium >/dev/null && echo up")))[2], lambda v: "up" in v)
    page = f"file://{home}/Desktop/upload.txt"
    check("setup chrome_open_tabs", lambda: (step("chrome_open_tabs", urls_to_open=[page]),
                                             shell("curl -s localhost:9222/json/list"))[1], lambda v: page in v)
    check("setup chrome_close_tabs", lambda: (step("chrome_close_tabs", urls_to_close=[page]),
                                              after(1, lambda: shell("curl -s localhost:9222/json/list")))[1],
          lambda v: page not in v)
    check("VLC at 8080", lambda: (step("launch", command="VLC_VERBOSE=-1 vlc --no-audio", shell=True),
                                  _poll_vlc(address))[1], lambda v: v == 200)
    print(json.dumps(results))


def _poll_vlc(address: str) -> int:
    import requests

    status = 0
    for _ in range(30):
        try:
            status = requests.get(f"http://{address}:8080/requests/status.xml", auth=("", "password"),
                                  timeout=5).status_code
            if status == 200:
                break
        except requests.RequestException:
            pass
        time.sleep(1)
    return status


if __name__ == "__main__":
    main(*sys.argv[1:3])
