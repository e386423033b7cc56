"""Whether a task's setup took, before the agent acts.

OSWorld's task files drive apps during setup with keys and clicks a fixed time after launching them
(impress ef9d12bd hides the slide pane with F10, Right, Down x11, Enter; the task asks the agent to
bring it back). Where those keys go nowhere, the agent starts from a desktop the task did not mean,
and a task that asks to undo the setup's change is solved before anyone acted: a free pass that
depends on how busy the machine was. The task's own evaluator says what its setup must have done:
right after setup it must not already be satisfied. So after a setup with such steps, the evaluator
runs once on the start state (without its postconfig, which saves files and closes apps); a score of
1 there is a setup that did not take, an error naming the step, never a task the agent starts.
"""
from __future__ import annotations

import logging
from typing import Any

from ..errors import DesktopEnvError
from ..evaluators.context import LiveContext
from ..evaluators.scoring import evaluate_task
from .setup import SetupError, drives_input

log = logging.getLogger("osworld.setup")


class SetupNotTaken(SetupError):
    """The task's setup did not do what its evaluator says it must have done."""


def presses_keys(step: Any) -> bool:
    """A step that presses keys or clicks in an app, whose effect its evaluator can show (window activations
    are checked where they run: setup.activate_window waits until the window has the focus)."""
    return drives_input(step) and step.get("type") not in ("activate_window", "close_window")


def last_input_step(task_config: dict[str, Any]) -> int | None:
    steps = task_config.get("config") or []
    indices = [i for i, step in enumerate(steps) if presses_keys(step)]
    return indices[-1] if indices else None


def check_setup_took(env: Any, task_config: dict[str, Any]) -> None:
    """Raises SetupNotTaken when a setup that drove an app with keys or clicks left the task already solved.
    Tasks without such steps, infeasible tasks and evaluators that cannot run on the start state (a file
    that does not exist yet, a getter that needs what only postconfig makes) are not checked."""
    index = last_input_step(task_config)
    evaluator = task_config.get("evaluator") or {}
    if index is None or not evaluator or evaluator.get("func") == "infeasible":
        return
    start_state = {key: value for key, value in evaluator.items() if key != "postconfig"}
    try:
        evaluation = evaluate_task(LiveContext(env), start_state)
    except (DesktopEnvError, OSError, ValueError, KeyError, TypeError) as e:
        log.info("the setup's effect could not be checked on the start state: %s: %s", type(e).__name__, e)
        return
    if evaluation.score >= 1.0:
        step = task_config["config"][index]
        raise SetupNotTaken(f"setup step {index} ({step.get('type')}) did not take: before the agent acted, the "
                            f"task's evaluator already gives {evaluation.score:g} ({evaluation.explanation})")
