"""Vendor-neutral desktop commands and the pyautogui code that performs them.

Each wire adapter turns its model's calls into `Command`s with coordinates in the model's own
space; `to_action` maps them to screen pixels (geometry.Space) and writes the code through
desktop_env.actions, so text is always a correctly quoted literal. Commands that only observe
(screenshot, zoom, cursor_position) have no code: the agent answers them itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from desktop_env.actions import to_pyautogui

from .errors import ToolError
from .geometry import Space

OBSERVE_ONLY = frozenset({"screenshot", "zoom", "cursor_position"})
KINDS = frozenset({"click", "move", "drag", "mouse_down", "mouse_up", "type", "key", "hold_key", "scroll", "wait",
                   "done", "fail"}) | OBSERVE_ONLY
MOUSE_BUTTONS = ("left", "right", "middle")
MAX_WAIT_S = 10.0
MAX_REPEAT = 50
# Pointer motion along a drag, so apps see intermediate motion events (as desktop_env.actions' DRAG_TO).
DRAG_SEGMENT_S = 0.3
# Vendors that scroll by pixels (OpenAI, Gemini) get one wheel click per this many screen pixels:
# about what one notch scrolls in GTK and LibreOffice (three lines).
PIXELS_PER_WHEEL_CLICK = 50


Point = tuple[float, float]


@dataclass(frozen=True)
class Command:
    kind: str
    points: tuple[Point, ...] = ()          # model coordinates: click/move/scroll at points[0], drag along
                                            # all (one point: from the pointer's position)
    button: str = "left"
    clicks: int = 1
    modifiers: tuple[str, ...] = ()         # pyautogui key names held during a mouse action
    text: str = ""
    chords: tuple[tuple[str, ...], ...] = ()  # key: combinations pressed in turn; hold_key: one
    repeat: int = 1
    scroll: tuple[int, int] = (0, 0)        # wheel clicks (right, down); negative is left / up
    seconds: float = 0.0
    region: tuple[float, ...] = ()          # zoom: (x0, y0, x1, y1), as the model gave it

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown command kind {self.kind!r}")


def to_action(command: Command, space: Space) -> str | None:
    """pyautogui code (or "DONE" / "FAIL") for a command; None for one that only observes."""
    kind = command.kind
    if kind in OBSERVE_ONLY:
        return None
    if kind in ("done", "fail"):
        return kind.upper()
    points = [space.to_screen(x, y) for x, y in command.points]
    if kind == "click":
        if command.button not in MOUSE_BUTTONS:
            raise ToolError(f"the desktop has no {command.button!r} mouse button; use left, right or middle")
        if not 1 <= command.clicks <= 3:
            raise ToolError(f"a click is 1 to 3 clicks, got {command.clicks}")
        parameters: dict = {"button": command.button}
        if points:
            parameters.update(x=points[0][0], y=points[0][1])
        if command.clicks > 1:
            parameters["num_clicks"] = command.clicks
        return _held(command.modifiers, [_code("CLICK", parameters)])
    if kind == "move":
        return _held(command.modifiers, [_code("MOVE_TO", {"x": points[0][0], "y": points[0][1]})])
    if kind == "drag":
        return _held(command.modifiers, _drag(points))
    if kind in ("mouse_down", "mouse_up"):
        moves = [_code("MOVE_TO", {"x": points[0][0], "y": points[0][1]})] if points else []
        return "; ".join(moves + [_code(kind.upper(), {"button": command.button})])
    if kind == "type":
        if not isinstance(command.text, str) or command.text == "":
            raise ToolError("type needs non-empty text")
        return _code("TYPING", {"text": command.text})
    if kind == "key":
        if not 1 <= command.repeat <= MAX_REPEAT:
            raise ToolError(f"repeat must be 1..{MAX_REPEAT}, got {command.repeat}")
        presses = [_chord(chord) for chord in command.chords] * command.repeat
        return "; ".join(presses)
    if kind == "hold_key":
        (chord,) = command.chords
        seconds = _seconds(command.seconds)
        return "; ".join([_code("KEY_DOWN", {"key": key}) for key in chord] + [f"time.sleep({seconds!r})"]
                         + [_code("KEY_UP", {"key": key}) for key in reversed(chord)])
    if kind == "scroll":
        right, down = command.scroll
        if right == 0 and down == 0:
            raise ToolError("scroll needs a non-zero amount")
        moves = [_code("MOVE_TO", {"x": points[0][0], "y": points[0][1]})] if points else []
        # pyautogui scrolls up for positive amounts and right for positive horizontal ones.
        wheel = {key: value for key, value in (("dx", right), ("dy", -down)) if value}
        return _held(command.modifiers, moves + [_code("SCROLL", wheel)])
    if kind == "wait":
        return f"time.sleep({_seconds(command.seconds)!r})"
    raise AssertionError(f"no code for command kind {kind!r}")


def wheel_clicks(pixels: float) -> int:
    """Wheel clicks for a scroll distance in screen pixels; any non-zero distance is at least one click."""
    if pixels == 0:
        return 0
    clicks = round(abs(pixels) / PIXELS_PER_WHEEL_CLICK) or 1
    return clicks if pixels > 0 else -clicks


def _code(action_type: str, parameters: dict[str, Any]) -> str:
    code = to_pyautogui({"action_type": action_type, "parameters": parameters})
    assert code is not None  # only WAIT, DONE and FAIL have no code, and no command is written as them
    return code


def _chord(keys: tuple[str, ...]) -> str:
    if len(keys) == 1:
        return _code("PRESS", {"key": keys[0]})
    return _code("HOTKEY", {"keys": list(keys)})


def _held(modifiers: tuple[str, ...], body: list[str]) -> str:
    down = [_code("KEY_DOWN", {"key": key}) for key in modifiers]
    up = [_code("KEY_UP", {"key": key}) for key in reversed(modifiers)]
    return "; ".join(down + body + up)


def _drag(points: list[tuple[int, int]]) -> list[str]:
    if not points:
        raise ToolError("a drag needs an end point")
    if len(points) == 1:      # from wherever the pointer is (Qwen's left_click_drag)
        return [_code("DRAG_TO", {"x": points[0][0], "y": points[0][1]})]
    if len(points) == 2:
        return [_code("MOVE_TO", {"x": points[0][0], "y": points[0][1]}),
                _code("DRAG_TO", {"x": points[1][0], "y": points[1][1]})]
    steps = [f"pyautogui.moveTo({x}, {y}, duration={DRAG_SEGMENT_S})" for x, y in points[1:]]
    return ([_code("MOVE_TO", {"x": points[0][0], "y": points[0][1]}), _code("MOUSE_DOWN", {"button": "left"})]
            + steps + [_code("MOUSE_UP", {"button": "left"})])


def _seconds(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 60:
        raise ToolError(f"a duration must be 0..60 seconds, got {value!r:.40}")
    return float(min(value, MAX_WAIT_S))
