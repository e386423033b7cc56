"""The embedded default: a real desktop in a bubblewrap sandbox on this machine.

The life cycle: `prepare` builds what is built once (build/prepare.py's one list), `create` boots one
desktop (boot/sequence.py, top to bottom), `prune` removes the env folders of harnesses killed with -9.
A revert switches to the warm spare booted meanwhile (or boots anew) and kills the old sandbox: its PID
namespace takes every app with it, and its memory the home. This class keeps the desktop's state across
boots (its env folder, uid, cgroup, current boot, spare and relays); the modules of build/ and boot/ do
the work.
"""
from __future__ import annotations

import atexit
import logging
import shutil
import socket
import threading
import time
import weakref
from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from ...controllers.transport import Endpoint
from ...desktop_defaults import DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE
from ...errors import DesktopNotReady, DesktopPartDied, MissingDependency, ProviderError, SandboxStartError
from ...server.access_policy import is_loopback
from ...waiting import poll_until
from ..base import Built, DesktopOptions, DesktopVersions, Progress, Provider, progress_to_stderr
from ..leftovers import PruneResult
from .boot.desktop_storage import copy_home_caches, home_full
from .boot.env_dir import create_env_dir, prune_stale_env_dirs
from .boot.listeners import close_listeners
from .boot.logs import saved_logs
from .boot.relays import Relays
from .boot.sandbox import SandboxSpec
from .boot.sandbox_process import Sandbox, namespace_pids
from .boot.sequence import Boot, Desktop, boot_desktop, discard, kill_boot, start_boot, wait_until_ready
from .boot.warm_spare import WarmSpare
from .build.prepare import desktop_parts, prepare
from .build.seeded_home import CACHES, MAX_SEED_BYTES
from .config import LocalDesktopConfig
from .desktop_versions import desktop_versions
from .limits import DesktopCgroup, DesktopLimits, LimitEvents, LimitOptions

log = logging.getLogger("osworld.local")

# How long the clean boot that seeds the start-up caches may take to stop writing them (2-3 s here).
START_UP_SETTLE_TIMEOUT_S = 20.0

_live: weakref.WeakSet[LocalProvider] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for provider in list(_live):
        provider.stop_emulator()


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
        """What every desktop mounts, then the VM's apps the tasks use (build/prepare.py): VS Code, when a
        task uses it, Chromium 120 (the VM's era of Chrome), when a task uses Chrome, and GNOME Settings 41
        (the VM's) for every run, for any task may open Settings from the system menu. An app that cannot be
        installed does not stop a run: each task that runs `code` then ends as an error record whose message
        says VS Code is not installed, Chrome's tasks run on the system's Chromium and desktops on its
        Settings."""
        return prepare(tasks, extras, retry, progress, fill_caches=_start_up_caches_of_a_clean_boot)

    @classmethod
    def desktop_versions(cls) -> DesktopVersions:
        """The apps of the system desktops boot from (the host's, or the Ubuntu 22.04 tree's), with Chromium 120
        and code-server where they are built (desktop_versions.py)."""
        return desktop_versions()

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
        self._desktop: Desktop | None = None  # what every boot shares, from the first boot to stop_emulator()
        self._sandbox: Sandbox | None = None  # the current boot's
        self._generation = 0
        self._next_generation = 1
        self._listeners: dict[str, socket.socket] = {}  # the current boot's
        self.sudo_unavailable = ""  # why `sudo` fails inside this desktop ("" when it works)
        self._limit_baseline = LimitEvents()
        self._lock = threading.RLock()
        self._relays = Relays(self.socket_path, self._lock)
        self._spare = WarmSpare()
        self._spare_wanted = config.warm_spare is True  # "lazy" turns it on at the first revert
        self._another_reset_expected = True  # none after a run's last task: no spare boots for nobody
        self._reapers: list[threading.Thread] = []
        self.last_ready_s: float | None = None   # how long the current desktop took to boot
        self.last_reset_s: float | None = None   # how long the last reset took as its caller saw it

    # -- life cycle -------------------------------------------------------------------------
    def start_emulator(self, path_to_vm: str | None = None, headless: bool = True, os_type: str = "Ubuntu") -> None:
        self.create()

    def create(self, path_to_vm: str | None = None) -> None:
        """Boots the desktop, unless it runs already."""
        with self._lock:
            if self._sandbox is not None and self._sandbox.running():
                return
            if shutil.which("bwrap") is None:
                raise MissingDependency("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
            if shutil.which("Xvfb") is None:
                raise MissingDependency("Xvfb is not installed: apt-get install xvfb")
            parts = desktop_parts()
            if self._desktop is None:
                env_dir, identity = create_env_dir()
                self.env_dir = env_dir
                _live.add(self)
                self._desktop = Desktop(env_dir, parts, self.config, identity,
                                        DesktopCgroup.create(env_dir.name, self.config.limits))
            else:
                self._desktop = replace(self._desktop, parts=parts)
            self._boot()

    def revert_to_snapshot(self, path_to_vm: str | None = None, snapshot_name: str = "init_state") -> None:
        with self._lock:
            if self._desktop is None:
                self.start_emulator()
                return None
            started = time.monotonic()
            self._spare_wanted = self._spare_wanted or self.config.warm_spare == "lazy"
            self._track(kill_boot(self._desktop, self._sandbox, self._generation, wait=False))
            self._sandbox = None
            spare = self._spare.take()
            if spare is not None and spare.error is None and spare.sandbox.running():
                self._make_current(spare)
                self._start_spare(eager_only=True)
            else:
                if spare is not None:
                    why = spare.error or f"its sandbox exited with code {spare.sandbox.process.returncode}"
                    log.warning("the spare desktop is not usable (%s); booting a new one", why)
                    self._track(discard(self._desktop, spare))
                self._boot()
            self.last_reset_s = time.monotonic() - started
        return None

    def stop_emulator(self, path_to_vm: str | None = None) -> None:
        with self._lock:
            self._relays.close()
            spare = self._spare.take(kill=True)
            if spare is not None:
                discard(self._desktop, spare, wait=True)
            kill_boot(self._desktop, self._sandbox, self._generation, wait=True)
            self._sandbox = None
            for reaper in self._reapers:
                reaper.join()
            self._reapers.clear()
            close_listeners(self._listeners)
            desktop, self._desktop = self._desktop, None
            if desktop is not None and desktop.cgroup is not None:
                desktop.cgroup.remove()
            # self.env_dir, not the desktop's: the same folder, also when create() failed after making it
            if self.env_dir is not None:
                shutil.rmtree(self.env_dir, ignore_errors=True)
            if desktop is not None and desktop.identity is not None:
                desktop.identity.release()
            self.env_dir = None
            _live.discard(self)

    def save_state(self, path_to_vm: str | None = None, snapshot_name: str = "init_state") -> None:
        raise NotImplementedError("the local provider always reverts to its home template; snapshots are not saved")

    # -- boots ------------------------------------------------------------------------------
    def _boot(self) -> None:
        """Boots a desktop and makes it the current one (then starts the next one's spare). A boot that a part
        of the desktop died in, or that was not ready in time, is tried once more: GNOME Shell has crashed in
        its first second about once in a thousand boots here (the next boot came up), and once stalled for the
        whole start timeout with nothing in its log. A second such failure is raised."""
        assert self._desktop is not None
        try:
            boot = boot_desktop(self._desktop, self._take_generation(), self._reapers)
        except (DesktopPartDied, DesktopNotReady) as first:
            log.warning("booting the desktop once more: %s", str(first).partition("\n")[0])
            boot = boot_desktop(self._desktop, self._take_generation(), self._reapers)
        self._make_current(boot)
        self._start_spare(eager_only=True)

    def _take_generation(self) -> int:
        generation, self._next_generation = self._next_generation, self._next_generation + 1
        return generation

    def _make_current(self, boot: Boot) -> None:
        close_listeners(self._listeners)
        self._sandbox, self._generation, self._listeners = boot.sandbox, boot.generation, boot.listeners
        self.sudo_unavailable = boot.sudo_unavailable
        self.last_ready_s = boot.ready_s
        self._relays.follow()  # host-side forwards follow this boot's sockets
        if self._desktop is not None and self._desktop.cgroup is not None:
            self._limit_baseline = self._desktop.cgroup.events()

    def expect_another_reset(self, expected: bool) -> None:
        self._another_reset_expected = expected

    def agent_started(self) -> None:
        """A lazy spare boots now, while the agent thinks (see LocalDesktopConfig.warm_spare)."""
        with self._lock:
            if self._spare.boot is None and self._sandbox is not None:
                self._start_spare()

    def _start_spare(self, eager_only: bool = False) -> None:
        """Boots the spare if one is wanted; with `eager_only`, only when it is wanted from the start
        (warm_spare=True): a lazy one waits for agent_started."""
        if eager_only and self.config.warm_spare is not True:
            return
        if self._spare_wanted and self._another_reset_expected and self._desktop is not None:
            desktop, generation = self._desktop, self._take_generation()
            self._spare.start(lambda: start_boot(desktop, generation), lambda boot: wait_until_ready(desktop, boot))

    def _track(self, reaper: threading.Thread | None) -> None:
        if reaper is not None:
            self._reapers = [r for r in self._reapers if r.is_alive()] + [reaper]

    # -- reaching the desktop ---------------------------------------------------------------
    def get_ip_address(self, path_to_vm: str | None = None) -> Endpoint:
        if self.env_dir is None:
            raise SandboxStartError("the local desktop is not started; call start_emulator() first")
        return Endpoint(unix_socket=str(self.socket_path("server")))

    def socket_path(self, name: str, generation: int | None = None) -> Path:
        """A boot's (by default the current one's) socket `name` ("server", "public" or
        "port-<n>") in the host-only folder."""
        assert self._desktop is not None
        return self._desktop.socket_path(name, self._generation if generation is None else generation)

    def service_endpoint(self, port: int) -> tuple[str, int]:
        """A loopback TCP port on the host that reaches `port` inside the sandbox."""
        if port not in self.config.forward_ports:
            raise SandboxStartError(f"port {port} is not forwarded; forward_ports={self.config.forward_ports}")
        return self._relays.open(f"port-{port}", "127.0.0.1", 0)

    def expose_server(self, port: int = 0, host: str = "127.0.0.1") -> tuple[str, int]:
        """Serves the desktop's public listener on host:port over TCP (port 0 picks a free one).

        The public listener holds requests to what a browser cannot forge cross-site. On a
        loopback address only this user's (and root's) processes are relayed; any other
        address needs `public_token`, which clients then send with every request."""
        if not is_loopback(host) and not self.config.public_token:
            raise ProviderError(f"refusing to serve the desktop on {host}, which is not a loopback address, "
                                "without a token: set a public token (osworld env serve --token)")
        return self._relays.open("public", host, port)

    def expose_like_vm(self, address: str = "auto") -> str:
        """Serves the desktop the way an OSWorld VM is reached: the env server at address:5000,
        and each forwarded service (Chrome's DevTools 9222, VLC's HTTP 8080) at its own port
        number, so upstream clients that connect to vm_ip:9222 work unchanged. Loopback only
        (those services have no authentication of their own); "auto" takes the first
        127.0.0.N (N >= 2) where every port is free. Returns the address."""
        return self._relays.like_vm(address, self.config.forward_ports)

    # -- inspection -------------------------------------------------------------------------
    @property
    def spec(self) -> SandboxSpec:
        """The current boot's sandbox."""
        assert self._desktop is not None
        return self._desktop.spec(self._generation)

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

    def desktop_logs(self) -> dict[str, str]:
        return saved_logs(self._sandbox)

    def resource_limit_hit(self) -> str:
        """One sentence naming the limits this desktop hit since its last reset, or "".

        Only what takes something away from the desktop counts: an OOM kill, a refused
        fork, or a home folder left full (a write failed, or will). Memory use reaching the
        limit alone is the kernel reclaiming page cache."""
        sentences = []
        cgroup = self._desktop.cgroup if self._desktop is not None else None
        if cgroup is not None:
            now, before = cgroup.events(), self._limit_baseline
            since = replace(now, oom_kills=now.oom_kills - before.oom_kills, memory_max_hits=0,
                            pids_max_hits=now.pids_max_hits - before.pids_max_hits)
            sentences.append(since.describe())
        sandbox = self._sandbox
        if sandbox is not None and sandbox.child_pid is not None and sandbox.running():
            sentences.append(home_full(sandbox.child_pid, self.config.limits.disk_bytes))
        return "; ".join(s for s in sentences if s)

    def wait_for_spare(self) -> float | None:
        """Waits until the warm spare has finished booting; its boot time in seconds (None
        without a spare, or when it failed)."""
        return self._spare.wait()

    def spare_process_ids(self) -> list[int]:
        """Host PIDs of the warm spare's sandbox (empty while none is booted)."""
        return self._spare.process_ids()

    def process_ids(self) -> list[int]:
        """Host PIDs of every process in this sandbox (its PID namespace), bwrap included."""
        return [] if self._sandbox is None else namespace_pids(self._sandbox)

    def is_running(self) -> bool:
        return self._sandbox is not None and self._sandbox.running()


def _start_up_caches_of_a_clean_boot(into: Path) -> None:
    """Boots a desktop from the plain home template, with no task and no agent, and copies the caches its
    start-up wrote into `into`, once they stop growing: GNOME Shell compiles shaders as it first draws its
    panel, dock and the desktop's icons, which can go on for a moment after the desktop says it is ready."""
    provider = LocalProvider()
    try:
        provider.create()
        pid = provider._sandbox.child_pid if provider._sandbox is not None else None
        if pid is None:
            raise SandboxStartError("the desktop booted to seed the start-up caches has no process to read")
        sizes: list[int] = []

        def steady() -> bool:
            shutil.rmtree(into, ignore_errors=True)
            sizes.append(copy_home_caches(pid, CACHES, into, MAX_SEED_BYTES))
            return len(sizes) >= 3 and sizes[-1] == sizes[-2] == sizes[-3] > 0

        poll_until(steady, START_UP_SETTLE_TIMEOUT_S, 1.0)
    finally:
        provider.stop_emulator()
