"""The embedded default: a real desktop in a bubblewrap sandbox on this machine.

start -> a private env folder (the session's config), listening sockets made by the
harness in a host-only folder and handed to the sandbox as inherited fds, then bwrap
runs the session (Xvfb, D-Bus, AT-SPI, GNOME Shell, env server) in its own cgroup, as an
unprivileged host uid when the harness is root, with a home copied from the template
into capped memory (desktop_storage), and we poll /health until it answers ready.
Revert = switch to the warm spare booted meanwhile (or boot anew) and kill the old sandbox
(its PID namespace takes every app with it, and its memory the home).

Everything inside the sandbox is hostile: the harness reads its files only with
O_NOFOLLOW and bounded sizes, and never connects to a socket path the sandbox can
write to.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ...controllers.transport import Endpoint, Transport
from ...desktop_defaults import DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE
from ...errors import MissingDependency, ProviderError, SandboxStartError
from ...server.access_policy import is_loopback
from ...server.relay import TcpToUnixRelay
from ...server.session import DESKTOP_COMPONENTS, SessionConfig
from ...waiting import poll_until
from ..base import Built, DesktopOptions, Progress, Provider, progress_to_stderr
from ..leftovers import PruneResult
from .boot import seccomp
from .boot.desktop_storage import OutputTail, home_full, log_tails, start_command
from .boot.host_ids import SandboxIdentity, acquire_identity
from .boot.orphans import kill_namespace_init, kill_sandboxes_of, kill_sandboxes_without_env_dir
from .boot.root_inside import RootInside, root_inside_for
from .boot.sandbox import SandboxSpec, bwrap_argv, bwrap_environment, write_identity_files
from .boot.server_process import ServerProcess
from .build.prepare import DesktopParts, desktop_parts, prepare
from .limits import DesktopCgroup, DesktopLimits, LimitEvents, LimitOptions, prune_stale_cgroups
from .paths import runtime_root
from .sandbox_layout import SANDBOX_DESKTOP, SANDBOX_RUNTIME, SANDBOX_VENV

log = logging.getLogger("osworld.local")

VM_SERVER_PORT = 5000  # where OSWorld's client finds the env server on a VM
NAMESPACE_GONE_S = 10.0  # a killed sandbox's PID namespace is torn down within a second or two

_live: weakref.WeakSet[LocalProvider] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for provider in list(_live):
        provider.stop_emulator()


def prune_stale_env_dirs(dry_run: bool = False) -> list[Path]:
    """Removes env folders whose owning harness process is gone (it was killed with -9); returns them
    (with `dry_run`, removes nothing).

    Their sandboxes should have died with their owner (--die-with-parent); any that did not is
    killed first (orphans.py).
    """
    removed = []
    if not dry_run:
        killed = kill_sandboxes_without_env_dir(runtime_root())
        if killed:
            log.warning("killed %d sandbox processes whose env folder was already removed: %s", len(killed), killed)
    for env_dir in runtime_root().glob("env-*"):
        try:
            owner = int((env_dir / "owner.pid").read_text())
        except (OSError, ValueError):
            continue  # being created right now, or not ours
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            if not dry_run:
                killed = kill_sandboxes_of(env_dir)
                if killed:
                    log.warning("killed %d sandbox processes that outlived their harness (pid %d): %s",
                                len(killed), owner, killed)
                shutil.rmtree(env_dir, ignore_errors=True)
            removed.append(env_dir)
        except PermissionError:
            pass  # alive, owned by someone else
    return removed


# How much of the desktop's logs a failed task keeps (desktop_logs): the last 8 KiB of each of
# the first 16 logs by name.
SAVED_LOG_BYTES = 8 * 1024
SAVED_LOGS = 16


@dataclass
class LocalDesktopConfig:
    screen_size: tuple[int, int] = DEFAULT_SCREEN_SIZE
    network: bool = False
    client_password: str = DEFAULT_PASSWORD
    forward_ports: tuple[int, ...] = (9222, 8080)
    desktop_components: tuple[str, ...] = DESKTOP_COMPONENTS
    start_timeout: float = 60.0
    # Boot the next desktop while a task runs on this one, so that a reset is a switch to a
    # ready desktop (GNOME Shell takes seconds to start). Costs one idle desktop's memory and
    # a boot's CPU. True: from the start; "lazy": from the first revert on, so that a desktop
    # used for one task only (a one-task run, a test) never pays for a spare it would not use,
    # while a runner's worker pays one cold boot (its second task's) per run. DesktopEnv,
    # which resets once per task, asks for "lazy".
    warm_spare: bool | Literal["lazy"] = False
    limits: DesktopLimits = field(default_factory=DesktopLimits)
    # Required of every request on the public (TCP) listener when set; `expose_server`
    # refuses a non-loopback address without one.
    public_token: str | None = None


@dataclass
class _Sandbox:
    process: subprocess.Popen
    output: OutputTail      # the last of what it wrote to its stdout and stderr
    child_pid: int | None = None
    started: float = field(default_factory=time.monotonic)
    server: ServerProcess | None = None  # its env server's process, once it answered ready


@dataclass
class _Boot:
    """One boot of the desktop: its generation's folders and sockets, and its sandbox."""
    generation: int
    listeners: dict[str, socket.socket]
    sudo_unavailable: str
    sandbox: _Sandbox
    ready_s: float | None = None
    error: BaseException | None = None   # why a spare did not become ready


class LocalProvider(Provider):
    Options = LimitOptions

    @classmethod
    def from_options(cls, desktop: DesktopOptions, **options: Any) -> LocalProvider:
        """A desktop of the run's screen size, network and password, with the limits of its own options.
        A desktop made this way resets once per task (DesktopEnv): its warm spare is "lazy" unless asked."""
        own = desktop.own if isinstance(desktop.own, LimitOptions) else LimitOptions()
        made: dict[str, Any] = {"screen_size": desktop.screen_size, "network": desktop.network,
                                "client_password": desktop.client_password, "limits": own.limits(),
                                "warm_spare": "lazy"}
        return cls(**{**made, **options})

    @classmethod
    def prepare(cls, tasks: Sequence[dict[str, Any]] | None = None, extras: Collection[str] = (),
                retry: bool = False, progress: Progress = progress_to_stderr) -> list[Built]:
        """What every desktop mounts, then the VM's apps the tasks use (prepare.py): VS Code, when a task uses
        it, Chromium 120 (the VM's era of Chrome), when a task uses Chrome, and GNOME Settings 41 (the VM's)
        for every run, for any task may open Settings from the system menu. An app that cannot be installed
        does not stop a run: each task that runs `code` then ends as an error record whose message says VS
        Code is not installed, Chrome's tasks run on the system's Chromium and desktops on its Settings."""
        return prepare(tasks, extras, retry, progress)

    @classmethod
    def prune(cls, dry_run: bool = False, tool: str | None = None) -> PruneResult:
        """Removes the env folders of dead harnesses, killing any sandbox of theirs still running."""
        return PruneResult(env_dirs_removed=[str(path) for path in prune_stale_env_dirs(dry_run=dry_run)])

    def __init__(self, screen_size: tuple[int, int] = DEFAULT_SCREEN_SIZE, network: bool = False,
                 client_password: str = DEFAULT_PASSWORD, config: LocalDesktopConfig | None = None,
                 limits: DesktopLimits | None = None, warm_spare: bool | Literal["lazy"] = False, **_ignored):
        if config is None:
            width, height = screen_size  # a list, too, from a JSON config
            config = LocalDesktopConfig(screen_size=(width, height), network=network, client_password=client_password,
                                        limits=limits or DesktopLimits(), warm_spare=warm_spare)
        self.config = config
        self.env_dir: Path | None = None
        self._parts: DesktopParts  # what it mounts, found at each start
        self._sandbox: _Sandbox | None = None
        # (socket name, host, port) -> relay; the name says which of this boot's sockets it reaches
        self._relays: dict[tuple[str, str, int], TcpToUnixRelay] = {}
        self._listeners: dict[str, socket.socket] = {}  # the current boot's
        self._identity: SandboxIdentity | None = None
        self.sudo_unavailable = ""  # why `sudo` fails inside this desktop ("" when it works)
        self._cgroup: DesktopCgroup | None = None
        self._cgroup_tried = False
        self._limit_baseline = LimitEvents()
        self._generation = 0
        self._next_generation = 1
        self._spare: _Boot | None = None
        self._spare_thread: threading.Thread | None = None
        self._spare_wanted = config.warm_spare is True  # "lazy" turns it on at the first revert
        self._reapers: list[threading.Thread] = []
        self._lock = threading.RLock()
        self.last_ready_s: float | None = None   # how long the current desktop took to boot
        self.last_reset_s: float | None = None   # how long the last reset took as its caller saw it

    # -- Provider interface ---------------------------------------------------------------
    def start_emulator(self, path_to_vm: str | None = None, headless: bool = True, os_type: str = "Ubuntu") -> None:
        self.create()

    def create(self, path_to_vm: str | None = None) -> None:
        """Boots the desktop, unless it runs already."""
        with self._lock:
            if self._sandbox is not None and self._sandbox.process.poll() is None:
                return
            if shutil.which("bwrap") is None:
                raise MissingDependency("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
            if shutil.which("Xvfb") is None:
                raise MissingDependency("Xvfb is not installed: apt-get install xvfb")
            self._parts = desktop_parts()
            if self.env_dir is None:
                self._create_env_dir()
            self._boot()

    def _create_env_dir(self) -> None:
        prune_stale_env_dirs()
        prune_stale_cgroups()
        root = runtime_root()
        if os.geteuid() == 0:
            self._identity = acquire_identity(root)
        self.env_dir = Path(tempfile.mkdtemp(prefix="env-", dir=root))
        _live.add(self)
        if self._identity is not None:
            # The desktop's uid must reach its home and runtime folders when bwrap binds them.
            os.chown(self.env_dir, -1, self._identity.gid)
            os.chmod(self.env_dir, 0o710)
        (self.env_dir / "owner.pid").write_text(str(os.getpid()))
        self.spec.sockets.mkdir(mode=0o700)

    def _make_listeners(self, generation: int) -> dict[str, socket.socket]:
        """The sockets a boot's desktop serves on, bound here in a folder only the harness
        can enter. The sandbox gets the listening fds; it never sees (or can replace) the files.
        New ones per boot: the previous desktop's server may live on for a moment after a
        reset and must not answer for the new one."""
        listeners = {}
        for name in ("server", "public", *(f"port-{port}" for port in self.config.forward_ports)):
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(self.socket_path(name, generation)))
            listener.listen(128)
            listeners[name] = listener
        return listeners

    @staticmethod
    def _close_listeners(listeners: dict[str, socket.socket]) -> None:
        for listener in listeners.values():
            path = listener.getsockname()
            listener.close()
            if path:
                with contextlib.suppress(OSError):
                    os.unlink(path)
        listeners.clear()

    def socket_path(self, name: str, generation: int | None = None) -> Path:
        """A boot's (by default the current one's) socket `name` ("server", "public" or
        "port-<n>") in the host-only folder."""
        return self.spec.sockets / f"{name}-{self._generation if generation is None else generation}.sock"

    def get_ip_address(self, path_to_vm: str | None = None) -> Endpoint:
        if self.env_dir is None:
            raise SandboxStartError("the local desktop is not started; call start_emulator() first")
        return Endpoint(unix_socket=str(self.socket_path("server")))

    def save_state(self, path_to_vm: str | None = None, snapshot_name: str = "init_state") -> None:
        raise NotImplementedError("the local provider always reverts to its home template; snapshots are not saved")

    def revert_to_snapshot(self, path_to_vm: str | None = None, snapshot_name: str = "init_state") -> None:
        with self._lock:
            if self.env_dir is None:
                self.start_emulator()
                return None
            started = time.monotonic()
            self._spare_wanted = self._spare_wanted or self.config.warm_spare == "lazy"
            self._kill(self._sandbox, self._generation, wait=False)
            self._sandbox = None
            spare = self._take_spare()
            if spare is not None and spare.error is None and spare.sandbox.process.poll() is None:
                self._make_current(spare)
                self._start_spare()
            else:
                if spare is not None:
                    why = spare.error or f"its sandbox exited with code {spare.sandbox.process.returncode}"
                    log.warning("the spare desktop is not usable (%s); booting a new one", why)
                    self._discard(spare)
                self._boot()
            self.last_reset_s = time.monotonic() - started
        return None

    def stop_emulator(self, path_to_vm: str | None = None) -> None:
        with self._lock:
            for relay in self._relays.values():
                relay.close()
            self._relays.clear()
            spare = self._take_spare(kill=True)
            if spare is not None:
                self._discard(spare, wait=True)
            self._kill(self._sandbox, self._generation, wait=True)
            self._sandbox = None
            for reaper in self._reapers:
                reaper.join()
            self._reapers.clear()
            self._close_listeners(self._listeners)
            if self._cgroup is not None:
                self._cgroup.remove()
                self._cgroup, self._cgroup_tried = None, False
            if self.env_dir is not None:
                shutil.rmtree(self.env_dir, ignore_errors=True)
                self.env_dir = None
            if self._identity is not None:
                self._identity.release()
                self._identity = None
            _live.discard(self)

    def service_endpoint(self, port: int) -> tuple[str, int]:
        """A loopback TCP port on the host that reaches `port` inside the sandbox."""
        with self._lock:
            if port not in self.config.forward_ports:
                raise SandboxStartError(f"port {port} is not forwarded; forward_ports={self.config.forward_ports}")
            key = (f"port-{port}", "127.0.0.1", 0)
            if key not in self._relays:
                self._relays[key] = self._relay(*key)
            relay = self._relays[key]
            return relay.host, relay.port

    def expose_server(self, port: int = 0, host: str = "127.0.0.1") -> tuple[str, int]:
        """Serves the desktop's public listener on host:port over TCP (port 0 picks a free one).

        The public listener holds requests to what a browser cannot forge cross-site. On a
        loopback address only this user's (and root's) processes are relayed; any other
        address needs `public_token`, which clients then send with every request."""
        loopback = is_loopback(host)
        if not loopback and not self.config.public_token:
            raise ProviderError(f"refusing to serve the desktop on {host}, which is not a loopback address, "
                                "without a token: set a public token (osworld env serve --token)")
        with self._lock:
            key = ("public", host, port)
            if key not in self._relays:
                self._relays[key] = self._relay(*key)
            relay = self._relays[key]
            return relay.host, relay.port

    def expose_like_vm(self, address: str = "auto") -> str:
        """Serves the desktop the way an OSWorld VM is reached: the env server at address:5000,
        and each forwarded service (Chrome's DevTools 9222, VLC's HTTP 8080) at its own port
        number, so upstream clients that connect to vm_ip:9222 work unchanged. Loopback only
        (those services have no authentication of their own); "auto" takes the first
        127.0.0.N (N >= 2) where every port is free. Returns the address."""
        candidates = [f"127.0.0.{n}" for n in range(2, 255)] if address == "auto" else [address]
        names = [("public", VM_SERVER_PORT), *((f"port-{p}", p) for p in self.config.forward_ports)]
        for candidate in candidates:
            if not is_loopback(candidate):
                raise ProviderError(f"a VM-like address must be a loopback address (127.x.y.z), got {candidate}: "
                                    "Chrome's and VLC's ports have no authentication of their own")
            made = []
            try:
                with self._lock:
                    for name, port in names:
                        key = (name, candidate, port)
                        self._relays[key] = self._relay(*key)
                        made.append(key)
                return candidate
            except OSError as e:
                with self._lock:
                    for key in made:
                        self._relays.pop(key).close()
                if address != "auto":
                    raise ProviderError(f"cannot serve the desktop at {candidate}: {e}") from None
        raise ProviderError("no loopback address 127.0.0.2-254 has ports "
                            f"{', '.join(str(p) for _, p in names)} all free")

    def _relay(self, name: str, host: str, port: int) -> TcpToUnixRelay:
        """A TCP port on the host reaching this boot's socket `name`; on loopback only this
        user's (and root's) processes get through."""
        return TcpToUnixRelay(str(self.socket_path(name)), host, port,
                              allowed_uids=self._local_clients() if is_loopback(host) else None)

    @staticmethod
    def _local_clients() -> frozenset[int]:
        return frozenset({os.getuid(), 0})

    def resource_limit_hit(self) -> str:
        """One sentence naming the limits this desktop hit since its last reset, or "".

        Only what takes something away from the desktop counts: an OOM kill, a refused
        fork, or a home folder left full (a write failed, or will). Memory use reaching the
        limit alone is the kernel reclaiming page cache."""
        sentences = []
        if self._cgroup is not None:
            now, before = self._cgroup.events(), self._limit_baseline
            since = replace(now, oom_kills=now.oom_kills - before.oom_kills, memory_max_hits=0,
                            pids_max_hits=now.pids_max_hits - before.pids_max_hits)
            sentences.append(since.describe())
        sandbox = self._sandbox
        if sandbox is not None and sandbox.child_pid is not None and sandbox.process.poll() is None:
            sentences.append(home_full(sandbox.child_pid, self.config.limits.disk_bytes))
        return "; ".join(s for s in sentences if s)

    # -- inspection -------------------------------------------------------------------------
    @property
    def spec(self) -> SandboxSpec:
        """The current boot's sandbox."""
        return self._spec(self._generation)

    def _spec(self, generation: int, root: RootInside | None = None) -> SandboxSpec:
        assert self.env_dir is not None
        parts = self._parts
        return SandboxSpec(env_dir=self.env_dir, src_dir=parts.server_code, venv_dir=parts.venv,
                           desktop_dir=parts.desktop_view, network=self.config.network, generation=generation,
                           tmpfs_bytes=self.config.limits.tmpfs_bytes, disk_bytes=self.config.limits.disk_bytes,
                           home_template=parts.home_template,
                           userns_fd=root.userns_fd if root is not None and root.enabled else None,
                           vscode_dir=parts.vscode, chromium_dir=parts.chromium, settings_dir=parts.settings)

    def wait_for_spare(self) -> float | None:
        """Waits until the warm spare has finished booting; its boot time in seconds (None
        without a spare, or when it failed)."""
        thread, spare = self._spare_thread, self._spare
        if thread is not None:
            thread.join()
        return spare.ready_s if spare is not None and spare.error is None else None

    def spare_process_ids(self) -> list[int]:
        """Host PIDs of the warm spare's sandbox (empty while none is booted)."""
        spare = self._spare
        if spare is None:
            return []
        return _namespace_pids(spare.sandbox)

    def process_ids(self) -> list[int]:
        """Host PIDs of every process in this sandbox (its PID namespace), bwrap included."""
        if self._sandbox is None:
            return []
        return _namespace_pids(self._sandbox)

    def is_running(self) -> bool:
        return self._sandbox is not None and self._sandbox.process.poll() is None

    def server_gone(self) -> str:
        """Why this desktop's env server is known gone, from its processes on the host: the sandbox
        exited, or the server died or was stopped; "" while it runs (or between boots)."""
        sandbox = self._sandbox
        if sandbox is None:
            return ""
        status = sandbox.process.poll()
        if status is not None:
            return f"the desktop's sandbox exited with status {status}"
        return sandbox.server.gone() if sandbox.server is not None else ""

    # -- internals --------------------------------------------------------------------------
    def _boot(self) -> None:
        """Boots a desktop and makes it the current one (then starts the next one's spare)."""
        boot = self._launch(self._take_generation())
        try:
            self._wait_ready(boot)
        except BaseException:
            self._discard(boot)
            raise
        self._make_current(boot)
        self._start_spare()

    def _take_generation(self) -> int:
        generation, self._next_generation = self._next_generation, self._next_generation + 1
        return generation

    def _make_current(self, boot: _Boot) -> None:
        self._close_listeners(self._listeners)
        self._sandbox, self._generation, self._listeners = boot.sandbox, boot.generation, boot.listeners
        self.sudo_unavailable = boot.sudo_unavailable
        self.last_ready_s = boot.ready_s
        for (name, _, _), relay in self._relays.items():  # host-side forwards follow this boot's sockets
            relay.socket_path = str(self.socket_path(name))
        if self._cgroup is not None:
            self._limit_baseline = self._cgroup.events()

    def _start_spare(self) -> None:
        """Boots the next desktop, to be switched to at the next reset, and waits for it in
        the background. The sandbox is started here, in the caller's thread: bwrap dies with
        the thread that started it (--die-with-parent), and a waiting thread ends."""
        if not self._spare_wanted:
            return
        generation = self._take_generation()
        try:
            spare = self._launch(generation)
        except Exception as e:  # recorded; the next reset boots a desktop itself
            log.warning("cannot start the spare desktop: %s", e)
            return
        self._spare = spare

        def wait_for_spare() -> None:
            try:
                self._wait_ready(spare)
            except Exception as e:
                spare.error = e

        self._spare_thread = threading.Thread(target=wait_for_spare, name="spare-desktop", daemon=True)
        self._spare_thread.start()

    def _take_spare(self, kill: bool = False) -> _Boot | None:
        """The spare desktop once its boot has finished (ready or not), or None. With `kill`,
        a spare still booting is killed rather than waited for."""
        thread, self._spare_thread = self._spare_thread, None
        if kill and self._spare is not None:
            with contextlib.suppress(OSError):
                self._spare.sandbox.process.kill()
        if thread is not None:
            thread.join()
        spare, self._spare = self._spare, None
        return spare

    def _discard(self, boot: _Boot, wait: bool = False) -> None:
        self._kill(boot.sandbox, boot.generation, wait=wait)
        self._close_listeners(boot.listeners)

    def _launch(self, generation: int) -> _Boot:
        """Starts the sandbox of a new boot (home restored, sockets bound); returns without
        waiting for the desktop to be ready."""
        runtime_root()  # checked again: the desktop's uid must still be able to enter it
        assert self.env_dir is not None  # boots follow start_emulator()'s _create_env_dir()
        root = root_inside_for(self.env_dir, self._identity)  # a new namespace per boot: nothing carries over
        try:
            return self._launch_sandbox(generation, root)
        finally:
            root.close()

    def _launch_sandbox(self, generation: int, root: RootInside) -> _Boot:
        spec = self._spec(generation, root)
        owner = (self._identity.uid, self._identity.gid) if self._identity is not None else None
        shutil.rmtree(spec.runtime, ignore_errors=True)
        spec.runtime.mkdir(mode=0o700)
        if not (spec.env_dir / "passwd").exists():
            write_identity_files(spec)
        listeners = self._make_listeners(generation)
        fds = {name: listener.fileno() for name, listener in listeners.items()}
        width, height = self.config.screen_size
        session = SessionConfig(width=width, height=height, runtime_dir=SANDBOX_RUNTIME,
                                forward_ports=list(self.config.forward_ports),
                                desktop_components=list(self.config.desktop_components),
                                desktop_data=SANDBOX_DESKTOP,
                                client_password=self.config.client_password, listen_fds=fds,
                                public_token=self.config.public_token)
        (spec.runtime / "session.json").write_text(json.dumps(asdict(session)))
        root.explain_absence(spec.runtime)
        if owner is not None:  # bwrap, as the desktop's uid, reaches the files it binds in there
            os.chown(spec.runtime, *owner, follow_symlinks=False)
        command = root.wrap(start_command([f"{SANDBOX_VENV}/bin/python", "-m", "desktop_env.server.session",
                                           f"{SANDBOX_RUNTIME}/session.json"]), spec)
        info_read, info_write = os.pipe()
        argv = bwrap_argv(spec, command)
        argv[1:1] = ["--info-fd", str(info_write)]
        seccomp_fd = self._seccomp_filter()
        if seccomp_fd is not None:
            argv[1:1] = ["--seccomp", str(seccomp_fd)]
        output = OutputTail()
        started = time.monotonic()
        try:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=output.write_fd, stderr=output.write_fd,
                                       pass_fds=(info_write, *fds.values(), *([seccomp_fd] if seccomp_fd else []),
                                                 *root.pass_fds()),
                                       env=bwrap_environment(), preexec_fn=self._child_setup(root))
        except BaseException:
            self._close_listeners(listeners)
            raise
        finally:
            output.close_writer()
            os.close(info_write)
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        sandbox = _Sandbox(process, output, started=started)
        sandbox.child_pid = self._read_child_pid(info_read)
        return _Boot(generation, listeners, root.reason, sandbox)

    @staticmethod
    def _seccomp_filter() -> int | None:
        try:
            return seccomp.filter_fd()
        except seccomp.UnsupportedArchitecture as e:
            log.warning("desktops run without the setuid-bit filter: %s", e)
            return None

    def _desktop_cgroup(self) -> DesktopCgroup | None:
        """One cgroup per desktop, kept across resets (its counters then cover every episode
        since creation; `resource_limit_hit` is read by the runner per task)."""
        if not self._cgroup_tried:
            assert self.env_dir is not None  # called by _launch(), which checked
            self._cgroup_tried = True
            self._cgroup = DesktopCgroup.create(self.env_dir.name, self.config.limits)
        return self._cgroup

    def _child_setup(self, root: RootInside):
        """What the forked child does before it execs bwrap: join the desktop's cgroup and
        attach the system trees of a desktop with a root of its own (as host root, while it
        still may), then become the desktop's unprivileged uid (its root's, with a root)."""
        cgroup = self._desktop_cgroup()
        enter = cgroup.enter_fn() if cgroup is not None else None
        identity = self._identity
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

    @staticmethod
    def _read_child_pid(fd: int) -> int | None:
        with os.fdopen(fd, "rb") as f:
            data = f.read()  # bwrap closes the info fd once the sandbox is set up
        try:
            return int(json.loads(data)["child-pid"])
        except (ValueError, KeyError):
            return None

    def _wait_ready(self, boot: _Boot) -> None:
        """Polls the boot's /health until it is ready; raises SandboxStartError with the logs'
        tails when it dies, a part of it dies, or it is not ready in time (the caller discards it)."""
        sandbox = boot.sandbox
        transport = Transport(Endpoint(unix_socket=str(self.socket_path("server", boot.generation))), timeout=5)
        last_error = "no answer yet"

        def ready() -> bool:
            nonlocal last_error
            if sandbox.process.poll() is not None:
                raise SandboxStartError(f"the sandbox exited with code {sandbox.process.returncode} "
                                        f"while starting.\n{self._log_tail(sandbox)}")
            try:
                health = transport.request("GET", "/health").json()
                if health.get("ready"):
                    boot.ready_s = time.monotonic() - sandbox.started
                    self._find_server(sandbox, health.get("pid"))
                    return True
                last_error = f"health: {health}"
            except (OSError, ValueError) as e:
                last_error = f"{type(e).__name__}: {e}"
                health = {}
            dead = health.get("dead_processes") if isinstance(health, dict) else None
            if dead:  # nothing restarts a part of the desktop: waiting longer cannot make it ready
                tail = self._log_tail(sandbox)
                raise SandboxStartError(f"the desktop's {', '.join(map(str, dead))} died while it started "
                                        f"({time.monotonic() - sandbox.started:.1f} s in; last: {last_error})."
                                        f"\n{tail}")
            return False

        try:
            if poll_until(ready, sandbox.started + self.config.start_timeout - time.monotonic(), 0.02):
                return
        finally:
            transport.close()
        raise SandboxStartError(f"the desktop was not ready after {self.config.start_timeout:.0f} s "
                                f"(last: {last_error}).\n{self._log_tail(sandbox)}")

    @staticmethod
    def _find_server(sandbox: _Sandbox, inner_pid: object) -> None:
        """Notes the env server's host process (from its pid inside, which it just reported, before any
        agent code ran), so that `server_gone` can tell a dead or stopped server without asking it."""
        if isinstance(inner_pid, int):
            sandbox.server = ServerProcess.find(inner_pid, _namespace_pids(sandbox))
            if sandbox.server is None:
                log.warning("the env server's process (pid %d inside) was not found among the sandbox's", inner_pid)

    def desktop_logs(self) -> dict[str, str]:
        sandbox = self._sandbox
        if sandbox is None or sandbox.child_pid is None or sandbox.process.poll() is not None:
            return {}
        return log_tails(sandbox.child_pid, limit=SAVED_LOG_BYTES, max_files=SAVED_LOGS)

    @staticmethod
    def _log_tail(sandbox: _Sandbox, lines: int = 15) -> str:
        """The last lines of the sandbox's output and, while it runs, of each of the session's logs
        (they live in the sandbox's memory: read them before it is killed)."""
        sandbox.output.wait(0.5 if sandbox.process.poll() is not None else 0)  # what a dead one wrote last
        texts = {"sandbox output": sandbox.output.text()}
        if sandbox.child_pid is not None and sandbox.process.poll() is None:
            texts.update(log_tails(sandbox.child_pid))
        out = []
        for name, text in texts.items():
            last = text.strip().splitlines()[-lines:]
            if last:
                out.append(f"--- {name} ---\n" + "\n".join(last))
        return "\n".join(out)

    def _kill(self, sandbox: _Sandbox | None, generation: int, wait: bool = True) -> None:
        """Kills a boot's sandbox. Without `wait`, reaping it and deleting its folders happen
        in the background (the kernel takes a second or two to tear down a PID namespace)."""
        if sandbox is None:
            return
        if sandbox.process.poll() is None:
            sandbox.process.send_signal(signal.SIGKILL)
        if sandbox.child_pid is not None:
            # the sandbox's init is killed too rather than trusted to die with bwrap (orphans.py);
            # the kernel then kills every process left in its PID namespace
            kill_namespace_init(sandbox.child_pid)
        spec = None if self.env_dir is None else self._spec(generation)
        folders = [] if spec is None else [spec.runtime]

        def reap() -> None:
            sandbox.process.wait()
            if sandbox.child_pid is not None:
                poll_until(lambda: not os.path.exists(f"/proc/{sandbox.child_pid}"), NAMESPACE_GONE_S, 0.01)
            if not wait:
                for folder in folders:
                    if folder.is_dir():
                        shutil.rmtree(folder, ignore_errors=True)
                    else:
                        folder.unlink(missing_ok=True)

        if wait:
            reap()
        else:
            reaper = threading.Thread(target=reap, name="sandbox-reaper", daemon=True)
            reaper.start()
            self._reapers = [r for r in self._reapers if r.is_alive()] + [reaper]


def _namespace_pids(sandbox: _Sandbox) -> list[int]:
    """Host PIDs of every process in a sandbox's PID namespace, bwrap included."""
    if sandbox.child_pid is None:
        return []
    try:
        namespace = os.readlink(f"/proc/{sandbox.child_pid}/ns/pid")
    except OSError:
        return []
    pids = [sandbox.process.pid]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") == namespace:
                    pids.append(int(entry))
            except OSError:
                continue
    return sorted(set(pids))

