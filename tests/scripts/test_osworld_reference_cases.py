"""The reference run's cases: a recorded trajectory becomes the actions both harnesses take, paced and with its
import line as the replay agent plays it; a built-in task's its reference solution."""
from __future__ import annotations

import json

from desktop_env.tasks.loader import BUILTIN_ROOT
from osworld_harness.experiments.osworld_reference import solution_cases, trajectory_cases


def test_a_recorded_trajectory_is_paced_and_prefixed_as_the_replay_agent_plays_it(tmp_path):
    (tmp_path / "examples" / "os").mkdir(parents=True)
    task = {"id": "t1", "instruction": "Do it.", "config": [],
            "evaluator": {"func": "exact_match", "result": {"type": "vm_command_line", "command": "echo hi"},
                          "expected": {"type": "rule", "rules": {"expected": "hi\n"}}}}
    (tmp_path / "examples" / "os" / "t1.json").write_text(json.dumps(task))
    (tmp_path / "test_all.json").write_text(json.dumps({"os": ["t1"]}))
    recorded = tmp_path / "runs.jsonl"
    recorded.write_text(json.dumps({"task_id": "t1", "score_on_vm": 1.0, "exec_prefix": "import pyautogui",
                                    "actions": ["pyautogui.click(10, 20)", "WAIT", "DONE"]}) + "\n")
    [case] = trajectory_cases(tmp_path / "test_all.json", recorded, 3.0, [("os", "t1")])
    assert case.actions == ["import pyautogui\npyautogui.click(10, 20)\nimport time; time.sleep(3)",
                            "import time; time.sleep(3)  # WAIT", "DONE"]
    assert case.recorded_score == 1.0 and case.source == f"{recorded}:1" and case.key == "os/t1"


def test_a_built_in_task_takes_its_reference_solution_ending_in_done():
    [case] = solution_cases(BUILTIN_ROOT / "test_all.json", ["os-organize-invoices"])
    assert case.source == "solution" and case.actions[-1] == "DONE" and len(case.actions) == 4
    assert case.actions[0].startswith("pyautogui.hotkey('ctrl', 'alt', 't')")
