"""The built-in test_small suite end to end: every task is sound, and the reference agent solves it."""
from __future__ import annotations

import json

import pytest

from desktop_env.tasks import load_task_set
from desktop_env.tasks.loader import BUILTIN_ROOT
from runner.config import RunConfig
from runner.run import run_benchmark
from runner.verify import VerifyOptions, verify

pytestmark = pytest.mark.desktop

SMALL = BUILTIN_ROOT / "test_small.json"


def test_every_test_small_task_is_sound(tmp_path):
    task_set = load_task_set(SMALL)
    heard = []
    verdicts = verify(str(SMALL), VerifyOptions(num_envs=1, cache_dir=str(tmp_path / "cache"),
                                                result_dir=str(tmp_path / "results")), on_verdict=heard.append)
    unsound = {f"{v.domain}/{v.task_id}": (v.reference_score, v.noop_score, v.error) for v in verdicts if not v.sound}
    assert unsound == {}
    assert len(verdicts) == len(task_set) >= len(task_set.index) and len(heard) == len(verdicts)
    # both are ordinary runs, with their result folders
    assert (tmp_path / "results" / "pyautogui" / "screenshot" / "reference" / "args.json").is_file()
    assert (tmp_path / "results" / "pyautogui" / "screenshot" / "noop" / "args.json").is_file()


def test_reference_agent_run_over_test_small_scores_one_everywhere(tmp_path):
    config = RunConfig(agent="oracle", model="reference", observation_type="screenshot", tasks=str(SMALL),
                       result_dir=str(tmp_path), cache_dir=str(tmp_path / "cache"))
    summary = run_benchmark(config)
    assert summary.errors == 0 and summary.ok == summary.ran == len(load_task_set(SMALL))
    scores = {p.parent.name: p.read_text().strip() for p in config.layout.model_dir.rglob("result.txt")}
    assert set(scores.values()) == {"1.0"}, scores
    statuses = {p.parent.name: json.loads(p.read_text())["status"]
                for p in config.layout.model_dir.rglob("status.json")}
    assert set(statuses.values()) == {"ok"}
