"""GNOME Settings 41, the VM's own, from Ubuntu 22.04's archive: fetched once, verified, unpacked aside.

OSWorld's VM is Ubuntu 22.04, whose GNOME Settings is 41.7 (GTK 3, Ubuntu's patches). Debian 12's is 43
(GTK 4): its Privacy page lists other rows in another order and its drop-downs open below their button,
so the VM's recorded clicks land on other widgets (VM_DIFFERENCES.md, GNOME Settings). Ubuntu still
publishes 22.04's Settings, and it runs on Debian 12's libraries but for two that Debian has at other
sonames (libgnome-desktop-3.so.19, libwhoopsie-preferences.so.0), which come from 22.04 too, and
libsnapd-glib.so.1, which is linked to Debian 12's libsnapd-glib-2.so.1 (the same functions, built
against libsoup 3: 22.04's libsoup 2 build cannot share a process with Debian 12's online-accounts
libraries).

Trust: apt checks the archive's signed index with Ubuntu's 2018 archive key alone, pinned by its SHA256
(ubuntu_archive.py); everything after is checked as aside_packages.py says.

Settings 41 needs one key Debian 12's schemas lack (Ubuntu's org.gnome.desktop.screensaver
ubuntu-lock-on-suspend: without it the Screen Lock panel aborts), so the folder holds its own compiled
schemas: the system's, with 22.04's screensaver and Settings schemas in place of Debian's and the VM's
values as defaults (desktop_view.compile_schemas). The `gnome-control-center` shim
(desktop_env/server/shims/) puts them first on XDG_DATA_DIRS for Settings alone. The same values are
stored at the same dconf paths, so what Settings 41 sets is what `gsettings get` reads.

The result is one folder in the sandbox share, mounted read-only into every desktop at
sandbox.SANDBOX_SETTINGS. About 2.5 MB to fetch: built by `osworld env setup` and before a run.
"""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

from ....errors import MissingDependency
from ..paths import sandbox_share_dir
from . import ubuntu_archive
from .aside_packages import MANIFEST, Archive, PrivateApt, drop_special_bits, manifest_text, read_manifest
from .aside_packages import library_dir as aside_library_dir
from .desktop_view import SYSTEM_SHARE, DesktopViewError, compile_schemas, vm_gsettings
from .one_time_build import Progress, install_once, progress_to_stderr, run_step

log = logging.getLogger("osworld.settings")

SETTINGS_PACKAGE = "gnome-control-center"
UPSTREAM_RELEASE = "41"  # any 22.04 update of Settings 41 (the archive keeps only the newest)
# Bump when what the build writes changes: a new folder is built beside the old one.
RECIPE = 1

UBUNTU = ubuntu_archive.UBUNTU
ARCHIVES = (Archive(UBUNTU, "jammy"), Archive(UBUNTU, "jammy-updates"))
KEYRING_DEB, KEYRING_MEMBER, KEYRING_SHA256 = (ubuntu_archive.KEYRING_DEB, ubuntu_archive.KEYRING_MEMBER,
                                               ubuntu_archive.KEYRING_SHA256)
PACKAGES = (SETTINGS_PACKAGE, "gnome-control-center-data", "libgnome-desktop-3-19", "libwhoopsie-preferences0",
            "gsettings-desktop-schemas")
# Schemas of 22.04 that replace Debian 12's in Settings' own compiled schemas.
UBUNTU_SCHEMAS = ("org.gnome.desktop.screensaver.gschema.xml", "org.gnome.ControlCenter.gschema.xml")
# Linked to Debian 12's library of the same functions (see above).
SNAPD_LINK = ("libsnapd-glib.so.1", "libsnapd-glib-2.so.1")
# What Settings 41 links that must not come with it: a second libsoup in one process aborts.
FORBIDDEN_LIBRARIES = ("libsoup-2.4.so.1",)
SYSTEM_PACKAGES_FILE = "desktop_env/providers/local/system_packages.txt"

PROGRAM = Path("usr/bin/gnome-control-center")
LIBRARIES = "lib"  # a link to usr/lib/<triplet>, for the shim's LD_LIBRARY_PATH
SCHEMAS = Path("usr/share/glib-2.0/schemas")
SCHEMAS_STAMP = "schemas.stamp"
STEP_TIMEOUT_S = 600
# A run asks for Settings 41 each time; where Ubuntu's archive cannot be reached, one failed fetch is
# remembered this long (with its reason) instead of being tried again by every run. `osworld env setup` retries.
RETRY_AFTER_S = 6 * 3600


class SettingsInstallError(MissingDependency):
    """GNOME Settings 41 could not be installed: the message names the step, its command and what it printed."""


def settings_dir() -> Path:
    return sandbox_share_dir() / f"gnome-control-center-{UPSTREAM_RELEASE}-r{RECIPE}"


def installed_settings() -> Path | None:
    """The built folder, None when Settings 41 is not installed (never builds): installed means its program
    is there and its packages.txt, written last, lists a Settings 41 release."""
    target = settings_dir()
    if not (target / PROGRAM).is_file() or not (target / MANIFEST).is_file():
        return None
    versions = [version for name, version, _ in read_manifest(target) if name == SETTINGS_PACKAGE]
    return target if versions and _is_release(versions[0]) else None


def _is_release(version: str) -> bool:
    """Whether a Debian version of gnome-control-center (epoch 1) is of Settings UPSTREAM_RELEASE."""
    return version.split(":", 1)[-1].split(".", 1)[0] == UPSTREAM_RELEASE


def build_blocker() -> str | None:
    """Why Settings 41 cannot be fetched on this machine (None when it can)."""
    missing = [tool for tool in ("apt-get", "apt-cache", "dpkg-deb", "glib-compile-schemas")
               if shutil.which(tool) is None]
    if missing:
        return f"fetching GNOME Settings {UPSTREAM_RELEASE} from Ubuntu's archive needs {' and '.join(missing)}"
    if _system_library(SNAPD_LINK[1]) is None:
        return (f"GNOME Settings {UPSTREAM_RELEASE} needs {SNAPD_LINK[1]}: install the packages of "
                f"{SYSTEM_PACKAGES_FILE} (osworld env doctor)")
    return None


def failure_mark() -> Path:
    return settings_dir().with_name(settings_dir().name + ".failed")


def ensure_settings(progress: Progress = progress_to_stderr, retry: bool = False) -> Path:
    """Returns Settings 41's folder, building it once (built aside, then renamed into place), and its
    compiled schemas current with the VM's values. Raises SettingsInstallError naming the step that failed;
    a failure is remembered for RETRY_AFTER_S and said again without a new attempt unless `retry`."""
    mark = failure_mark()
    if not retry and installed_settings() is None and mark.is_file() and \
            time.time() - mark.stat().st_mtime < RETRY_AFTER_S:
        raise SettingsInstallError(f"{mark.read_text().strip()} (the last attempt, {mark}; `osworld env setup` "
                                   "tries again)")
    try:
        target = install_once(f"GNOME Settings {UPSTREAM_RELEASE}", settings_dir(), installed_settings,
                              build_blocker, SettingsInstallError, _build,
                              f"installing GNOME Settings {UPSTREAM_RELEASE} (Ubuntu 22.04's, the VM's) into "
                              f"{settings_dir()}: a one-time download of about 2.5 MB", progress)
    except SettingsInstallError as e:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.write_text(str(e))
        raise
    mark.unlink(missing_ok=True)
    if (target / SCHEMAS_STAMP).read_text() != schemas_stamp():
        compile_settings_schemas(target)
    return target


def _build(staging: Path, progress: Progress) -> None:
    with tempfile.TemporaryDirectory(prefix=".settings-apt.", dir=staging.parent) as scratch:
        keyring = fetch_keyring(Path(scratch))
        apt = PrivateApt(Path(scratch) / "apt", ARCHIVES, keyring, "Ubuntu 22.04", SettingsInstallError, _run)
        progress(f"  1/4 Ubuntu 22.04's package index ({', '.join(archive.suite for archive in ARCHIVES)})")
        apt.update()
        packages = [apt.show(name) for name in PACKAGES]
        if not _is_release(packages[0].version):
            raise SettingsInstallError(f"Ubuntu 22.04's index offers {SETTINGS_PACKAGE} {packages[0].version}, "
                                       f"not a release of Settings {UPSTREAM_RELEASE}")
        progress(f"  2/4 {len(packages)} packages, {sum(p.size for p in packages) / 1e6:.1f} MB")
        for deb in apt.download(packages):
            _run("unpack", ["dpkg-deb", "-x", str(deb), str(staging)], staging)
    drop_special_bits(staging)
    libraries = library_dir(staging)
    (staging / LIBRARIES).symlink_to(libraries.relative_to(staging))
    snapd = _system_library(SNAPD_LINK[1])
    assert snapd is not None  # build_blocker checked it
    (libraries / SNAPD_LINK[0]).symlink_to(snapd)
    progress("  3/4 schemas")
    compile_settings_schemas(staging)
    progress("  4/4 check")
    check_links(staging)
    (staging / MANIFEST).write_text(manifest_text(packages))
    os.chmod(staging, 0o755)  # mkdtemp made it 0700; the desktops' uid must read it


def fetch_keyring(folder: Path) -> Path:
    """Ubuntu's 2018 archive key, refused unless its SHA256 is KEYRING_SHA256 (ubuntu_archive.py)."""
    return ubuntu_archive.fetch_keyring(folder, f"GNOME Settings {UPSTREAM_RELEASE}", SettingsInstallError, _run,
                                        KEYRING_DEB, KEYRING_SHA256)


def library_dir(root: Path) -> Path:
    """Where the unpacked 22.04 libraries are: usr/lib/<multiarch triplet>."""
    return aside_library_dir(root, "libgnome-desktop-3.so.19", SettingsInstallError)


def _system_library(name: str) -> Path | None:
    found = sorted(Path("/usr/lib").glob(f"*/{name}")) + sorted(Path("/lib").glob(f"*/{name}"))
    return found[0] if found else None


def schemas_stamp() -> str:
    """What the compiled schemas were made from: the VM's values and the system's schema files."""
    system = SYSTEM_SHARE / "glib-2.0" / "schemas"
    listing = sorted(f"{path.name} {path.stat().st_size}" for path in system.glob("*.xml"))
    return hashlib.sha256(repr((vm_gsettings(), listing, UBUNTU_SCHEMAS)).encode()).hexdigest()


def compile_settings_schemas(root: Path) -> None:
    """Settings' own gschemas.compiled in `root` (see the module's docstring), and its stamp."""
    schemas = root / SCHEMAS
    try:
        compile_schemas(schemas, replacements=[schemas / name for name in UBUNTU_SCHEMAS])
    except DesktopViewError as e:
        raise SettingsInstallError(f"installing GNOME Settings {UPSTREAM_RELEASE}, step 'schemas': {e}") from None
    (root / SCHEMAS_STAMP).write_text(schemas_stamp())


def check_links(root: Path) -> None:
    """Every library Settings 41 links is found, and none of FORBIDDEN_LIBRARIES."""
    output = _run("check its libraries", ["ldd", str(root / PROGRAM)], root,
                  {**os.environ, "LD_LIBRARY_PATH": str(root / LIBRARIES)})
    missing = sorted(line.split()[0] for line in output.splitlines() if "not found" in line)
    if missing:
        raise SettingsInstallError(f"GNOME Settings {UPSTREAM_RELEASE} links {', '.join(missing)}, which this "
                                   f"system lacks: install the packages of {SYSTEM_PACKAGES_FILE} "
                                   "(osworld env doctor)")
    forbidden = sorted(name for name in FORBIDDEN_LIBRARIES if name in output)
    if forbidden:
        raise SettingsInstallError(f"GNOME Settings {UPSTREAM_RELEASE} would load {', '.join(forbidden)} beside "
                                   "Debian 12's libsoup 3, which aborts it")


def _run(step: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    return run_step(f"GNOME Settings {UPSTREAM_RELEASE}", SettingsInstallError, STEP_TIMEOUT_S, step, argv, cwd, env)

