"""`osworld compare A B`: two runs paired task by task, refused (naming the difference) when they are not over
the same tasks, on hand-made result folders whose figures are worked out by hand."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from osworld_cli.errors import CANNOT_START
from osworld_cli.main import cli
from osworld_harness.results.compare import CompareError, compare_runs, pick_run
from tests.harness.results.test_summary import trial

TEN = [f"t{i:02d}" for i in range(1, 11)]


def two_runs(root: Path, solved_a: set[str], solved_b: set[str], tasks: list[str] = TEN) -> tuple[Path, Path]:
    for model, solved in (("a", solved_a), ("b", solved_b)):
        for task_id in tasks:
            trial(root, task_id, 1, 1.0 if task_id in solved else 0.0, model=model,
                  domain="os" if task_id < "t06" else "chrome")
    return (root / "pyautogui" / "screenshot" / "a", root / "pyautogui" / "screenshot" / "b")


def test_one_trial_each_is_an_exact_mcnemar_test_with_the_tasks_won_and_lost(tmp_path):
    a, b = two_runs(tmp_path, set(TEN[:6]), set(TEN[:3]) | {"t07"})
    result = compare_runs(pick_run(a), pick_run(b))
    overall = result.overall
    assert (overall.tasks, overall.mean_a, overall.mean_b) == (10, 0.6, 0.4)
    assert (overall.test, overall.a_only, overall.b_only) == ("exact McNemar", 3, 1)
    assert overall.p_value == pytest.approx(0.625) and not overall.significant
    assert overall.won == [("chrome", "t06"), ("os", "t04"), ("os", "t05")] and overall.lost == [("chrome", "t07")]
    groups = {g.name: g.comparison for g in result.groups}
    assert list(groups) == ["chrome", "os", "OS", "Daily"]
    assert (groups["os"].mean_a, groups["os"].mean_b) == (1.0, 0.6) and groups["chrome"].difference == 0.0


def test_the_command_prints_the_difference_its_interval_the_test_and_the_tasks(tmp_path):
    a, b = two_runs(tmp_path, set(TEN[:6]), set(TEN[:3]) | {"t07"})
    done = CliRunner().invoke(cli, ["compare", str(a), str(b)])
    assert done.exit_code == 0, done.output
    assert "A−B +20.0 points, 95% CI" in done.output
    assert "exact McNemar p=0.625 on the tasks only one run solved (A 3, B 1), which decides: no significant " \
           "difference" in done.output
    assert "A scored higher (3): chrome/t06, os/t04, os/t05" in done.output
    assert "B scored higher (1): chrome/t07" in done.output
    data = json.loads(CliRunner().invoke(cli, ["compare", str(a), str(b), "--format", "json"]).output)
    assert data["overall"]["p_value"] == pytest.approx(0.625) and data["groups"]["os"]["won"] == ["os/t04", "os/t05"]
    assert "| Overall | 10 | 60.0% | 40.0% | +20.0 |" in CliRunner().invoke(
        cli, ["compare", str(a), str(b), "--format", "markdown"]).output


def test_a_run_that_wins_every_trial_is_significantly_better_by_the_paired_bootstrap(tmp_path):
    tasks = [f"t{i:02d}" for i in range(30)]
    for k in (1, 2):
        for i, task_id in enumerate(tasks):
            trial(tmp_path, task_id, k, 1.0, model="a")
            trial(tmp_path, task_id, k, 1.0 if k == 1 and i % 2 else 0.0, model="b")  # B: half of odd tasks' trials
    result = compare_runs(pick_run(tmp_path / "pyautogui/screenshot/a"), pick_run(tmp_path / "pyautogui/screenshot/b"))
    overall = result.overall
    assert overall.test == "paired bootstrap" and overall.p_value is None
    assert overall.difference == pytest.approx(0.75) and overall.significant and overall.lost == []


def test_runs_over_different_tasks_are_refused_naming_the_difference_unless_common(tmp_path):
    a, b = two_runs(tmp_path, set(TEN), set(TEN))
    trial(tmp_path, "extra", 1, 1.0, model="a")
    done = CliRunner().invoke(cli, ["compare", str(a), str(b)])
    assert done.exit_code == CANNOT_START
    assert "1 task(s) only in A: os/extra" in done.output
    done = CliRunner().invoke(cli, ["compare", str(a), str(b), "--common"])
    assert done.exit_code == 0 and "left out: 1 task(s) only in A: os/extra" in done.output
    assert "10 task(s) (task set" in done.output


def test_a_task_file_that_changed_between_the_runs_is_named(tmp_path):
    a, b = two_runs(tmp_path, set(TEN), set(TEN), tasks=TEN[:3])
    status = b / "os" / "t02" / "status.json"
    status.write_text(json.dumps({**json.loads(status.read_text()), "task_sha256": "e" * 64}))
    with pytest.raises(CompareError, match=r"1 task\(s\) ran from different task files: os/t02"):
        compare_runs(pick_run(a), pick_run(b))
    assert compare_runs(pick_run(a), pick_run(b), common=True).tasks == [("os", "t01"), ("os", "t03")]


def test_a_folder_of_several_runs_is_not_one_run(tmp_path):
    two_runs(tmp_path, set(), set(), tasks=TEN[:2])
    with pytest.raises(CompareError, match=r"holds 2 runs \(pyautogui/screenshot/a, pyautogui/screenshot/b\)"):
        pick_run(tmp_path)
