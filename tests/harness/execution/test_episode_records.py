"""An errored task's record says how long each part took and how many steps ran, as a finished one does."""
from __future__ import annotations

import io
import json
import time

from PIL import Image

from desktop_env.errors import SandboxStartError
from osworld_harness.execution.episode import EpisodeConfig, run_episode
from osworld_harness.execution.run import RunConfig
from osworld_harness.execution.task_worker import DesktopWorker

_png = io.BytesIO()
Image.new("RGB", (8, 8), "white").save(_png, format="PNG")
PNG = _png.getvalue()


class Controller:
    def get_screenshot(self):
        return PNG


class Env:
    """A desktop whose reset or step can fail after taking its time."""

    def __init__(self, reset_fails_after: float | None = None, step_fails: bool = False):
        self.controller = Controller()
        self.reset_fails_after, self.step_fails = reset_fails_after, step_fails

    def reset(self, task_config, options=None):
        if self.reset_fails_after is not None:
            time.sleep(self.reset_fails_after)
            raise RuntimeError("Xvfb died")
        return {"screenshot": PNG}

    def step(self, action, pause=0):
        if self.step_fails:
            raise ConnectionResetError("the env server went away")
        return {"screenshot": PNG}, 0.0, action == "DONE", {}

    def evaluate(self):
        return 1.0


class Agent:
    def __init__(self, predict_fails_after: float | None = None):
        self.predict_fails_after = predict_fails_after

    def reset(self, logger=None):
        pass

    def predict(self, instruction, obs):
        if self.predict_fails_after is not None:
            time.sleep(self.predict_fails_after)
            raise TimeoutError("the model API did not answer")
        return "click", ["pyautogui.click(1, 1)"]


def run(tmp_path, agent, env, **config):
    outcome = run_episode(agent, env, {"id": "t"}, "do it", tmp_path, EpisodeConfig(record=False, settle_timeout=0,
                                                                                   **config))
    return outcome, json.loads((tmp_path / "status.json").read_text())


def test_a_reset_that_fails_records_its_time(tmp_path):
    outcome, status = run(tmp_path, Agent(), Env(reset_fails_after=0.3))
    assert outcome.status == "error" and status["durations"]["reset"] >= 0.3 and status["steps"] == 0


def test_an_agent_that_fails_after_a_while_records_that_time(tmp_path):
    _, status = run(tmp_path, Agent(predict_fails_after=0.3), Env())
    assert status["durations"]["agent"] >= 0.3 and status["steps"] == 0 and not (tmp_path / "traj.jsonl").exists()
    _, status = run(tmp_path / "budget", Agent(predict_fails_after=0.3), Env(), agent_time_budget=10)
    assert status["durations"]["agent"] >= 0.3


def test_a_step_that_fails_is_counted_and_has_its_line(tmp_path):
    _, status = run(tmp_path, Agent(), Env(step_fails=True))
    lines = [json.loads(line) for line in (tmp_path / "traj.jsonl").read_text().splitlines()]
    assert status["steps"] == 1 and len(lines) == 1
    assert lines[0]["step_num"] == 1 and lines[0]["action"] == "pyautogui.click(1, 1)"
    assert lines[0]["info"] == {"error": "ConnectionResetError: the env server went away"}


def test_a_desktop_that_does_not_come_up_records_its_boot_time(tmp_path):
    worker = DesktopWorker(RunConfig(agent="noop", model="m", observation_type="screenshot",
                                     result_dir=str(tmp_path)))

    def boot():
        time.sleep(0.3)
        raise SandboxStartError("the desktop's Xvfb died while it started (0.3 s in)")

    worker._ensure_env = boot
    result = worker.run_task("os", "os-organize-invoices", tmp_path, [])
    status = json.loads((tmp_path / "status.json").read_text())
    assert result.status == "error" and "Xvfb died" in status["error"]["message"]
    assert result.error == status["error"]["message"]
    assert status["durations"]["reset"] >= 0.3 and status["started"] and status["steps"] == 0


def test_the_env_hears_at_reset_whether_another_task_follows_and_nothing_new_when_one_does(tmp_path):
    heard = []

    class Listening(Env):
        def reset(self, task_config, options=None):
            heard.append(options)
            return super().reset(task_config, options)

    run_episode(Agent(), Listening(), {"id": "t"}, "do it", tmp_path / "a", EpisodeConfig(record=False, max_steps=1),
                task_dir_for_files="/tasks/t")
    run_episode(Agent(), Listening(), {"id": "t"}, "do it", tmp_path / "b", EpisodeConfig(record=False, max_steps=1),
                another_reset_follows=False)
    assert heard == [{"task_dir": "/tasks/t"}, {"another_reset_follows": False}]
