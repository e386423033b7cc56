"""Where desktops come from. The interface follows OSWorld's providers."""
from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..controllers.transport import Endpoint
from ..desktop_defaults import DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE
from .leftovers import PruneResult

Progress = Callable[[str], None]


@dataclass(frozen=True)
class DesktopOptions:
    """What a run asks of its desktops, whichever provider makes them; each provider takes what it can honour
    (a VM's screen is the VM's). `own`: the provider's own options (an instance of its `Options`), or None
    for its defaults."""
    screen_size: tuple[int, int] = DEFAULT_SCREEN_SIZE
    network: bool = False
    client_password: str = DEFAULT_PASSWORD
    path_to_vm: str | None = None
    own: Any = None


@dataclass(frozen=True)
class Built:
    """One thing a provider builds once, before its desktops start (Provider.prepare): its folder, or why
    it could not be built. A build a desktop can do without fails into `error` instead of raising."""
    name: str
    path: Path | None = None    # None without an error: no task asked for it and it is not there
    error: str = ""             # why it could not be built; "" when it was
    without: str = ""           # what desktops do without it
    required: bool = True       # `osworld env setup` fails when a required one does; a run goes on either way

    def problem(self) -> str:
        """The sentence saying it failed and what follows, or "" when it did not fail."""
        return f"{self.name} could not be installed; {self.without}: {self.error}" if self.error else ""


@dataclass(frozen=True)
class DesktopVersions:
    """What a provider's desktops run, as a run records it (args.json's `versions`): `apps`, each app's version
    by its package's name, and `system`, which system they boot from (the local desktop's: its `name`, and a
    built tree's folder as `tree`). Both empty for a VM: what it runs is its image's."""
    apps: dict[str, str] = field(default_factory=dict)
    system: dict[str, str] = field(default_factory=dict)


def progress_to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Provider(ABC):
    """Creates, reverts and stops one desktop whose env server speaks desktop_env/server/PROTOCOL.md.

    The life cycle: `prepare()` builds once what every desktop of the provider uses, `create()` boots one
    desktop, `prune()` removes what killed runs left behind. The classmethods are what the harness asks of a
    provider by name, before it has one: whether options can work, what to build before any desktop starts,
    what its desktops run, what to clean up, and the provider made from a run's options."""

    # The dataclass of the provider's own run options (its fields named as RunConfig's), or None: it has none.
    Options: ClassVar[type | None] = None

    @classmethod
    def check_options(cls, desktop: DesktopOptions) -> None:
        """Raises ProviderOptionError when no desktop can be made with these options."""
        return None

    @classmethod
    def prepare(cls, tasks: Sequence[dict[str, Any]] | None = None, extras: Collection[str] = (),
                retry: bool = False, progress: Progress = progress_to_stderr) -> list[Built]:
        """Builds what is built once, before any desktop starts; what was built, in order (nothing by default).

        `tasks`: a run's task configs, whose needs decide the optional builds; None builds what any task may
        need, as `osworld env setup` does, but for the `extras` only built when named. `retry`: try again what
        failed lately instead of saying its failure again."""
        return []

    @classmethod
    def prepare_for(cls, tasks: Sequence[dict[str, Any]]) -> None:
        """A run's preparation (once, before its first desktop): `prepare(tasks)`, each build that failed said
        on stderr with what follows, and the run goes on."""
        for built in cls.prepare(tasks):
            if built.error:
                print(built.problem(), file=sys.stderr, flush=True)

    @classmethod
    def desktop_versions(cls) -> DesktopVersions:
        """What its desktops run, read from what is on disk (nothing is built or started). Nothing by default."""
        return DesktopVersions()

    @classmethod
    def prune(cls, dry_run: bool = False, tool: str | None = None) -> PruneResult:
        """Removes what killed runs of this provider left behind (with `dry_run`, only says what it would);
        `tool`: the command-line tool it drives, when not its usual one. Nothing by default."""
        return PruneResult()

    @classmethod
    def from_options(cls, desktop: DesktopOptions, **options: Any) -> Provider:
        """The provider for a run's desktop options; `options` are the caller's own keyword arguments for it.
        By default only those: a provider that honours the desktop options takes them here."""
        return cls(**options)

    def create(self, path_to_vm: str | None = None) -> None:
        """Boots one desktop and returns once its env server is ready (OSWorld's `start_emulator`, headless)."""
        self.start_emulator(path_to_vm, True, "Ubuntu")

    @abstractmethod
    def start_emulator(self, path_to_vm: str | None, headless: bool, os_type: str) -> None:
        """Brings the desktop up and returns once its env server is ready."""

    @abstractmethod
    def get_ip_address(self, path_to_vm: str | None) -> Endpoint:
        """Where the env server listens (OSWorld returns an IP; we return an Endpoint)."""

    @abstractmethod
    def save_state(self, path_to_vm: str | None, snapshot_name: str) -> None: ...

    @abstractmethod
    def revert_to_snapshot(self, path_to_vm: str | None, snapshot_name: str) -> str | None:
        """Returns the desktop to its initial state and waits until it is ready."""

    def expect_another_reset(self, expected: bool) -> None:
        """Said before a reset: whether another reset is expected after it. A provider that readies the
        next desktop ahead (the local one's warm spare) skips that when none is; the others ignore it."""
        return None

    def agent_started(self) -> None:
        """Said once the agent's first action after a reset was carried out: the task's setup is over. A
        provider that readies the next desktop ahead may start on it now; the others ignore it."""
        return None

    @abstractmethod
    def stop_emulator(self, path_to_vm: str | None) -> None:
        """Stops the desktop and removes everything it created."""

    def server_gone(self) -> str:
        """Why the desktop's env server is known to be gone (its process exited or was stopped) without
        asking it, or "" (also when the provider cannot tell: the controller then probes the server)."""
        return ""

    def desktop_logs(self) -> dict[str, str]:
        """{name: last lines} of the running desktop's own logs (its shell, settings daemons, buses),
        {} when the provider keeps none or the desktop is gone."""
        return {}

    def service_endpoint(self, port: int) -> tuple[str, int]:
        """A (host, port) on this machine that reaches TCP `port` inside the desktop."""
        raise NotImplementedError(f"{type(self).__name__} cannot forward port {port}")
