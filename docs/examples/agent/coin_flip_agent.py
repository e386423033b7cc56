"""An example agent that succeeds at random: a stand-in for a flaky model, to see what repeated trials buy.

On each trial of a task it flips a coin: with chance `p` it plays the task's reference solution (which
scores 1), otherwise it says DONE at once (which scores 0: `osworld verify` checks both for every
built-in task). The coin is seeded by (seed, task id, trial), so a run's outcomes are reproducible, and
the trials of one task differ as a flaky model's would.

    osworld run --agent docs/examples/agent/coin_flip_agent.py:CoinFlipAgent --agent-arg p=0.5 \\
        --agent-arg seed=1 --model coin-flip --obs screenshot --trials 3
"""
from __future__ import annotations

import random
from typing import Any

from desktop_env.tasks import Task
from mm_agents.oracle import OracleAgent


def plays(seed: int, task_id: str, trial: int, p: float) -> bool:
    """Whether the coin of this trial of this task says to play the solution."""
    return random.Random(f"{seed}:{task_id}:{trial}").random() < p


class CoinFlipAgent(OracleAgent):
    def __init__(self, p: float = 0.5, seed: int = 0, action_space: str = "pyautogui", **kwargs: Any):
        super().__init__(action_space=action_space)
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"p is the chance of playing the solution, a number in [0, 1]; got {p!r}")
        self.p, self.seed = float(p), int(seed)

    def start_task(self, task: Task, trial: int = 1) -> None:
        """Asks for `trial` by name: the harness then says which of --trials K this episode is."""
        super().start_task(task)
        if not plays(self.seed, task.id, trial, self.p):
            self._actions = ["DONE"]
