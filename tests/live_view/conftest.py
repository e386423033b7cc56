"""A real VNC server for the view's tests: Xvfb with a window of one colour, and x11vnc on it listening on
a Unix socket of the test's own folder (as the desktop's relayed port is for the view server)."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from desktop_env.live_view.desktop import X11VNC
from desktop_env.live_view.human_input import HumanInput
from desktop_env.live_view.server import LiveDesktop, ViewServer

GREEN = (0x12, 0xAB, 0x34)


@dataclass
class LiveView:
    server: ViewServer
    desktop: LiveDesktop

    @property
    def entry(self) -> str:
        return f"{self.server.view_url(self.desktop.name)}?token={self.desktop.token}"


@pytest.fixture(scope="module")
def vnc_socket(tmp_path_factory) -> Iterator[Path]:
    if not (shutil.which("Xvfb") and shutil.which("x11vnc")):
        pytest.skip("Xvfb and x11vnc are needed")
    folder = tmp_path_factory.mktemp("vnc")
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                            pass_fds=(write_fd,), stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as displayfd:
        display = ":" + displayfd.readline().strip()
    env = {**os.environ, "DISPLAY": display}
    window = subprocess.Popen(["python3", "-c", "import tkinter; w = tkinter.Tk(); w.geometry('400x300+200+150');"
                               " w.configure(bg='#12ab34'); w.mainloop()"], env=env)
    path = folder / "vnc.sock"
    argv = [a for a in X11VNC if a not in ("-localhost",)]
    argv[argv.index("-rfbport") + 1] = "0"
    subprocess.run([*argv, "-unixsock", str(path)], env=env, check=True, timeout=30)
    yield path
    window.kill()
    xvfb.kill()  # x11vnc ends with its display


@pytest.fixture
def view(vnc_socket) -> Iterator[LiveView]:
    def connect() -> socket.socket:
        stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stream.connect(str(vnc_socket))
        return stream

    server = ViewServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    desktop = LiveDesktop("desktop-1", connect)
    server.add(desktop)
    desktop.start_task("a-task", "Type hello.", HumanInput())
    yield LiveView(server, desktop)
    server.shutdown()
    server.server_close()
