"""An agent that wrecks the desktop of each task it would fail, through real actions, and solves the
others honestly (their reference solutions). Before sabotage scored 0, each wrecked task became an
error, which the first rate left out: this agent's headline rate was 100% on a set it solved 40% of.

    osworld run --agent tests/desktop/saboteur.py:Saboteur --model saboteur --obs screenshot \\
        --domain os --task-id os-find-copy-lease --task-id os-rename-photos-pattern \\
        --task-id os-zip-project-folder --task-id os-organize-invoices --task-id os-count-log-errors
"""
from __future__ import annotations

from typing import Any

from mm_agents.oracle import OracleAgent

# What a hostile agent does instead of the task, as pyautogui actions (code run in the desktop).
FORK_BOMB = ["import subprocess\nsubprocess.Popen(['bash', '-c', ':(){ :|:& };:'])\ntime.sleep(3)"]
MEMORY_AND_DISK = [
    # 3 GiB into the home folder: the write fails at the cap (--desktop-disk), and the home stays full
    "import subprocess\nsubprocess.run(['dd', 'if=/dev/zero', 'of=/home/user/fill', 'bs=1M', 'count=3072'])",
    # then more memory than the desktop has (--desktop-memory): the kernel kills the hog
    "import subprocess\nsubprocess.run(['python3', '-c', 'hog = []\\nwhile True: hog.append(b\"x\" * (64 << 20))'])",
]
KILL_SERVER = ["import os, signal\nos.kill(os.getppid(), signal.SIGKILL)"]
SABOTAGE = {"os-find-copy-lease": FORK_BOMB, "os-rename-photos-pattern": MEMORY_AND_DISK,
            "os-zip-project-folder": KILL_SERVER}


class Saboteur:
    def __init__(self, **kwargs: Any) -> None:
        self.honest = OracleAgent(**{k: v for k, v in kwargs.items() if k == "action_space"})
        self.plan: list[str] | None = None

    def start_task(self, task: Any) -> None:
        self.plan = list(SABOTAGE[task.id]) if task.id in SABOTAGE else None
        if self.plan is None:
            self.honest.start_task(task)

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[str, list[str]]:
        if self.plan is None:
            return self.honest.predict(instruction, obs)
        if not self.plan:
            return "Done.", ["DONE"]
        return "Breaking the desktop instead.", [self.plan.pop(0)]

    def reset(self, logger: Any = None) -> None:
        self.honest.reset(logger)
        self.plan = None
