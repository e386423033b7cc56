"""`infeasible`: the metric name of tasks that cannot be done on this desktop.

Such a task scores 1 when the agent's last action was FAIL, and 0 otherwise. That depends on
the action history, not on any file, so DesktopEnv.evaluate decides it before any getter or
metric runs. The name is registered so that task files resolve it; calling it means the
harness sent an infeasible task down the ordinary scoring path, which is a harness bug: it
raises rather than return 0, which would silently fail every infeasible task.
"""
from __future__ import annotations

from typing import Any

from ..registry import metric
from ..scoring import EvaluationError


@metric("infeasible")
def infeasible(*args: Any) -> float:
    raise EvaluationError(
        "metric 'infeasible' is not computed from getters: DesktopEnv.evaluate scores an infeasible "
        "task by the last action (1 if it was FAIL, else 0) before running any metric"
    )
