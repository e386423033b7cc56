"""computer_13 actions: validation, normalisation and the pyautogui code they turn into."""
from __future__ import annotations

import pytest

from desktop_env.actions import (
    ACTION_TYPES,
    DRAG_DURATION_S,
    KEYBOARD_KEYS,
    SPECIAL_ACTIONS,
    InvalidAction,
    to_pyautogui,
    validate_action,
)


class RecordingPyautogui:
    """Stands in for the pyautogui module: records every call instead of touching a screen."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []

    def __getattr__(self, name: str):
        def record(*args, **kwargs):
            self.calls.append((name, args, kwargs))
        return record


def run_generated(action) -> list[tuple[str, tuple, dict]]:
    code = to_pyautogui(action)
    assert code is not None, f"{action!r} has no code"
    recorder = RecordingPyautogui()
    # No builtins: the code may do nothing but call pyautogui.
    exec(compile(code, "<action>", "exec"), {"__builtins__": {}, "pyautogui": recorder})
    return recorder.calls


def act(action_type: str, **parameters) -> dict:
    return {"action_type": action_type, "parameters": parameters}


# One valid example per action type, with the pyautogui calls it must make.
EXAMPLES = [
    (act("MOVE_TO", x=100, y=200), [("moveTo", (100, 200), {})]),
    (act("CLICK"), [("click", (), {})]),
    (act("CLICK", x=5, y=6), [("click", (), {"x": 5, "y": 6})]),
    (act("CLICK", button="right"), [("click", (), {"button": "right"})]),
    (act("CLICK", button="middle", x=1, y=2, num_clicks=3),
     [("click", (), {"button": "middle", "x": 1, "y": 2, "clicks": 3})]),
    (act("CLICK", x=7, y=8, num_clicks=2), [("click", (), {"x": 7, "y": 8, "clicks": 2})]),
    (act("MOUSE_DOWN"), [("mouseDown", (), {})]),
    (act("MOUSE_DOWN", button="left"), [("mouseDown", (), {"button": "left"})]),
    (act("MOUSE_UP"), [("mouseUp", (), {})]),
    (act("MOUSE_UP", button="right"), [("mouseUp", (), {"button": "right"})]),
    (act("RIGHT_CLICK"), [("rightClick", (), {})]),
    (act("RIGHT_CLICK", x=3, y=4), [("rightClick", (), {"x": 3, "y": 4})]),
    (act("DOUBLE_CLICK"), [("doubleClick", (), {})]),
    (act("DOUBLE_CLICK", x=9, y=10), [("doubleClick", (), {"x": 9, "y": 10})]),
    (act("DRAG_TO", x=30, y=40),
     [("dragTo", (30, 40), {"duration": DRAG_DURATION_S, "button": "left", "mouseDownUp": True})]),
    (act("SCROLL", dx=2, dy=-3), [("hscroll", (2,), {}), ("vscroll", (-3,), {})]),
    (act("SCROLL", dy=5), [("vscroll", (5,), {})]),
    (act("SCROLL", dx=-1), [("hscroll", (-1,), {})]),
    (act("TYPING", text="hello"), [("typewrite", ("hello",), {})]),
    (act("PRESS", key="enter"), [("press", ("enter",), {})]),
    (act("KEY_DOWN", key="shift"), [("keyDown", ("shift",), {})]),
    (act("KEY_UP", key="shift"), [("keyUp", ("shift",), {})]),
    (act("HOTKEY", keys=["ctrl", "alt", "t"]), [("hotkey", ("ctrl", "alt", "t"), {})]),
]


def test_the_action_space_has_sixteen_types():
    assert len(ACTION_TYPES) == 16
    assert set(SPECIAL_ACTIONS) <= set(ACTION_TYPES)
    assert {action["action_type"] for action, _ in EXAMPLES} | set(SPECIAL_ACTIONS) == set(ACTION_TYPES)


def test_keyboard_keys_are_pyautoguis_names():
    assert len(KEYBOARD_KEYS) == 194
    assert {"enter", "ctrl", "f24", "space", "\n", "\\", "a", "9", "optionright"} <= KEYBOARD_KEYS


@pytest.mark.parametrize(("action", "calls"), EXAMPLES, ids=lambda v: str(v)[:60])
def test_each_action_validates_and_runs_the_right_pyautogui_calls(action, calls):
    assert validate_action(action)["action_type"] == action["action_type"]
    assert run_generated(action) == calls


@pytest.mark.parametrize("action_type", SPECIAL_ACTIONS)
def test_special_actions_have_no_code(action_type):
    assert validate_action({"action_type": action_type}) == {"action_type": action_type, "parameters": {}}
    assert validate_action(action_type) == {"action_type": action_type, "parameters": {}}
    assert to_pyautogui(act(action_type)) is None
    assert to_pyautogui(action_type) is None


@pytest.mark.parametrize("text", [
    "it's \"quoted\"",
    "back\\slash \\n not a newline",
    "line one\nline two\r\n\ttabbed",
    "unicode: é ü 中文 🙂 \u200b",
    "'''\"\"\" end",
    "{braces} %s %(name)s $HOME `cmd`",
    "",
    "\x00\x07 control chars",
])
def test_typed_text_round_trips_exactly(text):
    assert run_generated(act("TYPING", text=text)) == [("typewrite", (text,), {})]


def test_normalised_copy_does_not_alias_the_input():
    action = act("HOTKEY", keys=["Ctrl", "c"])
    normalised = validate_action(action)
    assert normalised == {"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "c"]}}
    normalised["parameters"]["keys"].append("x")
    assert action["parameters"]["keys"] == ["Ctrl", "c"]


def test_parameters_next_to_action_type_are_accepted_like_osworld():
    assert validate_action({"action_type": "CLICK", "x": 1, "y": 2}) == act("CLICK", x=1, y=2)
    assert validate_action({"action_type": "CLICK", "parameters": None}) == act("CLICK")


def test_coordinates_become_ints_truncated_like_pyautogui():
    assert validate_action(act("MOVE_TO", x=10.9, y=20.0))["parameters"] == {"x": 10, "y": 20}
    assert run_generated(act("CLICK", x=1.5, y=2.5)) == [("click", (), {"x": 1, "y": 2})]


def test_case_is_normalised_where_pyautogui_ignores_it():
    assert validate_action(act("CLICK", button="Right"))["parameters"] == {"button": "right"}
    assert validate_action(act("PRESS", key="ENTER"))["parameters"] == {"key": "enter"}
    # A single capital letter stays: pyautogui types it with shift, as it did in OSWorld.
    assert validate_action(act("PRESS", key="A"))["parameters"] == {"key": "A"}


def test_whole_float_counts_are_accepted():
    assert validate_action(act("SCROLL", dy=-2.0))["parameters"] == {"dy": -2}
    assert validate_action(act("CLICK", num_clicks=2.0))["parameters"] == {"num_clicks": 2}


def test_screen_size_bounds_coordinates():
    assert validate_action(act("MOVE_TO", x=1919, y=1079), (1920, 1080))["parameters"] == {"x": 1919, "y": 1079}
    with pytest.raises(InvalidAction, match=r"MOVE_TO.*'x'=1920.*1920x1080"):
        validate_action(act("MOVE_TO", x=1920, y=0), (1920, 1080))
    with pytest.raises(InvalidAction, match=r"CLICK.*'y'=5000"):
        validate_action(act("CLICK", x=0, y=5000), (1920, 1080))
    # Without a screen size only negatives are off-screen.
    assert validate_action(act("MOVE_TO", x=5000, y=5000))["parameters"] == {"x": 5000, "y": 5000}


@pytest.mark.parametrize(("action", "pattern"), [
    ({"action_type": "JUMP"}, r"unknown action type 'JUMP'"),
    ({"action_type": "click"}, r"unknown action type 'click'"),
    ({"parameters": {}}, r"no 'action_type'"),
    ("CLICK", r"bare string.*'CLICK'"),
    (42, r"must be a dict.*42"),
    (act("MOVE_TO", x=1), r"MOVE_TO: missing required parameter 'y'"),
    (act("DRAG_TO"), r"DRAG_TO: missing required parameter 'x'"),
    (act("TYPING"), r"TYPING: missing required parameter 'text'"),
    (act("PRESS"), r"PRESS: missing required parameter 'key'"),
    (act("HOTKEY"), r"HOTKEY: missing required parameter 'keys'"),
    (act("CLICK", x=5), r"CLICK: parameter 'x'=5 given without 'y'"),
    (act("RIGHT_CLICK", y=5), r"RIGHT_CLICK: parameter 'y'=5 given without 'x'"),
    (act("SCROLL"), r"SCROLL: needs parameter 'dx' or 'dy'"),
    (act("CLICK", clicks=2), r"CLICK: unknown parameter 'clicks' \(value 2\)"),
    (act("DONE", reason="x"), r"DONE: unknown parameter 'reason'"),
    (act("MOVE_TO", x="100", y=1), r"MOVE_TO: parameter 'x' must be a finite number, got '100'"),
    (act("MOVE_TO", x=True, y=1), r"MOVE_TO: parameter 'x' must be a finite number, got True"),
    (act("MOVE_TO", x=float("nan"), y=1), r"MOVE_TO: parameter 'x' must be a finite number, got nan"),
    (act("MOVE_TO", x=-1, y=1), r"MOVE_TO: parameter 'x' must be >= 0, got -1"),
    (act("CLICK", button="top"), r"CLICK: parameter 'button' must be one of .*got 'top'"),
    (act("CLICK", num_clicks=4), r"CLICK: parameter 'num_clicks' must be one of \(1, 2, 3\), got 4"),
    (act("SCROLL", dy=1.5), r"SCROLL: parameter 'dy' must be a whole number, got 1.5"),
    (act("SCROLL", dx="3"), r"SCROLL: parameter 'dx' must be an integer, got '3'"),
    (act("TYPING", text=123), r"TYPING: parameter 'text' must be a string, got 123"),
    (act("PRESS", key="ctrll"), r"PRESS: parameter 'key' is not a pyautogui key name: 'ctrll'"),
    (act("KEY_DOWN", key=""), r"KEY_DOWN: parameter 'key' is not a pyautogui key name: ''"),
    (act("KEY_UP", key=None), r"KEY_UP: parameter 'key' is not a pyautogui key name: None"),
    (act("HOTKEY", keys="ctrl+c"), r"HOTKEY: parameter 'keys' must be a non-empty list.*'ctrl\+c'"),
    (act("HOTKEY", keys=[]), r"HOTKEY: parameter 'keys' must be a non-empty list"),
    (act("HOTKEY", keys=["ctrl", "kk"]), r"HOTKEY: parameter 'keys\[1\]' is not a pyautogui key name: 'kk'"),
    ({"action_type": "CLICK", "parameters": [1, 2]}, r"CLICK: 'parameters' must be a dict"),
])
def test_invalid_actions_name_type_parameter_and_value(action, pattern):
    with pytest.raises(InvalidAction, match=pattern):
        validate_action(action)
    with pytest.raises(InvalidAction):
        to_pyautogui(action)


def test_invalid_action_is_a_value_error():
    assert issubclass(InvalidAction, ValueError)
