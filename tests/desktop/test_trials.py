"""`osworld run --trials 2` on real desktops: each trial of each task recorded in its own folder with the score
its seeded coin decides, and a run killed with SIGKILL resumes by running only the trials that are missing."""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

from desktop_env.tasks import load_task_set
from desktop_env.tasks.loader import BUILTIN_ROOT
from osworld_cli.main import cli

pytestmark = pytest.mark.desktop

OS_TASKS = ["os-organize-invoices", "os-install-photoshop"]  # a feasible task and an infeasible one
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "agent" / "coin_flip_agent.py"
SLOW_COIN = f'''
import importlib.util
import time

spec = importlib.util.spec_from_file_location("coin_flip_agent", {str(EXAMPLE)!r})
coin_flip_agent = importlib.util.module_from_spec(spec)
spec.loader.exec_module(coin_flip_agent)


class SlowCoin(coin_flip_agent.CoinFlipAgent):
    """The example's coin, slow enough that a run can be killed while a trial runs."""

    def predict(self, instruction, obs):
        time.sleep(2)
        return super().predict(instruction, obs)
'''


def coin() -> ModuleType:
    spec = importlib.util.spec_from_file_location("coin_flip_agent", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def a_seed_whose_coins_differ_between_trials() -> int:
    plays = coin().plays
    return next(seed for seed in range(100)
                if plays(seed, OS_TASKS[0], 1, 0.5) != plays(seed, OS_TASKS[0], 2, 0.5)
                and plays(seed, OS_TASKS[1], 1, 0.5) == plays(seed, OS_TASKS[1], 2, 0.5))


def test_two_trials_each_recorded_and_a_killed_run_finishes_only_what_is_missing(tmp_path):
    root = tmp_path / "tasks"
    root.mkdir()
    for name in ("examples", "solutions", "files"):
        (root / name).symlink_to(BUILTIN_ROOT / name)
    (root / "test_os.json").write_text(json.dumps({"os": OS_TASKS}))
    agent_file = tmp_path / "slow_coin.py"
    agent_file.write_text(SLOW_COIN)
    seed = a_seed_whose_coins_differ_between_trials()
    results = tmp_path / "results"
    command = [sys.executable, "-m", "osworld_cli.main", "run", "--agent", f"{agent_file}:SlowCoin",
               "--agent-arg", "p=0.5", "--agent-arg", f"seed={seed}", "--model", "coin", "--obs", "screenshot",
               "--tasks", str(root / "test_os.json"), "--trials", "2", "--result-dir", str(results),
               "--cache-dir", str(tmp_path / "cache"), "--no-record"]
    model_dir = results / "pyautogui" / "screenshot" / "coin"
    folders = {(t, k): model_dir / "os" / t / ("trials/2" if k == 2 else "") for t in OS_TASKS for k in (1, 2)}
    killed = folders[(OS_TASKS[0], 2)]

    runner = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not (killed / "status.json").exists():  # every first trial finished; the second ones have begun
        assert time.monotonic() < deadline and runner.poll() is None
        time.sleep(0.1)
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait()
    assert json.loads((killed / "status.json").read_text())["status"] == "running"
    assert not (folders[(OS_TASKS[1], 2)] / "status.json").exists()
    first_trials = {t: (folders[(t, 1)] / "status.json").stat().st_mtime for t in OS_TASKS}

    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    plays, task_set = coin().plays, load_task_set(str(root / "test_os.json"))
    for (task_id, trial), folder in folders.items():
        status = json.loads((folder / "status.json").read_text())
        expected = 1.0 if plays(seed, task_id, trial, 0.5) else 0.0
        score = float((folder / "result.txt").read_text())
        assert (status["status"], status["trial"], score) == ("ok", trial, expected)
        assert status["task_sha256"] == task_set.load("os", task_id).sha256 and status["screen_size"] == [1920, 1080]
    assert {t: (folders[(t, 1)] / "status.json").stat().st_mtime for t in OS_TASKS} == first_trials  # not re-run
    history = json.loads((killed / "status.json").read_text())["previous_errors"]
    assert [h["error"]["type"] for h in history] == ["Interrupted"]

    done = CliRunner().invoke(cli, ["summarize", str(results), "--format", "json"])
    overall = json.loads(done.output)["runs"][0]["groups"][-1]
    assert (overall["tasks"], overall["trials"], overall["k"], overall["flips"]) == (2, 4, 2, 0.5)
