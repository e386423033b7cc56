"""The home template with the caches a desktop fills in its first seconds, saved from one clean boot.

A home copied from the plain template has no ~/.cache: each boot, GNOME Shell's Mesa (llvmpipe, there is
no GPU) compiles its shaders again and fontconfig indexes the fonts of the desktop's own folders again.
That was 1.3 of a boot's 5.9 CPU seconds (docs/MEASURED.md), and every task's reset is a boot. `prepare`
boots one desktop with no task and no agent, copies those two caches out of its home, and writes the
template with them beside the plain one; boots then copy this one into their home.

Both caches check themselves (fontconfig each font folder's mtime, Mesa its driver's build and each
shader's hash), so a stale entry is recomputed, never used: the worst a stale seed costs is the time it
was meant to save. The folder's name still changes with the template, the desktop's view, the Mesa
driver and GNOME Shell, so a changed desktop gets a fresh seed.
"""
from __future__ import annotations

import glob
import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from ..paths import build_aside, sandbox_share_dir

SEED_VERSION = 1
# The only folders of ~/.cache that are copied: what the desktop's own start-up writes there.
CACHES = ("fontconfig", "mesa_shader_cache")
# What was harvested on Debian 12: 0.6 MiB. A cache past this is not a start-up cache: none is kept.
MAX_SEED_BYTES = 32 << 20

# Fills a folder with CACHES, copied from a desktop booted from the plain template.
FillCaches = Callable[[Path], None]


def _identity(path: str) -> str:
    try:
        info = os.stat(path)
    except OSError:
        return f"{path}:missing"
    return f"{path}:{info.st_size}:{info.st_mtime_ns}"


def _seed_key(template: Path, view: Path) -> str:
    gnome_shell = shutil.which("gnome-shell") or "gnome-shell"
    drivers = sorted(glob.glob("/usr/lib/*/dri/swrast_dri.so"))
    text = "\n".join([template.name, view.name, _identity(gnome_shell), *map(_identity, drivers)])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def seeded_home_dir(template: Path, view: Path) -> Path:
    return sandbox_share_dir() / f"home-seeded-v{SEED_VERSION}-{_seed_key(template, view)}"


def installed_seeded_home(template: Path, view: Path) -> Path | None:
    """The seeded template of this template and view, when `prepare` has built it."""
    target = seeded_home_dir(template, view)
    return target if target.is_dir() else None


def ensure_seeded_home(template: Path, view: Path, fill_caches: FillCaches) -> Path:
    """The template with the start-up caches in its .cache, built once (one boot) per template, view,
    Mesa driver and GNOME Shell."""
    target = seeded_home_dir(template, view)
    if target.is_dir():
        return target

    def fill(staging: Path) -> None:
        shutil.copytree(template, staging, symlinks=True, dirs_exist_ok=True)
        fill_caches(staging / ".cache")
        _check_seed(staging / ".cache")
        os.chmod(staging, 0o755)  # made by mkdtemp (0700); a root harness's desktops run as other uids
        for root, dirs, files in os.walk(staging / ".cache"):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
            for name in files:
                os.chmod(os.path.join(root, name), 0o644)

    return build_aside(target, fill)


def _check_seed(cache: Path) -> None:
    found = sorted(p.name for p in cache.iterdir()) if cache.is_dir() else []
    if set(found) - set(CACHES):
        raise ValueError(f"{cache}: only {', '.join(CACHES)} belong in a seed, found {', '.join(found)}")
    size = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file())
    if size > MAX_SEED_BYTES:
        raise ValueError(f"{cache}: {size} bytes of start-up caches, more than {MAX_SEED_BYTES}")
