"""`osworld run --backend ray`: the same run, with each desktop owned by a Ray actor on some node.

The scheduling is the same loop as every backend's (osworld_harness/execution/scheduler.py); this is the Backend
on Ray. Where results are written: on the driver. An actor runs its task into a scratch folder
on its own node, then sends the folder's files back with the result; the driver writes them
into the results layout (osworld_harness/results/task_folder.py, status.json last). So nodes need no shared
filesystem, and resume works exactly as with the local backend: the scheduler marks a task
"running" before an actor gets it, so a driver killed mid-run leaves it to be re-run, and a
task counts as done only once its files, result.txt among them, are all on the driver's disk.

What every node needs: osworld installed (same version) with its desktop packages
(`make install`); task files that are not built in must be at the same path on every node.

Losses: an actor whose process or node dies mid-task gets its task an error record
(WorkerDied, kept in the task's history) and the task is retried on a new actor, which Ray
places wherever resources are free, up to `ray_task_retries` times. Ctrl-C kills every actor;
each desktop's sandbox dies with its actor process. A cluster with no room for any desktop for
PLACEMENT_TIMEOUT_S stops the run (the tasks not run are left for the next one).
"""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from osworld_harness.results.config import RunConfig
from osworld_harness.results.task_folder import PreviousError, write_returned_files

from .backend import Assignment, BackendStopped, Outcome, TaskDone, TaskLost
from .events import Note, Reporter
from .task_worker import DesktopWorker

GIB = 1024 ** 3
CLOSE_TIMEOUT_S = 60
PLACEMENT_TIMEOUT_S = 600  # how long a run waits with no desktop placed anywhere before it stops


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached or cannot hold one desktop."""


class RayDesktopWorker:
    """The Ray actor: one DesktopWorker whose task folders live in node-local scratch space."""

    def __init__(self, config: RunConfig) -> None:
        import ray

        self.worker = DesktopWorker(config)
        self.node: dict[str, str | int] = {
            "host": socket.gethostname(), "ray_node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    def run_task(self, domain: str, task_id: str, previous_errors: list[PreviousError],
                 trial: int = 1, more_to_come: bool = True) -> dict[str, Any]:
        scratch = Path(tempfile.mkdtemp(prefix="osworld-ray-task-"))
        try:
            result = self.worker.run_task(domain, task_id, scratch, previous_errors, trial=trial,
                                          more_to_come=more_to_come)
            files = {str(path.relative_to(scratch)): path.read_bytes()
                     for path in sorted(scratch.rglob("*")) if path.is_file()}
            return {"result": result, "files": files, "node": self.node}
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def ready(self) -> dict[str, str | int]:
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

    total = ray.cluster_resources()  # type: ignore[no-untyped-call]  # ray leaves it unannotated
    by_cpu = total.get("CPU", 0) / config.ray_cpus_per_env if config.ray_cpus_per_env else float("inf")
    by_memory = (total.get("memory", 0) / (config.ray_memory_per_env * GIB) if config.ray_memory_per_env
                 else float("inf"))
    fits = int(min(by_cpu, by_memory))
    if fits < 1:
        raise RayUnavailable(
            f"the Ray cluster ({total.get('CPU', 0):g} CPUs, {total.get('memory', 0) / GIB:.1f} GiB for tasks) cannot "
            f"hold one desktop of {config.ray_cpus_per_env:g} CPUs and {config.ray_memory_per_env:g} GiB; "
            "lower --ray-cpus-per-env / --ray-memory-per-env or add nodes")
    return fits


class RayBackend:
    """The Backend protocol on Ray actors: a task goes only to an actor Ray has placed, since one
    queued on an actor waiting for room would wait forever while a placed actor sat idle."""

    def __init__(self, config: RunConfig):
        self.config = _absolute(config)
        self.retries = config.ray_task_retries
        self.actors: dict[int, Any] = {}
        self.starting: dict[Any, int] = {}                 # ready() ref -> actor id, until Ray has placed it
        self.idle: list[int] = []                          # placed and free
        self.busy: dict[Any, tuple[int, Assignment]] = {}  # run_task ref -> (actor id, task)
        self.next_id = 0
        self.stalled_since: float | None = None
        self.connected = self.started_here = False

    def start(self, workers: int, report: Reporter) -> None:
        self.started_here = _connect(self.config)
        self.connected = True
        try:
            import ray

            fits = _check_capacity(self.config)
            if workers > fits:
                report(Note(f"the cluster holds {fits} desktop(s) at once; the other actors wait for room"))
            self.actor_class = ray.remote(RayDesktopWorker).options(
                num_cpus=self.config.ray_cpus_per_env, memory=int(self.config.ray_memory_per_env * GIB) or None,
                max_restarts=0, max_task_retries=0)
            for _ in range(workers):
                self._new_actor()
        except BaseException:
            self.stop(clean=False)
            raise

    def free(self) -> int:
        return len(self.idle)

    def submit(self, task: Assignment) -> int:
        actor_id = self.idle.pop()
        ref = self.actors[actor_id].run_task.remote(task.domain, task.task_id, task.previous_errors, task.trial,
                                                    task.more_to_come)
        self.busy[ref] = (actor_id, task)
        return actor_id

    def wait(self, timeout: float, waiting: int) -> Outcome | None:
        import ray
        from ray.exceptions import RayError, RayTaskError

        if waiting and not self.busy and not self.idle:  # nothing runs: waiting for Ray to place an actor
            if not self.starting:  # every actor died before its first task
                self._new_actor()
            self.stalled_since = self.stalled_since or time.monotonic()
            if time.monotonic() - self.stalled_since > PLACEMENT_TIMEOUT_S:
                return BackendStopped(f"no Ray node had room for a desktop for {PLACEMENT_TIMEOUT_S:.0f} s "
                                      f"({self.config.ray_cpus_per_env:g} CPUs, "
                                      f"{self.config.ray_memory_per_env:g} GiB)")
        else:
            self.stalled_since = None
        refs = [*self.busy, *self.starting]
        if not refs:
            return None
        ready, _ = ray.wait(refs, num_returns=1, timeout=timeout)
        if not ready:
            return None
        ref = ready[0]
        if ref in self.starting:
            actor_id = self.starting.pop(ref)
            try:
                ray.get(ref)
                self.idle.append(actor_id)
            except RayError:  # died before its first task; another is made when none is left
                self.actors.pop(actor_id, None)
            return None
        actor_id, task = self.busy.pop(ref)
        try:
            outcome = ray.get(ref)
        except RayTaskError as e:  # our own code raised inside the actor: a bug, not a lost worker
            self.idle.append(actor_id)
            return TaskLost(actor_id, task, f"the Ray actor failed running this task: {e}", retriable=False)
        except RayError as e:  # the actor's process or its node is gone
            del self.actors[actor_id]
            if waiting or task.attempt <= self.retries:
                self._new_actor()  # Ray places it wherever there is room, on another node if this one is gone
            first_line = str(e).strip().splitlines()[0] if str(e).strip() else ""
            return TaskLost(actor_id, task, f"the Ray worker running this task died ({type(e).__name__}: {first_line})")
        self.idle.append(actor_id)
        try:
            write_returned_files(task.task_dir, outcome["files"], ray_worker=outcome["node"])
        except (OSError, ValueError) as e:
            return TaskLost(actor_id, task, f"the task's files could not be written back: {e}", retriable=False)
        return TaskDone(actor_id, task, outcome["result"])

    def stop(self, clean: bool) -> None:
        if not self.connected:
            return
        import ray

        try:
            if clean:  # closes the desktops (recordings, sandboxes) before the actors are killed
                refs = [self.actors[actor_id].close.remote() for actor_id in self.idle if actor_id in self.actors]
                if refs:
                    ray.wait(refs, num_returns=len(refs), timeout=CLOSE_TIMEOUT_S)
        finally:
            for actor in self.actors.values():
                ray.kill(actor)  # the desktop's sandbox dies with its actor's process
            self.actors.clear()
            if self.started_here:
                ray.shutdown()
            self.connected = False

    def _new_actor(self) -> None:
        self.actors[self.next_id] = self.actor_class.remote(self.config)
        self.starting[self.actors[self.next_id].ready.remote()] = self.next_id
        self.next_id += 1
