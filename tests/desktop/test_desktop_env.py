"""DesktopEnv on the local desktop: observations, both action spaces, special actions, scoring rules."""
from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
from PIL import Image

from desktop_env.desktop_env import DesktopEnv
from desktop_env.evaluators.registry import metric

pytestmark = pytest.mark.desktop

SCREEN = (1280, 720)
LOGGER_SOURCE = (Path(__file__).parent / "event_logger.py").read_bytes()
EVENT_LOG = "/home/user/events.jsonl"


@pytest.fixture(scope="module")
def env():
    env = DesktopEnv(action_space="computer_13", screen_size=SCREEN, require_a11y_tree=False)
    yield env
    env.close()


def events(env: DesktopEnv) -> list[dict]:
    data = env.controller.get_file(EVENT_LOG) or b""
    return [json.loads(line) for line in data.decode().splitlines()]


def wait_for_events(env: DesktopEnv, predicate, what: str, timeout: float = 20.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen = events(env)
        if predicate(seen):
            return seen
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}; events: {events(env)[-10:]}")


@pytest.fixture
def logger_app(env):
    """A fresh desktop with the event-logging Tk app full screen and focused."""
    env.reset({"id": "logger", "instruction": "exercise every action type"})
    env.controller.upload_file("/home/user/event_logger.py", LOGGER_SOURCE)
    env.controller.launch(["python3", "/home/user/event_logger.py", EVENT_LOG])
    wait_for_events(env, lambda seen: any(e["kind"] == "ready" for e in seen), "the logger window")
    return env


def act(env: DesktopEnv, action_type: str, **parameters) -> dict:
    _, reward, done, info = env.step({"action_type": action_type, "parameters": parameters}, pause=0)
    assert reward == 0 and not done and "invalid_action" not in info and "action_error" not in info, info
    return info


def kinds(seen: list[dict]) -> list[str]:
    return [e["kind"] for e in seen]


def test_reset_gives_a_screenshot_of_the_requested_size(env):
    obs = env.reset({"id": "t", "instruction": "look"})
    image = Image.open(io.BytesIO(obs["screenshot"]))
    assert image.size == SCREEN
    assert len(image.convert("RGB").getcolors(maxcolors=1 << 16) or []) > 3  # the desktop, not a blank frame
    assert obs["instruction"] == "look"
    assert obs["accessibility_tree"] is None and obs["terminal"] is None  # not required by this env


def test_mouse_actions_arrive_where_they_were_aimed(logger_app):
    env = logger_app
    act(env, "MOVE_TO", x=300, y=200)
    assert env.controller.get_cursor_position() == (300, 200)
    act(env, "CLICK", x=400, y=300)
    act(env, "CLICK", button="middle", x=410, y=310, num_clicks=1)
    act(env, "RIGHT_CLICK", x=420, y=320)
    act(env, "DOUBLE_CLICK", x=430, y=330)
    act(env, "MOVE_TO", x=500, y=400)
    act(env, "MOUSE_DOWN", button="left")
    act(env, "MOUSE_UP", button="left")
    act(env, "MOVE_TO", x=100, y=100)
    act(env, "DRAG_TO", x=200, y=150)
    seen = wait_for_events(env, lambda s: any(e["kind"] == "up" and (e["x"], e["y"]) == (200, 150) for e in s),
                           "the end of the drag")
    downs = [(e["button"], e["x"], e["y"]) for e in seen if e["kind"] == "down"]
    assert downs[:3] == [(1, 400, 300), (2, 410, 310), (3, 420, 320)]
    assert (1, 430, 330) in downs and (1, 500, 400) in downs and (1, 100, 100) in downs
    assert any(e["kind"] == "double" and (e["x"], e["y"]) == (430, 330) for e in seen)
    assert any(e["kind"] == "drag" for e in seen)


def test_scroll_sends_wheel_clicks_in_both_axes(logger_app):
    env = logger_app
    act(env, "MOVE_TO", x=640, y=360)
    act(env, "SCROLL", dy=-2)
    act(env, "SCROLL", dx=3)
    seen = wait_for_events(env, lambda s: sum(e["kind"] == "scroll" for e in s) >= 5, "scroll events")
    directions = [e["direction"] for e in seen if e["kind"] == "scroll"]
    assert directions.count("down") == 2 and directions.count("right") == 3


def test_keyboard_actions_type_press_and_combine_keys(logger_app):
    env = logger_app
    act(env, "TYPING", text="Hi 'there'")
    act(env, "PRESS", key="enter")
    act(env, "KEY_DOWN", key="shift")
    act(env, "PRESS", key="a")
    act(env, "KEY_UP", key="shift")
    act(env, "HOTKEY", keys=["ctrl", "b"])
    seen = wait_for_events(env, lambda s: any(e["kind"] == "keydown" and e["keysym"] == "b" for e in s), "ctrl+b")
    typed = "".join(e["char"] for e in seen if e["kind"] == "keydown" and e["keysym"] not in ("Return",))
    assert typed.startswith("Hi 'there'")
    keysyms = [e["keysym"] for e in seen if e["kind"] == "keydown"]
    assert "Return" in keysyms
    after_enter = keysyms[keysyms.index("Return"):]
    assert after_enter[1:3] == ["Shift_L", "A"]  # "a" pressed while shift was held down
    assert keysyms[-2:] == ["Control_L", "b"]


def test_invalid_computer_13_actions_are_recorded_not_run(env):
    env.reset({"id": "t"})
    _, _, done, info = env.step({"action_type": "PRESS", "parameters": {"key": "no-such-key"}}, pause=0)
    assert not done and "no-such-key" in info["invalid_action"]
    _, _, _, info = env.step("pyautogui.click(1, 1)", pause=0)
    assert "expects an action dict" in info["invalid_action"]


@pytest.mark.parametrize("action, info_key", [("DONE", "done"), ("FAIL", "fail"),
                                              ({"action_type": "DONE"}, "done"), ({"action_type": "FAIL"}, "fail")])
def test_done_and_fail_end_the_episode(env, action, info_key):
    env.reset({"id": "t"})
    _, _, done, info = env.step(action, pause=0)
    assert done and info == {info_key: True}


def test_wait_does_nothing_but_pass_time(env):
    env.reset({"id": "t"})
    _, _, done, info = env.step("WAIT", pause=0.2)
    assert not done and info == {}


def test_infeasible_tasks_score_one_only_when_the_agent_says_fail(env):
    env.reset({"id": "t", "evaluator": {"func": "infeasible"}})
    env.step("FAIL", pause=0)
    assert env.evaluate() == 1.0
    env.reset({"id": "t", "evaluator": {"func": "infeasible"}})
    env.step("DONE", pause=0)
    assert env.evaluate() == 0.0


calls: list[str] = []


@metric("test_records_its_call")
def records_its_call(result, **options) -> float:
    calls.append(result)
    return 1.0


def test_fail_on_a_feasible_task_scores_zero_without_running_the_evaluator(env):
    task = {"id": "t", "evaluator": {"func": "test_records_its_call", "result": {"type": "rule", "rules": "x"}}}
    env.reset(task)
    env.step("FAIL", pause=0)
    assert env.evaluate() == 0.0 and calls == []
    env.reset(task)
    env.step("DONE", pause=0)
    assert env.evaluate() == 1.0 and calls == ["x"]


def test_pyautogui_action_space_types_into_a_text_editor_and_saves():
    env = DesktopEnv(action_space="pyautogui", screen_size=SCREEN, require_a11y_tree=False)
    try:
        env.reset({"id": "editor"})
        env.controller.upload_file("/home/user/Documents/note.txt", b"")
        env.controller.launch(["gedit", "/home/user/Documents/note.txt"])
        deadline = time.monotonic() + 30
        while env.controller.get_vm_window_size("gedit") is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)  # gedit maps its window before its text view takes keyboard focus
        env.step("pyautogui.typewrite('typed by an agent')", pause=0.3)  # gedit ends the file with a newline
        env.step("pyautogui.hotkey('ctrl', 's')", pause=0)
        deadline = time.monotonic() + 15
        while env.controller.get_file("/home/user/Documents/note.txt") != b"typed by an agent\n":
            assert time.monotonic() < deadline, env.controller.get_file("/home/user/Documents/note.txt")
            time.sleep(0.2)
    finally:
        env.close()
