"""The task folder while an episode runs: status.json, traj.jsonl, the step screenshots, the
recording and runtime.log, each written as the episode goes (through osworld_harness/results/task_folder.py's atomic
writes), so a run killed at any point leaves a folder that says how far it got.

The episode (osworld_harness/execution/episode.py) says what happened; the recorder alone decides where it lands.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from PIL import Image

from desktop_env.evaluators.outcome import Evaluation
from osworld_harness.results.task_folder import (
    AgentFault,
    ErrorRecord,
    PreviousError,
    TaskStatus,
    now_iso,
    remove_score,
    write_bytes_atomic,
    write_json_atomic,
    write_score,
    write_status,
    write_trajectory,
)

LOG_FILE, RECORDING_FILE, PERTURBATION_FILE = "runtime.log", "recording.mp4", "perturbation.json"
DESKTOP_LOG_FILE = "desktop.log"  # the desktop's own logs, kept for a task that did not succeed
PARTS = ("reset", "agent", "env", "evaluate")  # what status.json's durations add up


class RecordingNotClosed(Exception):
    """The desktop did not hand over the episode's screen recording; the cause says why."""


class ScreenRecorder(Protocol):
    """The desktop's side of a recording (DesktopEnv's controller)."""

    def start_recording(self) -> Any: ...

    def end_recording(self, dest: str) -> Any: ...


def timestamp() -> str:
    return dt.datetime.now().strftime("%Y%m%d@%H%M%S%f")


def jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


def task_logger(task_dir: Path, task_id: str) -> logging.Logger:
    logger = logging.getLogger(f"osworld.task.{task_id}.{id(task_dir)}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    handler = logging.FileHandler(task_dir / LOG_FILE, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    return logger


def close_logger(logger: logging.Logger) -> None:
    for handler in list(logger.handlers):
        handler.close()
        logger.removeHandler(handler)


class EpisodeRecorder:
    """Owns one task folder for one episode: from the `running` mark written on creation to the
    record `finish` writes. `log` is the episode's logger (runtime.log)."""

    def __init__(self, task_dir: Path, task_id: Any, previous_errors: list[PreviousError] | None = None,
                 trial: int = 1, task_sha256: str | None = None, instruction: str | None = None) -> None:
        task_dir.mkdir(parents=True, exist_ok=True)
        self.task_dir = task_dir
        # The history is there from the start: a run killed mid-episode must not lose it.
        self.status = TaskStatus("running", task_id=task_id, instruction=instruction, trial=trial,
                                 task_sha256=task_sha256, started=now_iso(), steps=0,
                                 previous_errors=list(previous_errors or []))
        write_status(task_dir, self.status)
        self.log = task_logger(task_dir, str(task_id))
        self.durations = dict.fromkeys(PARTS, 0.0)
        self._trajectory: list[str] = []
        self._screen: ScreenRecorder | None = None

    @contextlib.contextmanager
    def timed(self, part: str) -> Iterator[None]:
        """Adds the time the block takes to `part` of the durations, a block that failed included."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.durations[part] += time.monotonic() - started

    def screen(self, png: bytes) -> None:
        """The size of the desktop's screen as the agent got it (a setting whoever reproduces the score needs)."""
        with Image.open(io.BytesIO(png)) as image:
            self.status.screen_size = list(image.size)

    def screenshot(self, step: int, png: bytes, stamp: str | None = None) -> str:
        """Writes step_<step>_<stamp>.png (step 0: the screen the agent starts from); returns its name."""
        name = f"step_{step}_{stamp or timestamp()}.png"
        write_bytes_atomic(self.task_dir / name, png)
        return name

    def step(self, step: int, stamp: str, action: Any, response: Any, info: dict[str, Any], usage: Any = None,
             reward: float = 0, done: bool = False, screenshot: str | None = None) -> None:
        """One line of traj.jsonl (one per action, or one saying the answer had none), the file rewritten whole."""
        self._trajectory.append(json.dumps({
            "step_num": step, "action_timestamp": stamp, "action": jsonable(action), "response": jsonable(response),
            "reward": reward, "done": done, "info": jsonable(info), "screenshot_file": screenshot, "usage": usage},
            ensure_ascii=False))
        write_trajectory(self.task_dir, self._trajectory)

    def live_view(self, url: str) -> None:
        """The task's desktop is in the live view at `url` (without its token): in status.json while it runs."""
        self.status.live_view = url
        write_status(self.task_dir, self.status)

    def perturbation(self, record: dict[str, Any]) -> None:
        """What a perturbation did, in status.json at once (kept even if the episode fails later) and its own file."""
        self.log.info("perturbation: %s", json.dumps(record))
        self.status.perturbation = record
        write_status(self.task_dir, self.status)
        write_json_atomic(self.task_dir / PERTURBATION_FILE, record)

    def start_recording(self, screen: ScreenRecorder) -> None:
        screen.start_recording()
        self._screen = screen

    def desktop_logs(self, logs: dict[str, str]) -> None:
        """desktop.log: the last lines of each of the desktop's logs, one section each (nothing without logs)."""
        if logs:
            text = "".join(f"===== {name} =====\n{tail.rstrip()}\n\n" for name, tail in logs.items())
            write_bytes_atomic(self.task_dir / DESKTOP_LOG_FILE, text.encode("utf-8", "replace"))

    def score(self, score: float, evaluation: Evaluation) -> None:
        """result.txt and the evaluation's explanation; `finish` takes both back if the episode still fails."""
        write_score(self.task_dir, score)
        self.status.evaluation = evaluation
        self.log.info("score %s: %s", score, evaluation.explanation)

    def end_recording(self) -> RecordingNotClosed | None:
        """Ends the screen recording, if one runs, whatever happened; returns why it could not be ended
        (the episode's own failure, if any, stays the one reported)."""
        screen, self._screen = self._screen, None
        if screen is None:
            return None
        try:
            screen.end_recording(str(self.task_dir / RECORDING_FILE))
        except Exception as e:
            self.log.error("closing the recording failed: %s: %s", type(e).__name__, e)
            failure = RecordingNotClosed(f"closing the recording failed: {type(e).__name__}: {e}")
            failure.__cause__ = e
            return failure
        return None

    def close_log(self) -> None:
        close_logger(self.log)

    def agent_fault(self, fault: AgentFault) -> None:
        """A desktop the agent broke: result.txt 0, and the reason in status.json (`agent_fault`, and as
        the evaluation's explanation, which summaries show)."""
        write_score(self.task_dir, 0.0)
        self.status.agent_fault = fault
        self.status.evaluation = Evaluation(0.0, f"scored 0: {fault.text()}")

    def finish(self, error: ErrorRecord | None, steps: int, usage: Any = None, warnings: Any = None,
               model_calls: Any = None, recorded_score: Any = None, readiness: Any = None) -> TaskStatus:
        """The final record: ok with its score, or the error (never with a score); written last.
        `recorded_score`: a replayed trajectory's score where it was recorded, kept beside this one;
        `readiness`: how long the setup's steps and the first observation waited for the desktop."""
        status = self.status
        if isinstance(readiness, dict) and (readiness.get("steps") or readiness.get("first_observation")):
            status.readiness = jsonable(readiness)
        if isinstance(recorded_score, (int, float)) and not isinstance(recorded_score, bool):
            status.recorded_score = float(recorded_score)
        if warnings:
            status.warnings = jsonable(list(warnings))
        status.status, status.steps, status.finished = "error" if error else "ok", steps, now_iso()
        status.live_view = None  # the page showed the task while it ran
        status.durations = {k: round(v, 3) for k, v in self.durations.items()}
        if error:
            status.error, status.evaluation = error, None
            remove_score(self.task_dir)
        if isinstance(usage, dict) and usage:
            status.usage = usage
        if isinstance(model_calls, dict) and model_calls:
            status.model_calls = jsonable(model_calls)
        write_status(self.task_dir, status)
        return status
