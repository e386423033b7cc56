"""replay plays recorded keys in the desktop; conference_city_in_order reads a task's CSV file."""
from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import pytest

from desktop_env.evaluators.context import LiveContext
from desktop_env.evaluators.getters import files, general
from desktop_env.safe_paths import UnsafeTaskPath
from desktop_env.tasks.paths import unsafe_paths


class RecordingController:
    def __init__(self):
        self.code: list[str] = []

    def execute_python_command(self, code: str) -> dict:
        self.code.append(code)
        return {"status": "success", "output": "", "error": "", "returncode": 0}


def test_replay_sends_each_recorded_action_as_pyautogui_code():
    env = SimpleNamespace(controller=RecordingController())
    trajectory = [{"type": "hotkey", "param": ["ctrl", "s"]},
                  {"type": "typewrite", "param": "it's \"done\"\n"},
                  {"type": "press", "param": "enter"}]
    assert general.replay(LiveContext(env), {"type": "replay", "trajectory": trajectory}) is None
    assert env.controller.code == ["pyautogui.hotkey(*['ctrl', 's'])",
                                   "pyautogui.typewrite('it\\'s \"done\"\\n')",
                                   "pyautogui.press('enter')"]
    general.replay(LiveContext(env), trajectory[:1])  # OSWorld's getter takes the list itself
    assert env.controller.code[-1] == "pyautogui.hotkey(*['ctrl', 's'])"


def test_replay_checks_every_action_before_running_one():
    env = SimpleNamespace(controller=RecordingController())
    with pytest.raises(ValueError, match="action 1"):
        general.replay(LiveContext(env),
                       {"trajectory": [{"type": "press", "param": "a"}, {"type": "click", "param": [1, 2]}]})
    with pytest.raises(ValueError, match="action 0"):
        general.replay(LiveContext(env), {"trajectory": [{"type": "typewrite", "param": ["not", "text"]}]})
    assert env.controller.code == []


def write_csv(path, rows) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)


def task_env(tmp_path) -> SimpleNamespace:
    task_dir = tmp_path / "tasks"
    task_dir.mkdir()
    cache = tmp_path / "cache"
    return SimpleNamespace(task_dir=str(task_dir), cache_dir=str(cache / "t1"), cache_dir_base=str(cache),
                           task_config={"id": "t1"}, controller=None)


def test_conference_city_in_order_gives_the_third_column_without_the_header(tmp_path):
    env = task_env(tmp_path)
    write_csv(tmp_path / "tasks" / "conferences.csv",
              [["Conference", "Year", "City"], ["ICML", "2024", "Vienna"], ["NeurIPS", "2024", "Vancouver"],
               ["short row"], ["ACL", "2024", "Bangkok, Thailand"]])
    config = {"type": "conference_city_in_order", "csv_path": "conferences.csv"}
    assert files.conference_city_in_order(LiveContext(env), config) == ["Vienna", "Vancouver", "", "Bangkok, Thailand"]
    uri = (tmp_path / "tasks" / "conferences.csv").as_uri()
    assert files.conference_city_in_order(LiveContext(env), {"csv_path": uri})[0] == "Vienna"


def test_conference_city_in_order_reads_nothing_outside_the_tasks_tree(tmp_path):
    env = task_env(tmp_path)
    write_csv(tmp_path / "secret.csv", [["a", "b", "c"], ["1", "2", "3"]])
    with pytest.raises(UnsafeTaskPath, match="csv_path"):
        files.conference_city_in_order(LiveContext(env), {"csv_path": "../secret.csv"})
    task = {"id": "t1", "evaluator": {"func": "exact_match", "result": {"type": "conference_city_in_order",
                                                                        "csv_path": "../secret.csv"}}}
    (tmp_path / "tasks" / "t1.json").write_text(json.dumps(task))
    found = unsafe_paths(task, tmp_path / "tasks" / "t1.json", tmp_path / "tasks")
    assert [e.field for e in found] == ["evaluator.result.csv_path"]
