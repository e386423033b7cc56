"""The /etc a desktop with a root of its own starts from: a copy, never the host's folder.

A desktop whose root may change /etc (sudo, useradd) sees one folder, covered by an
overlay inside, instead of the usual allow-list of read-only binds. That folder is built
here: a copy of the allow-listed entries (sandbox.ETC_ALLOWED), what root's own tools
read (PAM, login.defs, apt's sources without their credentials), and identity files of
the desktop's own (passwd, group, shadow: `root` and `user`, no host account). It lives
in the harness's private cache, owned by host root; the desktop sees it through an
idmapped mount as owned by its own root. Rebuilt whenever a copied host entry changes.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from ..boot.sandbox import ETC_ALLOWED, SANDBOX_HOME, SANDBOX_UID, SANDBOX_USER
from ..paths import build_aside, cache_dir
from ..system_root import HOST_SYSTEM, SystemRoot

# What root's tools read, beyond what every desktop gets: su's PAM stack, useradd's and
# adduser's defaults, apt's and dpkg's configuration (apt's auth.conf, which may hold
# repository passwords, is left out).
ETC_FOR_ROOT = ("pam.conf", "pam.d", "security", "login.defs", "default/useradd", "adduser.conf", "deluser.conf",
                "apt", "dpkg", "debconf.conf", "ucf.conf")
ETC_NEVER = ("apt/auth.conf", "apt/auth.conf.d")
VIEW_VERSION = "2"  # bump when the generated files change


def _identity_files() -> dict[str, tuple[str, int]]:
    user, uid = SANDBOX_USER, SANDBOX_UID
    return {
        "passwd": (f"root:x:0:0:root:/root:/bin/bash\n"
                   f"{user}:x:{uid}:{uid}:OSWorld User:{SANDBOX_HOME}:/bin/bash\n"
                   f"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", 0o644),
        "group": (f"root:x:0:\nsudo:x:27:{user}\n{user}:x:{uid}:\nnogroup:x:65534:\n", 0o644),
        # No password hashes: nothing inside asks for one but our sudo, which checks the
        # task's password itself; root's su needs none.
        "shadow": (f"root:*:19000:0:99999:7:::\n{user}:*:19000:0:99999:7:::\nnobody:*:19000:0:99999:7:::\n", 0o640),
        "gshadow": (f"root:*::\nsudo:*::{user}\n{user}:!::\nnogroup:*::\n", 0o640),
        "hostname": ("osworld\n", 0o644),
        "machine-id": ("", 0o444),  # where each desktop's own is bound (and then copied in by root_init)
    }


def _entries(system: SystemRoot) -> list[str]:
    """The host's allow-listed entries; all of a tree's built for desktops (which holds nothing of the host's)."""
    etc = system.host_path("/etc")
    if not system.is_host:
        return sorted(os.listdir(etc))
    return [name for name in (*ETC_ALLOWED, *ETC_FOR_ROOT) if os.path.lexists(etc / name)]


def _signature(etc: Path, entries: list[str]) -> str:
    """Changes when an entry (or a file directly in it) is changed, added or removed."""
    digest = hashlib.sha256(f"{VIEW_VERSION}\0{etc}".encode())
    for name in entries:
        info = os.lstat(etc / name)
        digest.update(f"{name}\0{info.st_mtime_ns}\0{info.st_size}\0".encode())
    return digest.hexdigest()[:12]


def _ignore_never(etc: Path) -> Callable[[str, list[str]], list[str]]:
    def ignore(folder: str, names: list[str]) -> list[str]:
        relative = os.path.relpath(folder, etc)
        return [name for name in names if os.path.normpath(os.path.join(relative, name)) in ETC_NEVER]
    return ignore


def ensure_etc_view(system: SystemRoot = HOST_SYSTEM) -> Path:
    """The folder (made once per state of the system's /etc) that a desktop's /etc starts as."""
    etc = system.host_path("/etc")
    entries = _entries(system)
    target = cache_dir() / f"etc-view-{system.tag()}{_signature(etc, entries)}"
    if target.is_dir():
        return target
    return build_aside(target, lambda staging: _fill_view(staging, etc, entries))


def _fill_view(staging: Path, etc: Path, entries: list[str]) -> None:
    for name in entries:
        source, destination = etc / name, staging / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir() and not source.is_symlink():
            shutil.copytree(source, destination, symlinks=True, ignore=_ignore_never(etc))
        else:
            shutil.copy2(source, destination, follow_symlinks=False)
    for name, (text, mode) in _identity_files().items():
        (staging / name).write_text(text)
        os.chmod(staging / name, mode)
    # mkdtemp made the top 0700, and parents of nested entries (ssl/, default/) come from our umask
    for folder in {staging, *((staging / name).parent for name in entries)}:
        os.chmod(folder, 0o755)
