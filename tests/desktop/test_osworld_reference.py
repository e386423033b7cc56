"""OSWorld's own DesktopEnv (desktop-env, from the reference venv) and this harness on the same task and
actions, each on a fresh local desktop: the same setup and postconfig outcomes, getters' values and score
(scripts/osworld_reference.py runs the same over whole task sets)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from desktop_env.tasks.loader import BUILTIN_ROOT
from osworld_harness.experiments.osworld_reference import run_reference, solution_cases
from tests.osworld_reference import reference

pytestmark = pytest.mark.desktop

TASK = "os-organize-invoices"


def task_set(root: Path, postconfig: list[dict]) -> Path:
    """The built-in os task as it is, and a copy whose evaluator runs `postconfig` first, with the solution."""
    (root / "examples" / "os").mkdir(parents=True)
    (root / "solutions" / "os").mkdir(parents=True)
    shutil.copytree(BUILTIN_ROOT / "files" / "os" / TASK, root / "files" / "os" / TASK)
    task = json.loads((BUILTIN_ROOT / "examples" / "os" / f"{TASK}.json").read_text())
    changed = {**task, "id": f"{TASK}-postconfig", "evaluator": {**task["evaluator"], "postconfig": postconfig}}
    for variant in (task, changed):
        (root / "examples" / "os" / f"{variant['id']}.json").write_text(json.dumps(variant))
        shutil.copyfile(BUILTIN_ROOT / "solutions" / "os" / f"{TASK}.json",
                        root / "solutions" / "os" / f"{variant['id']}.json")
    (root / "test_all.json").write_text(json.dumps({"os": [task["id"], changed["id"]]}))
    return root / "test_all.json"


def test_osworlds_own_code_and_ours_agree_step_by_step_getter_by_getter_and_on_the_score(tmp_path):
    python = reference().python
    missing_window = {"type": "activate_window", "parameters": {"window_name": "GNU Image Manipulation Program"}}
    meta = task_set(tmp_path / "tasks", [missing_window])
    report = run_reference(solution_cases(meta), python, tmp_path / "runs")
    by_task = {c.key: c for c in report.comparisons}
    plain, logged = by_task[f"os/{TASK}"], by_task[f"os/{TASK}-postconfig"]
    for comparison in (plain, logged):
        assert comparison.osworld.error is None and comparison.ours.error is None, comparison
        assert comparison.osworld.score == comparison.ours.score == 1.0
        assert comparison.step_differences == [] and comparison.getter_differences == []
        assert len(comparison.ours.getters) == len(comparison.osworld.getters) == 2  # result, expected
    # Both go on from the activation of a window that is not there to the getters: OSWorld's controller, which
    # gets a 200 from the env server whether a window matched or not, and ours, which is told none did and
    # records the step as failed
    [theirs] = [s for s in logged.osworld.steps if s.phase == "postconfig"]
    [ours] = [s for s in logged.ours.steps if s.phase == "postconfig"]
    assert theirs.type == ours.type == "activate_window" and not theirs.ended and not ours.ended
    assert ours.failed and "GNU Image Manipulation Program" in ours.why
    assert report.figures() == {"cases": 2, "same_score": 2, "same_steps": 2, "same_getters": 2,
                                "osworld_errors": 0, "our_errors": 0}
