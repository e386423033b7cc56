"""`osworld run --backend ray` on a real two-node Ray cluster on loopback, with real desktops.

The cluster is started the way a user starts one (`ray start --head`, then `ray start --address`
for a second node), each node with one CPU so each holds one desktop. The tests of one pytest
worker share one; a test only ever looks at or kills processes of its own cluster, so clusters
of parallel workers can run side by side.
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from desktop_env.tasks import load_task_set
from desktop_env.tasks.loader import BUILTIN_ROOT
from osworld_harness.execution.run import run_benchmark
from osworld_harness.results.config import RunConfig
from osworld_harness.results.task_folder import TaskState, task_state
from tests.processes import child_pids
from tests.serve_cli import free_port

pytest.importorskip("ray")
pytestmark = pytest.mark.desktop

VENV_BIN = Path(sys.executable).parent
SMALL = BUILTIN_ROOT / "test_small.json"
NODE_OPTIONS = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
OS_TASKS = load_task_set(BUILTIN_ROOT / "test_all.json").index["os"]
# Enough tasks for both nodes to take some and for some to be left when a worker is killed or the run
# is interrupted; each more task is only more of the same boots.
SOME_OS_TASKS = OS_TASKS[:4]
SOME_OS_TASK_ARGS = [arg for task_id in SOME_OS_TASKS for arg in ("--task-id", task_id)]


def processes_matching(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def actor_pids(cluster: RayCluster) -> list[int]:
    """This cluster's actor processes that own desktops (Ray names each process after its actor; its
    parent is its node's raylet). Other tests may run clusters of their own at the same time."""
    raylets = {pid for pid in processes_matching(f"{cluster.temp_dir}/") if is_raylet(pid)}
    return [pid for pid in processes_matching("ray::RayDesktopWorker") if parent(pid) in raylets]


def is_raylet(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"/raylet")
    except OSError:
        return False


def parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except OSError:
        return None


def wait_until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


@contextlib.contextmanager
def running_cluster() -> Iterator[RayCluster]:
    """A two-node cluster on loopback, one CPU per node, stopped (only it) on exit."""
    # Ray puts Unix sockets under its temp dir: the path must stay short (108 bytes).
    temp_dir = tempfile.mkdtemp(prefix="rt-", dir="/tmp")
    address = f"127.0.0.1:{free_port()}"
    # Token authentication, Ray's default, with a token of this cluster's own (not ~/.ray's), given
    # to the nodes and to every driver. Drivers run as `osworld run` subprocesses: Ray reads these
    # variables once per process.
    cluster = RayCluster(address, {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
                                   "RAY_USAGE_STATS_ENABLED": "0"}, temp_dir)
    try:
        subprocess.run([str(VENV_BIN / "ray"), "start", "--head", f"--port={address.split(':')[1]}",
                        "--include-dashboard=false", f"--temp-dir={temp_dir}", *NODE_OPTIONS],
                       check=True, capture_output=True, timeout=120, env=cluster.env)
        start_worker_node(cluster)
        wait_until(lambda: active_nodes(cluster) == 2, 60, "two Ray nodes")
        yield cluster
    finally:
        stop_cluster(temp_dir)


@pytest.fixture(scope="module")
def ray_cluster():
    with running_cluster() as cluster:
        yield cluster


@dataclass
class RayCluster:
    address: str
    env: dict[str, str]
    temp_dir: str


def active_nodes(cluster: RayCluster) -> int:
    status = subprocess.run([str(VENV_BIN / "ray"), "status", f"--address={cluster.address}"], capture_output=True,
                            text=True, timeout=60, env=cluster.env).stdout
    active = status.partition("Active:")[2].partition("Pending:")[0]
    return active.count(" node_")


def start_worker_node(cluster: RayCluster) -> None:
    subprocess.run([str(VENV_BIN / "ray"), "start", f"--address={cluster.address}", *NODE_OPTIONS],
                   check=True, capture_output=True, timeout=120, env=cluster.env)


def stop_cluster(temp_dir: str) -> None:
    """Stops this cluster only (`ray stop` would stop every Ray on the machine)."""
    daemons = processes_matching(temp_dir)
    children = [child for pid in daemons for child in child_pids(pid)]
    for pid in daemons + children:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    shutil.rmtree(temp_dir, ignore_errors=True)


def osworld_run(cluster: RayCluster, result_dir: Path, *extra: str) -> subprocess.Popen:
    command = [str(VENV_BIN / "osworld"), "run", "--agent", "oracle", "--model", "reference", "--obs", "screenshot",
               "--backend", "ray", "--ray-address", cluster.address, "--num-envs", "2", "--result-dir",
               str(result_dir), "--cache-dir", str(result_dir / "cache"), *extra]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env=cluster.env)


def task_records(model_dir: Path) -> dict[str, dict]:
    return {p.parent.name: {**json.loads(p.read_text()),
                            "score": (p.parent / "result.txt").read_text().strip() if (p.parent / "result.txt").exists()
                            else None,
                            "files": sorted(f.name.split("_2")[0] if f.name.startswith("step_") else f.name
                                            for f in p.parent.iterdir())}
            for p in model_dir.glob("*/*/status.json")}


# three of test_small's apps: enough for both nodes to take tasks, a third of the suite's time
RAY_DOMAINS = ("os", "chrome", "libreoffice_writer")


def test_ray_backend_gives_the_local_backends_results_on_test_small(ray_cluster, tmp_path):
    domains = [arg for domain in RAY_DOMAINS for arg in ("--domain", domain)]
    run = osworld_run(ray_cluster, tmp_path / "ray", "--tasks", str(SMALL), *domains)
    output, _ = run.communicate(timeout=900)
    assert run.returncode == 0, output
    records = task_records(tmp_path / "ray" / "pyautogui" / "screenshot" / "reference")
    expected = {task_id for domain, ids in load_task_set(SMALL).index.items() if domain in RAY_DOMAINS
                for task_id in ids}
    # The local backend scores 1.0 on every test_small task (tests/desktop/test_builtin_suite.py).
    assert {t: (r["status"], r["score"]) for t, r in records.items()} == {t: ("ok", "1.0") for t in expected}
    assert len({r["ray_worker"]["ray_node_id"] for r in records.values()}) == 2  # both nodes took tasks

    # Same files, same records as a local run of the same task.
    local = RunConfig(agent="oracle", model="reference", observation_type="screenshot", tasks=str(SMALL),
                      domains=["os"], result_dir=str(tmp_path / "local"), cache_dir=str(tmp_path / "cache"))
    run_benchmark(local)
    (task_id, local_record), = task_records(local.layout.model_dir).items()
    ray_record = records[task_id]
    assert ray_record["files"] == local_record["files"]
    compared = ("status", "score", "steps")
    assert {k: ray_record[k] for k in compared} == {k: local_record[k] for k in compared}
    assert set(ray_record) - set(local_record) == {"ray_worker"}


def test_each_trial_of_a_task_is_written_back_to_its_own_folder(ray_cluster, tmp_path):
    run = osworld_run(ray_cluster, tmp_path, "--task-id", OS_TASKS[0], "--trials", "2", "--no-record")
    output, _ = run.communicate(timeout=600)
    assert run.returncode == 0, output
    first = tmp_path / "pyautogui" / "screenshot" / "reference" / "os" / OS_TASKS[0]
    for trial, folder in ((1, first), (2, first / "trials" / "2")):
        record = json.loads((folder / "status.json").read_text())
        assert (record["status"], record["trial"], (folder / "result.txt").read_text()) == ("ok", trial, "1.0\n")
        assert record["ray_worker"]["pid"] and list(folder.glob("step_0_*.png"))
    assert sorted(p.name for p in (first / "trials").iterdir()) == ["2"]


def test_a_worker_killed_mid_task_costs_an_error_record_and_a_retry_not_the_task(ray_cluster, tmp_path):
    run = osworld_run(ray_cluster, tmp_path, *SOME_OS_TASK_ARGS, "--no-record")
    killed = wait_until(lambda: [pid for pid in actor_pids(ray_cluster)
                                 if b"run_task" in Path(f"/proc/{pid}/cmdline").read_bytes()], 120,
                        "an actor running a task")[0]
    os.kill(killed, signal.SIGKILL)
    output, _ = run.communicate(timeout=600)
    assert run.returncode == 0, output
    assert "retrying" in output
    records = task_records(tmp_path / "pyautogui" / "screenshot" / "reference")
    assert {t: (r["status"], r["score"]) for t, r in records.items()} == {t: ("ok", "1.0") for t in SOME_OS_TASKS}
    retried = [r for r in records.values() if r.get("previous_errors")]
    assert len(retried) == 1
    (lost,) = retried[0]["previous_errors"]
    assert lost["error"]["type"] == "WorkerDied" and "ActorDiedError" in lost["error"]["message"]
    assert retried[0]["ray_worker"]["pid"] != killed


def test_ctrl_c_stops_every_actor_and_keeps_finished_tasks(ray_cluster, tmp_path):
    run = osworld_run(ray_cluster, tmp_path, *SOME_OS_TASK_ARGS, "--no-record")
    model_dir = tmp_path / "pyautogui" / "screenshot" / "reference"
    wait_until(lambda: any(task_state(d) is TaskState.DONE for d in model_dir.glob("os/*")), 180, "a finished task")
    os.killpg(run.pid, signal.SIGINT)
    output, _ = run.communicate(timeout=120)
    assert run.returncode == 130, output
    wait_until(lambda: not actor_pids(ray_cluster), 60, "the actors to stop")
    records = task_records(model_dir)
    assert any(r["status"] == "ok" and r["score"] == "1.0" for r in records.values())
    assert all(r["status"] in ("ok", "running") for r in records.values())

    # Resume: the re-run finishes the rest and re-runs nothing that finished.
    finished = {t for t, r in records.items() if r["status"] == "ok"}
    rerun = osworld_run(ray_cluster, tmp_path, *SOME_OS_TASK_ARGS, "--no-record")
    output, _ = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, output
    assert f"{len(finished)} already done" in output
    records = task_records(model_dir)
    assert {t: r["status"] for t, r in records.items()} == {t: "ok" for t in SOME_OS_TASKS}


def test_a_cluster_too_small_for_one_desktop_is_refused_before_any_task_starts(ray_cluster, tmp_path):
    run = osworld_run(ray_cluster, tmp_path, "--domain", "os", "--ray-memory-per-env", "4096")
    output, _ = run.communicate(timeout=300)
    assert run.returncode == 2  # could not start
    assert "cannot hold one desktop of 1 CPUs and 4096 GiB" in output
    assert not list(tmp_path.glob("pyautogui/screenshot/reference/*/*/status.json"))
    assert not list(tmp_path.glob("pyautogui/screenshot/reference/args.json"))  # a run that never started
