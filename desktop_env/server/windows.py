"""Finding, activating and closing top-level windows by title or class, in-process.

What `wmctrl -a/-c` do, asked of the window manager through the EWMH module (ewmh.py)
instead of spawning wmctrl. Each call opens its own short X connection, so
the functions are safe to call from any thread.
"""
from __future__ import annotations

import re

from Xlib.display import Display

from . import ewmh
from .ewmh import NoWindowManager, Window
from .waiting import poll_until

_ACTIVATION_CHECK_S = 1.0
_POLL_S = 0.05
# The browser here is Debian's Chromium standing in for Google Chrome (VM_DIFFERENCES.md). Chrome's
# window titles end in "Google Chrome", Chromium's in "Chromium": a title asked for in Chrome's
# words (OSWorld's tasks activate "Google Chrome") finds Chromium's window too.
_CHROME_IN_TITLE = re.compile(re.escape("Google Chrome"), re.IGNORECASE)


def list_windows(display: str | None = None) -> list[Window]:
    """The managed top-level windows, in the window manager's mapping order."""
    with ewmh.connect(display) as connection:
        return ewmh.list_windows(connection)


def _matches(window: Window, name: str, strict: bool, by_class: bool) -> bool:
    # Like wmctrl: a class is matched as "instance.class"; the exact form also accepts
    # either part alone, which is what callers naming an application mean.
    if by_class:
        instance, class_name = window.wm_class
        joined = f"{instance}.{class_name}"
        if strict:
            return name in (instance, class_name, joined)
        return name.casefold() in joined.casefold()
    names = {name, _CHROME_IN_TITLE.sub("Chromium", name)}
    if strict:
        return window.title in names
    return any(candidate.casefold() in window.title.casefold() for candidate in names)


def _find(connection: Display, name: str, strict: bool, by_class: bool) -> list[Window]:
    return [window for window in ewmh.list_windows(connection) if _matches(window, name, strict, by_class)]


def find_windows(name: str, strict: bool = False, by_class: bool = False,
                 display: str | None = None) -> list[Window]:
    """Windows matched as wmctrl matches them.

    Not strict: `name` is a case-insensitive substring of the title (of the WM_CLASS
    when `by_class`). Strict: the title equals `name` exactly.
    """
    with ewmh.connect(display) as connection:
        return _find(connection, name, strict, by_class)


def activate_window(name: str, strict: bool = False, by_class: bool = False,
                    display: str | None = None) -> Window | None:
    """Bring the first matching window to the front and give it the focus.

    Returns the window, or None if none matches. Waits briefly until the window manager
    reports it active, so the next input goes to it.
    """
    with ewmh.connect(display) as connection:
        matches = _find(connection, name, strict, by_class)
        if not matches:
            return None
        target = matches[0]
        try:
            ewmh.activate(connection, target.id)
        except ewmh.WINDOW_GONE:
            return None  # closed between finding and activating
        poll_until(lambda: ewmh.active_window(connection) == target.id, _ACTIVATION_CHECK_S, _POLL_S)
        return target


def is_active(window_id: int, display: str | None = None) -> bool:
    """Whether the window manager names this window the active one (it has the keyboard focus)."""
    with ewmh.connect(display) as connection:
        return ewmh.active_window(connection) == window_id


def close_window(name: str, strict: bool = False, by_class: bool = False,
                 display: str | None = None) -> Window | None:
    """Ask the first matching window to close, as its close button would.

    Returns the window, or None if none matches. Does not wait: the application may
    ask to save first.
    """
    with ewmh.connect(display) as connection:
        matches = _find(connection, name, strict, by_class)
        if not matches:
            return None
        ewmh.close(connection, matches[0].id)
        return matches[0]


def window_size(app_class_name: str, display: str | None = None) -> tuple[int, int] | None:
    """(width, height) of the first window whose WM_CLASS instance or class equals
    `app_class_name` ignoring case, or None if there is none."""
    wanted = app_class_name.casefold()
    with ewmh.connect(display) as connection:
        for window in ewmh.list_windows(connection):
            if wanted not in (part.casefold() for part in window.wm_class):
                continue
            try:
                _x, _y, width, height = ewmh.client_geometry(connection, window.id)
            except ewmh.WINDOW_GONE:
                continue
            return width, height
    return None


def wait_for_window(title_substring: str, timeout: float, display: str | None = None,
                    interval: float = 0.1) -> Window | None:
    """The first window whose title contains `title_substring` (ignoring case), polled
    until `timeout` seconds have passed; None if none appeared."""
    with ewmh.connect(display) as connection:
        def first_match() -> Window | None:
            try:
                matches = _find(connection, title_substring, strict=False, by_class=False)
            except NoWindowManager:
                matches = []  # the window manager may still be starting
            return matches[0] if matches else None

        return poll_until(first_match, timeout, interval)
