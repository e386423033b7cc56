"""What the local desktops run, as a run records it (args.json's `versions`), for a paper to quote.

Not the host's apps: a desktop's system programs are those of the system it boots from (build/prepare.py's
`desktop_system`: the host's, or the Ubuntu 22.04 tree's), whose dpkg status file is read as a file (the
tree's dpkg is never run); Chrome is Chromium 120, set aside from the system (build/vm_chromium.py), once it
is built, Thunderbird on the tree is 115 set aside (build/vm_thunderbird.py) once it is built, and VS Code is
code-server (build/vscode.py). Only what is on disk is read: nothing is built or
started, and what is not there (a tree not built, an app not set aside) is left out.
"""
from __future__ import annotations

import os

from ...debian_packages import DPKG_STATUS, installed_packages
from ...errors import MissingDependency
from ..base import DesktopVersions
from .build.prepare import SYSTEM_VARIABLE, desktop_system
from .build.vm_chromium import CHROMIUM_VERSION, installed_chromium
from .build.vm_thunderbird import THUNDERBIRD_VERSION, installed_thunderbird
from .build.vscode import CODE_SERVER_VERSION, installed_vscode
from .system_root import HOST_SYSTEM, SystemRoot

# The system's packages of the VM's apps, whose versions a run records.
SYSTEM_APPS = ("gnome-shell", "libreoffice-core", "gimp", "vlc", "thunderbird", "chromium", "xvfb")


def desktop_versions(system: SystemRoot | None = None) -> DesktopVersions:
    """The apps' versions of desktops booted from `system` (by default the one desktops boot from now) and
    which system that is."""
    if system is None:
        try:
            system = desktop_system()
        except MissingDependency:  # the tree asked for is not built: no system's packages to read
            return DesktopVersions(aside_versions(), {"name": os.environ.get(SYSTEM_VARIABLE, "")})
    return DesktopVersions({**system_versions(system), **aside_versions(system)}, system_record(system))


def system_versions(system: SystemRoot) -> dict[str, str]:
    """SYSTEM_APPS' versions in the system's dpkg status, those installed."""
    try:
        installed = {p.name: p.version for p in installed_packages(system.host_path(f"/{DPKG_STATUS}"))}
    except OSError:  # no dpkg status (not a Debian or Ubuntu system)
        return {}
    return {name: installed[name] for name in SYSTEM_APPS if name in installed}


def aside_versions(system: SystemRoot = HOST_SYSTEM) -> dict[str, str]:
    """The apps desktops booted from `system` run instead of the system's, where they are built (Thunderbird 115
    on a tree's desktops alone: build/prepare.py's desktop_parts)."""
    versions = {}
    if installed_chromium() is not None:
        versions["chromium"] = CHROMIUM_VERSION
    if not system.is_host and installed_thunderbird() is not None:
        versions["thunderbird"] = THUNDERBIRD_VERSION
    if installed_vscode() is not None:
        versions["code-server"] = CODE_SERVER_VERSION
    return versions


def system_record(system: SystemRoot) -> dict[str, str]:
    """Which system: its name, and a tree's folder (named by its package list, archives and recipe:
    build/ubuntu_userland.py's userland_dir), whose root is the tree."""
    if system.is_host:
        return {"name": system.name}
    return {"name": system.name, "tree": system.path.parent.name, "root": str(system.path)}
