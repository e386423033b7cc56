"""`--agent human`: a person does the task in the browser (docs/HUMANS.md). The run shows the desktop
live with the task's instruction over Done / Infeasible / Give up (desktop_env/live_view/); what the person
types, clicks and scrolls there comes back as pyautogui actions, which this agent answers with and the
harness carries out like any agent's, so traj.jsonl holds what the desktop got, with a screenshot after
each step, and the evaluator scores the end state. Each step's response lists its actions with the time of
their first input event (seconds since the task's view opened).

Done answers DONE, Infeasible answers FAIL (OSWorld's answer for a task that cannot be done), Give up ends
the task without an answer. While no answer comes the person may leave and come back: the desktop waits,
for as long as --agent-time-budget allows."""
from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

IDLE_S = 0.4   # a pause that ends a step: typing runs as one action, a click goes once it cannot be a double
POLL_S = 0.25


class HumanAgentError(RuntimeError):
    """The person's task cannot be handed to them; the message says why."""


class HumanAgent:
    takes_the_desktop = True

    def __init__(self, idle_s: float = IDLE_S, **_run_options: Any) -> None:
        self.idle_s = float(idle_s)
        self.view: Any = None
        self.episode_over = False

    def reset(self, logger: logging.Logger | None = None) -> None:
        self.view = None
        self.episode_over = False

    def attach_view(self, desktop: Any) -> None:
        """The desktop's live view for this task (osworld_harness/execution/episode.py gives it)."""
        self.view = desktop

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[Any, list[Any]]:
        if self.view is None or self.view.human is None:
            raise HumanAgentError("--agent human needs the task's live view; it was not opened")
        human = self.view.human
        while True:
            if self.view.human is not human:  # the task ended while this waited (its time budget ran out)
                raise HumanAgentError("the person's task ended before they answered")
            if self.view.answered.is_set():
                taken = human.drain()
                answer = self.view.answer
                response = {"answer": answer, "input": [asdict(a) for a in taken]}
                codes: list[Any] = [a.code for a in taken]
                if answer == "done":
                    return response, [*codes, "DONE"]
                if answer == "infeasible":
                    return response, [*codes, "FAIL"]
                self.episode_over = True  # gave up: the end state is scored as it is
                return response, codes
            taken = human.take(self.idle_s, POLL_S)
            if taken:
                return {"input": [asdict(a) for a in taken]}, [a.code for a in taken]
