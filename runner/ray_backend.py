"""`osworld run --backend ray`: the same run, with each desktop owned by a Ray actor on some node.

Where results are written: on the driver. An actor runs its task into a scratch folder
on its own node, then sends the folder's files back with the result; the driver writes them
into the results layout (status.json last). So nodes need no shared filesystem, and resume
works exactly as with the local backend: before dispatching a task the driver marks it
"running" in its folder, so a driver killed mid-run leaves it to be re-run, and a task
counts as done only once its files, result.txt among them, are all on the driver's disk.

What every node needs: osworld installed (same version) with its desktop packages
(`make install`); task files that are not built in must be at the same path on every node.

Losses: an actor whose process or node dies mid-task gets its task an error record
(WorkerDied, kept in the task's history) and the task is retried on a new actor, which Ray
places wherever resources are free, up to `ray_task_retries` times. Ctrl-C kills every actor;
each desktop's sandbox dies with its actor process.
"""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Any

from .config import RunConfig
from .events import Finished, Interrupted, Note, Reporter, Retrying, Started, Stopped
from .plan import PlannedTask, RunSummary
from .results import clear_task_dir, now_iso, record_worker_died, write_bytes_atomic, write_status

GIB = 1024 ** 3
CLOSE_TIMEOUT_S = 60
PLACEMENT_TIMEOUT_S = 600  # tasks wait this long for room in the cluster before they are recorded as errors


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached or cannot hold one desktop."""


class RayDesktopWorker:
    """The Ray actor: one DesktopWorker whose task folders live in node-local scratch space."""

    def __init__(self, config: RunConfig) -> None:
        from .task_worker import DesktopWorker

        import ray

        self.worker = DesktopWorker(config)
        self.node = {"host": socket.gethostname(), "ray_node_id": ray.get_runtime_context().get_node_id(),
                     "pid": os.getpid()}

    def run_task(self, domain: str, task_id: str, previous_errors: list[dict]) -> dict[str, Any]:
        scratch = Path(tempfile.mkdtemp(prefix="osworld-ray-task-"))
        try:
            result = self.worker.run_task(domain, task_id, scratch, previous_errors)
            files = {str(path.relative_to(scratch)): path.read_bytes()
                     for path in sorted(scratch.rglob("*")) if path.is_file()}
            return {"result": result, "files": files, "node": self.node}
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def ready(self) -> dict:
        """Answers once Ray has placed this actor and built it."""
        return self.node

    def close(self) -> None:
        self.worker.close()


def _absolute(config: RunConfig) -> RunConfig:
    """Actors do not share the driver's working directory: every path they use must be absolute."""
    tasks = str(Path(config.tasks).resolve()) if config.tasks else None
    return replace(config, tasks=tasks, cache_dir=str(Path(config.cache_dir).resolve()),
                   result_dir=str(Path(config.result_dir).resolve()))


def _use_token_auth_if_available() -> None:
    """Does what `ray start` does: with a Ray token at hand and no RAY_AUTH_MODE chosen, connect with
    the token. `ray start` turns token authentication on by itself when it finds one, and a driver
    without the token is then refused; a token is harmless to a cluster without authentication."""
    if "RAY_AUTH_MODE" in os.environ:
        return
    token_file = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or Path.home() / ".ray" / "auth_token")
    if os.environ.get("RAY_AUTH_TOKEN") or token_file.is_file():
        os.environ["RAY_AUTH_MODE"] = "token"


def _connect(config: RunConfig) -> bool:
    """Joins the cluster (or starts a local one); True when this call started Ray here."""
    _use_token_auth_if_available()  # before Ray is imported: it reads RAY_AUTH_MODE once, at import
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--backend ray needs Ray: pip install 'osworld[ray]'") from None
    if ray.is_initialized():
        return False
    try:
        ray.init(address=config.ray_address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise RayUnavailable(f"cannot reach the Ray cluster at {config.ray_address or 'RAY_ADDRESS/local'}: {e}") from e
    return True


def _check_capacity(config: RunConfig) -> int:
    """How many desktops the cluster can hold at once; refuses a cluster that holds none."""
    import ray

    total = ray.cluster_resources()
    by_cpu = total.get("CPU", 0) / config.ray_cpus_per_env if config.ray_cpus_per_env else float("inf")
    by_memory = total.get("memory", 0) / (config.ray_memory_per_env * GIB) if config.ray_memory_per_env else float("inf")
    fits = int(min(by_cpu, by_memory))
    if fits < 1:
        raise RayUnavailable(
            f"the Ray cluster ({total.get('CPU', 0):g} CPUs, {total.get('memory', 0) / GIB:.1f} GiB for tasks) cannot "
            f"hold one desktop of {config.ray_cpus_per_env:g} CPUs and {config.ray_memory_per_env:g} GiB; "
            "lower --ray-cpus-per-env / --ray-memory-per-env or add nodes")
    return fits


def _write_task_files(task_dir: Path, files: dict[str, bytes], node: dict) -> None:
    status = files.pop("status.json", None)
    for relative, data in files.items():
        write_bytes_atomic(task_dir / relative, data)
    if status is not None:  # last: the task counts as finished only once everything else is here
        import json

        record = json.loads(status)
        record["ray_worker"] = node
        write_status(task_dir, record)


def run_on_ray(config: RunConfig, to_run: list[PlannedTask], summary: RunSummary,
               report: Reporter) -> RunSummary:
    config = _absolute(config)
    started_here = _connect(config)
    import ray
    from ray.exceptions import RayError, RayTaskError

    actor_class = ray.remote(RayDesktopWorker).options(
        num_cpus=config.ray_cpus_per_env, memory=int(config.ray_memory_per_env * GIB) or None,
        max_restarts=0, max_task_retries=0)
    actors: dict[int, Any] = {}
    try:
        fits = _check_capacity(config)
        n_actors = min(config.num_envs, len(to_run))
        if n_actors > fits:
            report(Note(f"the cluster holds {fits} desktop(s) at once; the other actors wait for room"))
        pending = deque((p.domain, p.task_id) for p in to_run)
        attempts: dict[tuple[str, str], int] = {}
        starting: dict[Any, int] = {}                # ready() ref -> actor id, until Ray has placed the actor
        idle: list[int] = []                         # placed and free
        busy: dict[Any, tuple[int, str, str]] = {}   # run_task ref -> (actor id, domain, task id)
        next_id = 0
        stalled_since: float | None = None

        def new_actor() -> None:
            # A task goes only to a placed actor: one queued on an actor that waits for room would
            # wait forever while a placed actor sat idle holding that room.
            nonlocal next_id
            actors[next_id] = actor_class.remote(config)
            starting[actors[next_id].ready.remote()] = next_id
            next_id += 1

        def finish(domain: str, task_id: str, actor_id: int, result: dict) -> None:
            summary.count(result)
            report(Finished(actor_id, domain, task_id, result))

        for _ in range(n_actors):
            new_actor()
        while (pending or busy) and not summary.stopped:
            while idle and pending:
                actor_id = idle.pop()
                domain, task_id = pending.popleft()
                attempts[(domain, task_id)] = attempts.get((domain, task_id), 0) + 1
                task_dir = config.layout.task_dir(domain, task_id)
                previous = clear_task_dir(task_dir)
                # Marks the task as started, so a driver killed from now on leaves it to be re-run.
                write_status(task_dir, {"status": "running", "task_id": task_id, "started": now_iso(),
                                        "previous_errors": previous, "attempt": attempts[(domain, task_id)]})
                busy[actors[actor_id].run_task.remote(domain, task_id, previous)] = (actor_id, domain, task_id)
                report(Started(actor_id, domain, task_id))
            if pending and not busy and not idle:  # nothing runs: waiting for Ray to place an actor somewhere
                stalled_since = stalled_since or time.monotonic()
                if time.monotonic() - stalled_since > PLACEMENT_TIMEOUT_S:
                    reason = (f"no Ray node had room for a desktop for {PLACEMENT_TIMEOUT_S:.0f} s "
                              f"({config.ray_cpus_per_env:g} CPUs, {config.ray_memory_per_env:g} GiB)")
                    while pending:
                        domain, task_id = pending.popleft()
                        record_worker_died(config.layout.task_dir(domain, task_id), task_id, reason,
                                           attempt=attempts.get((domain, task_id), 0))
                        finish(domain, task_id, -1, {"status": "error", "score": None, "steps": 0, "error": reason})
                    break
            else:
                stalled_since = None
            ready, _ = ray.wait([*busy, *starting], num_returns=1, timeout=0.5)
            for ref in ready:
                if ref in starting:
                    actor_id = starting.pop(ref)
                    try:
                        ray.get(ref)
                        idle.append(actor_id)
                    except RayError:  # died before its first task; its tasks are still pending
                        actors.pop(actor_id, None)
                        if pending and not starting and not busy and not idle:
                            new_actor()
                    continue
                actor_id, domain, task_id = busy.pop(ref)
                task_dir = config.layout.task_dir(domain, task_id)
                try:
                    outcome = ray.get(ref)
                except RayTaskError as e:  # our own code raised inside the actor: a bug, not a lost worker
                    reason = f"the Ray actor failed running this task: {e}"
                    record_worker_died(task_dir, task_id, reason, attempt=attempts[(domain, task_id)])
                    idle.append(actor_id)
                    finish(domain, task_id, actor_id, {"status": "error", "score": None, "steps": 0, "error": reason})
                except RayError as e:  # the actor's process or its node is gone
                    del actors[actor_id]
                    first_line = str(e).strip().splitlines()[0] if str(e).strip() else ""
                    reason = f"the Ray worker running this task died ({type(e).__name__}: {first_line})"
                    record_worker_died(task_dir, task_id, reason, attempt=attempts[(domain, task_id)])
                    retry = attempts[(domain, task_id)] <= config.ray_task_retries
                    if retry or pending:
                        new_actor()  # Ray places it wherever there is room, on another node if this one is gone
                    if retry:
                        pending.appendleft((domain, task_id))
                        report(Retrying(actor_id, domain, task_id, reason))
                    else:
                        finish(domain, task_id, actor_id, {"status": "error", "score": None, "steps": 0,
                                                           "error": reason})
                else:
                    _write_task_files(task_dir, outcome["files"], outcome["node"])
                    idle.append(actor_id)
                    finish(domain, task_id, actor_id, outcome["result"])
        if summary.stopped:  # the tasks still running are cut off (killed below), and run again by the next run
            report(Stopped(summary.stopped))
        else:
            _close_actors(actors)
    except KeyboardInterrupt:
        report(Interrupted())
        raise
    finally:
        for actor in actors.values():
            ray.kill(actor)  # the desktop's sandbox dies with its actor's process
        if started_here:
            ray.shutdown()
    return summary


def _close_actors(actors: dict[int, Any]) -> None:
    """Closes the desktops cleanly (recordings, sandboxes) before the actors are killed."""
    import ray

    refs = [actor.close.remote() for actor in actors.values()]
    if refs:
        ray.wait(refs, num_returns=len(refs), timeout=CLOSE_TIMEOUT_S)
