"""--evaluator-fixes from the command line to the metrics: a run's option and setting (args.json, the
reproduce line), the scorer and DesktopEnv's default evaluator, rescoring, and summaries that say such
a run is not comparable with OSWorld's scores."""
from __future__ import annotations

import json
import shlex
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace

from click.testing import CliRunner

from desktop_env.desktop_env import default_evaluator
from desktop_env.evaluators.scoring import evaluate_task
from osworld_cli.report_command import rescore_command
from osworld_cli.run_commands import run_command
from osworld_harness.results.config import RunConfig
from osworld_harness.results.reproduce import reproduce_command, reproducibility
from osworld_harness.results.settings import setting_differences, settings_of
from osworld_harness.results.summary import find_runs, run_heading, summarize_run

# A command's output with its final newline against the task's expected word: OSWorld's exact_match gives 0.
EVALUATOR = {"func": "exact_match", "result": {"type": "rule", "rules": "true\n"},
             "expected": {"type": "rule", "rules": {"expected": "true"}}}


def test_the_scorer_gives_osworlds_verdict_unless_asked_for_the_fixes():
    assert evaluate_task(object(), EVALUATOR).score == 0.0
    assert evaluate_task(object(), EVALUATOR, evaluator_fixes=True).score == 1.0
    assert evaluate_task(object(), EVALUATOR).score == 0.0  # the switch does not outlive the evaluation


def test_desktop_envs_default_evaluator_reads_the_envs_switch():
    assert default_evaluator(SimpleNamespace(evaluator_fixes=False), EVALUATOR).score == 0.0
    assert default_evaluator(SimpleNamespace(evaluator_fixes=True), EVALUATOR).score == 1.0


def test_it_is_a_setting_recorded_and_given_again_by_the_reproduce_line():
    params = run_command.make_context("run", ["--evaluator-fixes"]).params
    assert params["evaluator_fixes"] is True
    assert run_command.make_context("run", []).params["evaluator_fixes"] is False
    fixed, plain = RunConfig(evaluator_fixes=True), RunConfig()
    assert setting_differences(fixed, plain) == ["evaluator_fixes"]  # a folder of OSWorld's verdicts refuses it
    assert settings_of(fixed)["evaluator_fixes"] is True
    command = reproduce_command(asdict(fixed))
    assert "--evaluator-fixes" in shlex.split(command)
    assert "--evaluator-fixes" not in reproduce_command(asdict(plain))


def run_folder(root: Path, evaluator_fixes: bool | None) -> Path:
    folder = root / "pyautogui" / "screenshot" / "m" / "os" / "t1"
    folder.mkdir(parents=True)
    (folder / "result.txt").write_text("1.0\n")
    (folder / "status.json").write_text(json.dumps({"format": 2, "status": "ok", "task_id": "t1", "trial": 1,
                                                    "steps": 1}))
    config = {"max_steps": 15} if evaluator_fixes is None else {"max_steps": 15, "evaluator_fixes": evaluator_fixes}
    (folder.parent.parent / "args.json").write_text(json.dumps({"config": config, "runs": [{"config": config}]}))
    return root


def test_summaries_name_a_run_scored_with_the_fixes_as_not_comparable(tmp_path):
    for name, fixes in (("fixed", True), ("plain", False), ("older", None)):
        (run,) = find_runs(run_folder(tmp_path / name, fixes))
        heading = run_heading(run, summarize_run(run))
        assert ("NOT COMPARABLE with OSWorld's scores" in heading) is bool(fixes), name
        assert reproducibility(run)["evaluator_fixes"] is bool(fixes)


def test_rescore_takes_the_switch_and_records_it(tmp_path):
    results = run_folder(tmp_path / "results", None)
    tasks = tmp_path / "tasks"
    (tasks / "examples" / "os").mkdir(parents=True)
    task = {"id": "t1", "instruction": "x", "evaluator": EVALUATOR}
    (tasks / "examples" / "os" / "t1.json").write_text(json.dumps(task))
    (tasks / "test_all.json").write_text(json.dumps({"os": ["t1"]}))
    for flags, fixes in (([], False), (["--evaluator-fixes"], True)):
        result = CliRunner().invoke(rescore_command, [str(results), "--tasks", str(tasks / "test_all.json"), "--json",
                                                      *flags])
        assert result.exit_code == 1, result.output  # the folder has no recording: nothing could be rescored
        record = json.loads((results / "pyautogui" / "screenshot" / "m" / "os" / "t1" / "rescore.json").read_text())
        assert record["evaluator_fixes"] is fixes
