"""When a desktop the session started is ready for an agent: what /health answers, and what the harness
polls after each (re)start instead of sleeping (the local provider's boot/sequence.py, wait_until_ready).

Ready: an EWMH window manager announced itself; each started component that shows a window has it
managed, and each that says when its start-up is complete has said so (ANNOUNCED_BY, which session.py
starts those components by); the work area (the screen less the top bar and the dock) has held still
WORKAREA_SETTLED_S; and Xvfb is alive. A started component that has died is named: nothing restarts it,
so the harness stops waiting.
"""
from __future__ import annotations

from dataclasses import dataclass

from .state import ServerState

# The line GNOME Shell logs once its start-up is complete: its top bar and dock take input
# from then on (before it, the start-up animation runs and input is ignored).
SHELL_STARTED_LINE = b"GNOME Shell started at"
# The media keys daemon asks the shell to grab its shortcuts (Ctrl+Alt+T) and retries each
# second while the shell is not yet serving; until a grab call succeeds, the keys reach the
# focused app (Calc types a 't'). Its debug domain says when a call completes, and a failed
# one is followed at once by this warning.
GRAB_COMPLETED_LINE = b"Grab call completed!"
GRAB_FAILED_LINE = b"Failed to grab accelerators:"
# The components that say when their start-up is complete (session.py starts them so that it
# hears it: Session.announced): the line that says it, and the line that would say it failed.
ANNOUNCED_BY: dict[str, tuple[bytes, bytes | None]] = {
    "gnome-shell": (SHELL_STARTED_LINE, None),
    "gsd-media-keys": (GRAB_COMPLETED_LINE, GRAB_FAILED_LINE),
}
# The WM_CLASS of the window a component shows once it is up: GNOME Shell's desktop icons (the ding
# extension's gjs window, made once the shell's start-up is complete).
COMPONENT_WINDOW_CLASSES = {"gnome-shell": "gjs"}
# The dock reserves its strut in steps while it slides in, and an agent's first screenshot or a
# perturbation's window targets must see the settled desktop.
WORKAREA_SETTLED_S = 0.3


@dataclass(frozen=True)
class Readiness:
    ready: bool
    window_manager: bool
    waiting_for: list[str]      # started components not yet up, and "work area" while it moves
    dead_processes: list[str]   # started components that exited
    exit_codes: dict[str, int]  # theirs (negative: the signal that ended it)


def desktop_status(state: ServerState) -> tuple[bool, set[str], tuple[int, ...]]:
    """(an EWMH window manager announced itself, WM_CLASS classes of the managed windows, the
    first work area's x, y, width, height, or () when none is set)."""
    # python-xlib is the desktop's (its server venv has it), not the harness's, which imports this module
    from Xlib import error

    from . import ewmh

    try:
        with state.readiness_connection.use() as connection:
            classes: set[str] = set()
            for window_id in ewmh.client_list(connection) or []:
                try:
                    classes.update(name.lower() for name in ewmh.wm_class(connection, window_id) if name)
                except error.XError:
                    continue
            return ewmh.window_manager_present(connection), classes, ewmh.workarea(connection)
    except ewmh.WindowControlError:
        return False, set(), ()


def readiness(state: ServerState) -> Readiness:
    exit_codes = {name: code for name, proc in state.children.items() if (code := proc.poll()) is not None}
    dead = sorted(exit_codes)
    wm, classes, workarea = desktop_status(state)
    waiting_for = sorted({name for name, wm_class in COMPONENT_WINDOW_CLASSES.items()
                          if name in state.children and wm_class not in classes}
                         | {name for name in ANNOUNCED_BY
                            if name in state.children and name not in state.announced})
    if wm and not waiting_for and not state.workarea_settled(workarea, WORKAREA_SETTLED_S):
        waiting_for.append("work area")
    return Readiness(ready=wm and not waiting_for and "Xvfb" not in dead, window_manager=wm,
                     waiting_for=waiting_for, dead_processes=dead, exit_codes=exit_codes)
