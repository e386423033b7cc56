"""What the env server keeps between requests: X connection, interpreter, recorder, relays."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..desktop_defaults import DEFAULT_PASSWORD
from .executor import DEFAULT_PRELOAD, PersistentInterpreter
from .recorder import ScreenRecorder
from .screen import Screen


@dataclass
class ServerState:
    env: dict[str, str]
    runtime_dir: str
    client_password: str = DEFAULT_PASSWORD
    started: float = field(default_factory=time.monotonic)
    children: dict[str, subprocess.Popen] = field(default_factory=dict)
    announced: set[str] = field(default_factory=set)   # components that said they are ready
    # pyatspi is not thread-safe and a dump is expensive: one at a time.
    a11y_lock: threading.Lock = field(default_factory=threading.Lock)
    # Re-entrant: building the recorder asks for the screen, which takes the same lock.
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _screen: Any = None
    _interpreter: Any = None
    _recorder: Any = None
    _settler: Any = None
    _readiness_connection: Any = None
    relays: list[Any] = field(default_factory=list)
    _recording_dir: str | None = None
    _workarea: tuple[int, ...] = ()
    _workarea_since: float = 0.0

    def workarea_settled(self, workarea: tuple[int, ...], seconds: float) -> bool:
        """Whether the work area /health just read is the one it has read for `seconds` (readiness
        polls it many times a second)."""
        now = time.monotonic()
        if workarea != self._workarea:
            self._workarea, self._workarea_since = workarea, now
        return bool(workarea) and now - self._workarea_since >= seconds

    @property
    def home(self) -> str:
        return self.env.get("HOME") or os.path.expanduser("~")

    @property
    def display(self) -> str:
        return self.env.get("DISPLAY", ":0")

    @property
    def readiness_connection(self):
        """The X connection /health reads the window manager's state through (ewmh.KeptConnection)."""
        from . import ewmh  # python-xlib is the desktop's: the harness imports this module without it

        with self._lock:
            if self._readiness_connection is None:
                self._readiness_connection = ewmh.KeptConnection(self.display)
            return self._readiness_connection

    @property
    def screen(self):
        with self._lock:
            if self._screen is None:
                self._screen = Screen(self.display)
            return self._screen

    @property
    def interpreter(self):
        with self._lock:
            if self._interpreter is None:
                preload = DEFAULT_PRELOAD + ("from desktop_env.server.pyautogui_pause import defer_pause\n"
                                             "defer_pause(pyautogui)\n"
                                             "from desktop_env.server.input_pacing import pace_input\n"
                                             "pace_input(pyautogui)\n"
                                             "from desktop_env.server.pointer_release import release_in_place\n"
                                             "release_in_place(pyautogui)\n")
                self._interpreter = PersistentInterpreter(sys.executable, env=self.env, cwd=self.home, preload=preload)
            return self._interpreter

    @property
    def settler(self):
        """The launches of the task's setup and the wait until the desktop shows them (settle.py)."""
        with self._lock:
            if self._settler is None:
                from .settle import Settler
                data_dirs = [os.path.join(self.home, ".local/share"),
                             *self.env.get("XDG_DATA_DIRS", "/usr/local/share:/usr/share").split(":")]
                self._settler = Settler(self.display, self.screen.screenshot, data_dirs, self.env.get("PATH"),
                                        own_pids=self._own_pids)
            return self._settler

    def _own_pids(self) -> set[int]:
        """The server and the interpreter it runs actions in: busy on the harness's behalf, never an app's."""
        pids = {os.getpid()}
        if self._interpreter is not None and self._interpreter.pid is not None:
            pids.add(self._interpreter.pid)
        return pids

    @property
    def recorder(self):
        with self._lock:
            if self._recorder is None:
                self._recorder = ScreenRecorder(self.display, self.screen.size())
            return self._recorder

    def new_recording_path(self) -> str:
        """Where the next recording goes: a new folder each time, made by mkdtemp.

        The runtime folder is writable by the desktop's user, so an agent could plant a
        symlink at any fixed name there and have ffmpeg (which follows it) write through
        it; a folder created with O_EXCL semantics under a random name holds nothing
        planted. The previous recording's folder is removed (rmtree never follows links).
        """
        with self._lock:
            if self._recording_dir is not None:
                shutil.rmtree(self._recording_dir, ignore_errors=True)
            self._recording_dir = tempfile.mkdtemp(prefix="recording-", dir=self.runtime_dir)
            return str(Path(self._recording_dir) / "recording.mp4")

    def close(self) -> None:
        for relay in self.relays:
            relay.close()
        if self._recorder is not None and self._recorder.recording:
            try:
                self._recorder.stop()
            except Exception:
                pass
        if self._interpreter is not None:
            self._interpreter.close()
        if self._screen is not None:
            self._screen.close()
        if self._readiness_connection is not None:
            self._readiness_connection.close()
