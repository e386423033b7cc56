"""The examples of docs/EXTENDING.md on real desktops: the task validates and is sound (its reference
solution scores 1, doing nothing 0), the getter feeds a real evaluation, the agent plays one step,
the provider runs a desktop. (The metric example needs no desktop: tests/evaluators.)"""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from desktop_env.desktop_env import DesktopEnv
from desktop_env.extensions import load_plugin
from desktop_env.user_modules import import_user_module
from mm_agents.loader import build_agent
from osworld_cli.main import cli
from osworld_harness.experiments.verify import VerifyOptions, verify

pytestmark = pytest.mark.desktop

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
EXAMPLE_META = EXAMPLES / "tasks" / "test_example.json"
SCREEN = (1280, 720)


def test_the_example_task_validates_and_is_sound(tmp_path):
    validation = CliRunner().invoke(cli, ["tasks", "validate", str(EXAMPLE_META)])
    assert validation.exit_code == 0, validation.output
    verdicts = verify(str(EXAMPLE_META), VerifyOptions(screen_size=SCREEN, cache_dir=str(tmp_path / "cache")))
    assert [(v.task_id, v.reference_score, v.noop_score, v.error) for v in verdicts] == [
        ("example-append-line", 1.0, 0.0, None)]


@pytest.fixture(scope="module")
def env():
    env = DesktopEnv(action_space="pyautogui", screen_size=SCREEN, require_a11y_tree=False)
    yield env
    env.close()


def test_the_example_getter_counts_a_desktop_files_lines_in_a_real_evaluation(env, tmp_path):
    load_plugin(str(EXAMPLES / "getter" / "line_count.py"))  # once: a name registers once
    counted = {"func": "exact_match", "result": {"type": "example_line_count", "path": "/home/user/list.txt"},
               "expected": {"type": "rule", "rules": {"expected": 3}}}
    env.reset({"id": "count", "instruction": "", "evaluator": counted})
    assert env.evaluate_explained().explanation.startswith("the result getter 'example_line_count' found nothing")
    env.controller.upload_file("/home/user/list.txt", b"eggs\nbread\nmilk\n")
    assert env.evaluate() == 1.0
    env.controller.upload_file("/home/user/list.txt", b"eggs\n")
    assert env.evaluate() == 0.0


def test_the_example_agent_plays_one_step_as_osworld_run_builds_it(env):
    agent = build_agent(f"{EXAMPLES / 'agent' / 'centre_click_agent.py'}:CentreClickAgent",
                        action_space="pyautogui", model="none", observation_type="screenshot")
    agent.reset()
    obs = env.reset({"id": "click", "instruction": "click the middle of the screen"})
    response, actions = agent.predict(obs["instruction"], obs)
    assert actions == [f"pyautogui.click({SCREEN[0] // 2}, {SCREEN[1] // 2})"] and "1280x720" in response
    obs, _, done, info = env.step(actions[0], pause=0)
    assert not done and "action_error" not in info
    assert env.controller.get_cursor_position() == (SCREEN[0] // 2, SCREEN[1] // 2)
    assert agent.predict(obs["instruction"], obs)[1] == ["DONE"]


def test_the_example_provider_runs_a_desktop_and_logs_its_lifecycle():
    module = import_user_module(str(EXAMPLES / "provider" / "logged_local_provider.py"), "example", "provider")
    provider = module.LoggedLocalProvider(screen_size=SCREEN)
    with DesktopEnv(provider=provider, screen_size=SCREEN, require_a11y_tree=False) as desktop:
        desktop.reset({"id": "first"})   # a fresh desktop: nothing to revert
        desktop.reset({"id": "second"})  # reverts
        assert desktop.render()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [what for what, _ in provider.events] == ["start", "revert", "stop"]
    assert all(seconds > 0 for _, seconds in provider.events)
