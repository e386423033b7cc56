"""The desktop session inside a sandbox: X server, session bus, a11y, desktop, env server.

Run as the sandbox's first process by the local provider
(`python -m desktop_env.server.session CONFIG.json`), or by hand inside a VM.
Everything is started as soon as what it depends on is ready; nothing sleeps a
fixed time. The env server runs in this process, so when it exits the PID
namespace ends and takes every app with it.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from ..desktop_defaults import DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE
from .httpd import EnvServer, make_server
from .readiness import ANNOUNCED_BY
from .relay import UnixToTcpRelay
from .sandbox_paths import HOME, RUNTIME_DIR
from .state import ServerState
from .waiting import poll_until

log = logging.getLogger("osworld.session")


@dataclass
class SessionConfig:
    width: int = DEFAULT_SCREEN_SIZE[0]
    height: int = DEFAULT_SCREEN_SIZE[1]
    runtime_dir: str = RUNTIME_DIR            # holds logs/ (and server.sock when no listening sockets are given)
    forward_ports: list[int] = field(default_factory=lambda: [9222, 8080])
    desktop_components: list[str] = field(default_factory=lambda: list(DESKTOP_COMPONENTS))
    # The desktop's XDG view (desktop_env/providers/local/build/desktop_view.py) with the D-Bus
    # configurations in its dbus/ folder; "" (by hand, inside a VM): the system's own.
    desktop_data: str = ""
    client_password: str = DEFAULT_PASSWORD
    # Listening sockets the harness made and handed over as inherited fds: "server" (the
    # harness's private socket), "public" (what `osworld env serve` relays from TCP, held
    # to the browser-safe policy) and "port-<n>" (a TCP service inside, such as 9222).
    # Their files live in a host folder the desktop never sees, so nothing inside can
    # swap them for a symlink of its choosing.
    listen_fds: dict[str, int] = field(default_factory=dict)
    public_token: str | None = None

    @classmethod
    def load(cls, path: str) -> SessionConfig:
        with open(path) as f:
            return cls(**json.load(f))


# What each toolkit needs to expose its widgets over AT-SPI, and to behave well in a
# fresh, headless session (no keyring prompts, no first-run dialogs).
ACCESSIBILITY_ENV = {
    "GTK_MODULES": "gail:atk-bridge",
    "GNOME_ACCESSIBILITY": "1",
    "SAL_USE_VCLPLUGIN": "gtk3",          # LibreOffice's gtk3 plugin talks AT-SPI
    "QT_ACCESSIBILITY": "1",
    "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
    "ACCESSIBILITY_ENABLED": "1",         # Chromium and Electron apps
    # libdbus aborts the process on a malformed message unless told not to; Chromium
    # would die on the a11y bus's replies.
    "DBUS_FATAL_WARNINGS": "0",
}

# Ubuntu's GNOME session: its sound server (PulseAudio, as Ubuntu 22.04 runs it: the top
# bar's volume slider, apps' audio and `pactl`/`amixer` go through it), GNOME Shell on X11
# in our `ubuntu` mode (the view's gnome-shell/modes), and the settings daemons an idle
# Ubuntu desktop shows the effect of: XSETTINGS (GTK apps take the theme and fonts from
# gsettings, live) and the media keys (Ctrl+Alt+T opens a terminal). gnome-session is not
# run: it wants systemd.
# Annotated: SessionConfig, above, refers to it before mypy reaches this line.
DESKTOP_COMPONENTS: tuple[str, ...] = ("pulseaudio", "gnome-shell", "gsd-xsettings", "gsd-media-keys")
SESSION_MODE = "ubuntu"
# What a desktop of the Ubuntu 22.04 userland runs besides, before the shell, on its private system bus, as the
# VM's system menu shows them (the shell's own indicators, no imitation): the power profiles daemon (its
# "Balanced" row) and UPower, which gsd-power needs to answer that the VM has no brightness control (without
# gsd-power, GNOME 42 shows a Brightness slider the VM has not). A desktop of the host's packages draws
# GNOME 42's menu with an extension instead.
SYSTEM_SERVICES: tuple[str, ...] = ("upowerd", "power-profiles-daemon", "gsd-power")
DESKTOP_COMMANDS = {
    "gnome-shell": ["gnome-shell", "--x11", f"--mode={SESSION_MODE}"],
    "gsd-xsettings": ["/usr/libexec/gsd-xsettings"],
    "gsd-media-keys": ["/usr/libexec/gsd-media-keys"],
    "upowerd": ["/usr/libexec/upowerd"],
    "power-profiles-daemon": ["/usr/libexec/power-profiles-daemon"],
    "gsd-power": ["/usr/libexec/gsd-power"],
}
# PulseAudio with the view's startup script (the system's, then the VM's volume), in the
# foreground so the session owns it, and never exiting when idle (its default after 20 s).
# It puts its socket in $XDG_RUNTIME_DIR/pulse, where `pactl` and `pulseaudio --start` look.
SOUND_SERVER_SCRIPT = "pulse/default.pa"
SOUND_SERVER_ARGS = ["--daemonize=no", "--exit-idle-time=-1", "--log-target=stderr", "-n"]
# The media keys daemon's debug domain says when its call to grab the shortcuts completes (what
# readiness.py waits for of it).
MEDIA_KEYS_DEBUG_ENV = {"G_MESSAGES_DEBUG": "media-keys-plugin"}
GRAB_FAILURE_WAIT_S = 0.3
A11Y_BUS_NAME_WAIT_S = 5.0
STOP_WAIT_S = 3.0  # how long the session's children get to exit on SIGTERM before SIGKILL
# The XSETTINGS daemon draws nothing, but GTK sets up OpenGL at start on X11 to pick its
# visuals, which loads Mesa and LLVM and dirties about 10 MiB of relocated library pages.
# It starts no apps, so nothing else inherits this (the media keys daemon does: Ctrl+Alt+T).
COMPONENT_ENV = {"gsd-xsettings": {"GDK_GL": "disable"}, "gsd-media-keys": MEDIA_KEYS_DEBUG_ENV}
# GTK 4 apps (Settings 43, Files 43) draw with cairo, as the VM's GTK 3 Settings and Files do. On
# this GPU-less desktop GTK 4's OpenGL renderer runs on llvmpipe and compiles its shaders into a
# cache in the home, which every reset throws away: Settings' window took 3.2 s to map with it,
# 1.1 s with cairo, and the VM's recorded clicks into Settings come 3 s after opening it.
RENDERING_ENV = {"GSK_RENDERER": "cairo"}
# What a GNOME session's environment says about itself (as GDM sets it on Ubuntu).
GNOME_SESSION_ENV = {
    "XDG_CURRENT_DESKTOP": "ubuntu:GNOME",
    "XDG_SESSION_DESKTOP": "ubuntu",
    "XDG_SESSION_TYPE": "x11",
    "DESKTOP_SESSION": "ubuntu",
    "GDMSESSION": "ubuntu",
    "GNOME_SHELL_SESSION_MODE": SESSION_MODE,
    "XDG_MENU_PREFIX": "gnome-",
    # gnome-session's; xdg-utils tells GNOME by it when XDG_CURRENT_DESKTOP is ubuntu:GNOME
    "GNOME_DESKTOP_SESSION_ID": "this-is-deprecated",
}
# What the env server adds to the session's environment for the commands and apps it starts. OSWorld's
# server is a system service whose environment names no desktop (osworld_server.service: DISPLAY,
# DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR), so a Qt app a task's setup launches there (VLC) finds
# no desktop and takes Qt's generic theme, whose dialogs order their buttons as Windows does. The VM's
# recorded clicks show that order: in multi_apps 778efd0a (scored 1, an audio track converted) the click
# at (1061.76, 729.0) started VLC's Convert dialog, whose Start is there only in that order (GNOME's
# puts Cancel there); VLC's Preferences then has Save left of Cancel, under the VM's (1192.32, 899.64).
# Apps started from the dock or with Ctrl+Alt+T get the session's environment, as on the VM.
SERVER_ENV = {"QT_QPA_PLATFORMTHEME": "generic"}


def adopt_xtest_devices(display: str) -> None:
    """Makes XTest's virtual keyboard and pointer the ones the X server's core devices last used, before any
    client connects. Every key and click of the harness comes through XTest; the first one from a device
    other than the last used makes the X server switch the core keyboard to it, and announce a new keymap.
    GNOME Shell answers that by ungrabbing every shortcut and grabbing it again, which takes it a few hundred
    milliseconds on a busy machine: an agent's first Ctrl+Alt+T whose T arrived in between went to the
    focused window instead of opening a terminal. Switched here, there is nothing left to switch later."""
    from Xlib import XK, X
    from Xlib.display import Display
    from Xlib.ext import xtest

    connection = Display(display)
    try:
        keycode = connection.keysym_to_keycode(XK.string_to_keysym("Shift_L"))
        xtest.fake_input(connection, X.KeyPress, keycode)
        xtest.fake_input(connection, X.KeyRelease, keycode)
        pointer = connection.screen().root.query_pointer()
        xtest.fake_input(connection, X.MotionNotify, x=pointer.root_x, y=pointer.root_y)  # where it already is
        connection.sync()
    finally:
        connection.close()


class Session:
    def __init__(self, config: SessionConfig):
        self.config = config
        self.runtime = Path(config.runtime_dir)
        self.logs = self.runtime / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.children: dict[str, subprocess.Popen] = {}
        # components that said they are ready (read by /health)
        self.announced: set[str] = set()
        self.env = dict(os.environ)
        self.started = time.monotonic()

    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
        logfile = open(self.logs / f"{name}.log", "ab")
        proc = subprocess.Popen(argv, env={**self.env, **(env or {})}, stdin=subprocess.DEVNULL, stdout=logfile,
                                stderr=subprocess.STDOUT, **kwargs)
        logfile.close()
        self.children[name] = proc
        return proc

    def _spawn_announcing(self, name: str, argv: list[str], line: bytes, unless: bytes | None = None,
                          env: dict[str, str] | None = None) -> subprocess.Popen:
        """Starts `name` with its output copied to its log by a thread, which adds `name` to
        `announced` when the output has `line` - unless the line after it (written within
        GRAB_FAILURE_WAIT_S) has `unless`, which says the step `line` reports failed."""
        proc = subprocess.Popen(argv, env={**self.env, **(env or {})}, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.children[name] = proc
        assert proc.stdout is not None  # stdout=PIPE
        output_lines = proc.stdout
        pending: list[threading.Timer] = []

        def announce() -> None:
            self.announced.add(name)

        def copy() -> None:
            with open(self.logs / f"{name}.log", "ab", buffering=0) as log_file:
                for output in output_lines:
                    log_file.write(output)
                    if pending:
                        timer = pending.pop()
                        if unless is not None and unless in output:
                            timer.cancel()
                    if line in output and name not in self.announced:
                        if unless is None:
                            announce()
                        else:
                            timer = threading.Timer(GRAB_FAILURE_WAIT_S, announce)
                            timer.daemon = True
                            pending.append(timer)
                            timer.start()

        threading.Thread(target=copy, name=f"{name}-log", daemon=True).start()
        return proc

    def _read_line_from(self, fd: int, what: str, proc: subprocess.Popen, timeout_s: float = 20.0) -> str:
        """Reads one line a child writes to `fd` to say it is ready (-displayfd, --print-address)."""
        data = b""
        os.set_blocking(fd, False)

        def line_read() -> bool:
            nonlocal data
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited with code {proc.returncode}; see {self.logs}")
            try:
                chunk = os.read(fd, 256)
            except BlockingIOError:
                return False
            if not chunk:
                raise RuntimeError(f"{what} closed its readiness pipe without a line")
            data += chunk
            return b"\n" in data

        if not poll_until(line_read, timeout_s, 0.005):
            raise RuntimeError(f"{what} was not ready after {timeout_s:.0f} s; see {self.logs}")
        os.close(fd)
        return data.decode().strip()

    def start_x(self) -> str:
        read_fd, write_fd = os.pipe()
        proc = self._spawn("Xvfb", [
            "Xvfb", "-displayfd", str(write_fd), "-screen", "0",
            f"{self.config.width}x{self.config.height}x24", "-nolisten", "tcp",
            "-dpi", "96", "+extension", "RANDR", "+extension", "GLX", "-noreset",
        ], pass_fds=(write_fd,))
        os.close(write_fd)
        display = ":" + self._read_line_from(read_fd, "Xvfb", proc)
        self.env["DISPLAY"] = display
        adopt_xtest_devices(display)
        return display

    def _start_bus(self, name: str, config: list[str], socket_path: str) -> str:
        read_fd, write_fd = os.pipe()
        proc = self._spawn(name, [
            "dbus-daemon", *config, "--nofork", "--nopidfile",
            f"--address=unix:path={socket_path}", f"--print-address={write_fd}",
        ], pass_fds=(write_fd,))
        os.close(write_fd)
        return self._read_line_from(read_fd, name, proc)

    def _bus_config(self, kind: str) -> list[str]:
        if self.config.desktop_data:
            return [f"--config-file={self.config.desktop_data}/dbus/{kind}.conf"]
        return [f"--{kind}"]

    def start_session_bus(self) -> str:
        # Where a logged-in Ubuntu session has it: some of OSWorld's tasks name this path themselves
        # (DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus gsettings set ...).
        path = os.path.join(self.env.get("XDG_RUNTIME_DIR", str(self.runtime)), "bus")
        address = self._start_bus("dbus", self._bus_config("session"), path)
        self.env["DBUS_SESSION_BUS_ADDRESS"] = address
        return address

    def start_system_bus(self) -> str | None:
        """GNOME Shell and Settings need a system bus (the shell dies at start without one):
        a private one, open to the desktop only. Without a view (inside a VM), the system's."""
        if not self.config.desktop_data:
            return None
        address = self._start_bus("system-dbus", self._bus_config("system"), f"{self.runtime}/system_bus")
        self.env["DBUS_SYSTEM_BUS_ADDRESS"] = address
        return address

    def enable_accessibility(self) -> None:
        # Starting the a11y bus now (rather than on first use) means apps launched by a
        # task find it at once and register their trees.
        launcher = self._spawn("at-spi-bus", ["/usr/libexec/at-spi-bus-launcher", "--launch-immediately"])
        # Until it owns its bus name, a GTK app that starts asks the session bus to activate a
        # second launcher; whichever loses the name exits, and ours would look dead.
        poll_until(lambda: launcher.poll() is not None or self._name_has_owner("org.a11y.Bus"), A11Y_BUS_NAME_WAIT_S,
                   0.02)
        self.env.update(ACCESSIBILITY_ENV)
        self.env.pop("NO_AT_BRIDGE", None)

    def _name_has_owner(self, name: str) -> bool:
        try:
            asked = subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
                                    "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", f"string:{name}"],
                                   env=self.env, stdin=subprocess.DEVNULL, capture_output=True, timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return b"boolean true" in asked.stdout

    def start_desktop(self) -> None:
        for name in self.config.desktop_components:
            argv = DESKTOP_COMMANDS.get(name, [name])
            if name == "pulseaudio":
                if self.config.desktop_data:  # by hand inside a VM, the VM's own sound server runs
                    self._spawn(name, ["pulseaudio", *SOUND_SERVER_ARGS, "-F",
                                       f"{self.config.desktop_data}/{SOUND_SERVER_SCRIPT}"])
            elif name in ANNOUNCED_BY:
                line, unless = ANNOUNCED_BY[name]
                self._spawn_announcing(name, argv, line, unless=unless, env=COMPONENT_ENV.get(name))
            else:
                self._spawn(name, argv, env=COMPONENT_ENV.get(name))

    def prepare_environment(self) -> None:
        home = self.env.get("HOME", HOME)
        xdg_runtime = self.env.setdefault("XDG_RUNTIME_DIR", f"/run/user/{os.getuid()}")
        os.makedirs(xdg_runtime, mode=0o700, exist_ok=True)
        # Xvfb only makes its socket folder as root; apps look for the socket there.
        os.makedirs("/tmp/.X11-unix", exist_ok=True)
        os.chmod("/tmp/.X11-unix", 0o1777)
        # Xvfb runs without access control; python-xlib still insists on the file.
        Path(home, ".Xauthority").touch(exist_ok=True)
        # Task files run `python ...` as on OSWorld's Ubuntu image, where it exists and
        # imports pyautogui: the server's venv (system Python + pyautogui) comes first on
        # PATH, and a venv's python must be run from its own bin folder to be one.
        venv_bin = os.path.dirname(sys.executable)
        # Shims stand in for programs OSWorld's tasks name but Debian lacks (google-chrome).
        shims = Path(__file__).with_name("shims")
        path = [p for p in self.env.get("PATH", "/usr/bin:/bin").split(":") if p and p != venv_bin]
        self.env["PATH"] = ":".join([venv_bin, str(shims), *path])
        for key, value in (GNOME_SESSION_ENV | RENDERING_ENV).items():
            self.env.setdefault(key, value)
        self.env.setdefault("LANG", "C.UTF-8")
        self.env.setdefault("SHELL", "/bin/bash")
        os.chdir(home)

    def stop(self) -> None:
        for proc in self.children.values():
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + STOP_WAIT_S
        for proc in self.children.values():  # one deadline for all, each waited on in turn: no polling
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run a desktop session and the env server in it.")
    parser.add_argument("config", help="session config JSON (see SessionConfig)")
    args = parser.parse_args(argv)
    config = SessionConfig.load(args.config)
    session = Session(config)
    logging.basicConfig(filename=str(session.logs / "server.log"), level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    session.prepare_environment()
    session.start_x()
    session.start_system_bus()
    session.start_session_bus()
    session.enable_accessibility()
    os.environ.update(session.env)  # the server, its interpreter and launched apps see the session
    session.start_desktop()

    servers, state = build_session_servers(session)

    def shutdown(signum, frame):
        for server in servers:
            threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    for extra in servers[1:]:
        threading.Thread(target=extra.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    log.info("session ready to serve after %.2f s", time.monotonic() - session.started)
    try:
        servers[0].serve_forever(poll_interval=0.2)
    finally:
        state.close()
        session.stop()
    return 0


def _adopt(fd: int) -> socket.socket:
    """A listening socket inherited from the harness; apps started later must not inherit it."""
    os.set_inheritable(fd, False)
    return socket.socket(fileno=fd)


class _StateArgs(TypedDict):
    """What ServerState takes from the session (directly or through build_server)."""
    runtime_dir: str
    client_password: str
    started: float
    children: dict[str, subprocess.Popen]
    announced: set[str]


def build_session_servers(session: Session) -> tuple[list[EnvServer], ServerState]:
    """The env server on every listener the session has: the harness's private socket
    first, then the public one; port relays for the TCP services inside."""
    from .app import build_router, build_server  # noqa: PLC0415  (after DISPLAY is set: Xlib reads it at import)

    config = session.config
    common = _StateArgs(runtime_dir=str(session.runtime), client_password=config.client_password,
                        started=session.started, children=session.children, announced=session.announced)
    if not config.listen_fds:  # started by hand (inside a VM, say): a socket in the runtime folder
        server, state = build_server({**session.env, **SERVER_ENV}, unix_socket=str(session.runtime / "server.sock"),
                                     forward_ports=config.forward_ports, **common)
        return [server], state
    state = ServerState(env={**session.env, **SERVER_ENV}, **common)
    router = build_router(state)
    servers = [make_server(router, sock=_adopt(config.listen_fds["server"]))]
    if "public" in config.listen_fds:
        servers.append(make_server(router, sock=_adopt(config.listen_fds["public"]), public=True,
                                   token=config.public_token))
    for port in config.forward_ports:
        fd = config.listen_fds.get(f"port-{port}")
        if fd is not None:
            state.relays.append(UnixToTcpRelay(None, "127.0.0.1", port, listener=_adopt(fd)))
    return servers, state


if __name__ == "__main__":
    sys.exit(main())
