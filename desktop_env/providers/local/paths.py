"""Where the local provider keeps its cached and per-environment files.

Three places, by who may see them:
- cache_dir(): the harness's own long-lived files (the /etc view); never seen by a desktop.
- sandbox_share_dir(): the env server's code and venv and the home template, which every
  desktop mounts read-only.
  Nothing secret goes there; for a root harness it sits outside /root (closed to the
  unprivileged desktop uids) in /var/cache/osworld.
- runtime_root(): one folder per live desktop, private to the harness's user (and, for a
  root harness, traversable by the desktops' group: see host_ids).
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from ...errors import UnsafeRuntimeDir


def build_aside(target: Path, fill: Callable[[Path], None]) -> Path:
    """`target`, built by `fill(staging)` in a fresh folder beside it and then renamed into place,
    so nobody sees it half made. Parallel envs may build the same target at once: each builds its
    own staging folder, the first rename wins and the others' copies are thrown away."""
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        fill(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        staging.rename(target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)  # built concurrently by another env
    return target


def cache_dir() -> Path:
    """Long-lived files (home template): $OSWORLD_CACHE or ~/.cache/osworld."""
    root = os.environ.get("OSWORLD_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "osworld")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def sandbox_share_dir() -> Path:
    """Files every desktop mounts read-only: $OSWORLD_SANDBOX_SHARE, else /var/cache/osworld
    for root, else the cache folder."""
    configured = os.environ.get("OSWORLD_SANDBOX_SHARE")
    if configured:
        path = Path(configured)
    elif os.geteuid() == 0:
        path = Path("/var/cache/osworld")
    else:
        return cache_dir()
    path.mkdir(parents=True, exist_ok=True)
    if os.stat(path).st_uid == os.geteuid():
        os.chmod(path, 0o755)  # a normal user may share root's folder as it is
    return path


def private_dir(path: Path, group: int | None = None) -> Path:
    """Creates `path` (mode 0700, or 0710 for `group`) or checks an existing one: a real
    folder (not a symlink), owned by us, writable by nobody else. Someone who made the
    folder first, or could write in it, could plant sockets and symlinks for the harness."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeRuntimeDir(f"{path} is not a folder (a symlink or file is in its place); remove it, "
                               f"or choose another folder with OSWORLD_RUNTIME_DIR")
    if info.st_uid != os.geteuid():
        raise UnsafeRuntimeDir(f"{path} belongs to uid {info.st_uid}, not to this user ({os.geteuid()}); "
                               f"remove it, or choose another folder with OSWORLD_RUNTIME_DIR")
    mode = 0o700 if group is None else 0o710
    if group is not None and info.st_gid != group:
        os.chown(path, -1, group, follow_symlinks=False)
    if stat.S_IMODE(info.st_mode) != mode:
        os.chmod(path, mode)  # checked above to be our own folder, not a symlink
    return path

