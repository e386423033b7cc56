"""One boot of the local desktop, top to bottom: `boot_desktop` calls each step in order.

On the host:
  1. `root_inside_for`: a root of the desktop's own (a new user namespace per boot), or why it has none
  2. `make_runtime_folder`: the boot's runtime folder, fresh, and the env folder's identity files
  3. `bind_listeners`: the sockets it will serve on, bound in the host-only folder (listeners.py)
  4. `write_session_config`: what the session inside starts, as its session.json
  5. `start_sandbox`: bwrap runs the session in the desktop's cgroup, as its own uid, under the seccomp filter
  6. `wait_until_ready`: polls the env server's /health until it says ready, failing fast when a part dies
Inside the sandbox, desktop_env/server/session.py's main() goes on, top to bottom too: the environment,
Xvfb, the system and session buses, accessibility, the desktop's components (GNOME Shell, its settings
daemons...), then the env server on the inherited sockets. What "ready" means is the session's
(server/readiness.py, from the components session.py starts).

Built once and only found here: the folders every boot mounts (build/prepare.py's DesktopParts).
Everything inside the sandbox is hostile: the harness reads its files only with O_NOFOLLOW and bounded
sizes, and never connects to a socket path the sandbox can write to.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ....controllers.transport import Endpoint, Transport
from ....errors import DesktopNotReady, DesktopPartDied, SandboxStartError
from ....server.session import SYSTEM_SERVICES, SessionConfig
from ....waiting import poll_until
from ..build.prepare import DesktopParts
from ..config import LocalDesktopConfig
from ..limits import DesktopCgroup
from ..sandbox_layout import SANDBOX_DESKTOP, SANDBOX_RUNTIME, SANDBOX_VENV
from ..system_root import SystemRoot
from . import seccomp
from .desktop_storage import OutputTail, start_command
from .env_dir import runtime_root
from .host_ids import SandboxIdentity
from .listeners import bind_listeners, close_listeners, listen_fds, socket_path
from .logs import log_tail
from .root_inside import RootInside, root_inside_for
from .sandbox import SandboxSpec, bwrap_argv, bwrap_environment, write_identity_files
from .sandbox_process import Sandbox, kill_sandbox, namespace_pids
from .server_process import ServerProcess

log = logging.getLogger("osworld.local")

HEALTH_POLL_S = 0.02


@dataclass
class Boot:
    """One boot of the desktop: its generation's sockets, and its sandbox."""
    generation: int
    listeners: dict[str, socket.socket]
    sudo_unavailable: str
    sandbox: Sandbox
    ready_s: float | None = None
    error: BaseException | None = None   # why a spare did not become ready


@dataclass(frozen=True)
class Desktop:
    """What every boot of one desktop shares: its env folder, the folders it mounts, its options, the
    uid it runs as (None: the harness's own) and its cgroup (None: no limits here)."""
    env_dir: Path
    parts: DesktopParts
    config: LocalDesktopConfig
    identity: SandboxIdentity | None
    cgroup: DesktopCgroup | None

    def spec(self, generation: int, root: RootInside | None = None) -> SandboxSpec:
        parts, limits = self.parts, self.config.limits
        return SandboxSpec(env_dir=self.env_dir, src_dir=parts.server_code, venv_dir=parts.venv,
                           desktop_dir=parts.desktop_view, network=self.config.network, generation=generation,
                           tmpfs_bytes=limits.tmpfs_bytes, disk_bytes=limits.disk_bytes,
                           home_template=parts.home_template,
                           userns_fd=root.userns_fd if root is not None and root.enabled else None,
                           vscode_dir=parts.vscode, chromium_dir=parts.chromium, settings_dir=parts.settings,
                           thunderbird_dir=parts.thunderbird, system=parts.system)

    def socket_path(self, name: str, generation: int) -> Path:
        return socket_path(self.spec(generation).sockets, name, generation)


def boot_desktop(desktop: Desktop, generation: int, reapers: list[threading.Thread]) -> Boot:
    """Boots a desktop and waits until it is ready; a boot that fails is killed before this raises (its
    reaping thread joins `reapers`)."""
    boot = start_boot(desktop, generation)
    try:
        wait_until_ready(desktop, boot)
    except BaseException:
        reaper = discard(desktop, boot)
        if reaper is not None:
            reapers.append(reaper)
        raise
    return boot


def start_boot(desktop: Desktop, generation: int) -> Boot:
    """Steps 1 to 5: returns once the sandbox runs, without waiting for the desktop to be ready."""
    runtime_root()  # checked again: the desktop's uid must still be able to enter it
    # a new namespace per boot: nothing carries over
    root = root_inside_for(desktop.env_dir, desktop.identity, desktop.parts.system)
    try:
        spec = desktop.spec(generation, root)
        make_runtime_folder(spec)
        listeners = bind_listeners(spec.sockets, generation, desktop.config.forward_ports)
        try:
            write_session_config(spec, desktop, listeners, root)
            sandbox = start_sandbox(spec, desktop, listeners, root)
        except BaseException:
            close_listeners(listeners)
            raise
        return Boot(generation, listeners, root.reason, sandbox)
    finally:
        root.close()


def make_runtime_folder(spec: SandboxSpec) -> None:
    shutil.rmtree(spec.runtime, ignore_errors=True)
    spec.runtime.mkdir(mode=0o700)
    if not (spec.env_dir / "passwd").exists():
        write_identity_files(spec)


def write_session_config(spec: SandboxSpec, desktop: Desktop, listeners: dict[str, socket.socket],
                         root: RootInside) -> None:
    """session.json: the screen, components, ports and sockets the session inside starts with."""
    config = desktop.config
    width, height = config.screen_size
    session = SessionConfig(width=width, height=height, runtime_dir=SANDBOX_RUNTIME,
                            forward_ports=list(config.forward_ports),
                            desktop_components=session_components(config.desktop_components, desktop.parts.system),
                            desktop_data=SANDBOX_DESKTOP,
                            client_password=config.client_password, listen_fds=listen_fds(listeners),
                            public_token=config.public_token)
    (spec.runtime / "session.json").write_text(json.dumps(asdict(session)))
    root.explain_absence(spec.runtime)
    if desktop.identity is not None:  # bwrap, as the desktop's uid, reaches the files it binds in there
        os.chown(spec.runtime, desktop.identity.uid, desktop.identity.gid, follow_symlinks=False)


def session_components(components: Sequence[str], system: SystemRoot) -> list[str]:
    """The components a desktop's session starts: a userland desktop's system services (SYSTEM_SERVICES) go
    right after the sound server, before the shell whose indicators ask them."""
    if system.is_host or "gnome-shell" not in components:
        return list(components)
    at = list(components).index("gnome-shell")
    return [*components[:at], *(name for name in SYSTEM_SERVICES if name not in components), *components[at:]]


def start_sandbox(spec: SandboxSpec, desktop: Desktop, listeners: dict[str, socket.socket],
                  root: RootInside) -> Sandbox:
    """bwrap running desktop_env.server.session with the server's venv, as its first process inside."""
    fds = listen_fds(listeners)
    command = root.wrap(start_command([f"{SANDBOX_VENV}/bin/python", "-m", "desktop_env.server.session",
                                       f"{SANDBOX_RUNTIME}/session.json"]), spec)
    info_read, info_write = os.pipe()
    argv = bwrap_argv(spec, command)
    argv[1:1] = ["--info-fd", str(info_write)]
    seccomp_fd = seccomp_filter()
    if seccomp_fd is not None:
        argv[1:1] = ["--seccomp", str(seccomp_fd)]
    output = OutputTail()
    started = time.monotonic()
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=output.write_fd, stderr=output.write_fd,
                                   pass_fds=(info_write, *fds.values(), *([seccomp_fd] if seccomp_fd else []),
                                             *root.pass_fds()),
                                   env=bwrap_environment(), preexec_fn=child_setup(desktop, root))
    finally:
        output.close_writer()
        os.close(info_write)
        if seccomp_fd is not None:
            os.close(seccomp_fd)
    return Sandbox(process, output, child_pid=read_child_pid(info_read), started=started)


def seccomp_filter() -> int | None:
    try:
        return seccomp.filter_fd()
    except seccomp.UnsupportedArchitecture as e:
        log.warning("desktops run without the setuid-bit filter: %s", e)
        return None


def child_setup(desktop: Desktop, root: RootInside) -> Callable[[], None] | None:
    """What the forked child does before it execs bwrap: join the desktop's cgroup and
    attach the system trees of a desktop with a root of its own (as host root, while it
    still may), then become the desktop's unprivileged uid (its root's, with a root)."""
    enter = desktop.cgroup.enter_fn() if desktop.cgroup is not None else None
    identity = desktop.identity
    attach = root.attach_fn()
    if enter is None and identity is None:
        return None
    become: tuple[int, int] | None = None  # the (uid, gid) the child takes
    if identity is not None:
        uid = root.host_uid if root.enabled else identity.uid
        assert uid is not None  # root_inside_for gives an enabled root inside its host uid
        become = (uid, identity.gid)

    def setup() -> None:
        if enter is not None:
            enter()
        if attach is not None:
            attach()
        if become is not None:
            uid, gid = become
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
    return setup


def read_child_pid(fd: int) -> int | None:
    with os.fdopen(fd, "rb") as f:
        data = f.read()  # bwrap closes the info fd once the sandbox is set up
    try:
        return int(json.loads(data)["child-pid"])
    except (ValueError, KeyError):
        return None


def wait_until_ready(desktop: Desktop, boot: Boot) -> None:
    """Step 6: polls the boot's /health until it is ready; raises SandboxStartError with the logs'
    tails when it dies, a part of it dies, or it is not ready in time (the caller discards it)."""
    sandbox = boot.sandbox
    timeout = desktop.config.start_timeout
    transport = Transport(Endpoint(unix_socket=str(desktop.socket_path("server", boot.generation))), timeout=5)
    last_error = "no answer yet"

    def ready() -> bool:
        nonlocal last_error
        if not sandbox.running():
            raise SandboxStartError(f"the sandbox exited with code {sandbox.process.returncode} "
                                    f"while starting.\n{log_tail(sandbox)}")
        try:
            health = transport.request("GET", "/health").json()
            if health.get("ready"):
                boot.ready_s = time.monotonic() - sandbox.started
                find_server(sandbox, health.get("pid"))
                return True
            last_error = f"health: {health}"
        except (OSError, ValueError) as e:
            last_error = f"{type(e).__name__}: {e}"
            health = {}
        dead = health.get("dead_processes") if isinstance(health, dict) else None
        if dead:  # nothing restarts a part of the desktop: waiting longer cannot make it ready
            codes = health.get("exit_codes") or {}
            raise DesktopPartDied(f"the desktop's {', '.join(how_it_ended(name, codes.get(name)) for name in dead)} "
                                  f"died while it started "
                                  f"({time.monotonic() - sandbox.started:.1f} s in; last: {last_error})."
                                  f"\n{log_tail(sandbox)}")
        return False

    try:
        if poll_until(ready, sandbox.started + timeout - time.monotonic(), HEALTH_POLL_S):
            return
    finally:
        transport.close()
    raise DesktopNotReady(f"the desktop was not ready after {timeout:.0f} s "
                          f"(last: {last_error}).{limits_hit(desktop.cgroup)}\n{log_tail(sandbox)}")


def limits_hit(cgroup: DesktopCgroup | None) -> str:
    """" Since its group was made, the desktop hit its memory limit of 1.0 GiB (no OOM kill)." when a limit
    was hit in any of the group's boots, else "": a part short of memory or of processes can stall a start-up
    without dying, and the logs do not say so."""
    events = cgroup.events() if cgroup is not None else None
    return f" Since its group was made, {events.describe()}." if events is not None and events.hit else ""


def how_it_ended(name: object, code: object) -> str:
    """"gnome-shell (killed by SIGSEGV)", "Xvfb (exit code 1)", or the bare name when the code is unknown."""
    if not isinstance(code, int) or isinstance(code, bool):
        return str(name)
    if code < 0:
        try:
            return f"{name} (killed by {signal.Signals(-code).name})"
        except ValueError:
            return f"{name} (killed by signal {-code})"
    return f"{name} (exit code {code})"


def find_server(sandbox: Sandbox, inner_pid: object) -> None:
    """Notes the env server's host process (from its pid inside, which it just reported, before any
    agent code ran), so that a dead or stopped server is told without asking it."""
    if isinstance(inner_pid, int):
        sandbox.server = ServerProcess.find(inner_pid, namespace_pids(sandbox))
        if sandbox.server is None:
            log.warning("the env server's process (pid %d inside) was not found among the sandbox's", inner_pid)


def kill_boot(desktop: Desktop | None, sandbox: Sandbox | None, generation: int,
              wait: bool = True) -> threading.Thread | None:
    """Kills a boot's sandbox; without `wait`, its runtime folder goes with it in the background."""
    if sandbox is None:
        return None
    folders = [] if desktop is None else [desktop.spec(generation).runtime]
    return kill_sandbox(sandbox, folders, wait)


def discard(desktop: Desktop | None, boot: Boot, wait: bool = False) -> threading.Thread | None:
    """A boot given up: its sandbox killed, its sockets closed; the thread reaping it without `wait`."""
    reaper = kill_boot(desktop, boot.sandbox, boot.generation, wait=wait)
    close_listeners(boot.listeners)
    return reaper
