"""OSWorld's episode entry point, with its public signature, for existing agent runners.

    run_single_example(agent, env, example, max_steps, instruction, args, example_result_dir, scores)

`args` is read for `sleep_after_execution`, `record` (default True), `wait_after_reset`,
`settle_timeout` and `task_dir` (where the task's relative files live); anything missing
takes the default. The score is appended to `scores` (as OSWorld does) only when the
episode finished without an error; otherwise the error is raised after everything,
status.json included, has been written.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.episode import EpisodeConfig, EpisodeOutcome, run_episode


class EpisodeError(RuntimeError):
    """The episode ended in an error (recorded in status.json of its result folder)."""

    def __init__(self, outcome: EpisodeOutcome):
        super().__init__(outcome.error.text() if outcome.error else "the episode ended in an error")
        self.outcome = outcome


def run_single_example(agent: Any, env: Any, example: dict, max_steps: int, instruction: str, args: Any,
                       example_result_dir: str, scores: list) -> EpisodeOutcome:
    config = EpisodeConfig(
        max_steps=max_steps,
        sleep_after_execution=float(getattr(args, "sleep_after_execution", 0.0) or 0.0),
        record=bool(getattr(args, "record", True)),
        wait_after_reset=float(getattr(args, "wait_after_reset", 0.0) or 0.0),
        settle_timeout=float(getattr(args, "settle_timeout", EpisodeConfig.settle_timeout)),
    )
    outcome = run_episode(agent, env, example, instruction, Path(example_result_dir), config,
                          task_dir_for_files=getattr(args, "task_dir", None))
    if outcome.status == "error":
        raise EpisodeError(outcome)
    scores.append(outcome.score)
    return outcome
