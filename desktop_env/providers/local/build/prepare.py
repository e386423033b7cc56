"""What the local provider builds once, in one list: what every desktop mounts (the env server's venv and
code, the desktop's view, the home template), then the VM's apps, set aside from the system (Chromium 120,
VS Code, GNOME Settings 41 on the host's system, Thunderbird 115 on the Ubuntu 22.04 userland). `prepare` builds
them before a run (or at `osworld env setup`); a boot takes `desktop_parts`, which builds only what every desktop
mounts and finds the apps already there."""
from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....errors import DesktopEnvError, MissingDependency
from ...base import Built, Progress
from ..system_root import HOST_SYSTEM, SystemRoot
from .desktop_view import ensure_desktop_view
from .home_template import ensure_home_template
from .seeded_home import FillCaches, ensure_seeded_home, installed_seeded_home
from .server_code import ensure_server_code
from .server_venv import ensure_server_venv
from .ubuntu_userland import USERLAND_NAME, installed_userland_system
from .vm_chromium import ensure_chromium, ensure_chromium_for, installed_chromium
from .vm_settings import ensure_settings, installed_settings
from .vm_thunderbird import APP_DIR as THUNDERBIRD_APP_DIR
from .vm_thunderbird import ensure_thunderbird, ensure_thunderbird_for, installed_thunderbird
from .vscode import ensure_vscode, ensure_vscode_for, installed_vscode

# The build `osworld env setup` makes only when asked (--vscode): a few minutes of npm and a compiler.
VSCODE = "vscode"


@dataclass(frozen=True)
class DesktopParts:
    """The folders a boot mounts; an app's is None when it is not installed (the system's runs instead)."""
    venv: Path
    server_code: Path
    desktop_view: Path
    home_template: Path
    vscode: Path | None
    chromium: Path | None
    settings: Path | None
    thunderbird: Path | None  # its usr/lib/thunderbird, mounted over the system's
    system: SystemRoot = HOST_SYSTEM  # where /usr and /etc come from


# Which system desktops run: "ubuntu-22.04" (the userland, which must then be built), "host" (Debian's packages
# dressed as Ubuntu's), or unset: the userland where it is built (as `make install` builds it for root), else
# the host's, which a run's args.json and its verdict then name (desktop_versions.py).
SYSTEM_VARIABLE = "OSWORLD_DESKTOP_SYSTEM"


def desktop_system() -> SystemRoot:
    """The system desktops boot from (see SYSTEM_VARIABLE); MissingDependency when the userland is asked for
    and not built."""
    wanted = os.environ.get(SYSTEM_VARIABLE, "")
    if wanted == "host":
        return HOST_SYSTEM
    if wanted not in ("", USERLAND_NAME):
        raise MissingDependency(f"{SYSTEM_VARIABLE}={wanted!r}: say {USERLAND_NAME!r} or 'host'")
    userland = installed_userland_system()
    if userland is not None:
        return userland
    if not wanted:
        return HOST_SYSTEM
    raise MissingDependency(f"{SYSTEM_VARIABLE}={wanted}, but the Ubuntu 22.04 userland is not built: run "
                            "`osworld env setup --ubuntu-userland` as root")


def every_desktop_mounts(system: SystemRoot | None = None) -> list[Built]:
    """Built when missing (once per content or system state, then found in the cache)."""
    system = desktop_system() if system is None else system
    return [Built("server venv", ensure_server_venv(system)), Built("server code", ensure_server_code()),
            Built("desktop view", ensure_desktop_view(system)), Built("home template", ensure_home_template())]


def desktop_parts() -> DesktopParts:
    system = desktop_system()
    venv, code, view, home = (built.path for built in every_desktop_mounts(system))
    assert venv and code and view and home  # each ensure_* returns its folder or raises
    # The userland has the VM's own GNOME Settings 41: the one set aside for Debian's desktop is not needed.
    settings = installed_settings() if system.is_host else None
    # Thunderbird 115 is laid out as Ubuntu's package, from the tree's: the host's system keeps its own.
    thunderbird = installed_thunderbird() if not system.is_host else None
    return DesktopParts(venv, code, view, installed_seeded_home(home, view) or home, vscode=installed_vscode(),
                        chromium=installed_chromium(), settings=settings,
                        thunderbird=thunderbird / THUNDERBIRD_APP_DIR if thunderbird is not None else None,
                        system=system)


def prepare(tasks: Sequence[dict[str, Any]] | None, extras: Collection[str], retry: bool,
            progress: Progress, fill_caches: FillCaches | None = None) -> list[Built]:
    """Everything the local desktop builds once. With `tasks`, an app is built when one of them uses it
    (GNOME Settings always: any task may open it from the system menu); without, Chromium, Settings and
    (on the userland) Thunderbird are, and VS Code when `extras` names it. Last, with `fill_caches` (one clean
    boot's), the home template with the caches each boot would otherwise make anew (seeded_home.py). What
    cannot be built is said in its Built."""
    system = desktop_system()
    built = every_desktop_mounts(system)
    view, home = built[2].path, built[3].path
    assert view and home
    built.append(_app("Chromium 120", lambda: ensure_chromium(progress) if tasks is None
                      else ensure_chromium_for(tasks, progress),
                      "Chrome's tasks will run on the system's Chromium, whose menus and Settings pages are not "
                      "the VM's"))
    if tasks is not None or VSCODE in extras:
        built.append(_app("VS Code", lambda: ensure_vscode(progress) if tasks is None
                          else ensure_vscode_for(tasks, progress), "its tasks will end as errors"))
    if not system.is_host:
        built.append(_app("Thunderbird 115", lambda: ensure_thunderbird(progress) if tasks is None
                          else ensure_thunderbird_for(tasks, progress),
                          "Thunderbird's tasks will run on the userland's Thunderbird 140, laid out unlike the VM's "
                          "115"))
    if system.is_host:
        built.append(_app("GNOME Settings 41", lambda: ensure_settings(progress, retry=retry),
                          "desktops will run the system's Settings, whose pages are not laid out as the VM's",
                          required=False))
    if fill_caches is not None:
        built.append(_start_up_caches(home, view, fill_caches))
    return built


def _start_up_caches(home: Path, view: Path, fill_caches: FillCaches) -> Built:
    without = "each boot compiles its shaders and indexes its fonts anew (about a second of CPU)"
    try:
        return Built("start-up caches", ensure_seeded_home(home, view, fill_caches), without=without,
                     required=False)
    except (OSError, ValueError, DesktopEnvError) as e:  # a desktop that cannot boot says so at the run's first boot
        return Built("start-up caches", error=str(e), without=without, required=False)


def _app(name: str, build: Callable[[], Path | None], without: str, required: bool = True) -> Built:
    try:
        return Built(name, build(), without=without, required=required)
    except MissingDependency as e:
        return Built(name, error=str(e), without=without, required=required)
