"""Key names as vendors write them, as pyautogui's names.

Claude speaks xdotool keysyms (`ctrl+s`, `Return`, `Page_Down`, `KP_Enter`, sequences separated by
spaces), OpenAI upper-case names (`CTRL`, `ENTER`, `ARROWLEFT`), Gemini `control+c` / `Enter`,
UI-TARS `ctrl c` and Qwen lists of lower-case names. All of them go through `key_name`.
"""
from __future__ import annotations

from desktop_env.actions import KEYBOARD_KEYS

from .errors import ToolError

_ALIASES: dict[str, str] = {
    # modifiers
    "control": "ctrl", "control_l": "ctrl", "control_r": "ctrlright", "ctrl_l": "ctrl", "ctrl_r": "ctrlright",
    "lctrl": "ctrl", "rctrl": "ctrlright",
    "alt_l": "alt", "alt_r": "altright", "option": "alt", "opt": "alt", "lalt": "alt", "ralt": "altright",
    "iso_level3_shift": "altright",
    "shift_l": "shift", "shift_r": "shiftright", "lshift": "shift", "rshift": "shiftright",
    "super": "win", "super_l": "win", "super_r": "winright", "meta": "win", "meta_l": "win", "cmd": "win",
    "command": "win", "windows": "win", "os": "win", "hyper": "win",
    # editing and navigation
    "return": "enter", "kp_enter": "enter", "linefeed": "enter",
    "escape": "esc", "back_space": "backspace", "bksp": "backspace",
    "del": "delete", "kp_delete": "delete", "ins": "insert", "kp_insert": "insert",
    "arrowup": "up", "arrowdown": "down", "arrowleft": "left", "arrowright": "right",
    "arrow_up": "up", "arrow_down": "down", "arrow_left": "left", "arrow_right": "right",
    "kp_up": "up", "kp_down": "down", "kp_left": "left", "kp_right": "right",
    "page_up": "pageup", "prior": "pageup", "kp_prior": "pageup", "kp_page_up": "pageup", "pgup": "pageup",
    "page_down": "pagedown", "next": "pagedown", "kp_next": "pagedown", "kp_page_down": "pagedown",
    "pgdn": "pagedown", "kp_home": "home", "kp_end": "end",
    "caps_lock": "capslock", "num_lock": "numlock", "scroll_lock": "scrolllock",
    "print": "printscreen", "sys_req": "printscreen", "menu": "apps", "contextmenu": "apps",
    "spacebar": "space", "kp_space": "space", "kp_tab": "tab", "iso_left_tab": "tab",
    # xdotool keysyms of punctuation
    "plus": "+", "minus": "-", "equal": "=", "comma": ",", "period": ".", "slash": "/", "backslash": "\\",
    "semicolon": ";", "colon": ":", "apostrophe": "'", "quotedbl": '"', "grave": "`", "asciitilde": "~",
    "bracketleft": "[", "bracketright": "]", "braceleft": "{", "braceright": "}", "parenleft": "(",
    "parenright": ")", "less": "<", "greater": ">", "question": "?", "exclam": "!", "at": "@",
    "numbersign": "#", "dollar": "$", "percent": "%", "asciicircum": "^", "ampersand": "&", "asterisk": "*",
    "underscore": "_", "bar": "|",
    "kp_add": "add", "kp_subtract": "subtract", "kp_multiply": "multiply", "kp_divide": "divide",
    "kp_decimal": "decimal",
    **{f"kp_{digit}": f"num{digit}" for digit in range(10)},
    # media
    "audiomute": "volumemute", "audiolowervolume": "volumedown", "audioraisevolume": "volumeup",
    "xf86audiomute": "volumemute", "xf86audiolowervolume": "volumedown", "xf86audioraisevolume": "volumeup",
    "audioplay": "playpause", "xf86audioplay": "playpause",
}


def key_name(raw: str) -> str:
    """pyautogui's name for one key; ToolError naming the key when there is none."""
    if not isinstance(raw, str) or not raw:
        raise ToolError(f"a key name must be a non-empty string, got {raw!r:.40}")
    if len(raw) == 1:
        return raw.lower() if raw.isalpha() else raw   # "A" in a combination means the A key, not shift+a
    name = raw.strip().lower()
    name = _ALIASES.get(name, name)
    if name in KEYBOARD_KEYS:
        return name
    raise ToolError(f"unknown key {raw!r}; use names like Return, Tab, Escape, BackSpace, Delete, Up, "
                    f"Page_Down, Home, F5, ctrl, alt, shift, super or a single character")


def combination(raw: str, separator: str = "+") -> tuple[str, ...]:
    """'ctrl+shift+t' (or 'ctrl shift t' with separator ' ') as pyautogui names; a lone '+' is the key."""
    text = raw.strip() if isinstance(raw, str) else raw
    if not isinstance(text, str) or not text:
        raise ToolError(f"a key combination must be a non-empty string, got {raw!r:.40}")
    if text == separator:
        return (key_name(text),)
    parts = [part for part in text.split(separator)]
    if any(not part.strip() for part in parts):
        # "ctrl++" means ctrl and the plus key
        if text.endswith(separator * 2):
            return tuple(key_name(p) for p in text[:-2].split(separator)) + (key_name(separator),)
        raise ToolError(f"malformed key combination {raw!r}")
    return tuple(key_name(part.strip()) for part in parts)


def xdotool_sequence(raw: str) -> list[tuple[str, ...]]:
    """xdotool's `key` argument: combinations separated by spaces, pressed one after the other."""
    if not isinstance(raw, str) or not raw.strip():
        raise ToolError(f"the key text must be a non-empty string, got {raw!r:.40}")
    return [combination(chord) for chord in raw.split()]
