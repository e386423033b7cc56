"""A person's input in the view page, as pyautogui actions: typed characters gathered into one
`typewrite`, other keys as `press`, keys held with Ctrl, Alt or Super as `hotkey`, a press and release of a
button as a click (repeated clicks at one spot within DOUBLE_CLICK_S as one click of `clicks=n`) or a drag,
wheel turns as `scroll`. Each action keeps the time of its first event. The harness carries the actions
out, so what the desktop got is exactly what traj.jsonl holds, and a replay of it gives the same."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from .rfb import InputEvent, KeyEvent, PointerEvent

DOUBLE_CLICK_S = 0.4
DRAG_MIN_PX = 4
DRAG_DURATION_S = 0.5

MODIFIERS = {0xFFE1: "shift", 0xFFE2: "shift", 0xFFE3: "ctrl", 0xFFE4: "ctrl", 0xFFE9: "alt", 0xFFEA: "alt",
             0xFFE7: "alt", 0xFFE8: "alt", 0xFFEB: "win", 0xFFEC: "win"}
MODIFIER_ORDER = ("ctrl", "alt", "shift", "win")
KEY_NAMES = {0xFF0D: "enter", 0xFF8D: "enter", 0xFF08: "backspace", 0xFF09: "tab", 0xFE20: "tab", 0xFF1B: "esc",
             0xFFFF: "delete", 0xFF50: "home", 0xFF51: "left", 0xFF52: "up", 0xFF53: "right", 0xFF54: "down",
             0xFF55: "pageup", 0xFF56: "pagedown", 0xFF57: "end", 0xFF63: "insert", 0xFF61: "printscreen",
             0xFF67: "apps", **{0xFFBE + n: f"f{n + 1}" for n in range(12)}}
BUTTONS = {1: "left", 2: "middle", 4: "right"}
WHEEL = {8: 1, 16: -1}  # pyautogui.scroll's clicks: up is positive


KEYPAD = {0xFFAA: "*", 0xFFAB: "+", 0xFFAD: "-", 0xFFAE: ".", 0xFFAF: "/", **{0xFFB0 + n: str(n) for n in range(10)}}


def keysym_char(keysym: int) -> str | None:
    """The character a keysym types, for Latin-1 and Unicode keysyms and the keypad's; None for other keys."""
    if 0x20 <= keysym <= 0x7E or 0xA0 <= keysym <= 0xFF:
        return chr(keysym)
    if keysym in KEYPAD:
        return KEYPAD[keysym]
    if 0x1000100 <= keysym <= 0x110FFFF:
        return chr(keysym - 0x1000000)
    return None


@dataclass
class TimedAction:
    seconds: float          # of the first event it is made of, since the recording began
    code: str


class HumanInput:
    """Turns the page's input events into actions and hands them out; thread-safe (the view's connection
    feeds it, the agent takes from it)."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._start = time.monotonic()
        self._actions: list[TimedAction] = []
        self._text = ""
        self._text_at = 0.0
        self._held: set[str] = set()
        self._solo: str | None = None      # a modifier pressed with nothing after it yet
        self._buttons = 0
        self._pressed: dict[int, tuple[int, int, float]] = {}
        self._last_click: tuple[int, int, int, float, int] | None = None   # bit, x, y, time, clicks
        self.last_event = 0.0

    def _now(self) -> float:
        return round(time.monotonic() - self._start, 3)

    def feed(self, event: InputEvent) -> None:
        with self._lock:
            now = self._now()
            if isinstance(event, KeyEvent):
                self._key(event, now)
            else:
                self._pointer(event, now)
            self.last_event = time.monotonic()
            self._lock.notify_all()

    def _held_around(self, code: str) -> str:
        """`code` with the modifiers held now (Ctrl+click, Shift+click) held around it."""
        held = [m for m in MODIFIER_ORDER if m in self._held]
        downs = "".join(f"pyautogui.keyDown({m!r}); " for m in held)
        ups = "".join(f"; pyautogui.keyUp({m!r})" for m in reversed(held))
        return f"{downs}{code}{ups}"

    def _emit(self, now: float, code: str) -> None:
        self._flush_text()
        self._last_click = None
        self._actions.append(TimedAction(now, code))

    def _flush_text(self) -> None:
        if self._text:
            self._actions.append(TimedAction(self._text_at, f"pyautogui.typewrite({self._text!r})"))
            self._text = ""

    def _key(self, event: KeyEvent, now: float) -> None:
        modifier = MODIFIERS.get(event.keysym)
        if modifier is not None:
            if event.down:
                self._held.add(modifier)
                self._solo = modifier
            else:
                self._held.discard(modifier)
                if self._solo == modifier:  # Super alone opens the Activities overview
                    self._emit(now, f"pyautogui.press({modifier!r})")
                self._solo = None
            return
        if not event.down:
            return
        self._solo = None
        char = keysym_char(event.keysym)
        name = KEY_NAMES.get(event.keysym)
        chord = [m for m in MODIFIER_ORDER if m in self._held and m != "shift"]
        if chord:
            key = char.lower() if char is not None else name
            if key is None:
                return
            shifted = "shift" in self._held or (char is not None and char != char.lower())
            keys = [m for m in MODIFIER_ORDER if m in chord or (m == "shift" and shifted)]
            self._emit(now, "pyautogui.hotkey(" + ", ".join(repr(k) for k in [*keys, key]) + ")")
        elif char is not None:
            if not self._text:
                self._text_at = now
            self._text += char
            self._last_click = None
        elif name is not None:
            code = f"pyautogui.hotkey('shift', {name!r})" if "shift" in self._held else f"pyautogui.press({name!r})"
            self._emit(now, code)

    def _pointer(self, event: PointerEvent, now: float) -> None:
        pressed = event.buttons & ~self._buttons
        released = self._buttons & ~event.buttons
        self._buttons = event.buttons
        if pressed:
            self._solo = None  # Ctrl held for a click is the click's, not a press of its own
        for bit, clicks in WHEEL.items():
            if pressed & bit:
                self._scroll(clicks, event.x, event.y, now)
        for bit in BUTTONS:
            if pressed & bit:
                self._pressed[bit] = (event.x, event.y, now)
            if released & bit and bit in self._pressed:
                self._release(bit, event.x, event.y)

    def _scroll(self, clicks: int, x: int, y: int, now: float) -> None:
        last = self._actions[-1] if self._actions and not self._text else None
        if (last is not None and not self._held and last.code.startswith("pyautogui.scroll(")
                and last.code.endswith(f", x={x}, y={y})")):
            total = int(last.code.split("(", 1)[1].split(",", 1)[0]) + clicks
            if (total > 0) == (clicks > 0):  # more turns the same way at the same spot: one scroll
                last.code = f"pyautogui.scroll({total}, x={x}, y={y})"
                return
        self._emit(now, self._held_around(f"pyautogui.scroll({clicks}, x={x}, y={y})"))

    def _release(self, bit: int, x: int, y: int) -> None:
        x0, y0, at = self._pressed.pop(bit)
        button = BUTTONS[bit]
        if abs(x - x0) > DRAG_MIN_PX or abs(y - y0) > DRAG_MIN_PX:
            self._emit(at, self._held_around(f"pyautogui.moveTo({x0}, {y0}); pyautogui.dragTo({x}, {y}, "
                                             f"duration={DRAG_DURATION_S}, button={button!r})"))
            return
        last = self._last_click
        if (last is not None and not self._held and last[0] == bit and abs(last[1] - x0) <= DRAG_MIN_PX
                and abs(last[2] - y0) <= DRAG_MIN_PX and at - last[3] <= DOUBLE_CLICK_S and self._actions):
            clicks = last[4] + 1
            self._actions[-1].code = self._click(button, last[1], last[2], clicks)
            self._last_click = (bit, last[1], last[2], at, clicks)
            return
        self._emit(at, self._held_around(self._click(button, x0, y0, 1)))
        self._last_click = (bit, x0, y0, at, 1)

    @staticmethod
    def _click(button: str, x: int, y: int, clicks: int) -> str:
        extra = (f", clicks={clicks}" if clicks > 1 else "") + (f", button={button!r}" if button != "left" else "")
        return f"pyautogui.click({x}, {y}{extra})"

    def pending(self) -> bool:
        """Whether input is waiting to be taken."""
        with self._lock:
            return bool(self._actions or self._text)

    def take(self, idle_s: float, wait_s: float) -> list[TimedAction]:
        """The actions so far, once the person has paused for `idle_s` (or a click could still become a
        double click), waiting up to `wait_s` for some; [] when none came. Held buttons keep theirs back."""
        deadline = time.monotonic() + wait_s
        with self._lock:
            while True:
                quiet = time.monotonic() - self.last_event
                if (self._actions or self._text) and quiet >= max(idle_s, DOUBLE_CLICK_S) and not self._buttons:
                    self._flush_text()
                    taken, self._actions = self._actions, []
                    self._last_click = None
                    return taken
                left = deadline - time.monotonic()
                if left <= 0:
                    return []
                self._lock.wait(min(left, max(0.01, max(idle_s, DOUBLE_CLICK_S) - quiet)))

    def drain(self) -> list[TimedAction]:
        """Everything left, at once (the person pressed Done)."""
        with self._lock:
            self._flush_text()
            taken, self._actions = self._actions, []
            return taken
