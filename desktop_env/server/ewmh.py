"""The window manager's view of the desktop through EWMH: the one place that reads its properties
(_NET_CLIENT_LIST, _NET_ACTIVE_WINDOW, WM_CLASS, titles, types and states, geometry, the work
area) and sends it requests as client messages.

Functions take an open python-xlib connection and window ids; a window that vanishes meanwhile
raises one of WINDOW_GONE. Standard library and python-xlib only, no imports of ours and no
annotation evaluated at run time: besides the server, `code` (code_command, which runs alone)
loads it by its path, and the perturbations (desktop_env/perturb.py) send its source to any
OSWorld desktop's Python, a VM's too.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from Xlib import X, Xatom
from Xlib import error as xerror
from Xlib.display import Display
from Xlib.protocol import event as xevent

# EWMH source indication "pager": the request comes on behalf of the user, which EWMH
# asks window managers to honour even when they prevent focus stealing. (xfwm4 4.18
# obeyed both this and "application" with a zero timestamp in our checks.)
SOURCE_PAGER = 2
ALL_DESKTOPS = 0xFFFFFFFF
WINDOW_GONE = (xerror.BadWindow, xerror.BadDrawable, xerror.BadMatch)


class WindowControlError(RuntimeError):
    """The X display or its window manager cannot be used for window control."""


class NoWindowManager(WindowControlError):
    """No EWMH window manager publishes a client list on this display."""


@dataclass(frozen=True)
class Window:
    id: int
    title: str
    wm_class: tuple[str, str]  # (instance, class), empty strings when unset


def open_display(display: str | None = None) -> Display:
    """An X connection to `display` ($DISPLAY when None); the caller closes it."""
    try:
        return Display(display)
    except (xerror.DisplayError, xerror.ConnectionClosedError, xerror.XauthError, OSError) as problem:
        raise WindowControlError(f"cannot open X display {display or '$DISPLAY'}: {problem}") \
            from problem


@contextlib.contextmanager
def connect(display: str | None = None) -> Iterator[Display]:
    """A short X connection to `display` ($DISPLAY when None), closed on leaving."""
    connection = open_display(display)
    try:
        yield connection
    finally:
        connection.close()


class KeptConnection:
    """One X connection kept open for what asks many times a second (the readiness polls): opening one
    costs python-xlib ~5 ms of CPU, far more than the few requests each poll makes. One caller at a time
    uses it; it is opened on first use and dropped, to be opened anew, when the display has closed it."""

    def __init__(self, display: str | None = None):
        self.display = display
        self._lock = threading.Lock()
        self._connection: Display | None = None

    @contextlib.contextmanager
    def use(self) -> Iterator[Display]:
        with self._lock:
            if self._connection is None:
                self._connection = open_display(self.display)
            try:
                yield self._connection
            except (xerror.ConnectionClosedError, OSError) as problem:
                self._drop()
                raise WindowControlError(f"the X display {self.display or '$DISPLAY'} closed the connection: "
                                         f"{problem}") from problem

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(Exception):  # the display may be gone: nothing left to close
                self._connection.close()
            self._connection = None


def text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def _window(connection: Display, window_id: int):
    return connection.create_resource_object("window", window_id)


def _values(connection: Display, window_id: int, name: str, kind: int) -> list[int]:
    value = _window(connection, window_id).get_full_property(connection.intern_atom(name), kind)
    return [int(item) for item in value.value] if value is not None else []


def _root_values(connection: Display, name: str, kind: int) -> list[int] | None:
    """A property of the root window, None when it is not set."""
    value = connection.screen().root.get_full_property(connection.intern_atom(name), kind)
    return [int(item) for item in value.value] if value is not None else None


def window_manager_present(connection: Display) -> bool:
    """Whether an EWMH window manager announced itself (_NET_SUPPORTING_WM_CHECK)."""
    return bool(_root_values(connection, "_NET_SUPPORTING_WM_CHECK", X.AnyPropertyType))


def client_list(connection: Display) -> list[int] | None:
    """The managed top-level windows in mapping order, None when no window manager publishes them."""
    return _root_values(connection, "_NET_CLIENT_LIST", Xatom.WINDOW)


def stacking_list(connection: Display) -> list[int]:
    """The managed windows from bottom to top."""
    return _root_values(connection, "_NET_CLIENT_LIST_STACKING", Xatom.WINDOW) or []


def active_window(connection: Display) -> int | None:
    """The window that has the keyboard focus, None when there is none."""
    value = _root_values(connection, "_NET_ACTIVE_WINDOW", Xatom.WINDOW)
    return value[0] if value and value[0] else None


def current_desktop(connection: Display) -> int | None:
    value = _root_values(connection, "_NET_CURRENT_DESKTOP", Xatom.CARDINAL)
    return value[0] if value else None


def workarea(connection: Display) -> tuple[int, ...]:
    """The first work area's x, y, width, height (the screen less panels and docks), () when unset."""
    return tuple((_root_values(connection, "_NET_WORKAREA", Xatom.CARDINAL) or [])[:4])


def title(connection: Display, window_id: int) -> str:
    """_NET_WM_NAME (UTF-8), else the ICCCM WM_NAME."""
    window = _window(connection, window_id)
    net_name = window.get_full_property(connection.intern_atom("_NET_WM_NAME"), connection.intern_atom("UTF8_STRING"))
    return text(net_name.value) if net_name else text(window.get_wm_name())


def wm_class(connection: Display, window_id: int) -> tuple[str, str]:
    """WM_CLASS as (instance, class), empty strings when unset."""
    instance, class_name = _window(connection, window_id).get_wm_class() or ("", "")
    return text(instance), text(class_name)


def cardinal(connection: Display, window_id: int, name: str) -> int | None:
    """A window's CARDINAL property (_NET_WM_PID, _NET_WM_DESKTOP...), None when unset."""
    value = _values(connection, window_id, name, Xatom.CARDINAL)
    return value[0] if value else None


def atom_names(connection: Display, window_id: int, name: str) -> list[str]:
    """A window's list of atoms by name, in order (_NET_WM_WINDOW_TYPE, _NET_WM_STATE)."""
    names = []
    for atom in _values(connection, window_id, name, Xatom.ATOM):
        try:
            names.append(connection.get_atom_name(atom))
        except xerror.XError:
            continue
    return names


def client_geometry(connection: Display, window_id: int) -> tuple[int, int, int, int]:
    """x, y, width, height of the window's client area, in root coordinates."""
    window = _window(connection, window_id)
    size = window.get_geometry()
    origin = window.translate_coords(connection.screen().root, 0, 0)  # the root's origin, in the window's coordinates
    return -origin.x, -origin.y, size.width, size.height


def frame_extents(connection: Display, window_id: int) -> tuple[int, int, int, int]:
    """left, right, top, bottom: what the window manager's frame adds around the client area."""
    left, right, top, bottom = (_values(connection, window_id, "_NET_FRAME_EXTENTS", Xatom.CARDINAL) + [0] * 4)[:4]
    return left, right, top, bottom


def frame_geometry(connection: Display, window_id: int) -> tuple[int, int, int, int]:
    """x, y, width, height of the window as a user sees it (title bar and borders included)."""
    x, y, width, height = client_geometry(connection, window_id)
    left, right, top, bottom = frame_extents(connection, window_id)
    return x - left, y - top, width + left + right, height + top + bottom


def describe(connection: Display, window_id: int) -> Window | None:
    """The window's title and class, or None if it vanished meanwhile."""
    try:
        return Window(id=window_id, title=title(connection, window_id), wm_class=wm_class(connection, window_id))
    except WINDOW_GONE:
        return None


def list_windows(connection: Display) -> list[Window]:
    """The managed top-level windows, in the window manager's mapping order."""
    ids = client_list(connection)
    if ids is None:
        raise NoWindowManager(f"no EWMH window manager on display {connection.get_display_name()} "
                              "(the root window has no _NET_CLIENT_LIST)")
    described = (describe(connection, window_id) for window_id in ids)
    return [window for window in described if window is not None]


def send_message(connection: Display, window_id: int, message: str, values: list[int]) -> None:
    """A client message about `window_id` to the window manager (sent to the root window, as EWMH asks)."""
    data = [value & 0xFFFFFFFF for value in (list(values) + [0] * 5)[:5]]  # l[] is signed; the wire is not
    event = xevent.ClientMessage(window=window_id, client_type=connection.intern_atom(message), data=(32, data))
    connection.screen().root.send_event(event, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)


def activate(connection: Display, window_id: int) -> None:
    """Asks for the window in front with the focus: on its workspace, restored if minimized, raised."""
    root = connection.screen().root
    # Activation does not switch workspaces by itself in every window manager.
    desktop = cardinal(connection, window_id, "_NET_WM_DESKTOP")
    if desktop is not None and desktop != ALL_DESKTOPS and desktop != current_desktop(connection):
        send_message(connection, root.id, "_NET_CURRENT_DESKTOP", [desktop, X.CurrentTime])
    send_message(connection, window_id, "_NET_ACTIVE_WINDOW",
                 [SOURCE_PAGER, X.CurrentTime, active_window(connection) or 0])
    window = _window(connection, window_id)
    # A minimized window is unmapped; mapping it asks the window manager to restore it.
    window.map()
    window.configure(stack_mode=X.Above)
    connection.sync()


def close(connection: Display, window_id: int) -> None:
    """Asks the window to close, as its close button would (the app may ask to save first)."""
    send_message(connection, window_id, "_NET_CLOSE_WINDOW", [X.CurrentTime, SOURCE_PAGER])
    connection.sync()
