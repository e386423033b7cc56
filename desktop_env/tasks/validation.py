"""Checks a task's names against what this harness can run.

Every setup step `type` (config and postconfig), getter `type` (result and
expected) and metric `func` must be known. An unknown name is a Problem that
names the file, the field (e.g. `evaluator.result[1].type`) and the value, and
lists the close known names; a name we know but cannot run offline (accounts,
live web) is reported as unsupported with the reason. A host path that would leave
the harness's folders (desktop_env.tasks.paths) is a Problem of kind "path": an
error, like an unknown name.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .loader import Task


@dataclass(frozen=True)
class Problem:
    path: Path
    field: str
    kind: str          # "setup step", "getter", "metric", or "path" (an unsafe host path)
    name: str          # the name, or for a path the value as the task gives it
    reason: str        # "unknown", why it is unsupported, or why the path is refused
    close: tuple[str, ...] = ()

    @property
    def unsafe_path(self) -> bool:
        return self.kind == "path"

    @property
    def unsupported(self) -> bool:
        return self.reason != "unknown" and not self.unsafe_path

    def __str__(self) -> str:
        if self.unsafe_path:
            return f"{self.path}: {self.field} = {self.name!r} {self.reason}"
        hint = f"; did you mean {', '.join(self.close)}?" if self.close else ""
        what = "unknown" if not self.unsupported else f"unsupported ({self.reason})"
        return f"{self.path}: {self.field} = {self.name!r}: {what} {self.kind}{hint}"


def _entries(value, field: str) -> Iterator[tuple[str, object]]:
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield f"{field}[{i}]", item
    else:
        yield field, value


def _check(path: Path, field: str, kind: str, name, known: list[str], unsupported: dict[str, str]) -> Problem | None:
    if isinstance(name, str) and name in known:
        return None
    if isinstance(name, str) and name in unsupported:
        return Problem(path, field, kind, name, unsupported[name])
    close = tuple(difflib.get_close_matches(str(name), known, n=3, cutoff=0.6))
    return Problem(path, field, kind, str(name), "unknown", close)


def validate_task(task: Task) -> list[Problem]:
    # Imported here: the setup steps and getters import safe_paths, which imports this package.
    from ..controllers.setup import NEEDS_ACCOUNT, step_names
    from ..evaluators import registry
    from .paths import unsafe_paths

    registry.load_builtins()
    steps, getters, metrics = step_names(), registry.getter_names(), registry.metric_names()
    problems: list[Problem | None] = []
    config = task.config
    for section, steps_list in (("config", config.get("config") or []),
                                ("evaluator.postconfig", task.evaluator.get("postconfig") or [])):
        for i, step in enumerate(steps_list):
            name = step.get("type") if isinstance(step, dict) else step
            problems.append(_check(task.path, f"{section}[{i}].type", "setup step", name, steps, NEEDS_ACCOUNT))
    evaluator = task.evaluator
    for field, func in _entries(evaluator.get("func"), "evaluator.func"):
        problems.append(_check(task.path, field, "metric", func, metrics, registry.UNSUPPORTED_METRICS))
    for role in ("result", "expected"):
        for field, spec in _entries(evaluator.get(role), f"evaluator.{role}"):
            if spec is None or spec == {}:
                continue
            name = spec.get("type") if isinstance(spec, dict) else spec
            problems.append(_check(task.path, f"{field}.type", "getter", name, getters, registry.UNSUPPORTED_GETTERS))
    for unsafe in unsafe_paths(config, task.path, task.task_dir):
        value = unsafe.value if isinstance(unsafe.value, str) else repr(unsafe.value)
        problems.append(Problem(task.path, unsafe.field or "", "path", value, unsafe.reason))
    return [p for p in problems if p is not None]
