"""A desktop of the local provider put in the live view: x11vnc started inside it on its display, at
VNC_PORT of the sandbox's own loopback, view-only (a person's input reaches the desktop only as the
actions the harness carries out), reached from the host through the boot's `port-5900` socket, which the
harness bound in its host-only folder (desktop_env/providers/local/boot/listeners.py): the harness never
connects to a path the desktop could have put there."""
from __future__ import annotations

import itertools
import os
import socket
import sys
import threading
import weakref
from dataclasses import dataclass
from typing import Any

from ..errors import ServerRequestError
from .human_input import HumanInput
from .server import LiveDesktop, LiveViewUnavailable, shared_server

VNC_PORT = 5900
# -localhost: the sandbox's loopback only; -viewonly: the viewer's input is the view server's to carry out;
# -bg: returns once it listens, so the first connection finds it; -forever -shared: viewers come and go;
# -nosel: it never touches the desktop's selections (OSWorld's tasks use the clipboard; xclip's owner stays).
X11VNC = ["x11vnc", "-localhost", "-rfbport", str(VNC_PORT), "-viewonly", "-shared", "-forever", "-nopw",
          "-quiet", "-bg", "-noipv6", "-nolookup", "-noxrecord", "-nowf", "-nosel", "-nobell"]
_names = itertools.count(1)
_desktops: weakref.WeakKeyDictionary[Any, LiveDesktop] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


@dataclass(eq=False)
class ServedDesktop:
    """A desktop with no DesktopEnv around it (`osworld env serve --watch`): what the view needs of one."""
    provider: Any
    controller: Any


def _local_provider(env: Any) -> Any:
    provider = getattr(env, "provider", None)
    config = getattr(provider, "config", None)
    if provider is None or not hasattr(provider, "socket_path") or config is None:
        raise LiveViewUnavailable(f"the live view needs a desktop of the local provider, not "
                                  f"{type(provider).__name__}")
    if config.network:
        raise LiveViewUnavailable("the live view needs the desktop's own network namespace: with --network its "
                                  "VNC server would listen on the host's loopback, open to every local user")
    if VNC_PORT not in config.forward_ports:
        raise LiveViewUnavailable(f"the desktop does not forward port {VNC_PORT} (forward_ports="
                                  f"{config.forward_ports})")
    return provider


def start_vnc(env: Any) -> None:
    """x11vnc on the desktop's display, listening once this returns."""
    _local_provider(env)
    try:
        answer = env.controller.run_command(X11VNC)
    except ServerRequestError as e:  # the desktop refused: no x11vnc in its /usr, say
        raise LiveViewUnavailable(f"x11vnc could not be started in the desktop ({e}): is x11vnc installed "
                                  "in the desktop's system (system_packages.txt)?") from e
    if answer.get("returncode") not in (0, None):
        raise LiveViewUnavailable(f"x11vnc did not start in the desktop (exit {answer.get('returncode')}): "
                                  f"{str(answer.get('error') or answer.get('output'))[-300:]}")


def _connector(env: Any):
    provider = _local_provider(env)

    def connect() -> socket.socket:
        stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            stream.connect(str(provider.socket_path(f"port-{VNC_PORT}")))  # the current boot's
        except OSError:
            stream.close()
            raise
        return stream

    return connect


def show(env: Any, task_id: str, instruction: str, human: bool, announce: bool = True) -> LiveDesktop:
    """The desktop of `env` in the live view for this task (a person's input taken when `human`); the
    first time, its view URL (with the token) is printed to the terminal, never to a log or a result."""
    start_vnc(env)
    server = shared_server()
    with _lock:
        desktop = _desktops.get(env)
        first = desktop is None
        if desktop is None:
            # Named by this process too: a browser keeps cookies per host, not per port, so the desktops of two
            # worker processes (two view servers) must not share a cookie's name.
            name = f"desktop-{os.getpid()}-{next(_names)}"
            desktop = _desktops[env] = LiveDesktop(name, _connector(env))
            url = server.add(desktop)
            weakref.finalize(env, server.remove, name)  # its page goes with the desktop's env
    desktop.start_task(task_id, instruction, HumanInput() if human else None)
    if first and announce:
        print(f"live view of {desktop.name}: {url}", file=sys.stderr, flush=True)
    return desktop


def view_url(desktop: LiveDesktop) -> str:
    """The page without its token (for a report or a log)."""
    return shared_server().view_url(desktop.name)


def full_url(desktop: LiveDesktop) -> str:
    """The page with its token, for whoever drives the browser (a test; the terminal)."""
    return f"{view_url(desktop)}?token={desktop.token}"
