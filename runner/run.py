"""`osworld run` as a library call: pick tasks, resume, run them on N desktops, record everything.

Each desktop lives in its own worker process (spawned), which owns one DesktopEnv
and one agent and pulls tasks from a shared queue. The parent only schedules,
shows progress and keeps the books: a worker that dies takes its current task
with it as a recorded error (and a new worker takes its place); Ctrl-C stops the
workers, whose desktops are torn down with them; a run killed outright leaves its
running tasks marked "running", which the next run detects and re-runs.
"""
from __future__ import annotations

import ctypes
import multiprocessing as mp
import platform
import queue
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .breaker import FatalErrorBreaker
from .episode import EpisodeConfig
from .events import Finished, Interrupted, Planned, Reporter, Started, StepTaken, Stopped
from .results import (RunLayout, TaskState, clear_task_dir, now_iso, record_invalid_task, record_worker_died,
                      refused_by_plan, task_state, write_json_atomic)
from .settings import SettingsMismatch, flag, recorded_differences, runs_recorded

OBSERVATION_TYPES = ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som")
ACTION_SPACES = ("pyautogui", "computer_13")
PERTURBATIONS = ("layout", "clutter")
BACKENDS = ("local", "ray")
WORKER_CLOSE_TIMEOUT_S = 60  # for workers to stop their desktops at the end of a run
WORKER_START_ATTEMPTS = 3    # workers that die before their first task, in a row, before the run gives up


class RunOptionError(ValueError):
    """An option of the run that cannot work. `option` is how the command line spells it (`--max-steps`);
    the message says what was given and what would be right."""

    def __init__(self, option: str, message: str):
        super().__init__(f"{option}: {message}")
        self.option = option
        self.detail = message

    def __reduce__(self):
        return type(self), (self.option, self.detail)


class ResumeMismatch(RunOptionError):
    """The result folder holds results made with other settings; running into it would mix them."""

    def __init__(self, folder: Path, differences: list[tuple[str, Any, Any]]):
        what = "; ".join(f"{flag(name)} was {old!r}, now {new!r}" for name, old, new in differences)
        super().__init__(", ".join(flag(name) for name, _, _ in differences),
                         f"the results in {folder} were made with other options ({what}); resuming would mix "
                         "them: use the recorded options, another --result-dir, or --force to mix them")
        self.folder, self.differences = folder, differences

    def __reduce__(self):
        return type(self), (self.folder, self.differences)


@dataclass
class RunConfig:
    agent: str = "prompt"
    agent_args: dict[str, Any] = field(default_factory=dict)
    model: str = "gpt-4o"
    observation_type: str = "screenshot_a11y_tree"
    action_space: str = "pyautogui"
    provider: str = "local"
    path_to_vm: str | None = None
    tasks: str | None = None                 # meta file; None = the built-in test_all.json
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
    result_dir: str = "./results"
    resume: bool = True
    retry_errors: bool = False
    record: bool = True
    network: bool = False
    # Limits of each local desktop, as the command line gives them (see DesktopLimits.from_options).
    desktop_memory: str = "4G"
    desktop_pids: str = "1024"
    desktop_cpu_weight: str = "100"
    desktop_tmpfs: str = "1G"
    wait_after_reset: float = 0.0
    cache_dir: str = "cache"
    client_password: str = "password"
    screenshot_scale: float = 1.0            # what the model sees, for the paper's resolution analysis
    perturb: str | None = None               # "layout" or "clutter", applied after setup (the paper's robustness analysis)
    perturb_seed: int = 0
    backend: str = "local"                   # "local" (worker processes) or "ray" (a Ray cluster)
    ray_address: str | None = None           # None: connect to RAY_ADDRESS / a running local cluster, or start one
    ray_cpus_per_env: float = 1.0            # Ray resources one desktop (and its agent) declares
    ray_memory_per_env: float = 1.5          # GiB
    ray_task_retries: int = 1                # re-runs of a task whose Ray worker or node died under it
    plugins: list[str] = field(default_factory=list)  # modules registering getters/metrics, loaded by every worker
    agent_time_budget: float = 300.0         # seconds of the agent's predict() per task; 0: no limit
    stop_after_fatal: int = 2                # stop when this many tasks in a row fail with one fatal error; 0: never
    force: bool = False                      # run into a folder whose results were made with other settings

    def __post_init__(self) -> None:
        def refuse(option: str, message: str) -> None:
            raise RunOptionError(option, message)

        if self.observation_type not in OBSERVATION_TYPES:
            refuse("--obs", f"must be one of {', '.join(OBSERVATION_TYPES)}, got {self.observation_type!r}")
        if self.action_space not in ACTION_SPACES:
            refuse("--action-space", f"must be one of {', '.join(ACTION_SPACES)}, got {self.action_space!r}")
        for option, value, least in (("--num-envs", self.num_envs, 1), ("--max-steps", self.max_steps, 1),
                                     ("--max-trajectory-length", self.max_trajectory_length, 0),
                                     ("--max-tokens", self.max_tokens, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                refuse(option, f"must be a whole number >= {least}, got {value!r}")
        for option, value in (("--temperature", self.temperature), ("--sleep-after-execution", self.sleep_after_execution),
                              ("--wait-after-reset", self.wait_after_reset)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                refuse(option, f"must be a number >= 0, got {value!r}")
        if isinstance(self.agent_time_budget, bool) or not isinstance(self.agent_time_budget, (int, float)) \
                or self.agent_time_budget < 0:
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
        from desktop_env.providers import PROVIDER_NAMES

        if self.provider not in PROVIDER_NAMES:
            refuse("--provider", f"must be one of {', '.join(PROVIDER_NAMES)}, got {self.provider!r}")
        if self.provider == "remote" and not self.path_to_vm:
            refuse("--path-to-vm", "provider remote needs the env server's URL, e.g. --path-to-vm http://VM_IP:5000")
        if self.backend not in BACKENDS:
            refuse("--backend", f"must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        for option, value in (("--ray-cpus-per-env", self.ray_cpus_per_env),
                              ("--ray-memory-per-env", self.ray_memory_per_env),
                              ("--ray-task-retries", self.ray_task_retries)):
            if value < 0:
                refuse(option, f"cannot be negative, got {value!r}")

    @property
    def layout(self) -> RunLayout:
        return RunLayout(Path(self.result_dir), self.action_space, self.observation_type, self.model)

    def agent_kwargs(self) -> dict[str, Any]:
        return {"model": self.model, "action_space": self.action_space, "observation_type": self.observation_type,
                "max_tokens": self.max_tokens, "temperature": self.temperature, "top_p": self.top_p,
                "max_trajectory_length": self.max_trajectory_length, "client_password": self.client_password,
                "screen_size": tuple(self.screen_size), "screenshot_scale": self.screenshot_scale, **self.agent_args}

    def episode_config(self) -> EpisodeConfig:
        return EpisodeConfig(max_steps=self.max_steps, sleep_after_execution=self.sleep_after_execution,
                             record=self.record, wait_after_reset=self.wait_after_reset,
                             perturb=self.perturb, perturb_seed=self.perturb_seed,
                             agent_time_budget=self.agent_time_budget or None)


@dataclass
class PlannedTask:
    domain: str
    task_id: str
    state: TaskState
    problems: list = field(default_factory=list)   # desktop_env.tasks.Problem: why it cannot run

    @property
    def error(self) -> str:
        first = str(self.problems[0]) if self.problems else ""
        return first + (f" (and {len(self.problems) - 1} more)" if len(self.problems) > 1 else "")


@dataclass
class RunSummary:
    planned: int
    skipped_done: int
    skipped_errors: int
    invalid: list[PlannedTask] = field(default_factory=list)  # refused by the plan, each with an error record
    ran: int = 0
    ok: int = 0
    errors: int = 0
    score_sum: float = 0.0
    stopped: str | None = None       # why the run stopped before its end (the same fatal error, task after task)
    breaker: FatalErrorBreaker = field(default_factory=lambda: FatalErrorBreaker(0), repr=False)

    def count(self, result: dict) -> None:
        """Books one finished task ({status, score, ...}); sets `stopped` once the breaker trips."""
        self.ran += 1
        if result["status"] == "ok":
            self.ok += 1
            self.score_sum += result["score"] or 0.0
        else:
            self.errors += 1
        self.stopped = self.stopped or self.breaker.observe(result)


# -- planning -------------------------------------------------------------------------------
@dataclass
class Plan:
    to_run: list[PlannedTask]
    skipped: list[PlannedTask]       # finished, or (without retry_errors) errored in an earlier run
    invalid: list[PlannedTask]       # cannot run (each with its problems): an error record, no desktop


def plan_tasks(config: RunConfig) -> Plan:
    """Checks every selected task before any desktop starts, then sorts them. Resume skips finished
    tasks and, unless retry_errors, errored ones; a task an earlier plan refused runs once it is valid."""
    from desktop_env.tasks import load_task_set, selection_problems

    task_set = load_task_set(config.tasks)
    pairs = task_set.select(config.domains or None, config.task_ids or None)
    problems = selection_problems(task_set, pairs)
    plan = Plan([], [], [])
    for domain, task_id in dict.fromkeys(pairs):  # an id listed twice is one task (and an invalid one)
        task_dir = config.layout.task_dir(domain, task_id)
        state = task_state(task_dir) if config.resume else TaskState.NEW
        planned = PlannedTask(domain, task_id, state, problems.get((domain, task_id), []))
        if state is TaskState.DONE:
            plan.skipped.append(planned)  # its score stands: it ran with the file as it was then
        elif planned.problems:
            plan.invalid.append(planned)
        elif state is TaskState.ERROR and not config.retry_errors and not refused_by_plan(task_dir):
            plan.skipped.append(planned)
        else:
            plan.to_run.append(planned)
    return plan


def environment_versions() -> dict[str, Any]:
    import desktop_env
    from importlib import metadata

    versions: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform()}
    try:
        versions["osworld"] = metadata.version("osworld")
    except metadata.PackageNotFoundError:
        versions["osworld"] = "unknown"
    apps = ("libreoffice-core", "gimp", "vlc", "thunderbird", "chromium", "xvfb", "xfwm4")
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Version}\n", *apps], capture_output=True,
                             text=True, timeout=10).stdout
        versions["apps"] = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    except (OSError, subprocess.TimeoutExpired):
        versions["apps"] = {}
    source = Path(desktop_env.__file__).resolve().parents[1]
    try:
        commit = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10)
        if commit.returncode == 0:
            versions["git_commit"] = commit.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return versions


def check_writable(folder: Path) -> None:
    """Refuses a result folder that cannot be made or written, before anything runs."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".osworld-write-check-"):
            pass
    except OSError as e:
        blocker = next((p for p in (folder, *folder.parents) if p.exists()), folder)
        where = "" if blocker == folder else f" ({blocker} is in the way)" if not blocker.is_dir() else ""
        raise RunOptionError("--result-dir", f"cannot write results to {folder}: {e.strerror or e}{where}") from None


def check_resume(config: RunConfig) -> list[tuple[str, Any, Any]]:
    """Refuses (ResumeMismatch) to run into a folder whose results were made with other settings, unless
    `force`; returns the differences it was forced past."""
    try:
        differences = recorded_differences(config)
    except SettingsMismatch as e:
        raise RunOptionError("--result-dir", str(e)) from None
    if differences and not config.force:
        raise ResumeMismatch(config.layout.model_dir, differences)
    return differences


def write_args(config: RunConfig, forced: list[tuple[str, Any, Any]] = ()) -> None:
    """args.json: this run's options on top (as readers expect), and every run's in `runs`."""
    run = {"config": asdict(config), "versions": environment_versions(), "written": now_iso()}
    if forced:
        run["forced"] = [{"setting": name, "recorded": old, "requested": new} for name, old, new in forced]
    runs = runs_recorded(config.layout.model_dir) + [run]
    write_json_atomic(config.layout.model_dir / "args.json", {**run, "runs": runs})


# -- workers --------------------------------------------------------------------------------
def _die_with_parent() -> None:
    """Asks the kernel to SIGTERM this worker when the run's main process dies (even by kill -9)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _worker(worker_id: int, config: RunConfig, tasks: mp.Queue, events: mp.Queue) -> None:
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and tells us to stop
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    from .task_worker import DesktopWorker

    worker = DesktopWorker(config)
    try:
        while True:
            item = tasks.get()
            if item is None:
                return
            domain, task_id = item
            task_dir = config.layout.task_dir(domain, task_id)
            previous = clear_task_dir(task_dir)
            events.put(Started(worker_id, domain, task_id))
            result = worker.run_task(domain, task_id, task_dir, previous,
                                     on_step=lambda n: events.put(StepTaken(worker_id, domain, task_id, n)))
            events.put(Finished(worker_id, domain, task_id, result))
    finally:
        worker.close()


def run_benchmark(config: RunConfig, report: Reporter = lambda event: None) -> RunSummary:
    """Runs the selected tasks; `report` receives the run's events (runner.events) for a progress display."""
    from desktop_env.evaluators.registry import PluginError, load_plugin
    from mm_agents.loader import AgentLoadError, accepts_argument, load_agent_class

    for plugin in config.plugins:  # here too: the plan checks the names they register
        try:
            load_plugin(plugin)
        except PluginError as e:
            raise RunOptionError("--plugin", str(e)) from e
    try:
        agent_class = load_agent_class(config.agent)  # a typo in --agent fails now, not once per task
    except AgentLoadError as e:
        raise RunOptionError("--agent", str(e)) from e
    if config.screenshot_scale != 1.0 and not accepts_argument(agent_class, "screenshot_scale"):
        raise RunOptionError("--screenshot-scale", f"agent {config.agent!r} does not take screenshot_scale, so "
                             f"{config.screenshot_scale:g} would be ignored")
    forced = check_resume(config)
    plan = plan_tasks(config)
    to_run, skipped = plan.to_run, plan.skipped
    check_writable(config.layout.model_dir)
    summary = RunSummary(planned=len(to_run), skipped_done=sum(p.state is TaskState.DONE for p in skipped),
                         skipped_errors=sum(p.state is TaskState.ERROR for p in skipped), invalid=plan.invalid,
                         breaker=FatalErrorBreaker(config.stop_after_fatal))
    report(Planned(to_run, skipped, plan.invalid))
    write_args(config, forced)
    for planned in plan.invalid:
        record_invalid_task(config.layout.task_dir(planned.domain, planned.task_id), planned.task_id,
                            [problem.to_dict() for problem in planned.problems], planned.error)
    if not to_run:
        return summary
    if config.backend == "ray":
        from .ray_backend import run_on_ray

        return run_on_ray(config, to_run, summary, report)
    return _run_local(config, to_run, summary, report)


def _run_local(config: RunConfig, to_run: list[PlannedTask], summary: RunSummary, report: Reporter) -> RunSummary:
    ctx = mp.get_context("spawn")
    tasks: mp.Queue = ctx.Queue()
    events: mp.Queue = ctx.Queue()
    for planned in to_run:
        tasks.put((planned.domain, planned.task_id))
    n_workers = min(config.num_envs, len(to_run))
    for _ in range(n_workers):
        tasks.put(None)
    workers: dict[int, mp.Process] = {}
    current: dict[int, tuple[str, str] | None] = {}
    next_id = 0

    def start_worker() -> None:
        nonlocal next_id
        process = ctx.Process(target=_worker, args=(next_id, config, tasks, events), name=f"osworld-worker-{next_id}")
        process.start()
        workers[next_id], current[next_id] = process, None
        next_id += 1

    for _ in range(n_workers):
        start_worker()
    finished = 0
    died_idle = 0  # workers that died in a row without a task
    clean_end = False
    try:
        while finished < len(to_run) and not summary.stopped:
            try:
                event = events.get(timeout=0.5)
            except queue.Empty:
                event = None
            if event is not None:
                if isinstance(event, Started):
                    current[event.worker] = (event.domain, event.task_id)
                elif isinstance(event, Finished):
                    current[event.worker] = None
                    finished += 1
                    summary.count(event.result)
                report(event)
                continue
            for worker_id, process in list(workers.items()):
                if process.is_alive() or (process.exitcode == 0 and current.get(worker_id) is None):
                    continue  # running, or done with the queue
                del workers[worker_id]
                lost = current.pop(worker_id, None)
                died_idle = died_idle + 1 if lost is None else 0
                if died_idle >= WORKER_START_ATTEMPTS:  # a new one would die the same way
                    summary.stopped = (f"{died_idle} worker processes in a row died before running a task (last "
                                       f"exit code {process.exitcode}); run one task with -v to see why")
                    break
                if lost is not None:
                    reason = f"the worker running this task died (exit code {process.exitcode})"
                    record_worker_died(config.layout.task_dir(*lost), lost[1], reason)
                    finished += 1
                    result = {"status": "error", "score": None, "steps": 0, "error": reason}
                    summary.count(result)
                    report(Finished(worker_id, *lost, result))
                if finished < len(to_run):
                    start_worker()  # the dead worker's stop marker is still queued for it
        if summary.stopped:  # the tasks still running are cut off, and run again by the next run
            report(Stopped(summary.stopped))
        clean_end = not summary.stopped
    except KeyboardInterrupt:
        report(Interrupted())
        raise
    finally:
        if clean_end:  # each worker has its stop marker: let it close its desktop and remove its folders
            deadline = time.monotonic() + WORKER_CLOSE_TIMEOUT_S
            for process in workers.values():
                process.join(timeout=max(0.0, deadline - time.monotonic()))
        for process in workers.values():
            if process.is_alive():
                process.terminate()
        for process in workers.values():
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
    return summary
