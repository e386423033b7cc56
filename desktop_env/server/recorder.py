"""Screen recording to an H.264 mp4 with ffmpeg's x11grab.

One recording at a time. ffmpeg's diagnostics go to `<output>.ffmpeg.log` and its
progress reports to `<output>.progress`: a pipe nobody reads would fill up and stall
ffmpeg.
"""
from __future__ import annotations

import contextlib
import os
import re
import subprocess
import threading

from .waiting import poll_until

# Enough to follow what an agent does while leaving the two CPUs to the desktop.
FRAME_RATE = 10
# ffmpeg needs a moment to open the display and encode its first frame; a stop before
# that leaves an mp4 with no frames, which players reject. So stop() waits (this long
# at most) for the progress report to count a frame.
FIRST_FRAME_TIMEOUT_S = 5.0
STOP_TIMEOUT_S = 15.0
KILL_TIMEOUT_S = 5.0
_POLL_S = 0.05
_FRAME_COUNT = re.compile(rb"^frame=(\d+)$", re.MULTILINE)


class RecordingError(RuntimeError):
    """A recording could not be started or finished."""


class RecordingAlreadyStarted(RecordingError):
    """start() was called while a recording is running."""


class NotRecording(RecordingError):
    """stop() was called while nothing is being recorded."""


class ScreenRecorder:
    def __init__(self, display: str, size: tuple[int, int], ffmpeg: str = "ffmpeg"):
        self.display = display
        width, height = size
        # yuv420p halves the chroma resolution, so H.264 needs even dimensions; the
        # odd last row/column is simply not captured.
        self.capture_size = (width - width % 2, height - height % 2)
        self.ffmpeg = ffmpeg
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._path: str | None = None

    @property
    def recording(self) -> bool:
        with self._lock:
            return self._process is not None and self._process.poll() is None

    def _command(self, path: str) -> list[str]:
        width, height = self.capture_size
        return [
            self.ffmpeg, "-hide_banner", "-nostats", "-loglevel", "info",
            "-progress", f"file:{path}.progress", "-stats_period", "0.5",
            "-f", "x11grab", "-draw_mouse", "1", "-framerate", str(FRAME_RATE),
            "-video_size", f"{width}x{height}", "-i", f"{self.display}+0,0",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
            # The index goes first, so the file plays (and streams) from the start.
            "-movflags", "+faststart",
            "-y", path,
        ]

    def start(self, path: str) -> None:
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                raise RecordingAlreadyStarted(f"already recording to {self._path}")
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            # A report left by an earlier recording to the same path would make stop()
            # believe frames were already written.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path + ".progress")
            with open(path + ".ffmpeg.log", "wb") as log:
                try:
                    self._process = subprocess.Popen(
                        self._command(path), stdin=subprocess.PIPE,
                        stdout=subprocess.DEVNULL, stderr=log)
                except OSError as problem:
                    raise RecordingError(f"cannot run {self.ffmpeg}: {problem}") from problem
            self._path = path

    def stop(self) -> str:
        """Finish the recording and return the path of the mp4."""
        with self._lock:
            process, path = self._process, self._path
            if process is None or path is None:
                raise NotRecording("no recording was started")
            self._process, self._path = None, None
            if process.poll() is not None:
                raise RecordingError(
                    f"ffmpeg stopped by itself (exit code {process.returncode}); "
                    f"see {path}.ffmpeg.log")
            self._wait_for_first_frame(process, path + ".progress")
            self._finish(process)
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            raise RecordingError(f"ffmpeg left no video at {path}; see {path}.ffmpeg.log")
        return path

    @staticmethod
    def _wait_for_first_frame(process: subprocess.Popen, progress_path: str) -> None:
        def first_frame_or_exit() -> bool:
            if process.poll() is not None:
                return True
            try:
                with open(progress_path, "rb") as progress:
                    counts = _FRAME_COUNT.findall(progress.read())
            except FileNotFoundError:
                counts = []
            return bool(counts) and int(counts[-1]) > 0

        poll_until(first_frame_or_exit, FIRST_FRAME_TIMEOUT_S, _POLL_S)

    @staticmethod
    def _finish(process: subprocess.Popen) -> None:
        # 'q' makes ffmpeg flush the encoder and write the index; SIGTERM does the same
        # less politely; SIGKILL leaves an unplayable file but never hangs the server.
        assert process.stdin is not None  # started with stdin=PIPE
        try:
            process.stdin.write(b"q")
            process.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
            return
        except subprocess.TimeoutExpired:
            process.terminate()
        try:
            process.wait(timeout=KILL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
