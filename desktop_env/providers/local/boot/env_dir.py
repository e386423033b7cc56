"""Each desktop's private env folder on the host (its sockets, identity files and each boot's runtime
folder), made at its first boot, and the folders of harnesses killed with -9, removed."""
from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

from ..limits import prune_stale_cgroups
from ..paths import private_dir
from .host_ids import SandboxIdentity, acquire_identity, sandbox_id_range
from .orphans import kill_sandboxes_of, kill_sandboxes_without_env_dir

log = logging.getLogger("osworld.local")


def runtime_root() -> Path:
    """Per-environment folders: short paths (Unix socket paths are limited to 107 bytes),
    owned by this user, mode 0700 (0710 with the desktops' group for a root harness)."""
    base = os.environ.get("OSWORLD_RUNTIME_DIR") or f"/tmp/osworld-{os.geteuid()}"
    return private_dir(Path(base), sandbox_id_range().group if os.geteuid() == 0 else None)


def sockets_dir(env_dir: Path) -> Path:
    """Host-only folder of the listening sockets handed to the desktop (never mounted)."""
    return env_dir / "sockets"


def create_env_dir() -> tuple[Path, SandboxIdentity | None]:
    """A new env folder, after those of dead harnesses (and their cgroups) are removed, and the
    unprivileged uid its desktop runs as when the harness is root (None otherwise)."""
    prune_stale_env_dirs()
    prune_stale_cgroups()
    root = runtime_root()
    identity = acquire_identity(root) if os.geteuid() == 0 else None
    try:
        env_dir = Path(tempfile.mkdtemp(prefix="env-", dir=root))
        if identity is not None:
            # The desktop's uid must reach its home and runtime folders when bwrap binds them.
            os.chown(env_dir, -1, identity.gid)
            os.chmod(env_dir, 0o710)
        (env_dir / "owner.pid").write_text(str(os.getpid()))
        sockets_dir(env_dir).mkdir(mode=0o700)
    except BaseException:
        if identity is not None:
            identity.release()
        raise
    return env_dir, identity


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
