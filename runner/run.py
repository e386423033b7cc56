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
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .breaker import FatalErrorBreaker
from .config import ResumeMismatch, RunConfig, RunOptionError  # noqa: F401 (the library's names for a run)
from .events import Finished, Interrupted, Planned, Reporter, Started, StepTaken, Stopped
from .plan import Plan, PlannedTask, RunSummary, plan_tasks  # noqa: F401 (the library's names for a run)
from .ray_backend import run_on_ray
from .results import TaskState, clear_task_dir, now_iso, record_invalid_task, record_worker_died, write_json_atomic
from .settings import SettingsMismatch, recorded_differences, runs_recorded

WORKER_CLOSE_TIMEOUT_S = 60  # for workers to stop their desktops at the end of a run
WORKER_START_ATTEMPTS = 3    # workers that die before their first task, in a row, before the run gives up


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
