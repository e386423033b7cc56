"""Chromium 120, a browser of the VM's era, from Debian 11's archive: fetched once, verified, unpacked aside.

OSWorld's VM ran a Google Chrome of early-to-mid 2024 (its agents' notes name "Clear browsing
data...", a Help submenu, a profile called "Person 1"); Debian 12's Chromium is today's, whose
redesigned menus and Settings pages put the VM's recorded clicks on other widgets
(VM_DIFFERENCES.md, "Chrome's menus and pages"). Debian 11 (bullseye) still publishes the
Chromium it last shipped, 120.0.6099.224 of January 2024, and it runs on Debian 12's libraries
but for a few sonames Debian 12 no longer has; those come from bullseye too.

The build never touches the system's packages (aside_packages.py: a private apt state checks bullseye's
signed index with Debian's archive keyring, and each .deb's SHA256 against it). Nothing is installed,
no maintainer script runs, and chromium-sandbox (a setuid-root helper) is left out: Chromium
uses its namespace sandbox, which works inside the desktop's bubblewrap.

The result is one folder in the sandbox share (paths.sandbox_share_dir), mounted read-only into
every desktop at sandbox_layout.SANDBOX_CHROMIUM, where the `google-chrome` shim runs
usr/lib/chromium/chromium with LD_LIBRARY_PATH at lib/ (a link to usr/lib/<triplet>) and with Chrome's
2023 redesign switched on, as Chrome of 2024 had it (the shim says which switches and why). packages.txt
in it lists what went in (name, version, SHA256). Without it the shim runs the system's Chromium.
It is about 80 MB to fetch and 240 MB unpacked: built by `osworld env setup`, or before the
first run whose tasks use Chrome.
"""
from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ....errors import MissingDependency
from ..paths import sandbox_share_dir
from .aside_packages import (
    MANIFEST,
    Archive,
    PrivateApt,
    drop_special_bits,
    fetch_blocker,
    manifest_text,
    read_manifest,
)
from .aside_packages import library_dir as aside_library_dir
from .one_time_build import Progress, install_once, progress_to_stderr, run_step
from .vscode import needs_vscode

log = logging.getLogger("osworld.chromium")

CHROMIUM_VERSION = "120.0.6099.224-1~deb11u1"
UPSTREAM_VERSION = CHROMIUM_VERSION.split("-", 1)[0]
# Bump when what the build writes changes: a new folder is built beside the old one.
RECIPE = 2

ARCHIVES = (Archive("http://deb.debian.org/debian", "bullseye"),
            Archive("http://security.debian.org/debian-security", "bullseye-security"))
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")  # Debian's keyring holds bullseye's keys
BROWSER_PACKAGES = ("chromium", "chromium-common")  # at CHROMIUM_VERSION
# What the browser links that Debian 12 has at other sonames (libjsoncpp.so.24, libwebp.so.6, libFLAC.so.8),
# and the bullseye libraries built against those, so that one process never holds two releases of a
# library: Debian 12's libwebpdemux.so.2 and libwebpmux.so.3 link libwebp.so.7, and its libsndfile.so.1
# (under libpulse) links libFLAC.so.12. Any version the bullseye index offers: the package name fixes the soname.
# libjpeg62-turbo too: Ubuntu 22.04 (the userland desktops may boot from) has libjpeg.so.62 only as libjpeg 6b's,
# which lacks the libjpeg-turbo functions the browser calls (jpeg_crop_scanline).
LIBRARY_PACKAGES = ("libjsoncpp24", "libwebp6", "libwebpdemux2", "libwebpmux3", "libflac8", "libsndfile1",
                    "libjpeg62-turbo")

BROWSER = Path("usr/lib/chromium/chromium")
LIBRARIES = "lib"  # a link to usr/lib/<triplet>, for the shim's LD_LIBRARY_PATH
STEP_TIMEOUT_S = 900



class ChromiumInstallError(MissingDependency):
    """Chromium 120 could not be installed: the message names the step, its command and what it printed."""


def chromium_dir() -> Path:
    return sandbox_share_dir() / f"chromium-{UPSTREAM_VERSION}-r{RECIPE}"


def installed_chromium() -> Path | None:
    """The built folder, None when Chromium 120 is not installed (never builds): installed means its
    browser is there and its packages.txt, written last, lists the chromium package at CHROMIUM_VERSION."""
    target = chromium_dir()
    if not (target / BROWSER).is_file() or not (target / MANIFEST).is_file():
        return None
    return target if ("chromium", CHROMIUM_VERSION) in {entry[:2] for entry in read_manifest(target)} else None


def library_dir(root: Path) -> Path:
    """Where the unpacked bullseye libraries are: usr/lib/<multiarch triplet>."""
    return aside_library_dir(root, "libjsoncpp.so.24", ChromiumInstallError)


def build_blocker() -> str | None:
    """Why Chromium 120 cannot be fetched on this machine (None when it can)."""
    return fetch_blocker(f"Chromium {UPSTREAM_VERSION}", KEYRING)


def ensure_chromium(progress: Progress = progress_to_stderr) -> Path:
    """Returns Chromium 120's folder, building it once (built aside, then renamed into place).
    `progress` hears one line per step. Raises ChromiumInstallError naming the step that failed."""
    target = chromium_dir()
    return install_once(f"Chromium {UPSTREAM_VERSION}", target, installed_chromium, build_blocker, ChromiumInstallError,
                        _build, f"installing Chromium {UPSTREAM_VERSION} (Debian 11's, the VM's era of Chrome) into "
                        f"{target}: a one-time download of about 80 MB", progress)


def _build(staging: Path, progress: Progress) -> None:
    with tempfile.TemporaryDirectory(prefix=".chromium-apt.", dir=staging.parent) as scratch:
        apt = PrivateApt(Path(scratch), ARCHIVES, KEYRING, "bullseye", ChromiumInstallError, _run)
        progress(f"  1/4 bullseye's package index ({', '.join(archive.suite for archive in ARCHIVES)})")
        apt.update()
        wanted = [f"{name}={CHROMIUM_VERSION}" for name in BROWSER_PACKAGES] + list(LIBRARY_PACKAGES)
        packages = [apt.show(spec) for spec in wanted]
        progress(f"  2/4 {len(packages)} packages, {sum(p.size for p in packages) / 1e6:.0f} MB")
        debs = apt.download(packages)
        progress("  3/4 unpack")
        for deb in debs:
            _run("unpack", ["dpkg-deb", "-x", str(deb), str(staging)], staging)
    drop_special_bits(staging)
    (staging / LIBRARIES).symlink_to(library_dir(staging).relative_to(staging))
    progress("  4/4 check")
    _check_links(staging)
    version = _run("check the browser", [str(staging / BROWSER), "--version"], staging,
                   {**os.environ, "LD_LIBRARY_PATH": str(library_dir(staging))})
    if UPSTREAM_VERSION not in version:
        raise ChromiumInstallError(f"the unpacked browser says {version.strip()!r}, not Chromium {UPSTREAM_VERSION}")
    (staging / MANIFEST).write_text(manifest_text(packages))
    os.chmod(staging, 0o755)  # mkdtemp made it 0700; the desktops' uid must read it


def _check_links(root: Path) -> None:
    """Every library the browser and its helpers link is found, the bullseye ones in the folder itself."""
    env = {**os.environ, "LD_LIBRARY_PATH": str(library_dir(root))}
    programs = [root / BROWSER, *sorted((root / BROWSER).parent.glob("*.so")),
                (root / BROWSER).parent / "chrome_crashpad_handler"]
    missing = set()
    for program in programs:
        if program.exists():
            output = _run("check its libraries", ["ldd", str(program)], root, env)
            missing |= {line.split()[0] for line in output.splitlines() if "not found" in line}
    if missing:
        raise ChromiumInstallError(f"Chromium {UPSTREAM_VERSION} links {', '.join(sorted(missing))}, which neither "
                                   f"this system nor the bullseye libraries ({', '.join(LIBRARY_PACKAGES)}) provide")


def _run(step: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    return run_step(f"Chromium {UPSTREAM_VERSION}", ChromiumInstallError, STEP_TIMEOUT_S, step, argv, cwd, env)


def needs_chrome(task: dict) -> bool:
    """Whether a task file uses Chrome: its app list names it, or a setup step starts it; or VS Code, whose window
    is a Chromium app window (code_command.py), and the Ubuntu userland has no Chromium of its own."""
    if "chrome" in (task.get("related_apps") or []) or task.get("snapshot") == "chrome":
        return True
    return "google-chrome" in repr(task.get("config")) or needs_vscode(task)


def ensure_chromium_for(tasks: Iterable[dict], progress: Progress = progress_to_stderr) -> Path | None:
    """Installs Chromium 120 when one of `tasks` uses Chrome and it is not installed yet; its folder, or None."""
    if not any(needs_chrome(task) for task in tasks):
        return installed_chromium()
    return ensure_chromium(progress)
