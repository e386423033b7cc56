"""The reference-solution agent: plays a task's solution, one action per predict call.

Infeasible tasks get FAIL. The pause a solution step asks for is folded into the
action's code, so the run's own --sleep-after-execution does not change the replay.
"""
from __future__ import annotations

from typing import Any

from desktop_env.tasks import Task
from desktop_env.tasks.solutions import SPECIAL, load_solution


class OracleAgent:
    def __init__(self, action_space: str = "pyautogui", **kwargs: Any):
        if action_space != "pyautogui":
            raise ValueError("the reference-solution agent plays pyautogui solutions; "
                             f"got action_space={action_space!r}")
        self._actions: list[str] = []
        self._next = 0

    def start_task(self, task: Task) -> None:
        if task.infeasible:
            self._actions = ["FAIL"]
        else:
            self._actions = [step.action if step.action in SPECIAL or not step.pause
                             else f"{step.action}\nimport time; time.sleep({step.pause})"
                             for step in load_solution(task)]
            if self._actions[-1] not in SPECIAL:
                self._actions.append("DONE")
        self._next = 0

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[str, list[str]]:
        if self._next >= len(self._actions):
            return "The reference solution is complete.", ["DONE"]
        action = self._actions[self._next]
        self._next += 1
        return f"Reference step {self._next} of {len(self._actions)}.", [action]

    def reset(self, logger=None) -> None:
        self._actions, self._next = [], 0
