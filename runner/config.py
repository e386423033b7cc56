"""The options of a run (RunConfig), checked as they are made: a mistake names the option as the
command line spells it (RunOptionError).

Some options are decided from what the run is about to do unless the user gives them (`resolved()`):
the model and observation type the agent's constructor declares (its defaults, which then also name
the results folder), the network (on when a selected task needs a live website), and the agent's time
budget (scaled with the step budget, or lifted for OSWorld-Verified as the leaderboard runs it).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from .episode import EpisodeConfig
from .results import RunLayout
from .settings import flag

OBSERVATION_TYPES = ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som")
ACTION_SPACES = ("pyautogui", "computer_13")
PERTURBATIONS = ("layout", "clutter")
BACKENDS = ("local", "ray")
DEFAULT_OBSERVATION = "screenshot_a11y_tree"  # for an agent that declares none: it gets everything
SECONDS_PER_STEP = 20.0   # the agent's time budget per step when none is given (15 steps: 300 s)


class RunOptionError(ValueError):
    """An option of the run that cannot work. `option` is how the command line spells it (`--max-steps`);
    the message says what was given and what would be right."""

    def __init__(self, option: str, message: str):
        super().__init__(f"{option}: {message}")
        self.option = option
        self.detail = message

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.option, self.detail)


class ResumeMismatch(RunOptionError):
    """The result folder holds results made with other settings; running into it would mix them."""

    def __init__(self, folder: Path, differences: list[tuple[str, Any, Any]]):
        what = "; ".join(f"{flag(name)} was {old!r}, now {new!r}" for name, old, new in differences)
        super().__init__(", ".join(flag(name) for name, _, _ in differences),
                         f"the results in {folder} were made with other options ({what}); resuming would mix "
                         "them: use the recorded options, another --result-dir, or --force to mix them")
        self.folder, self.differences = folder, differences

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.folder, self.differences)


@dataclass
class RunConfig:
    agent: str = "prompt"
    agent_args: dict[str, Any] = field(default_factory=dict)
    model: str | None = None                 # None: the agent's declared default, else its name (resolved())
    observation_type: str | None = None      # None: the agent's declared default, else DEFAULT_OBSERVATION
    action_space: str = "pyautogui"
    provider: str = "local"
    path_to_vm: str | None = None
    tasks: str | None = None                 # meta file; None = the built-in test_all.json
    osworld: str | None = None               # an OSWorld checkout: its OSWorld-Verified tasks (runner/suite.py)
    domains: list[str] = field(default_factory=list)
    task_ids: list[str] = field(default_factory=list)
    max_steps: int = 15
    max_trajectory_length: int = 3
    temperature: float = 1.0
    top_p: float = 0.9
    max_tokens: int = 1500
    sleep_after_execution: float = 0.0
    screen_size: tuple[int, int] = (1920, 1080)
    num_envs: int = 1
    trials: int = 1                          # runs of each task, each from a fresh reset (results.trial_dir)
    result_dir: str = "./results"
    resume: bool = True
    retry_errors: bool = False
    record: bool = True
    network: bool | None = None              # None: on when a selected task needs a live website (resolved by the plan)
    # Limits of each local desktop, as the command line gives them (see DesktopLimits.from_options).
    desktop_memory: str = "4G"
    desktop_pids: str = "1024"
    desktop_cpu_weight: str = "100"
    desktop_tmpfs: str = "1G"
    desktop_disk: str = "2G"
    wait_after_reset: float = 0.0
    cache_dir: str = "cache"
    client_password: str = "password"
    screenshot_scale: float = 1.0            # what the model sees, for the paper's resolution analysis
    # "layout" or "clutter", applied after setup (the paper's robustness analysis)
    perturb: str | None = None
    perturb_seed: int = 0
    backend: str = "local"                   # "local" (worker processes) or "ray" (a Ray cluster)
    ray_address: str | None = None           # None: connect to RAY_ADDRESS / a running local cluster, or start one
    ray_cpus_per_env: float = 1.0            # Ray resources one desktop (and its agent) declares
    ray_memory_per_env: float = 1.5          # GiB
    ray_task_retries: int = 1                # re-runs of a task whose Ray worker or node died under it
    plugins: list[str] = field(default_factory=list)  # modules registering getters/metrics, loaded by every worker
    # seconds of the agent's predict() per task; 0: no limit; None: SECONDS_PER_STEP a step, none with --osworld
    agent_time_budget: float | None = None
    stop_after_fatal: int = 2                # stop when this many tasks in a row fail with one fatal error; 0: never
    force: bool = False                      # run into a folder whose results were made with other settings
    prefetch: bool = True                    # fetch the selected tasks' missing downloads before any desktop starts
    strict: bool = False                     # refuse a run whose number is not comparable with OSWorld's
    label: str | None = None                 # what summaries call the run (recorded in args.json)
    agent_defaults: list[str] = field(default_factory=list)  # options taken from the agent's own declaration
    evaluator_fixes: bool = False            # our fixes of OSWorld's metric bugs, not OSWorld's verdicts

    def __post_init__(self) -> None:
        def refuse(option: str, message: str) -> NoReturn:
            raise RunOptionError(option, message)

        if self.observation_type is not None and self.observation_type not in OBSERVATION_TYPES:
            refuse("--obs", f"must be one of {', '.join(OBSERVATION_TYPES)}, got {self.observation_type!r}")
        if self.osworld is not None:
            from .suite import NotACheckout, official_meta

            try:
                meta = str(official_meta(self.osworld))
            except NotACheckout as e:
                refuse("--osworld", str(e))
            if self.tasks is not None and Path(self.tasks).resolve() != Path(meta):
                refuse("--tasks", f"--osworld selects {meta}; give --tasks or --osworld, not both")
            self.osworld, self.tasks = str(Path(self.osworld).expanduser().resolve()), meta
        if self.action_space not in ACTION_SPACES:
            refuse("--action-space", f"must be one of {', '.join(ACTION_SPACES)}, got {self.action_space!r}")
        for option, count, least in (("--num-envs", self.num_envs, 1), ("--trials", self.trials, 1),
                                     ("--max-steps", self.max_steps, 1),
                                     ("--max-trajectory-length", self.max_trajectory_length, 0),
                                     ("--max-tokens", self.max_tokens, 1)):
            if isinstance(count, bool) or not isinstance(count, int) or count < least:
                refuse(option, f"must be a whole number >= {least}, got {count!r}")
        for option, number in (("--temperature", self.temperature),
                               ("--sleep-after-execution", self.sleep_after_execution),
                               ("--wait-after-reset", self.wait_after_reset)):
            if isinstance(number, bool) or not isinstance(number, (int, float)) or number < 0:
                refuse(option, f"must be a number >= 0, got {number!r}")
        if self.agent_time_budget is not None and (
                isinstance(self.agent_time_budget, bool) or not isinstance(self.agent_time_budget, (int, float))
                or self.agent_time_budget < 0):
            refuse("--agent-time-budget", f"must be a number of seconds >= 0 (0: no limit), "
                                          f"got {self.agent_time_budget!r}")
        if isinstance(self.stop_after_fatal, bool) or not isinstance(self.stop_after_fatal, int) \
                or self.stop_after_fatal < 0:
            refuse("--stop-after-fatal", f"must be a whole number >= 0 (0: never stop), got {self.stop_after_fatal!r}")
        if isinstance(self.top_p, bool) or not isinstance(self.top_p, (int, float)) or not 0 < self.top_p <= 1:
            refuse("--top-p", f"must be a number in (0, 1], got {self.top_p!r}")
        if isinstance(self.screenshot_scale, bool) or not isinstance(self.screenshot_scale, (int, float)) \
                or not 0 < self.screenshot_scale <= 1:
            refuse("--screenshot-scale", f"must be a number in (0, 1], got {self.screenshot_scale!r}")
        if self.perturb is not None and self.perturb not in PERTURBATIONS:
            refuse("--perturb", f"must be one of {', '.join(PERTURBATIONS)}, got {self.perturb!r}")
        from desktop_env.providers import provider_names

        if self.provider not in provider_names():  # built-in or a plugin's
            refuse("--provider", f"must be one of {', '.join(provider_names())}, got {self.provider!r}")
        if self.provider == "remote" and not self.path_to_vm:
            refuse("--path-to-vm", "provider remote needs the env server's URL, e.g. --path-to-vm http://VM_IP:5000")
        if self.backend not in BACKENDS:
            refuse("--backend", f"must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        for option, amount in (("--ray-cpus-per-env", self.ray_cpus_per_env),
                               ("--ray-memory-per-env", self.ray_memory_per_env),
                               ("--ray-task-retries", self.ray_task_retries)):
            if amount < 0:
                refuse(option, f"cannot be negative, got {amount!r}")

    def resolved(self) -> RunConfig:
        """The config with the model and observation type the user left out taken from the agent's own
        declaration (its constructor's defaults; the model falls back to the agent's name, the observation
        to DEFAULT_OBSERVATION), those taken listed in `agent_defaults` (and so not passed to it)."""
        if self.model is not None and self.observation_type is not None:
            return self
        from desktop_env.extensions import PluginError, load_plugin
        from mm_agents.loader import AgentLoadError, agent_name, declared_defaults

        try:
            for plugin in self.plugins:  # a plugin's agent is found only once it is loaded
                load_plugin(plugin)
            declared = declared_defaults(self.agent)
        except (AgentLoadError, PluginError) as e:
            raise RunOptionError("--agent" if isinstance(e, AgentLoadError) else "--plugin", str(e)) from e
        model = declared.get("model") if isinstance(declared.get("model"), str) else agent_name(self.agent)
        observation = declared.get("observation_type")
        if observation not in OBSERVATION_TYPES:
            observation = DEFAULT_OBSERVATION
        taken = [name for name in ("model", "observation_type") if getattr(self, name) is None]
        return dataclasses.replace(self, model=self.model or model,
                                   observation_type=self.observation_type or observation,
                                   agent_defaults=list(dict.fromkeys(self.agent_defaults + taken)))

    @property
    def layout(self) -> RunLayout:
        config = self.resolved()
        assert config.model is not None and config.observation_type is not None  # resolved() fills both
        return RunLayout(Path(config.result_dir), config.action_space, config.observation_type, config.model)

    def time_budget(self) -> float:
        """The agent's seconds of predict() per task, 0 for no limit: as given, else SECONDS_PER_STEP a step,
        or none for OSWorld-Verified (the leaderboard's runs have none)."""
        if self.agent_time_budget is not None:
            return float(self.agent_time_budget)
        return 0.0 if self.osworld else SECONDS_PER_STEP * self.max_steps

    def agent_kwargs(self) -> dict[str, Any]:
        """What the agent is built with: the run's options it did not declare itself, and its --agent-arg."""
        config = self.resolved()
        options = {"model": config.model, "action_space": config.action_space,
                   "observation_type": config.observation_type, "max_tokens": config.max_tokens,
                   "temperature": config.temperature, "top_p": config.top_p,
                   "max_trajectory_length": config.max_trajectory_length, "client_password": config.client_password,
                   "screen_size": tuple(config.screen_size), "screenshot_scale": config.screenshot_scale}
        return {**{k: v for k, v in options.items() if k not in config.agent_defaults}, **config.agent_args}

    def episode_config(self) -> EpisodeConfig:
        return EpisodeConfig(max_steps=self.max_steps, sleep_after_execution=self.sleep_after_execution,
                             record=self.record, wait_after_reset=self.wait_after_reset,
                             perturb=self.perturb, perturb_seed=self.perturb_seed,
                             agent_time_budget=self.time_budget() or None)
