"""Checks what the local desktop needs and says exactly how to install what is missing."""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ... import debian_packages
from ...debian_packages import read_package_list
from ...errors import MissingDependency
from . import apps
from .boot.host_ids import sandbox_id_range
from .boot.userns import root_inside_unavailable
from .build import ubuntu_userland, vm_chromium, vm_settings, vm_thunderbird, vscode
from .build.prepare import SYSTEM_VARIABLE, desktop_system
from .build.server_venv import SYSTEM_MODULES, SYSTEM_PYTHON, venv_dir
from .build.ubuntu_fonts import FAMILIES, fonts_dir
from .limits import DesktopLimits, cgroup_support, format_size
from .sandbox_layout import SANDBOX_HOME

PACKAGES_FILE = Path(__file__).with_name("system_packages.txt")


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True  # a failed optional check is reported, but `osworld env doctor` still passes


def required_packages() -> list[str]:
    return read_package_list(PACKAGES_FILE)


def _probe_uid() -> int | None:
    """A root harness starts desktops as an unprivileged uid, so probes run as one too."""
    if os.geteuid() != 0:
        return None
    ids = sandbox_id_range()
    return ids.base + ids.count - 1


def _bwrap_probe(args: list[str], command: list[str]) -> subprocess.CompletedProcess:
    """`command` in a minimal bwrap sandbox (with `args`), as the uid desktops run as."""
    uid = _probe_uid()
    return subprocess.run(["bwrap", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib",
                           "/lib", "--symlink", "usr/lib64", "/lib64", "--dev", "/dev", "--proc", "/proc",
                           "--unshare-user", "--uid", "1000", "--unshare-pid", "--unshare-net", "--die-with-parent",
                           *args, *command], capture_output=True, text=True, timeout=30, cwd="/",
                          preexec_fn=_become(uid) if uid is not None else None)


def _become(uid: int) -> Callable[[], None]:
    """A preexec_fn that makes the child `uid` (group too), with no supplementary groups."""
    def drop() -> None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    return drop


def check_bubblewrap() -> Check:
    if shutil.which("bwrap") is None:
        return Check("sandbox", False, "bwrap not found", "apt-get install bubblewrap")
    # A root harness starts desktops as an unprivileged uid, so the probe does too: that
    # needs the kernel to allow user namespaces to unprivileged users.
    probe = _bwrap_probe([], ["true"])
    uid = _probe_uid()
    who = f"as the unprivileged uid {uid}" if uid is not None else "as this user"
    if probe.returncode != 0:
        return Check("sandbox", False, f"bwrap cannot create namespaces {who}: {probe.stderr.strip()}",
                     "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 on Debian, "
                     "kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap on Ubuntu)")
    return Check("sandbox", True, f"bwrap creates user, PID and network namespaces {who}")


def check_home_cap() -> Check:
    """Whether a desktop's home gets its size cap: a capped tmpfs, which a write past fails in."""
    if shutil.which("bwrap") is None:
        return Check("home cap", False, "bwrap not found", "apt-get install bubblewrap")
    cap = 1 << 20
    probe = _bwrap_probe(["--size", str(cap), "--tmpfs", SANDBOX_HOME],
                         ["/usr/bin/dd", "if=/dev/zero", f"of={SANDBOX_HOME}/fill", "bs=4096", "count=512"])
    if "No space left on device" not in probe.stderr:
        return Check("home cap", False, f"a write past a {format_size(cap)} tmpfs did not fail: "
                                        f"{probe.stderr.strip() or probe.stdout.strip() or probe.returncode}",
                     "use bubblewrap 0.5 or newer (--size)")
    default = format_size(DesktopLimits().disk_bytes)
    return Check("home cap", True, f"each desktop's home is a tmpfs of --desktop-disk (default {default}), counted "
                                   "in its memory limit; a write past it fails with ENOSPC and is a limit hit")


def check_system_python() -> Check:
    probe = subprocess.run([SYSTEM_PYTHON, "-c", f"import {', '.join(SYSTEM_MODULES)}"],
                           capture_output=True, text=True) if Path(SYSTEM_PYTHON).exists() else None
    if probe is None or probe.returncode != 0:
        reason = "not found" if probe is None else probe.stderr.strip().splitlines()[-1]
        return Check("server python", False, f"{SYSTEM_PYTHON}: {reason}",
                     "apt-get install python3 python3-xlib python3-pil python3-pyatspi")
    return Check("server python", True, f"{SYSTEM_PYTHON} imports {', '.join(SYSTEM_MODULES)}")


def check_server_venv() -> Check:
    path = venv_dir()
    if (path / "bin" / "python").exists():
        return Check("server venv", True, str(path))
    return Check("server venv", False, f"{path} not built yet", "osworld env setup")


def check_limits() -> Check:
    """Whether each desktop gets its own cgroup with memory, process and CPU limits."""
    support = cgroup_support()
    fix = ""
    if not support.complete:
        if any("writable by root" in reason for reason in support.reasons.values()):
            fix = "run the harness as root (cgroup v1 hierarchies are writable by root only)"
        elif support.version in ("v2", "none") and any("delegat" in r or "holds processes" in r
                                                       for r in support.reasons.values()):
            fix = "start the harness in a delegated cgroup: systemd-run --scope -p Delegate=yes osworld ..."
    return Check("limits", support.in_force, support.summary(), fix, required=False)


def check_sudo() -> Check:
    """Whether desktops get a root of their own, so that `sudo` works inside as on OSWorld's VM."""
    reason = root_inside_unavailable()
    if reason:
        fix = "run the harness as root" if os.geteuid() != 0 else "use Linux 5.19 or newer on ext4, xfs or btrfs"
        return Check("sudo", False, f"unavailable inside the desktop: {reason}", fix, required=False)
    return Check("sudo", True, "works inside the desktop (its own root in a user namespace; "
                               "changes live in overlays thrown away at reset)", required=False)


def check_vscode() -> Check:
    """Whether VS Code (code-server) can run, as `tasks coverage` and the run's plan decide it (apps.py): installed,
    built by a run before its first desktop starts, or not buildable here (its tasks cannot run)."""
    state = apps.vscode_state()
    if state.installed is not None:
        return Check("vs code", True, f"code-server {vscode.CODE_SERVER_VERSION} in {state.installed}", required=False)
    if state.runnable:
        return Check("vs code", True, f"not installed ({vscode.vscode_dir()}), and its tasks run: {apps.BUILT_FIRST} "
                                      "by a run whose tasks use it (a few minutes)",
                     "osworld env setup --vscode (to build it now)", required=False)
    missing = debian_packages.missing_packages(vscode.build_packages())
    fix = "osworld env setup --vscode"
    if missing:
        fix = f"apt-get install --no-install-recommends {' '.join(missing)}; then {fix}"
    if shutil.which("npm") is None:
        fix = f"install npm; then {fix}"
    return Check("vs code", False, f"not installed ({vscode.vscode_dir()}) and cannot be built: {state.blocker}; "
                                   "its tasks cannot run here", fix, required=False)


def check_chromium() -> Check:
    """Which Chromium a desktop's `google-chrome` runs: Debian 11's 120 (the VM's era) when installed,
    else the system's."""
    found = vm_chromium.installed_chromium()
    if found is not None:
        return Check("chromium", True, f"desktops run Chromium {vm_chromium.UPSTREAM_VERSION} (Debian 11's, the "
                                       f"VM's era) from {found}", required=False)
    blocker = vm_chromium.build_blocker()
    return Check("chromium", False, f"Chromium {vm_chromium.UPSTREAM_VERSION} not installed "
                                    f"({vm_chromium.chromium_dir()}): desktops run "
                                    "the system's Chromium, whose menus and Settings pages are not the VM's; a run "
                                    "whose tasks use Chrome installs it first",
                 blocker or "osworld env setup", required=False)


def check_settings() -> Check:
    """Which GNOME Settings a desktop's `gnome-control-center` runs: Ubuntu 22.04's 41 (the VM's) when
    installed, else the system's."""
    found = vm_settings.installed_settings()
    if found is not None:
        return Check("gnome settings", True, f"desktops run GNOME Settings {vm_settings.UPSTREAM_RELEASE} (Ubuntu "
                                             f"22.04's, the VM's) from {found}", required=False)
    return Check("gnome settings", False, f"GNOME Settings {vm_settings.UPSTREAM_RELEASE} not installed "
                                          f"({vm_settings.settings_dir()}): "
                                          "desktops run the system's Settings, whose pages and drop-downs are not "
                                          "laid out as the VM's; a run installs it first",
                 vm_settings.build_blocker() or "osworld env setup", required=False)


def check_thunderbird() -> Check:
    """Which Thunderbird a desktop booted from the Ubuntu 22.04 userland runs: Debian 11's 115 (the VM's line) when
    installed, else the userland's own 140 (the host's system always runs its own)."""
    found = vm_thunderbird.installed_thunderbird()
    if found is not None:
        return Check("thunderbird", True, f"desktops on the Ubuntu 22.04 userland run Thunderbird "
                                          f"{vm_thunderbird.UPSTREAM_VERSION} (Debian 11's, the VM's 115 line) from "
                                          f"{found}", required=False)
    return Check("thunderbird", False, f"Thunderbird {vm_thunderbird.UPSTREAM_VERSION} not installed "
                                       f"({vm_thunderbird.thunderbird_dir()}): desktops on the Ubuntu 22.04 userland "
                                       "run its Thunderbird 140, laid out unlike the VM's 115; a run on the userland "
                                       "whose tasks use Thunderbird installs it first",
                 vm_thunderbird.build_blocker() or "OSWORLD_DESKTOP_SYSTEM=ubuntu-22.04 osworld env setup",
                 required=False)


def check_fonts() -> Check:
    """Whether the desktop has Ubuntu's font family, as the VM has (else DejaVu stands in)."""
    if fonts_dir().is_dir():
        return Check("fonts", True, f"{' and '.join(FAMILIES)} in {fonts_dir()}", required=False)
    return Check("fonts", False, f"{' and '.join(FAMILIES)} not fetched yet: the desktop would use DejaVu",
                 "install npm, then osworld env setup", required=False)


def check_desktop_system() -> Check:
    """Which system desktops boot from (build/prepare.py's desktop_system): the userland where it is built."""
    try:
        system = desktop_system()
    except MissingDependency as e:
        return Check("desktop system", False, str(e), f"unset {SYSTEM_VARIABLE}, or build the userland", required=True)
    if not system.is_host:
        return Check("desktop system", True, f"desktops boot from Ubuntu 22.04's userland ({system.path})")
    host = "desktops boot from the host's packages (Debian's, dressed as Ubuntu 22.04's)"
    if os.environ.get(SYSTEM_VARIABLE) == "host":
        return Check("desktop system", True, f"{host} ({SYSTEM_VARIABLE}=host)", required=False)
    return Check("desktop system", True, f"{host}: the Ubuntu 22.04 userland is not built",
                 "osworld env setup --ubuntu-userland (as root)", required=False)


def check_ubuntu_userland() -> Check:
    """Whether Ubuntu 22.04's own userland is built (desktops boot from it when it is), and the versions of the
    VM's apps in it."""
    found = ubuntu_userland.installed_userland()
    if found is None:
        return Check("ubuntu userland", False, f"Ubuntu 22.04 userland: not built ({ubuntu_userland.userland_dir()})",
                     "osworld env setup --ubuntu-userland", required=False)
    versions = ubuntu_userland.userland_versions(found)
    pinned = ubuntu_userland.REPO_LOCK
    drift = ubuntu_userland.lock_differences(ubuntu_userland.read_lock((found / ubuntu_userland.LOCK).read_text()),
                                             ubuntu_userland.read_lock(pinned.read_text())) if pinned.is_file() else []
    lock = f"no {pinned.name} to compare with" if not pinned.is_file() else \
        f"{len(drift)} packages differ from {pinned.name}" if drift else f"as {pinned.name}"
    return Check("ubuntu userland", True, f"Ubuntu 22.04 userland: built in {found}, {versions.summary()}; {lock}",
                 required=False)


def run_checks() -> list[Check]:
    missing = debian_packages.missing_packages(required_packages())
    checks = [Check("debian packages", not missing,
                    f"missing: {' '.join(missing)}" if missing else f"all {len(required_packages())} installed",
                    f"apt-get install --no-install-recommends {' '.join(missing)}" if missing else "")]
    checks += [check_desktop_system(), check_bubblewrap(), check_home_cap(), check_system_python(),
               check_server_venv(), check_fonts(), check_limits(), check_sudo(), check_vscode(), check_chromium(),
               check_settings(), check_thunderbird(), check_ubuntu_userland()]
    return checks
