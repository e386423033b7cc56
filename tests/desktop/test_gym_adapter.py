"""The Gymnasium adapter on real local desktops: Gymnasium's own checker, and episodes that end as the
task's evaluator says (the example task of docs/EXTENDING.md, solved and not)."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from desktop_env.gym_adapter import ENV_ID, GymAdapterError, OSWorldGymEnv
from desktop_env.tasks.loader import load_task_set
from desktop_env.tasks.solutions import load_solution

pytestmark = pytest.mark.desktop

EXAMPLE_META = Path(__file__).resolve().parents[2] / "docs" / "examples" / "tasks" / "test_example.json"
SCREEN = (1280, 720)


def test_gymnasiums_env_checker_passes_on_a_real_desktop():
    env = gymnasium.make(ENV_ID, tasks=str(EXAMPLE_META), screen_size=SCREEN, max_steps=5, pause=0.2)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # check_env also makes the env anew from its spec (for render_mode="rgb_array" and for a
            # double close): three desktops in all.
            check_env(env.unwrapped)
        # Frames come one per step, at the agent's pace, so the env declares no render_fps.
        messages = [str(w.message) for w in caught if "render fps" not in str(w.message)]
        assert messages == []
        obs, info = env.reset(seed=7)
        assert obs["screenshot"].shape == (SCREEN[1], SCREEN[0], 3) and obs["screenshot"].dtype == np.uint8
        assert "<" in obs["accessibility_tree"] and obs["instruction"].startswith('Add "milk"')
        assert info["task_id"] == "example-append-line"
    finally:
        env.close()


@pytest.fixture(scope="module")
def env():
    env = OSWorldGymEnv(tasks=str(EXAMPLE_META), screen_size=SCREEN, require_a11y_tree=False, max_steps=3, pause=0.5)
    yield env
    env.close()


def test_the_reference_solution_ends_terminated_with_the_tasks_score_as_reward(env):
    task = next(iter(load_task_set(EXAMPLE_META)))
    obs, info = env.reset(options={"task": task.id})
    assert set(obs) == {"screenshot", "instruction"}
    rewards, terminated = [], False
    for step in load_solution(task):
        code = step.action if step.action == "DONE" else f"{step.action}\nimport time; time.sleep({step.pause})"
        obs, reward, terminated, truncated, info = env.step(code)
        rewards.append(reward)
        assert not truncated
    assert terminated and rewards == [0.0, 0.0, 1.0]
    assert info["evaluation"]["score"] == 1.0 and info["steps"] == 3
    with pytest.raises(GymAdapterError, match="call reset"):
        env.step("DONE")


def test_doing_nothing_ends_with_reward_zero_and_the_explanation(env):
    env.reset(options={"task": "example-append-line"})
    _, reward, terminated, truncated, info = env.step("DONE")
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["evaluation"]["metrics"][0]["func"] == "compare_text_file"


def test_max_steps_truncates_and_scores_the_desktop_as_it_is(env):
    env.reset(options={"task": "example-append-line"})
    outcomes = [env.step("WAIT")[1:4] for _ in range(3)]
    assert outcomes == [(0.0, False, False), (0.0, False, False), (0.0, False, True)]


def test_a_task_dict_runs_and_an_unknown_task_id_is_refused(env):
    with pytest.raises(GymAdapterError, match="not a task id"):
        env.reset(options={"task": "no-such-task"})
    obs, info = env.reset(options={"task": {"id": "free", "instruction": "anything",
                                            "evaluator": {"func": "infeasible"}}})
    assert obs["instruction"] == "anything" and info["task_id"] == "free"
    _, reward, terminated, _, _ = env.step("FAIL")
    assert (reward, terminated) == (1.0, True)


def test_computer_13_actions_are_json_text():
    env = OSWorldGymEnv(tasks=str(EXAMPLE_META), action_space="computer_13", screen_size=SCREEN,
                        require_a11y_tree=False, pause=0)
    try:
        env.reset(seed=0)
        _, _, terminated, _, info = env.step(json.dumps({"action_type": "MOVE_TO", "parameters": {"x": 10, "y": 20}}))
        assert not terminated and "invalid_action" not in info and "action_error" not in info
        _, _, terminated, _, info = env.step("click at 10, 20")
        assert not terminated and "invalid_action" in info
        _, reward, terminated, _, _ = env.step('{"action_type": "DONE"}')
        assert (reward, terminated) == (0.0, True)
    finally:
        env.close()
