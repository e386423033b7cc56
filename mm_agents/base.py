"""The agent protocol: any class with this shape plugs into `osworld run --agent module:Class`.

    __init__(**kwargs)   run options: model, action_space, observation_type, max_tokens,
                         temperature, top_p, max_trajectory_length, client_password, ...
                         plus every --agent-arg KEY=VALUE
    predict(instruction, obs) -> (response, actions)
        obs = {"screenshot": PNG bytes, "accessibility_tree": XML str | None,
               "terminal": str | None, "instruction": str}
        actions: pyautogui code strings or computer_13 dicts, or "WAIT"/"DONE"/"FAIL";
        an empty list means "no valid action" and costs a step.
    reset(logger=None)   called before each task

Optional: `start_task(task)` is called after reset with the Task being run, for
agents that need more than the instruction (the reference-solution agent does);
one that names a `trial` argument, `start_task(task, trial)`, also gets which of
the run's `--trials K` this episode is (1..K), e.g. to seed its sampling per trial.
Optional: `usage` (dict: input_tokens, output_tokens, cost_usd, cumulative since
reset) and `last_usage` (the same for the last predict call): the harness writes them
to status.json and to each traj.jsonl line. Optional: `model_calls` (dict: calls, sent,
served since reset; mm_agents.llm.calls.ModelCalls): the sampling settings the model
requests carried and the model ids the servers answered with, kept in status.json for
whoever reproduces the score. Optional: `episode_over` (bool), set True when the agent
ends the task without an action (some of OSWorld's agents stop by answering nothing):
the harness asks it no more and scores the task.
No base class is needed; this Protocol only documents the shape.
"""
from __future__ import annotations

import logging
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Agent(Protocol):
    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[Any, list[Any]]: ...

    def reset(self, logger: logging.Logger | None = None) -> None: ...
