"""Thunderbird 115, the VM's release line, from Debian 11's archive: fetched once, verified, unpacked aside.

OSWorld's VM ran Ubuntu 22.04's Thunderbird 115.10.1 (every Thunderbird task's profile says so in its
compatibility.ini: `LastVersion=115.10.1_20240417192958`, `LastAppDir=/usr/lib/thunderbird`). Ubuntu's archive
now serves jammy only Thunderbird 140, whose redesigned window puts the VM's recorded clicks on other widgets,
and its pool no longer has 115. Debian 11 (bullseye) still publishes 115.12.0 of June 2024, the same ESR line,
and it runs on Ubuntu 22.04's libraries but for a few sonames the userland lacks (LIBRARIES), which come from
bullseye too.

The build never touches the system's packages (aside_packages.py: a private apt state checks bullseye's signed
index with Debian's archive keyring, and each .deb's SHA256 against it); no maintainer script runs. What it
leaves, in the sandbox share, is usr/lib/thunderbird laid out as Ubuntu's 115 package laid it out, which a
desktop booted from the Ubuntu 22.04 userland mounts read-only over the tree's own /usr/lib/thunderbird
(boot/sandbox.py). There it must be: the tasks' profiles are bound to that install folder (installs.ini's
[Install<hash>] is a hash of its path), tasks start `/usr/bin/thunderbird` (the tree's link to Ubuntu's
launcher, thunderbird.sh, kept here) and close the window by its WM_CLASS `Mail.thunderbird`, which Ubuntu's
build gives; Debian's gives `Mail.thunderbird-default`, with its own wrapper too, so the launcher here passes
--class. packages.txt in the folder lists what went in (name, version, SHA256). About 60 MB to fetch, 230 MB
unpacked: built by `osworld env setup` on the userland, or before the first run whose tasks use Thunderbird.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ....errors import MissingDependency
from ..paths import sandbox_share_dir
from ..system_root import SystemRoot
from . import aside_packages as aside
from .in_tree import InTreeError, run_in_tree
from .one_time_build import Progress, install_once, progress_to_stderr, run_step
from .ubuntu_userland import installed_userland_system

THUNDERBIRD_VERSION = "1:115.12.0-1~deb11u1"
UPSTREAM_VERSION = THUNDERBIRD_VERSION.split(":", 1)[1].split("-", 1)[0]
# Bump when what the build writes changes: a new folder is built beside the old one.
RECIPE = 1

ARCHIVES = (aside.Archive("http://deb.debian.org/debian", "bullseye"),)  # bullseye-security has moved on to 140
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")  # Debian's keyring holds bullseye's keys
# What the 115 build links (or, for libotr, opens by name for encrypted chat) that the Ubuntu 22.04 userland has
# at other sonames or not at all: libffi.so.7 (jammy has libffi.so.8 only), libdbus-glib-1.so.2 and libotr.so.5
# (not in the userland's package list). Package -> the soname it gives; any version the bullseye index offers.
LIBRARIES = {"libffi7": "libffi.so.7", "libdbus-glib-1-2": "libdbus-glib-1.so.2", "libotr5": "libotr.so.5"}

APP_DIR = Path("usr/lib/thunderbird")  # in the folder, mounted at /usr/lib/thunderbird
INSIDE = "/" + str(APP_DIR)
PROGRAM = APP_DIR / "thunderbird"
LAUNCHER = "thunderbird.sh"  # Ubuntu's, which the tree's /usr/bin/thunderbird links to
DEPENDENT_LIBS = "dependentlibs.list"
# What Ubuntu's package puts in /usr/lib/thunderbird that Debian's does not, taken from the tree's 140 (the same
# packaging, which Ubuntu has carried unchanged since before the VM's 115.10.1; vendor.js and the syspref.js it
# links to are dated 2023): the launcher; distribution/, extensions, plugins and searchplugins, links into
# /usr/lib/thunderbird-addons where Ubuntu's add-on packages go; and Ubuntu's default prefs (no "make Thunderbird
# your default mail client" dialog, the system's locale, external GnuPG keys) instead of Debian's.
UBUNTU_PARTS = (LAUNCHER, "distribution", "extensions", "plugins", "searchplugins", "defaults/pref/vendor.js",
                "defaults/pref/syspref.js")
DEBIAN_ONLY = ("thunderbird-wrapper-helper.sh", "defaults/syspref")  # Debian's wrapper's helper; its /etc prefs
LAUNCHER_EXEC = '    exec $MOZ_LIBDIR/$EXE "$@"\n'
LAUNCHER_EXEC_WITH_CLASS = '    exec $MOZ_LIBDIR/$EXE --class thunderbird "$@"\n'
STEP_TIMEOUT_S = 900


class ThunderbirdInstallError(MissingDependency):
    """Thunderbird 115 could not be installed: the message names the step, its command and what it printed."""


def thunderbird_dir() -> Path:
    return sandbox_share_dir() / f"thunderbird-{UPSTREAM_VERSION}-r{RECIPE}"


def installed_thunderbird() -> Path | None:
    """The built folder, None when Thunderbird 115 is not installed (never builds): installed means its program
    is there and its packages.txt, written last, lists the thunderbird package at THUNDERBIRD_VERSION."""
    target = thunderbird_dir()
    if not (target / PROGRAM).exists() or not (target / aside.MANIFEST).is_file():
        return None
    listed = {entry[:2] for entry in aside.read_manifest(target)}
    return target if ("thunderbird", THUNDERBIRD_VERSION) in listed else None


def build_blocker() -> str | None:
    """Why Thunderbird 115 cannot be built on this machine (None when it can)."""
    blocker = aside.fetch_blocker(f"Thunderbird {UPSTREAM_VERSION}", KEYRING,
                                  ("apt-get", "apt-cache", "dpkg-deb", "bwrap"))  # bwrap: the check in the tree
    if blocker is not None:
        return blocker
    if installed_userland_system() is None:
        return (f"Thunderbird {UPSTREAM_VERSION} is laid out as Ubuntu's package from the Ubuntu 22.04 userland, "
                "which is not built: osworld env setup --ubuntu-userland")
    return None


def ensure_thunderbird(progress: Progress = progress_to_stderr) -> Path:
    """Returns Thunderbird 115's folder, building it once (built aside, then renamed into place).
    `progress` hears one line per step. Raises ThunderbirdInstallError naming the step that failed."""
    target = thunderbird_dir()
    return install_once(f"Thunderbird {UPSTREAM_VERSION}", target, installed_thunderbird, build_blocker,
                        ThunderbirdInstallError, _build,
                        f"installing Thunderbird {UPSTREAM_VERSION} (Debian 11's, the VM's 115 line) into {target}: "
                        "a one-time download of about 60 MB", progress)


def _build(staging: Path, progress: Progress) -> None:
    tree = installed_userland_system()
    if tree is None:
        raise ThunderbirdInstallError("the Ubuntu 22.04 userland went away during the build")
    with tempfile.TemporaryDirectory(prefix=".thunderbird-apt.", dir=staging.parent) as scratch:
        apt = aside.PrivateApt(Path(scratch) / "apt", ARCHIVES, KEYRING, "bullseye", ThunderbirdInstallError, _run)
        progress(f"  1/4 bullseye's package index ({', '.join(archive.suite for archive in ARCHIVES)})")
        apt.update()
        packages = [apt.show(spec) for spec in (f"thunderbird={THUNDERBIRD_VERSION}", *LIBRARIES)]
        progress(f"  2/4 {len(packages)} packages, {sum(p.size for p in packages) / 1e6:.0f} MB")
        debs = apt.download(packages)
        progress("  3/4 unpack")
        unpacked = Path(scratch) / "unpacked"
        unpacked.mkdir()
        for deb in debs:
            _run("unpack", ["dpkg-deb", "-x", str(deb), str(unpacked)], unpacked)
        assemble(unpacked, tree, staging)
    aside.drop_special_bits(staging)
    progress("  4/4 check")
    check_in_tree(staging, tree)
    (staging / aside.MANIFEST).write_text(aside.manifest_text(packages))
    os.chmod(staging, 0o755)  # mkdtemp made it 0700; the desktops' uid must read it


def assemble(unpacked: Path, tree: SystemRoot, staging: Path) -> None:
    """usr/lib/thunderbird in `staging` from the unpacked bullseye packages, complete in itself (it is mounted
    alone, and Debian's links into /usr/share/thunderbird would find nothing in the tree), with Ubuntu's parts
    from the tree and LIBRARIES beside libxul, listed first in dependentlibs.list."""
    source, app = unpacked / APP_DIR, staging / APP_DIR
    shutil.copytree(source, app, symlinks=True)
    for entry in app.iterdir():
        real = Path(os.path.normpath(source / os.readlink(entry))) if entry.is_symlink() else entry
        if unpacked / "usr/share/thunderbird" in real.parents:
            entry.unlink()
            if real.is_dir():
                shutil.copytree(real, entry, symlinks=True)
            else:
                shutil.copy2(real, entry)
    for name in DEBIAN_ONLY:
        _remove(app / name)
    ubuntu = tree.host_path(INSIDE)
    for name in UBUNTU_PARTS:
        if not (ubuntu / name).is_symlink() and not (ubuntu / name).exists():
            raise ThunderbirdInstallError(f"{ubuntu / name} is missing: the userland's Thunderbird is not Ubuntu's "
                                          "package as expected")
        _remove(app / name)
        if (ubuntu / name).is_dir() and not (ubuntu / name).is_symlink():
            shutil.copytree(ubuntu / name, app / name, symlinks=True)
        else:
            shutil.copy2(ubuntu / name, app / name, follow_symlinks=False)
    # The windows' WM_CLASS class is the build's remoting name, compiled into the program: Debian's is
    # thunderbird-default (its wrapper's --name leaves the class so), Ubuntu's thunderbird, the class the tasks
    # close the window by (`Mail.thunderbird`, strict). --class sets it, in the one launcher every start goes through.
    launcher = app / LAUNCHER
    text = launcher.read_text()
    if text.count(LAUNCHER_EXEC) != 1:
        raise ThunderbirdInstallError(f"{ubuntu / LAUNCHER} has no line {LAUNCHER_EXEC.strip()!r}: not the launcher "
                                      "expected")
    launcher.write_text(text.replace(LAUNCHER_EXEC, LAUNCHER_EXEC_WITH_CLASS))
    for soname in LIBRARIES.values():
        shutil.copy2(aside.library_dir(unpacked, soname, ThunderbirdInstallError) / soname, app / soname)
    # Mozilla's launcher dlopen()s each file of this list by its absolute path before libxul, whose own needs
    # are then met by the loaded sonames: the libraries are found without an LD_LIBRARY_PATH for the session.
    # (The child processes it starts get LD_LIBRARY_PATH at this folder from Thunderbird itself.)
    listed = (app / DEPENDENT_LIBS).read_text().split()
    (app / DEPENDENT_LIBS).write_text("".join(f"{name}\n" for name in [*LIBRARIES.values(), *listed]))


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.is_symlink() or path.exists():
        path.unlink()


def check_in_tree(staging: Path, tree: SystemRoot) -> None:
    """In the userland, with the built folder where desktops mount it: every library its programs link is found
    (in the folder, or the tree's), and the tree's /usr/bin/thunderbird, with nothing in its environment for
    libraries, says it is Thunderbird UPSTREAM_VERSION."""
    app = staging / APP_DIR
    programs = sorted(f"{INSIDE}/{path.name}" for path in app.iterdir()
                      if path.is_file() and not path.is_symlink() and _is_elf(path))
    binds = {str(app): INSIDE}
    try:
        # As Thunderbird starts its child processes (plugin-container links libxul by name alone).
        links = run_in_tree(tree, ["/usr/bin/env", f"LD_LIBRARY_PATH={INSIDE}", "/usr/bin/ldd", *programs], binds)
        version = run_in_tree(tree, ["/usr/bin/thunderbird", "--version"], binds)
    except InTreeError as e:
        raise ThunderbirdInstallError(f"checking Thunderbird {UPSTREAM_VERSION} in {tree.path}: {e}") from None
    missing = sorted({line.split()[0] for line in links.splitlines() if "not found" in line})
    if missing:
        raise ThunderbirdInstallError(f"Thunderbird {UPSTREAM_VERSION} links {', '.join(missing)}, which neither "
                                      f"the userland ({tree.path}) nor the bullseye libraries "
                                      f"({', '.join(LIBRARIES)}) provide")
    if f"Thunderbird {UPSTREAM_VERSION}" not in version:
        raise ThunderbirdInstallError(f"/usr/bin/thunderbird says {version!r}, not Thunderbird {UPSTREAM_VERSION}")


def _is_elf(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(4) == b"\x7fELF"


def _run(step: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    return run_step(f"Thunderbird {UPSTREAM_VERSION}", ThunderbirdInstallError, STEP_TIMEOUT_S, step, argv, cwd, env)


def needs_thunderbird(task: dict) -> bool:
    """Whether a task file uses Thunderbird: its app list or snapshot names it, or its config runs it."""
    if "thunderbird" in (task.get("related_apps") or []) or task.get("snapshot") == "thunderbird":
        return True
    return "thunderbird" in repr(task.get("config"))


def ensure_thunderbird_for(tasks: Iterable[dict], progress: Progress = progress_to_stderr) -> Path | None:
    """Installs Thunderbird 115 when one of `tasks` uses it and it is not installed yet; its folder, or None."""
    if not any(needs_thunderbird(task) for task in tasks):
        return installed_thunderbird()
    return ensure_thunderbird(progress)
