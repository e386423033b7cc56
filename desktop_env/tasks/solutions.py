"""Reference solutions: how a task is solved, kept apart from the task and never shown to agents.

`<root>/solutions/<domain>/<id>.json` beside `<root>/examples/`: a JSON list of
actions in the pyautogui action space. Each entry is a code string, one of
"WAIT" / "DONE" / "FAIL", or `{"code": str, "pause": seconds}` when the app needs
longer to react than the default pause.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import TaskFileError
from .loader import Task, read_json

DEFAULT_PAUSE_S = 0.5
SPECIAL = ("WAIT", "DONE", "FAIL")


@dataclass(frozen=True)
class SolutionStep:
    action: str
    pause: float = DEFAULT_PAUSE_S


def solution_path(task: Task) -> Path:
    """examples/<domain>/<id>.json -> solutions/<domain>/<id>.json"""
    return task.path.parents[2] / "solutions" / task.domain / task.path.name


def load_solution(task: Task) -> list[SolutionStep]:
    path = solution_path(task)
    raw = read_json(path, f"reference solution of task {task.id}")
    if not isinstance(raw, list) or not raw:
        raise TaskFileError(f"solution {path}: expected a non-empty list of actions, got {str(raw)[:80]}")
    steps = []
    for i, entry in enumerate(raw):
        if isinstance(entry, str):
            steps.append(SolutionStep(entry))
        elif isinstance(entry, dict) and isinstance(entry.get("code"), str):
            pause = entry.get("pause", DEFAULT_PAUSE_S)
            if not isinstance(pause, (int, float)) or pause < 0:
                raise TaskFileError(f"solution {path}: entry {i} field 'pause' must be a number >= 0, got {pause!r}")
            steps.append(SolutionStep(entry["code"], float(pause)))
        else:
            raise TaskFileError(f"solution {path}: entry {i} must be a code string or {{code, pause}}, "
                                f"got {entry!r:.80}")
        try:
            if steps[-1].action not in SPECIAL:
                compile(steps[-1].action, f"{path}[{i}]", "exec")
        except SyntaxError as e:
            raise TaskFileError(f"solution {path}: entry {i} is not valid Python: {e.msg} ({e.text!r:.80})") from None
    return steps
