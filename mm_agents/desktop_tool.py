"""The `desktop_action` tool: one function-calling tool through which a model drives a desktop.

A model calls `desktop_action(action_type=..., ...)`; `to_action` turns the call into the
pyautogui code (or "WAIT"/"DONE"/"FAIL") that `DesktopEnv.step` accepts, and
`format_tool_result` turns what the environment returned into the tool's answer. The schema is
exported in the OpenAI and Anthropic tool formats so that any agent framework can drive a
DesktopEnv through the same tool.

Arguments are checked strictly and every mistake raises ToolArgumentError with a message meant
for the model, so a bad call costs a step, never the episode. The generated code is built by
desktop_env.actions from a checked computer_13 action, so text is always a correctly quoted
Python literal whatever quotes, backslashes, newlines or non-ASCII characters it holds.
"""
from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from typing import Any

from desktop_env.actions import KEYBOARD_KEYS, to_pyautogui

from .llm.base import ToolSpec

TOOL_NAME = "desktop_action"

SPECIAL_ACTION_TYPES = ("WAIT", "DONE", "FAIL")
ACTION_TYPES: tuple[str, ...] = ("click", "double_click", "right_click", "move", "drag", "type", "key",
                                 "hotkey", "scroll", "pyautogui") + SPECIAL_ACTION_TYPES

# Argument name -> required, per action type.
_ARGUMENTS: dict[str, dict[str, bool]] = {
    "click": {"coordinate": False, "clicks": False},
    "double_click": {"coordinate": False},
    "right_click": {"coordinate": False},
    "move": {"coordinate": True},
    "drag": {"coordinate": True},
    "type": {"text": True},
    "key": {"key": True},
    "hotkey": {"keys": True},
    "scroll": {"clicks": True, "coordinate": False},
    "pyautogui": {"command": True},
    "WAIT": {},
    "DONE": {},
    "FAIL": {},
}

# Names models trained on xdotool or browser key names tend to use for pyautogui's keys.
KEY_ALIASES: dict[str, str] = {
    "control": "ctrl", "super": "win", "meta": "win", "cmd": "win",
    "page_up": "pageup", "page_down": "pagedown",
    "arrowup": "up", "arrowdown": "down", "arrowleft": "left", "arrowright": "right",
}

MAX_CLICKS = 3

DESCRIPTION = """\
Perform one mouse or keyboard action on the desktop, or end the task.
Coordinates are [x, y] pixels of the screenshot, origin at the top-left corner.
action_type and its arguments:
- click: coordinate (optional: else the current mouse position), clicks (optional, 1-3)
- double_click, right_click: coordinate (optional)
- move: coordinate - move the mouse there
- drag: coordinate - hold the left button and drag from the current mouse position to coordinate
  (move to the start first)
- type: text - type it as given; "\\n" presses Enter
- key: key - press one key, a pyautogui key name such as "enter", "tab", "esc", "backspace", "f5", "a"
- hotkey: keys - press a key combination together, e.g. ["ctrl", "s"]
- scroll: clicks (positive scrolls up, negative down), coordinate (optional: where to scroll)
- pyautogui: command - Python code using the pyautogui module, for anything else; it runs as its
  own program with pyautogui and time imported
- WAIT: wait a moment for the screen to change
- DONE: the task is complete
- FAIL: the task cannot be done"""

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action_type": {"type": "string", "enum": list(ACTION_TYPES), "description": "What to do."},
        "coordinate": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2,
                       "description": "[x, y] screen pixel, for click, double_click, right_click, move, drag "
                                      "and scroll."},
        "text": {"type": "string", "description": "The text to type, for type."},
        "key": {"type": "string", "description": "A pyautogui key name, for key."},
        "keys": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                 "description": "Key names pressed together, for hotkey, e.g. [\"ctrl\", \"c\"]."},
        "clicks": {"type": "integer",
                   "description": "For scroll: the amount (positive up, negative down). For click: 1-3 clicks."},
        "command": {"type": "string", "description": "Python code using pyautogui, for action_type pyautogui."},
    },
    "required": ["action_type"],
    "additionalProperties": False,
}

DESKTOP_TOOL = ToolSpec(name=TOOL_NAME, description=DESCRIPTION, parameters=PARAMETERS)


class ToolArgumentError(ValueError):
    """A desktop_action call the tool cannot perform; the message tells the model what to fix."""


def openai_tool_schema() -> dict[str, Any]:
    """The tool in OpenAI Chat Completions' `tools` format."""
    return {"type": "function",
            "function": {"name": TOOL_NAME, "description": DESCRIPTION, "parameters": copy.deepcopy(PARAMETERS)}}


def anthropic_tool_schema() -> dict[str, Any]:
    """The tool in Anthropic Messages' `tools` format."""
    return {"name": TOOL_NAME, "description": DESCRIPTION, "input_schema": copy.deepcopy(PARAMETERS)}


def to_action(arguments: Mapping[str, Any], screen_size: tuple[int, int]) -> str:
    """pyautogui code performing the call, or "WAIT" / "DONE" / "FAIL"; ToolArgumentError if it is invalid."""
    if not isinstance(arguments, Mapping):
        raise ToolArgumentError(f"the arguments must be a JSON object, got {arguments!r:.100}")
    # Models sometimes send null for the arguments an action does not use: null means absent.
    given = {name: value for name, value in arguments.items() if value is not None}
    action_type = _action_type(given.pop("action_type", None))
    expected = _ARGUMENTS[action_type]
    unknown = sorted(name for name in given if name not in PARAMETERS["properties"])
    if unknown:
        raise ToolArgumentError(f"unknown argument {unknown[0]!r}; the arguments are "
                                f"{', '.join(PARAMETERS['properties'])}")
    extra = sorted(name for name in given if name not in expected)
    if extra:
        allowed = ", ".join(expected) or "no other arguments"
        raise ToolArgumentError(f"argument {extra[0]!r} does not apply to action_type {action_type!r} "
                                f"(it takes {allowed})")
    missing = [name for name, required in expected.items() if required and name not in given]
    if missing:
        raise ToolArgumentError(f"action_type {action_type!r} needs the argument {missing[0]!r}")
    if action_type in SPECIAL_ACTION_TYPES:
        return action_type
    if action_type == "pyautogui":
        return _command(given["command"])
    return _code(_computer_13(action_type, given, screen_size))


def format_tool_result(done: bool, reward: float | None, info: Mapping[str, Any] | None,
                       obs_summary: Any, text: str) -> str:
    """One JSON line {"done", "reward", "info", "obs_summary"} for programs, then `text` for the model."""
    header = json.dumps({"done": done, "reward": reward, "info": dict(info or {}), "obs_summary": obs_summary},
                        separators=(",", ":"), ensure_ascii=False, default=str)
    return f"{header}\n{text}"


def _action_type(value: Any) -> str:
    if not isinstance(value, str):
        raise ToolArgumentError(f"action_type is required and must be one of {', '.join(ACTION_TYPES)}; "
                                f"got {value!r:.60}")
    # Case is not worth a wasted step: "Click" and "done" mean what they say.
    for action_type in ACTION_TYPES:
        if value.strip().lower() == action_type.lower():
            return action_type
    raise ToolArgumentError(f"unknown action_type {value!r:.60}; use one of {', '.join(ACTION_TYPES)}")


def _coordinate(value: Any, screen_size: tuple[int, int]) -> tuple[int, int]:
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)):
        raise ToolArgumentError(f"coordinate must be a list of two numbers [x, y], got {value!r:.80}")
    width, height = screen_size
    x, y = (int(v) for v in value)  # truncated, as pyautogui does with fractional pixels
    if not (0 <= value[0] and x < width and 0 <= value[1] and y < height):
        raise ToolArgumentError(f"coordinate {list(value)!r} is off the {width}x{height} screen: "
                                f"x must be 0..{width - 1} and y 0..{height - 1}")
    return x, y


def _whole_number(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and not value.is_integer()):
        raise ToolArgumentError(f"{name} must be a whole number, got {value!r:.60}")
    return int(value)


def _key(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ToolArgumentError(f"{where} must be a key name (a non-empty string), got {value!r:.60}")
    # Single characters keep their case: pyautogui types "A" as shift+a.
    name = value if len(value) == 1 else KEY_ALIASES.get(value.lower(), value.lower())
    if name.lower() in KEYBOARD_KEYS:
        return name
    if len(value) > 1 and "+" in value:
        parts = [part.strip() for part in value.split("+")]
        raise ToolArgumentError(f"{where} {value!r} is a combination, not a key: use action_type 'hotkey' "
                                f"with keys {parts!r}")
    raise ToolArgumentError(f"{where} {value!r} is not a pyautogui key name; examples: enter, tab, esc, "
                            "backspace, delete, space, up, down, left, right, home, end, pageup, pagedown, "
                            "ctrl, alt, shift, win, f1-f12, or a single character")


def _keys(value: Any) -> list[str]:
    if isinstance(value, str):
        raise ToolArgumentError(f"keys must be a list of key names such as [\"ctrl\", \"s\"], "
                                f"got the string {value!r:.60}")
    if not isinstance(value, (list, tuple)) or not value:
        raise ToolArgumentError(f"keys must be a non-empty list of key names, got {value!r:.80}")
    return [_key(key, f"keys[{index}]") for index, key in enumerate(value)]


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ToolArgumentError(f"text must be a non-empty string, got {value!r:.60}")
    return value


def _command(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ToolArgumentError(f"command must be non-empty Python code, got {value!r:.60}")
    try:
        compile(value, "<desktop_action command>", "exec")
    except SyntaxError as e:
        raise ToolArgumentError(f"command is not valid Python: {e.msg} (line {e.lineno})") from e
    return value.strip()


def _computer_13(action_type: str, given: dict[str, Any], screen_size: tuple[int, int]) -> list[dict[str, Any]]:
    """The call as computer_13 actions, whose code desktop_env.actions writes."""
    position: dict[str, int] = {}
    if "coordinate" in given:
        x, y = _coordinate(given["coordinate"], screen_size)
        position = {"x": x, "y": y}
    if action_type == "click":
        parameters = dict(position)
        if "clicks" in given:
            clicks = _whole_number("clicks", given["clicks"])
            if not 1 <= clicks <= MAX_CLICKS:
                raise ToolArgumentError(f"clicks for click must be 1..{MAX_CLICKS}, got {clicks}")
            parameters["num_clicks"] = clicks
        return [{"action_type": "CLICK", "parameters": parameters}]
    if action_type == "double_click":
        return [{"action_type": "DOUBLE_CLICK", "parameters": position}]
    if action_type == "right_click":
        return [{"action_type": "RIGHT_CLICK", "parameters": position}]
    if action_type == "move":
        return [{"action_type": "MOVE_TO", "parameters": position}]
    if action_type == "drag":
        return [{"action_type": "DRAG_TO", "parameters": position}]
    if action_type == "type":
        return [{"action_type": "TYPING", "parameters": {"text": _text(given["text"])}}]
    if action_type == "key":
        return [{"action_type": "PRESS", "parameters": {"key": _key(given["key"], "key")}}]
    if action_type == "hotkey":
        return [{"action_type": "HOTKEY", "parameters": {"keys": _keys(given["keys"])}}]
    if action_type == "scroll":
        amount = _whole_number("clicks", given["clicks"])
        if amount == 0:
            raise ToolArgumentError("clicks for scroll must not be 0: positive scrolls up, negative down")
        move = [{"action_type": "MOVE_TO", "parameters": position}] if position else []
        return move + [{"action_type": "SCROLL", "parameters": {"dy": amount}}]
    raise AssertionError(f"no conversion for action_type {action_type!r}")  # _ARGUMENTS and this disagree


def _code(actions: list[dict[str, Any]]) -> str:
    codes = []
    for action in actions:
        code = to_pyautogui(action)
        assert code is not None  # only WAIT, DONE and FAIL have no code, and _computer_13 makes none of them
        codes.append(code)
    return "; ".join(codes)
