"""Finding, activating and closing top-level windows through EWMH, in-process.

What `wmctrl -a/-c` do, asked of the window manager with client messages over
python-xlib instead of spawning wmctrl. Each call opens its own short X connection, so
the functions are safe to call from any thread.
"""
from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from Xlib import X, Xatom
from Xlib import error as xerror
from Xlib.display import Display
from Xlib.protocol import event as xevent

from .waiting import poll_until

# EWMH source indication "pager": the request comes on behalf of the user, which EWMH
# asks window managers to honour even when they prevent focus stealing. (xfwm4 4.18
# obeyed both this and "application" with a zero timestamp in our checks.)
_SOURCE_PAGER = 2
_ALL_DESKTOPS = 0xFFFFFFFF
_ACTIVATION_CHECK_S = 1.0
_POLL_S = 0.05
# The browser here is Debian's Chromium standing in for Google Chrome (VM_DIFFERENCES.md). Chrome's
# window titles end in "Google Chrome", Chromium's in "Chromium": a title asked for in Chrome's
# words (OSWorld's tasks activate "Google Chrome") finds Chromium's window too.
_CHROME_IN_TITLE = re.compile(re.escape("Google Chrome"), re.IGNORECASE)


class WindowControlError(RuntimeError):
    """The X display or its window manager cannot be used for window control."""


class NoWindowManager(WindowControlError):
    """No EWMH window manager publishes a client list on this display."""


@dataclass(frozen=True)
class Window:
    id: int
    title: str
    wm_class: tuple[str, str]  # (instance, class), empty strings when unset


@contextlib.contextmanager
def _connect(display: str | None) -> Iterator[Display]:
    try:
        connection = Display(display)
    except (xerror.DisplayError, xerror.ConnectionClosedError, xerror.XauthError) as problem:
        raise WindowControlError(f"cannot open X display {display or '$DISPLAY'}: {problem}") \
            from problem
    try:
        yield connection
    finally:
        connection.close()


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def _describe(connection: Display, window_id: int) -> Window | None:
    """The window's title and class, or None if it vanished meanwhile."""
    window = connection.create_resource_object("window", window_id)
    try:
        net_name = window.get_full_property(
            connection.intern_atom("_NET_WM_NAME"), connection.intern_atom("UTF8_STRING"))
        title = _text(net_name.value) if net_name else _text(window.get_wm_name())
        wm_class = window.get_wm_class() or ("", "")
    except (xerror.BadWindow, xerror.BadDrawable):
        return None
    return Window(id=window_id, title=title, wm_class=(_text(wm_class[0]), _text(wm_class[1])))


def _client_ids(connection: Display) -> list[int]:
    client_list = connection.screen().root.get_full_property(
        connection.intern_atom("_NET_CLIENT_LIST"), Xatom.WINDOW)
    if client_list is None:
        raise NoWindowManager(
            f"no EWMH window manager on display {connection.get_display_name()} "
            "(the root window has no _NET_CLIENT_LIST)")
    return list(client_list.value)


def _list(connection: Display) -> list[Window]:
    described = (_describe(connection, window_id) for window_id in _client_ids(connection))
    return [window for window in described if window is not None]


def list_windows(display: str | None = None) -> list[Window]:
    """The managed top-level windows, in the window manager's mapping order."""
    with _connect(display) as connection:
        return _list(connection)


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
    return [window for window in _list(connection) if _matches(window, name, strict, by_class)]


def find_windows(name: str, strict: bool = False, by_class: bool = False,
                 display: str | None = None) -> list[Window]:
    """Windows matched as wmctrl matches them.

    Not strict: `name` is a case-insensitive substring of the title (of the WM_CLASS
    when `by_class`). Strict: the title equals `name` exactly.
    """
    with _connect(display) as connection:
        return _find(connection, name, strict, by_class)


def _send_to_root(connection: Display, window_id: int, message_type: str,
                  data: list[int]) -> None:
    root = connection.screen().root
    message = xevent.ClientMessage(
        window=window_id, client_type=connection.intern_atom(message_type),
        data=(32, (data + [0] * 5)[:5]))
    root.send_event(message, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)


def _cardinal(connection: Display, window, property_name: str) -> int | None:
    value = window.get_full_property(connection.intern_atom(property_name), Xatom.CARDINAL)
    return int(value.value[0]) if value and len(value.value) else None


def _active_window_id(connection: Display) -> int | None:
    value = connection.screen().root.get_full_property(
        connection.intern_atom("_NET_ACTIVE_WINDOW"), Xatom.WINDOW)
    return int(value.value[0]) if value and len(value.value) else None


def _activate(connection: Display, target: Window) -> None:
    root = connection.screen().root
    window = connection.create_resource_object("window", target.id)
    # Activation does not switch workspaces by itself in every window manager.
    desktop = _cardinal(connection, window, "_NET_WM_DESKTOP")
    if desktop is not None and desktop != _ALL_DESKTOPS \
            and desktop != _cardinal(connection, root, "_NET_CURRENT_DESKTOP"):
        _send_to_root(connection, root.id, "_NET_CURRENT_DESKTOP", [desktop, X.CurrentTime])
    _send_to_root(connection, target.id, "_NET_ACTIVE_WINDOW",
                  [_SOURCE_PAGER, X.CurrentTime, _active_window_id(connection) or 0])
    # A minimized window is unmapped; mapping it asks the window manager to restore it.
    window.map()
    window.configure(stack_mode=X.Above)
    connection.sync()


def activate_window(name: str, strict: bool = False, by_class: bool = False,
                    display: str | None = None) -> Window | None:
    """Bring the first matching window to the front and give it the focus.

    Returns the window, or None if none matches. Waits briefly until the window manager
    reports it active, so the next input goes to it.
    """
    with _connect(display) as connection:
        matches = _find(connection, name, strict, by_class)
        if not matches:
            return None
        target = matches[0]
        try:
            _activate(connection, target)
        except (xerror.BadWindow, xerror.BadDrawable):
            return None  # closed between finding and activating
        poll_until(lambda: _active_window_id(connection) == target.id, _ACTIVATION_CHECK_S, _POLL_S)
        return target


def is_active(window_id: int, display: str | None = None) -> bool:
    """Whether the window manager names this window the active one (it has the keyboard focus)."""
    with _connect(display) as connection:
        return _active_window_id(connection) == window_id


def close_window(name: str, strict: bool = False, by_class: bool = False,
                 display: str | None = None) -> Window | None:
    """Ask the first matching window to close, as its close button would.

    Returns the window, or None if none matches. Does not wait: the application may
    ask to save first.
    """
    with _connect(display) as connection:
        matches = _find(connection, name, strict, by_class)
        if not matches:
            return None
        _send_to_root(connection, matches[0].id, "_NET_CLOSE_WINDOW",
                      [X.CurrentTime, _SOURCE_PAGER])
        connection.sync()
        return matches[0]


def window_size(app_class_name: str, display: str | None = None) -> tuple[int, int] | None:
    """(width, height) of the first window whose WM_CLASS instance or class equals
    `app_class_name` ignoring case, or None if there is none."""
    wanted = app_class_name.casefold()
    with _connect(display) as connection:
        for window in _list(connection):
            if wanted not in (part.casefold() for part in window.wm_class):
                continue
            try:
                geometry = connection.create_resource_object("window", window.id).get_geometry()
            except (xerror.BadWindow, xerror.BadDrawable):
                continue
            return geometry.width, geometry.height
    return None


def wait_for_window(title_substring: str, timeout: float, display: str | None = None,
                    interval: float = 0.1) -> Window | None:
    """The first window whose title contains `title_substring` (ignoring case), polled
    until `timeout` seconds have passed; None if none appeared."""
    with _connect(display) as connection:
        def first_match() -> Window | None:
            try:
                matches = _find(connection, title_substring, strict=False, by_class=False)
            except NoWindowManager:
                return None  # the window manager may still be starting
            return matches[0] if matches else None

        return poll_until(first_match, timeout, interval)
