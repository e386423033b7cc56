"""A hostile agent's run: it wrecks the desktops of three tasks through real actions (a fork bomb; a
3 GiB file into the home folder, then a memory hog; killing its env server) and solves two. Every
task gets its result, the wrecked ones score 0 with the reason, so the first rate is the 40% the
agent earned, not the 100% of the two it solved; a dead server costs seconds, not 300; nothing
reaches the host's disk; and the machine is clean for the next run."""
from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from desktop_env.providers.local.boot.env_dir import runtime_root
from desktop_env.providers.local.boot.server_process import _stat_fields
from desktop_env.tasks import load_task_set
from osworld_cli.main import cli
from osworld_harness.execution.run import run_benchmark
from osworld_harness.results.config import RunConfig
from osworld_harness.results.rescore import rescore_results

pytestmark = pytest.mark.desktop

SABOTEUR = str(Path(__file__).with_name("saboteur.py")) + ":Saboteur"
WRECKED = {"os-find-copy-lease": "resource_limit", "os-rename-photos-pattern": "resource_limit",
           "os-zip-project-folder": "server_gone"}
SOLVED = ["os-organize-invoices", "os-count-log-errors"]
HOME_CAP = 1 << 30


def config(result_dir: Path, agent: str, task_ids: list[str]) -> RunConfig:
    # Smaller than the defaults (4G, 2G) to spare a shared machine; the agent still writes 3 GiB.
    return RunConfig(agent=agent, model=agent.rsplit(":", 1)[-1].lower(), observation_type="screenshot",
                     domains=["os"], task_ids=task_ids, result_dir=str(result_dir),
                     cache_dir=str(result_dir / "cache"), desktop_memory="2G", desktop_disk="1G")


def orphaned_desktops(grace_s: float = 15.0) -> list[int]:
    """Processes of a local desktop (a bwrap whose arguments name an env folder) whose env folder is gone
    and that are still alive after `grace_s`: the harness removes the folder only after the desktop's
    processes are dead, but another test worker's harness killed with -9 has its folder pruned by the
    next harness while the kernel is still tearing its sandbox down."""
    deadline = time.monotonic() + grace_s
    while (found := _desktops_without_folder()) and time.monotonic() < deadline:
        time.sleep(0.5)
    return found


def describe_process(pid: int) -> str:
    """Its parent and its arguments, for an assertion message."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "exited"
    parent = next((line.split()[1] for line in status.splitlines() if line.startswith("PPid:")), "?")
    return f"parent {parent}: {argv[:300]}"


def _desktops_without_folder() -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        folders = {m.group(0) for arg in argv for m in [re.match(rb"/tmp/osworld-\d+/env-\w+", arg)] if m}
        if argv[0].endswith(b"bwrap") and folders and not all(os.path.isdir(f) for f in folders):
            found.append(int(pid))
    return found


def parent_of(pid: int) -> int | None:
    fields = _stat_fields(f"/proc/{pid}/stat")  # state, then the parent's pid
    return int(fields[1]) if fields and len(fields) > 1 else None


class OwnEnvDirs:
    """Env folders made by this process or its children (the run's worker processes), seen while the run
    goes: another test worker's harness, killed with -9 by its own test, leaves folders with a dead owner
    too, and those are not this run's to clean."""

    def __init__(self) -> None:
        self.seen: set[Path] = set()
        self.before: set[Path] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        me = os.getpid()
        while not self._stop.wait(0.5):
            for env_dir in set(runtime_root().glob("env-*")) - self.before:
                try:
                    owner = int((env_dir / "owner.pid").read_text())
                except (OSError, ValueError):
                    continue
                if owner == me or parent_of(owner) == me:
                    self.seen.add(env_dir)

    def __enter__(self) -> OwnEnvDirs:
        # this test worker's own desktop (the `desktop` fixture, if an earlier test made it) is not the run's
        self.before = set(runtime_root().glob("env-*"))
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    result_dir = tmp_path_factory.mktemp("hostile")
    disk_before = shutil.disk_usage(result_dir).used
    started = time.monotonic()
    with OwnEnvDirs() as own:
        summary = run_benchmark(config(result_dir, SABOTEUR, [*WRECKED, *SOLVED]))
    seconds = time.monotonic() - started
    disk_growth = shutil.disk_usage(result_dir).used - disk_before
    folder = result_dir / "pyautogui" / "screenshot" / "saboteur" / "os"
    return result_dir, folder, summary, seconds, disk_growth, own.seen


def test_every_task_has_its_result_and_the_wrecked_ones_score_zero_with_the_reason(hostile_run):
    _, folder, summary, seconds, _, _ = hostile_run
    scores = {task: (folder / task / "result.txt").read_text().strip() for task in [*WRECKED, *SOLVED]}
    assert scores == {**dict.fromkeys(WRECKED, "0.0"), **dict.fromkeys(SOLVED, "1.0")}
    records = {task: json.loads((folder / task / "status.json").read_text()) for task in scores}
    assert {task: r["status"] for task, r in records.items()} == dict.fromkeys(scores, "ok")
    assert {task: records[task]["agent_fault"]["kind"] for task in WRECKED} == WRECKED
    assert not any("agent_fault" in records[task] for task in SOLVED)
    assert "process limit" in records["os-find-copy-lease"]["agent_fault"]["message"]
    assert re.search(r"memory limit|home folder", records["os-rename-photos-pattern"]["agent_fault"]["message"])
    assert "env server" in records["os-zip-project-folder"]["agent_fault"]["message"]
    killed = records["os-zip-project-folder"]["durations"]
    assert killed["env"] + killed["evaluate"] < 10  # the server's death cost seconds (it was 150 s + 150 s)
    assert (summary.ran, summary.ok) == (5, 5)
    # Under 2 minutes on a quiet machine (docs/MEASURED.md); this bound only catches a dead server waited out.
    assert seconds < 240


def test_the_first_rate_is_what_the_agent_earned(hostile_run):
    result_dir, *_ = hostile_run
    printed = CliRunner().invoke(cli, ["summarize", str(result_dir), "--format", "markdown"])
    assert printed.exit_code == 0, printed.output
    overall = next(line for line in printed.output.splitlines() if line.startswith("| Overall |"))
    assert re.findall(r"\d+\.\d%", overall)[0] == "40.0%"


def test_a_rescore_keeps_the_zeros(hostile_run):
    result_dir, *_ = hostile_run
    rows = {row.task_id: row for row in rescore_results([result_dir], load_task_set(None))}
    assert {task: (rows[task].old, rows[task].new) for task in WRECKED} == dict.fromkeys(WRECKED, (0.0, 0.0))


def test_nothing_reached_the_hosts_disk_and_the_next_run_is_clean(hostile_run, tmp_path):
    result_dir, _, _, _, disk_growth, env_dirs = hostile_run
    assert disk_growth < HOME_CAP  # the home's 3 GiB stayed in the desktop's capped memory
    assert sum(f.stat().st_size for f in result_dir.rglob("*") if f.is_file()) < 64 << 20
    # the run made desktops in its worker processes, and every folder they made is gone
    assert env_dirs and [d for d in env_dirs if d.exists()] == []
    orphans = orphaned_desktops()
    assert orphans == [], {pid: describe_process(pid) for pid in orphans}
    again = run_benchmark(config(tmp_path, "oracle", ["os-find-copy-lease"]))  # the fork bomb's task, done honestly
    assert (again.ran, again.ok) == (1, 1)
    folder = tmp_path / "pyautogui" / "screenshot" / "oracle" / "os" / "os-find-copy-lease"
    assert (folder / "result.txt").read_text().strip() == "1.0"
    assert "agent_fault" not in json.loads((folder / "status.json").read_text())
