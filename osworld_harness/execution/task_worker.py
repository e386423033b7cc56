"""One desktop and one agent that run tasks one after another: the unit every backend scales out.

The local backend runs one in each worker process, the thread backend one in each thread, the Ray
backend one in each Ray actor.
The desktop and the agent are made on the first task and reused; a desktop that died is
replaced before the next task. Whatever goes wrong with a task ends as a recorded error in its
folder, never as an exception out of `run_task`.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_env.desktop_env import DesktopEnv
from desktop_env.extensions import load_plugin
from desktop_env.providers import create_provider
from desktop_env.tasks import load_task_set
from mm_agents.agent_process import AgentProcessDied, ProcessAgent
from mm_agents.loader import build_agent
from osworld_harness.results.task_folder import ErrorRecord, PreviousError, TaskStatus, now_iso, write_status

from .episode import AgentOverBudget, EpisodeConfig, run_episode
from .task_result import TaskResult

if TYPE_CHECKING:
    from osworld_harness.results.config import RunConfig

class DesktopWorker:
    def __init__(self, config: Any, env_factory: Callable[[], Any] | None = None) -> None:
        for plugin in getattr(config, "plugins", ()):  # a spawned process or a Ray actor has only the built-ins
            load_plugin(plugin)
        self.config = config.resolved()  # the agent's own defaults, as the run that made the config took them
        self.env_factory = env_factory  # a caller's own environments (ThreadBackend.with_env_factory)
        self.task_set = load_task_set(config.tasks)
        self.env: Any = None
        self.agent: Any = None

    def _ensure_env(self) -> Any:
        if self.env is None and self.env_factory is not None:
            self.env = self.env_factory()
            self.env.evaluator_fixes = self.config.evaluator_fixes  # the run's option decides how it is scored
        if self.env is None:
            config, desktop = self.config, self.config.desktop()
            self.env = DesktopEnv(provider=create_provider(config.provider, desktop), provider_name=config.provider,
                                  path_to_vm=config.path_to_vm, action_space=config.action_space,
                                  screen_size=desktop.screen_size,
                                  require_a11y_tree=config.observation_type != "screenshot",
                                  cache_dir=config.cache_dir, client_password=desktop.client_password,
                                  network=desktop.network, evaluator_fixes=config.evaluator_fixes)
        return self.env

    def run_task(self, domain: str, task_id: str, task_dir: Path, previous_errors: list[PreviousError],
                 on_step: Callable[[int], None] = lambda n: None, trial: int = 1,
                 more_to_come: bool = True) -> TaskResult:
        """Runs one trial of a task into `task_dir` (an empty folder); says how it ended. `more_to_come`:
        whether another task is expected after this one (the desktop then readies the next one meanwhile)."""
        started = now_iso()
        durations: dict[str, float] = {}
        task_sha256 = None
        try:
            task = self.task_set.load(domain, task_id)
            task_sha256 = task.sha256
            if self.agent is None:
                self.agent = build_agent(self.config.agent, agent_python=self.config.agent_python,
                                         **self.config.agent_kwargs())
            if self.env is None:
                booting = time.monotonic()
                try:
                    self._ensure_env()
                finally:  # a desktop that did not come up took its time too
                    durations["reset"] = round(time.monotonic() - booting, 3)
            env = self.env
            outcome = run_episode(self.agent, env, task.config, task.instruction, task_dir,
                                  episode_config(self.config), task=task, task_dir_for_files=str(task.task_dir),
                                  previous_errors=previous_errors, on_step=on_step, trial=trial,
                                  another_reset_follows=more_to_come)
            if outcome.error and outcome.error.type in (AgentOverBudget.__name__, AgentProcessDied.__name__):
                self.drop_agent()  # its predict() may still be running in the thread left behind; or it is dead
            return TaskResult(outcome.status, outcome.score, outcome.steps,
                              outcome.error.message if outcome.error else None,
                              outcome.error.fatal if outcome.error else None)
        except Exception as e:  # could not even start the episode: still a recorded error
            error = ErrorRecord.from_exception(e)
            write_status(task_dir, TaskStatus("error", task_id=task_id, trial=trial, task_sha256=task_sha256,
                                              error=error, steps=0, started=started, finished=now_iso(),
                                              durations=durations, previous_errors=list(previous_errors)))
            if self.env is not None and not self._env_alive():
                self.env.close()
                self.env = None  # a fresh desktop for the next task
            return TaskResult.failed(error.message, error.fatal)

    def _env_alive(self) -> bool:
        try:
            self.env.controller.health()
            return True
        except Exception:
            return False

    def drop_agent(self) -> None:
        """The agent let go of; one in a process of its own (OSWorld's) ends with it."""
        if isinstance(self.agent, ProcessAgent):
            self.agent.close()
        self.agent = None

    def close(self) -> None:
        self.drop_agent()
        if self.env is not None:
            self.env.close()
            self.env = None


def episode_config(config: RunConfig) -> EpisodeConfig:
    """What each episode of the run is given: its step budget, pauses, recording, perturbation and time budget."""
    return EpisodeConfig(max_steps=config.max_steps, sleep_after_execution=config.sleep_after_execution,
                         record=config.record, watch=config.watch, wait_after_reset=config.wait_after_reset,
                         perturb=config.perturb, perturb_seed=config.perturb_seed,
                         agent_time_budget=config.time_budget() or None)
