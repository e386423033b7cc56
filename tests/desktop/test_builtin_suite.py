"""The built-in test_small suite end to end: every task is sound (the reference agent solves it, doing
nothing does not)."""
from __future__ import annotations

import json

import pytest

from desktop_env.tasks import load_task_set
from desktop_env.tasks.loader import BUILTIN_ROOT
from osworld_harness.experiments.verify import VerifyOptions, verify

pytestmark = pytest.mark.desktop

SMALL = BUILTIN_ROOT / "test_small.json"


def test_every_test_small_task_is_sound(tmp_path):
    task_set = load_task_set(SMALL)
    heard = []
    verdicts = verify(str(SMALL), VerifyOptions(num_envs=2, cache_dir=str(tmp_path / "cache"),
                                                result_dir=str(tmp_path / "results")), on_verdict=heard.append)
    unsound = {f"{v.domain}/{v.task_id}": (v.reference_score, v.noop_score, v.error) for v in verdicts if not v.sound}
    assert unsound == {}
    assert len(verdicts) == len(task_set) >= len(task_set.index) and len(heard) == len(verdicts)
    # both are ordinary runs, with their result folders: the reference agent scored 1 on every task, with
    # no error (this is also the reference agent's run over test_small)
    reference = tmp_path / "results" / "pyautogui" / "screenshot" / "reference"
    assert (reference / "args.json").is_file()
    assert (tmp_path / "results" / "pyautogui" / "screenshot" / "noop" / "args.json").is_file()
    scores = {p.parent.name: p.read_text().strip() for p in reference.rglob("result.txt")}
    assert len(scores) == len(task_set) and set(scores.values()) == {"1.0"}, scores
    statuses = {p.parent.name: json.loads(p.read_text())["status"] for p in reference.rglob("status.json")}
    assert set(statuses.values()) == {"ok"}
