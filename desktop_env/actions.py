"""The computer_13 action space: check an agent's action and turn it into pyautogui code.

An action is `{"action_type": "CLICK", "parameters": {"x": 10, "y": 20}}`. As in OSWorld, the
parameters may also sit next to `action_type` instead of under `parameters`, and the special
actions may be the bare strings "WAIT", "FAIL", "DONE". Parameters mean what they mean in
OSWorld's controller: CLICK's button defaults to pyautogui's (left) and its position to the
current one, DRAG_TO drags with the left button, SCROLL's dx/dy go to hscroll/vscroll
(positive dy scrolls up), TYPING types the text verbatim with pyautogui.typewrite.

Deliberately stricter than OSWorld (which pastes parameters into code unchecked): unknown
parameters, x without y, non-numeric coordinates and unknown keys are rejected with an
InvalidAction that names the action type, the parameter and the value.

The generated code expects a module named `pyautogui` in scope; OSWorld's controller prefixes
every action with `import pyautogui; ...`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from .errors import DesktopEnvError

# Parameter name -> required, per action type (OSWorld's ACTION_SPACE, in its order).
_PARAMETERS: dict[str, dict[str, bool]] = {
    "MOVE_TO": {"x": True, "y": True},
    "CLICK": {"button": False, "x": False, "y": False, "num_clicks": False},
    "MOUSE_DOWN": {"button": False},
    "MOUSE_UP": {"button": False},
    "RIGHT_CLICK": {"x": False, "y": False},
    "DOUBLE_CLICK": {"x": False, "y": False},
    "DRAG_TO": {"x": True, "y": True},
    "SCROLL": {"dx": False, "dy": False},  # at least one of them
    "TYPING": {"text": True},
    "PRESS": {"key": True},
    "KEY_DOWN": {"key": True},
    "KEY_UP": {"key": True},
    "HOTKEY": {"keys": True},
    "WAIT": {},
    "FAIL": {},
    "DONE": {},
}

ACTION_TYPES: tuple[str, ...] = tuple(_PARAMETERS)
SPECIAL_ACTIONS = ("WAIT", "FAIL", "DONE")
MOUSE_BUTTONS = ("left", "right", "middle")
CLICK_COUNTS = (1, 2, 3)
# Long enough for pyautogui to send intermediate motion events, which drag-and-drop needs;
# the value OSWorld's controller used.
DRAG_DURATION_S = 1.0

# pyautogui 0.9.54's KEY_NAMES (alias KEYBOARD_KEYS). OSWorld's copy is the same minus "space".
KEYBOARD_KEYS: frozenset[str] = frozenset([
    "\t", "\n", "\r", " ", "!", '"', "#", "$", "%", "&", "'", "(", ")", "*", "+", ",", "-", ".", "/",
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", ":", ";", "<", "=", ">", "?", "@",
    "[", "\\", "]", "^", "_", "`",
    "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
    "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z", "{", "|", "}", "~",
    "accept", "add", "alt", "altleft", "altright", "apps", "backspace",
    "browserback", "browserfavorites", "browserforward", "browserhome", "browserrefresh",
    "browsersearch", "browserstop", "capslock", "clear", "convert", "ctrl", "ctrlleft", "ctrlright",
    "decimal", "del", "delete", "divide", "down", "end", "enter", "esc", "escape", "execute",
    "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12",
    "f13", "f14", "f15", "f16", "f17", "f18", "f19", "f20", "f21", "f22", "f23", "f24",
    "final", "fn", "hanguel", "hangul", "hanja", "help", "home", "insert", "junja",
    "kana", "kanji", "launchapp1", "launchapp2", "launchmail", "launchmediaselect", "left",
    "modechange", "multiply", "nexttrack", "nonconvert",
    "num0", "num1", "num2", "num3", "num4", "num5", "num6", "num7", "num8", "num9", "numlock",
    "pagedown", "pageup", "pause", "pgdn", "pgup", "playpause", "prevtrack", "print", "printscreen",
    "prntscrn", "prtsc", "prtscr", "return", "right", "scrolllock", "select", "separator",
    "shift", "shiftleft", "shiftright", "sleep", "space", "stop", "subtract", "tab", "up",
    "volumedown", "volumemute", "volumeup", "win", "winleft", "winright", "yen",
    "command", "option", "optionleft", "optionright",
])


class InvalidAction(DesktopEnvError, ValueError):
    """An action that is not in the computer_13 action space; the message says exactly why."""


def validate_action(action: Mapping[str, Any] | str,
                    screen_size: tuple[int, int] | None = None) -> dict[str, Any]:
    """A normalised copy `{"action_type": ..., "parameters": {...}}` of a valid action.

    Normalising: coordinates become ints (floats are truncated, as pyautogui would), buttons
    and multi-character key names lower-case, HOTKEY keys a list. Absent optional parameters
    stay absent. With `screen_size` (width, height), coordinates must lie on the screen.
    """
    action_type, raw = _split(action)
    expected = _PARAMETERS[action_type]
    unknown = sorted(set(raw) - set(expected), key=str)
    if unknown:
        raise InvalidAction(f"{action_type}: unknown parameter {unknown[0]!r} (value {raw[unknown[0]]!r}); "
                            f"allowed: {sorted(expected) or 'none'}")
    missing = [name for name, required in expected.items() if required and name not in raw]
    if missing:
        raise InvalidAction(f"{action_type}: missing required parameter {missing[0]!r}")
    if ("x" in raw) != ("y" in raw):
        given, absent = ("x", "y") if "x" in raw else ("y", "x")
        raise InvalidAction(f"{action_type}: parameter {given!r}={raw[given]!r} given without {absent!r}")
    if action_type == "SCROLL" and not raw:
        raise InvalidAction("SCROLL: needs parameter 'dx' or 'dy' (or both)")
    parameters = {name: _NORMALISERS[name](action_type, name, value, screen_size)
                  for name, value in raw.items()}
    return {"action_type": action_type, "parameters": parameters}


def to_pyautogui(action: Mapping[str, Any] | str) -> str | None:
    """Python code performing the action with pyautogui; None for WAIT, FAIL and DONE."""
    normalised = validate_action(action)
    action_type, parameters = normalised["action_type"], normalised["parameters"]
    if action_type in SPECIAL_ACTIONS:
        return None
    return _CODE[action_type](parameters)


def _split(action: Mapping[str, Any] | str) -> tuple[str, dict[str, Any]]:
    if isinstance(action, str):
        if action in SPECIAL_ACTIONS:
            return action, {}
        raise InvalidAction(f"a bare string action must be one of {SPECIAL_ACTIONS}, got {action!r}")
    if not isinstance(action, Mapping):
        raise InvalidAction(f"an action must be a dict, got {type(action).__name__} {action!r:.80}")
    if "action_type" not in action:
        raise InvalidAction(f"action has no 'action_type': {dict(action)!r:.120}")
    action_type = action["action_type"]
    if not isinstance(action_type, str) or action_type not in _PARAMETERS:
        raise InvalidAction(f"unknown action type {action_type!r}; expected one of {ACTION_TYPES}")
    if "parameters" in action:
        parameters = action["parameters"]
        if parameters is None:
            return action_type, {}
        if not isinstance(parameters, Mapping):
            raise InvalidAction(f"{action_type}: 'parameters' must be a dict, got {parameters!r:.80}")
        return action_type, dict(parameters)
    return action_type, {name: value for name, value in action.items() if name != "action_type"}


def _coordinate(action_type: str, name: str, value: Any, screen_size: tuple[int, int] | None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidAction(f"{action_type}: parameter {name!r} must be a finite number, got {value!r}")
    if value < 0:
        raise InvalidAction(f"{action_type}: parameter {name!r} must be >= 0, got {value!r}")
    pixel = int(value)
    if screen_size is not None:
        limit = screen_size[0] if name == "x" else screen_size[1]
        if pixel >= limit:
            raise InvalidAction(f"{action_type}: parameter {name!r}={value!r} is off the "
                                f"{screen_size[0]}x{screen_size[1]} screen (must be < {limit})")
    return pixel


def _whole_number(action_type: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidAction(f"{action_type}: parameter {name!r} must be an integer, got {value!r}")
    if isinstance(value, float) and not value.is_integer():
        raise InvalidAction(f"{action_type}: parameter {name!r} must be a whole number, got {value!r}")
    return int(value)


def _scroll_amount(action_type: str, name: str, value: Any, screen_size: tuple[int, int] | None) -> int:
    return _whole_number(action_type, name, value)


def _num_clicks(action_type: str, name: str, value: Any, screen_size: tuple[int, int] | None) -> int:
    clicks = _whole_number(action_type, name, value)
    if clicks not in CLICK_COUNTS:
        raise InvalidAction(f"{action_type}: parameter {name!r} must be one of {CLICK_COUNTS}, got {value!r}")
    return clicks


def _button(action_type: str, name: str, value: Any, screen_size: tuple[int, int] | None) -> str:
    # pyautogui lower-cases button names itself, so "Left" worked in OSWorld.
    if not isinstance(value, str) or value.lower() not in MOUSE_BUTTONS:
        raise InvalidAction(f"{action_type}: parameter {name!r} must be one of {MOUSE_BUTTONS}, got {value!r}")
    return value.lower()


def _text(action_type: str, name: str, value: Any, screen_size: tuple[int, int] | None) -> str:
    if not isinstance(value, str):
        raise InvalidAction(f"{action_type}: parameter {name!r} must be a string, got {value!r:.80}")
    return value


def _key(action_type: str, name: str, value: Any, screen_size: tuple[int, int] | None) -> str:
    # OSWorld checks key.lower(); pyautogui lower-cases names but types "A" as shift+a, so
    # single characters keep their case.
    if not isinstance(value, str) or value.lower() not in KEYBOARD_KEYS:
        raise InvalidAction(f"{action_type}: parameter {name!r} is not a pyautogui key name: {value!r}")
    return value if len(value) == 1 else value.lower()


def _keys(action_type: str, name: str, value: Any, screen_size: tuple[int, int] | None) -> list[str]:
    if not isinstance(value, (list, tuple)) or not value:
        raise InvalidAction(f"{action_type}: parameter {name!r} must be a non-empty list of key names, "
                            f"got {value!r:.80}")
    return [_key(action_type, f"{name}[{index}]", key, screen_size) for index, key in enumerate(value)]


_NORMALISERS: dict[str, Callable[[str, str, Any, tuple[int, int] | None], Any]] = {
    "x": _coordinate, "y": _coordinate, "button": _button, "num_clicks": _num_clicks,
    "dx": _scroll_amount, "dy": _scroll_amount, "text": _text, "key": _key, "keys": _keys,
}


def _call(function: str, *args: Any, **kwargs: Any) -> str:
    # repr() of an int, float, str or bool is a Python literal that evaluates back to the
    # same value, whatever quotes, backslashes, newlines or non-ASCII text a string holds.
    arguments = [repr(arg) for arg in args] + [f"{key}={value!r}" for key, value in kwargs.items()]
    return f"pyautogui.{function}({', '.join(arguments)})"


def _pick(parameters: dict[str, Any], *names: str) -> dict[str, Any]:
    return {name: parameters[name] for name in names if name in parameters}


def _click(parameters: dict[str, Any]) -> str:
    kwargs = _pick(parameters, "button", "x", "y")
    if "num_clicks" in parameters:
        kwargs["clicks"] = parameters["num_clicks"]
    return _call("click", **kwargs)


def _scroll(parameters: dict[str, Any]) -> str:
    calls = []
    if "dx" in parameters:
        calls.append(_call("hscroll", parameters["dx"]))
    if "dy" in parameters:
        calls.append(_call("vscroll", parameters["dy"]))
    return "; ".join(calls)


_CODE: dict[str, Callable[[dict[str, Any]], str]] = {
    "MOVE_TO": lambda p: _call("moveTo", p["x"], p["y"]),
    "CLICK": _click,
    "MOUSE_DOWN": lambda p: _call("mouseDown", **_pick(p, "button")),
    "MOUSE_UP": lambda p: _call("mouseUp", **_pick(p, "button")),
    "RIGHT_CLICK": lambda p: _call("rightClick", **_pick(p, "x", "y")),
    "DOUBLE_CLICK": lambda p: _call("doubleClick", **_pick(p, "x", "y")),
    "DRAG_TO": lambda p: _call("dragTo", p["x"], p["y"], duration=DRAG_DURATION_S, button="left",
                               mouseDownUp=True),
    "SCROLL": _scroll,
    "TYPING": lambda p: _call("typewrite", p["text"]),
    "PRESS": lambda p: _call("press", p["key"]),
    "KEY_DOWN": lambda p: _call("keyDown", p["key"]),
    "KEY_UP": lambda p: _call("keyUp", p["key"]),
    "HOTKEY": lambda p: _call("hotkey", *p["keys"]),
}
