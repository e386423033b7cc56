"""The replay agent: plays back trajectories recorded elsewhere (on OSWorld's VM, by another harness, by
an earlier run of this one), one recorded action per predict call, and says what score the trajectory
had where it was recorded, so a run can put that score beside the one it gets here.

`--agent replay --agent-arg trajectories=PATH` reads either
- a JSON-lines file, one trajectory a line: `task_id`, `actions` (pyautogui code strings, computer_13
  dicts, or WAIT/DONE/FAIL), optionally `exec_prefix` (the import line the recorded code ran after) and
  the recorded score as `score_on_vm` or `score` (the format of shared VM trajectories); or
- a results folder in OSWorld's layout (this harness writes the same): every `<id>/traj.jsonl` under it,
  its lines' `action` in order, and `result.txt` beside it as the recorded score.

Pacing is OSWorld's: after each action the desktop is given `pacing` seconds (its runs of UI-TARS used
`--sleep_after_execution 3`), and a recorded WAIT waits as long. The pause is folded into the action's
code, as the reference-solution agent does, so the run's own --sleep-after-execution adds to it rather
than replacing it.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SPECIAL = ("DONE", "FAIL", "WAIT")
DEFAULT_PACING_S = 3.0


class TrajectoryFileError(ValueError):
    """A trajectory source that cannot be read; the message names the file, line or field and the value."""


@dataclass(frozen=True)
class RecordedTrajectory:
    task_id: str
    actions: tuple[Any, ...]        # as recorded, with the recorded code's import line in front
    score: float | None             # where it was recorded (None: that run has no score)
    source: str                     # file:line or the traj.jsonl's path


def _score(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TrajectoryFileError(f"{where}: the recorded score must be a number or null, got {value!r}")
    return float(value)


def _with_prefix(action: Any, prefix: str) -> Any:
    if isinstance(action, str) and action.strip() not in SPECIAL and prefix:
        return prefix.rstrip("\n") + "\n" + action
    return action


def _from_jsonl(path: Path) -> list[RecordedTrajectory]:
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except ValueError as e:
            raise TrajectoryFileError(f"{where}: not JSON ({e})") from None
        if not isinstance(record, dict):
            raise TrajectoryFileError(f"{where}: a trajectory must be a JSON object, got {type(record).__name__}")
        task_id, actions = record.get("task_id"), record.get("actions")
        if not isinstance(task_id, str) or not task_id:
            raise TrajectoryFileError(f"{where}: field task_id must be a non-empty string, got {task_id!r}")
        if not isinstance(actions, list):
            raise TrajectoryFileError(f"{where}: field actions must be a list, got {type(actions).__name__}")
        prefix = record.get("exec_prefix") or ""
        if not isinstance(prefix, str):
            raise TrajectoryFileError(f"{where}: field exec_prefix must be a string, got {prefix!r}")
        score = _score(record["score_on_vm"] if "score_on_vm" in record else record.get("score"), where)
        found.append(RecordedTrajectory(task_id, tuple(_with_prefix(a, prefix) for a in actions), score, where))
    return found


def _from_results(root: Path) -> list[RecordedTrajectory]:
    """Each task folder's first trial (`<id>/traj.jsonl`; later trials live under `<id>/trials/`)."""
    found = []
    for traj in sorted(root.rglob("traj.jsonl")):
        if "trials" in traj.relative_to(root).parts:
            continue
        actions = []
        for number, line in enumerate(traj.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError as e:
                raise TrajectoryFileError(f"{traj}:{number}: not JSON ({e})") from None
            if isinstance(entry, dict) and entry.get("action") is not None:  # None: a step with no valid action
                actions.append(entry["action"])
        result = traj.with_name("result.txt")
        score = None
        if result.is_file():
            text = result.read_text(encoding="utf-8").strip()
            try:
                score = _score(float(text), str(result))
            except ValueError:
                raise TrajectoryFileError(f"{result}: not a score: {text[:80]!r}") from None
        found.append(RecordedTrajectory(traj.parent.name, tuple(actions), score, str(traj)))
    return found


def load_trajectories(path: str | Path) -> dict[str, RecordedTrajectory]:
    """The trajectories a file or results folder holds, by task id; a task recorded twice is an error
    naming both places (which of them to replay would be a guess)."""
    source = Path(path).expanduser()
    if source.is_dir():
        found = _from_results(source)
    elif source.is_file():
        found = _from_jsonl(source)
    else:
        raise TrajectoryFileError(f"trajectories: no such file or folder: {source}")
    if not found:
        raise TrajectoryFileError(f"trajectories: {source} holds no trajectory")
    by_task: dict[str, RecordedTrajectory] = {}
    for trajectory in found:
        earlier = by_task.get(trajectory.task_id)
        if earlier is not None:
            raise TrajectoryFileError(f"task {trajectory.task_id} is recorded twice: at {earlier.source} "
                                      f"and at {trajectory.source}")
        by_task[trajectory.task_id] = trajectory
    return by_task


class ReplayAgent:
    """Plays the recorded actions of the task being run; `recorded_score` is the score they had where they
    were recorded, which the harness keeps beside the score they get here."""

    def __init__(self, trajectories: str | None = None, pacing: float = DEFAULT_PACING_S, **kwargs: Any):
        if not trajectories:
            raise ValueError("the replay agent needs --agent-arg trajectories=PATH (a JSON-lines file of "
                             "trajectories or a results folder)")
        if isinstance(pacing, bool) or not isinstance(pacing, (int, float)) or not 0 <= pacing < 600:
            raise ValueError(f"pacing must be a number of seconds in [0, 600), got {pacing!r}")
        self.trajectories = load_trajectories(trajectories)
        self.pacing = float(pacing)
        self.recorded_score: float | None = None
        self._actions: list[Any] = []
        self._next = 0

    def start_task(self, task: Any) -> None:
        recorded = self.trajectories.get(task.id)
        if recorded is None:
            raise LookupError(f"no recorded trajectory for task {task.id} in the replayed file "
                              f"({len(self.trajectories)} tasks recorded)")
        self._actions = [self._paced(action) for action in recorded.actions]
        self.recorded_score = recorded.score
        self._next = 0

    def _paced(self, action: Any) -> Any:
        if not self.pacing or isinstance(action, dict):
            return action
        pause = f"import time; time.sleep({self.pacing:g})"
        if action.strip() == "WAIT":
            return f"{pause}  # WAIT"
        if action.strip() in SPECIAL:
            return action.strip()
        return f"{action}\n{pause}"

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[str, list[Any]]:
        if self._next >= len(self._actions):
            return "The recorded trajectory ended without DONE.", ["DONE"]
        action = self._actions[self._next]
        self._next += 1
        return f"Recorded step {self._next} of {len(self._actions)}.", [action]

    def reset(self, logger=None) -> None:
        self._actions, self._next, self.recorded_score = [], 0, None
