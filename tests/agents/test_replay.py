"""The replay agent plays back what was recorded elsewhere, as it was recorded, and says what it scored there."""
from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from PIL import Image

from desktop_env.evaluators.outcome import Evaluation
from mm_agents.loader import registered_agent
from mm_agents.replay import ReplayAgent, TrajectoryFileError, load_trajectories
from osworld_harness.execution.episode import EpisodeConfig, run_episode
from osworld_harness.results.task_folder import read_status

VM_LINE = {"task_id": "t-1", "domain": "os", "score_on_vm": 1.0, "success_on_vm": True,
           "exec_prefix": "import pyautogui, pyperclip, time\n",
           "actions": ["pyautogui.click(10, 20, button='left')", "WAIT",
                       "pyperclip.copy('x')\npyautogui.hotkey('ctrl', 'v')", "DONE"]}


def write_jsonl(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def task(task_id: str) -> SimpleNamespace:
    return SimpleNamespace(id=task_id)


def play(agent: ReplayAgent, task_id: str) -> list:
    agent.reset()
    agent.start_task(task(task_id))
    actions = []
    while True:
        _, [action] = agent.predict("instruction", {})
        actions.append(action)
        if action in ("DONE", "FAIL"):
            return actions


def test_vm_trajectories_play_with_their_import_line_and_osworlds_pacing(tmp_path):
    agent = ReplayAgent(trajectories=str(write_jsonl(tmp_path / "vm.jsonl", VM_LINE)), pacing=3)
    assert play(agent, "t-1") == [
        "import pyautogui, pyperclip, time\npyautogui.click(10, 20, button='left')\nimport time; time.sleep(3)",
        "import time; time.sleep(3)  # WAIT",
        "import pyautogui, pyperclip, time\npyperclip.copy('x')\npyautogui.hotkey('ctrl', 'v')\n"
        "import time; time.sleep(3)",
        "DONE"]
    assert agent.recorded_score == 1.0


def test_without_pacing_the_actions_are_sent_as_recorded(tmp_path):
    agent = ReplayAgent(trajectories=str(write_jsonl(tmp_path / "vm.jsonl", VM_LINE)), pacing=0)
    assert play(agent, "t-1")[1] == "WAIT"


def test_a_trajectory_without_done_ends_with_done(tmp_path):
    record = {**VM_LINE, "actions": ["pyautogui.press('a')"]}
    agent = ReplayAgent(trajectories=str(write_jsonl(tmp_path / "vm.jsonl", record)), pacing=0)
    assert play(agent, "t-1") == ["import pyautogui, pyperclip, time\npyautogui.press('a')", "DONE"]


def test_a_results_folder_replays_each_tasks_traj_and_its_result(tmp_path):
    task_dir = tmp_path / "results" / "pyautogui" / "screenshot" / "m" / "os" / "t-2"
    task_dir.mkdir(parents=True)
    lines = [{"step_num": 1, "action": "import pyautogui; pyautogui.press('enter')", "response": ""},
             {"step_num": 2, "action": None, "info": {"no_action": True}},
             {"step_num": 3, "action": "DONE"}]
    write_jsonl(task_dir / "traj.jsonl", *lines)
    (task_dir / "result.txt").write_text("0.5\n")
    later_trial = task_dir / "trials" / "2"
    later_trial.mkdir(parents=True)
    write_jsonl(later_trial / "traj.jsonl", {"action": "FAIL"})
    recorded = load_trajectories(tmp_path / "results")
    assert list(recorded) == ["t-2"]
    assert recorded["t-2"].actions == ("import pyautogui; pyautogui.press('enter')", "DONE")
    assert recorded["t-2"].score == 0.5


def test_a_task_recorded_twice_names_both_places(tmp_path):
    path = write_jsonl(tmp_path / "vm.jsonl", VM_LINE, VM_LINE)
    with pytest.raises(TrajectoryFileError, match=r"t-1 is recorded twice: at .*vm.jsonl:1 and at .*vm.jsonl:2"):
        load_trajectories(path)


@pytest.mark.parametrize("line, message", [
    ("{not json", r"vm.jsonl:1: not JSON"),
    (json.dumps({"actions": []}), r"vm.jsonl:1: field task_id must be a non-empty string, got None"),
    (json.dumps({"task_id": "a", "actions": "click"}), r"vm.jsonl:1: field actions must be a list, got str"),
    (json.dumps({"task_id": "a", "actions": [], "score_on_vm": "1"}), r"vm.jsonl:1: the recorded score must be"),
])
def test_a_broken_file_names_the_line_and_field(tmp_path, line, message):
    path = tmp_path / "vm.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(TrajectoryFileError, match=message):
        load_trajectories(path)


def test_a_task_not_recorded_is_an_error_not_a_silent_no_op(tmp_path):
    agent = ReplayAgent(trajectories=str(write_jsonl(tmp_path / "vm.jsonl", VM_LINE)))
    with pytest.raises(LookupError, match="no recorded trajectory for task other"):
        agent.start_task(task("other"))


def test_the_agent_needs_a_trajectory_source(tmp_path):
    with pytest.raises(ValueError, match="trajectories=PATH"):
        ReplayAgent()
    with pytest.raises(TrajectoryFileError, match="no such file or folder"):
        ReplayAgent(trajectories=str(tmp_path / "missing.jsonl"))


def test_replay_is_a_registered_agent():
    assert registered_agent("replay") is ReplayAgent


class _Desktop:
    """Just enough of a desktop for one episode: it answers every action and scores 0."""

    class controller:
        @staticmethod
        def get_screenshot() -> bytes:
            image = io.BytesIO()
            Image.new("RGB", (4, 4)).save(image, format="PNG")
            return image.getvalue()

    readiness = {"steps": [], "first_observation": {"supported": True, "settled": True, "waited_s": 1.5}}

    def reset(self, task_config, options=None):
        return {"screenshot": self.controller.get_screenshot()}

    def step(self, action, pause=0):
        return {"screenshot": self.controller.get_screenshot()}, 0.0, action == "DONE", {}

    def evaluate_explained(self):
        return Evaluation(0.0, "not done")


def test_status_json_keeps_the_recorded_score_beside_this_runs(tmp_path):
    agent = ReplayAgent(trajectories=str(write_jsonl(tmp_path / "vm.jsonl", VM_LINE)), pacing=0)
    outcome = run_episode(agent, _Desktop(), {"id": "t-1"}, "do it", tmp_path / "t-1",
                          EpisodeConfig(record=False, settle_timeout=0, max_steps=10), task=task("t-1"))
    status = read_status(tmp_path / "t-1")
    assert (outcome.score, status.recorded_score) == (0.0, 1.0)
    assert status.readiness == _Desktop.readiness
