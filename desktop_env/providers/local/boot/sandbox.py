"""The bubblewrap command line for one sandboxed desktop.

What a desktop sees is an allow-list: the system's programs and libraries (/usr and
its merged-/usr links), the parts of /etc that apps read, the font cache, the env
server's own code and venv (copies, never the checkout), and its private home and
runtime folders, which live in capped memory (desktop_storage). Nothing else of the
host exists inside: no homes, /root, /opt, /srv, /var/lib, no checkout, task files,
expected files, solutions, caches or results, wherever the user keeps them. Every
tmpfs has a size cap. /proc is the desktop's own (its PID namespace); /sys shows only
the CPU topology that apps size themselves by.

A desktop started by a root harness has a root of its own (for `sudo`, see userns and
root_init): bwrap joins a user namespace the harness made (`--userns`), starts the
desktop's init as that root with a short list of capabilities, and shows the system
trees (/usr, the desktop's /etc view, dpkg's and apt's state) through locked, idmapped,
read-only mounts, which the init covers with throwaway overlays before it becomes `user`.

bwrap itself starts with an empty environment (the caller passes `bwrap_environment()`),
so no secret of the harness reaches /proc/1/environ inside; the session's variables
are an explicit list. The desktop's `user` (uid 1000 inside) is an unprivileged host
uid when the harness is root (see host_ids), so nothing it does can change a host
setting or leave a root-owned file.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..build.home_template import ensure_home_template
from ..sandbox_layout import (
    SANDBOX_CHROMIUM,
    SANDBOX_DESKTOP,
    SANDBOX_HOME,
    SANDBOX_SETTINGS,
    SANDBOX_SRC,
    SANDBOX_THUNDERBIRD,
    SANDBOX_UID,
    SANDBOX_USER,
    SANDBOX_VENV,
    SANDBOX_VSCODE,
)
from ..system_root import HOST_SYSTEM, SystemRoot
from .desktop_storage import Storage
from .desktop_storage import mounts as storage_mounts
from .userns import SYSTEM_TREES

# The merged-/usr top-level entries: links on current systems, folders on older ones.
SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")

# What of /etc the desktop's apps and tools read: the loader, fonts, locale and time
# zone, MIME and name-service tables, certificates, and each app's own folder. Left
# out on purpose: environment, profile.d and the like (where hosts keep API keys),
# shadow files, sudoers, ssh, security policies, service configs.
ETC_ALLOWED = (
    "X11", "alsa", "alternatives", "bash.bashrc", "bash_completion.d", "ca-certificates", "ca-certificates.conf",
    "chromium", "chromium.d", "dbus-1", "dconf", "debian_version", "dictionaries-common", "fonts", "gai.conf",
    "ghostscript", "gimp", "glvnd", "gtk-2.0", "gtk-3.0", "gtk-4.0", "host.conf", "hosts", "inputrc",
    "ImageMagick-6", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "libpaper.d", "libreoffice", "locale.alias",
    "locale.conf", "locale.gen", "localtime", "magic", "magic.mime", "mailcap", "mailcap.order", "mime.types",
    "mtab", "netconfig", "networks", "nsswitch.conf", "openal", "os-release", "papersize", "pango", "perl",
    "protocols", "pulse", "python3", "python3.11", "resolv.conf", "rpc", "sensors3.conf", "services", "sgml",
    "shells", "skel", "ssl/certs", "ssl/openssl.cnf", "terminfo", "thunderbird", "timezone", "vdpau_wrapper.cfg",
    "vlc", "vulkan", "xdg", "xml",
)

# What root inside may do (a container's usual set): own, read and write any of the
# desktop's files, switch users, signal its processes, bind low ports. CAP_SYS_ADMIN is the
# init's alone (it mounts the overlays) and is gone before any other process starts.
ROOT_CAPABILITIES = ("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
                     "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW",
                     "CAP_SYS_CHROOT", "CAP_AUDIT_WRITE")
INIT_ONLY_CAPABILITIES = ("CAP_SYS_ADMIN",)

SYS_ALLOWED = ("/sys/devices/system/cpu",)
THUNDERBIRD_TARGET = "/usr/lib/thunderbird"
READ_ONLY_EXTRAS = ("/var/cache/fontconfig",)  # without it every boot rebuilds the font cache in the home


@dataclass
class SandboxSpec:
    env_dir: Path          # host folder of this env: home-N/, run-N/, passwd, group, machine-id
    src_dir: Path          # folder that contains the env server's copy of the desktop_env package
    venv_dir: Path         # the env server's venv
    desktop_dir: Path      # the desktop's XDG data and config folders (desktop_view)
    network: bool = False
    extra_env: dict[str, str] = field(default_factory=dict)
    # Each boot gets its own home and runtime folders, so a reset need not wait for the
    # previous sandbox's processes to be reaped before the next one starts.
    generation: int = 0
    tmpfs_bytes: int = 1 << 30   # cap of each tmpfs inside (/tmp, /dev/shm, /run, /var/tmp)
    disk_bytes: int = 2 << 30    # cap of the home folder (desktop_storage)
    home_template: Path | None = None  # what the home starts as; None: the cached template
    # A user namespace with a root of its own (userns.create_user_namespace), whose system
    # trees are attached under `system_dir`; None: the desktop has one uid and no root.
    userns_fd: int | None = None
    # VS Code's folder (vscode.installed_vscode()), mounted read-only; None: not installed.
    vscode_dir: Path | None = None
    # Chromium 120's folder (vm_chromium.installed_chromium()), mounted read-only, which the `google-chrome`
    # shim runs; None: not installed, and the shim runs the system's Chromium.
    chromium_dir: Path | None = None
    # GNOME Settings 41's folder (vm_settings.installed_settings()), mounted read-only, which the
    # `gnome-control-center` shim runs; None: not installed, and the shim runs the system's Settings.
    settings_dir: Path | None = None
    # Thunderbird 115's usr/lib/thunderbird (vm_thunderbird.py), mounted read-only over the system's
    # /usr/lib/thunderbird, where the tasks' profiles and the tree's /usr/bin/thunderbird expect it; None: the
    # system's Thunderbird runs.
    thunderbird_dir: Path | None = None
    # Where /usr, /etc and the system state come from: the host's, or the Ubuntu 22.04 userland's tree.
    system: SystemRoot = HOST_SYSTEM

    @property
    def root_inside(self) -> bool:
        return self.userns_fd is not None

    @property
    def system_dir(self) -> Path:
        """Staging folders where the harness's child attaches the idmapped system trees."""
        return self.env_dir / "system"

    @property
    def runtime(self) -> Path:
        """Host folder of the harness's files for this boot (session.json), read-only inside."""
        return self.env_dir / f"run-{self.generation}"

    @property
    def storage(self) -> Storage:
        return Storage(disk_bytes=self.disk_bytes, home_template=self.home_template or ensure_home_template(),
                       harness_dir=self.runtime)

    @property
    def sockets(self) -> Path:
        """Host-only folder of the listening sockets handed to the desktop (never mounted)."""
        return self.env_dir / "sockets"


def write_identity_files(spec: SandboxSpec) -> None:
    """A passwd and group that know `user`, and a machine id of the desktop's own."""
    (spec.env_dir / "passwd").write_text(
        f"root:x:0:0:root:/root:/bin/bash\n"
        f"{SANDBOX_USER}:x:{SANDBOX_UID}:{SANDBOX_UID}:OSWorld User:{SANDBOX_HOME}:/bin/bash\n"
        f"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
    (spec.env_dir / "group").write_text(
        f"root:x:0:\n{SANDBOX_USER}:x:{SANDBOX_UID}:\nnogroup:x:65534:\n")
    (spec.env_dir / "machine-id").write_text(os.urandom(16).hex() + "\n")
    for name in ("passwd", "group", "machine-id"):
        os.chmod(spec.env_dir / name, 0o644)


def bwrap_environment() -> dict[str, str]:
    """bwrap's own environment: nothing but a PATH to find itself by. Whatever bwrap
    inherits is readable inside as /proc/1/environ, whatever --clearenv does later."""
    return {"PATH": "/usr/bin:/bin"}


def sandbox_env(spec: SandboxSpec) -> dict[str, str]:
    env = {
        "HOME": SANDBOX_HOME,
        "USER": SANDBOX_USER,
        "LOGNAME": SANDBOX_USER,
        # The venv first: `python`/`python3` there import pyautogui, as on OSWorld's VM.
        "PATH": f"{SANDBOX_VENV}/bin:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
        "LANG": "C.UTF-8",
        "SHELL": "/bin/bash",
        "TERM": "xterm-256color",
        "XDG_RUNTIME_DIR": f"/run/user/{SANDBOX_UID}",
        "PYTHONPATH": SANDBOX_SRC,
        "PYTHONDONTWRITEBYTECODE": "1",
        # glibc gives every thread that allocates its own malloc arena; GTK apps and the
        # threaded env server each grow several. Two per process are plenty here.
        "MALLOC_ARENA_MAX": "2",
        "MALLOC_MMAP_THRESHOLD_": "131072",
        "MALLOC_TRIM_THRESHOLD_": "131072",
        # The desktop's apps, services, extensions and defaults come from its own view, never
        # from whatever else the host has installed.
        "XDG_DATA_DIRS": f"{SANDBOX_DESKTOP}/share",
        "XDG_CONFIG_DIRS": f"{SANDBOX_DESKTOP}/xdg",
        "DCONF_PROFILE": f"{SANDBOX_DESKTOP}/dconf/profile",
        "FONTCONFIG_FILE": f"{SANDBOX_DESKTOP}/fontconfig/fonts.conf",
    }
    if spec.vscode_dir is not None:
        # code.desktop (VS Code's app entry, which the dock's favourites name) and its icon.
        env["XDG_DATA_DIRS"] = f"{SANDBOX_VSCODE}/share:{env['XDG_DATA_DIRS']}"
    env.update(spec.extra_env)
    return env


def _system_mounts(spec: SandboxSpec) -> list[str]:
    if spec.root_inside:
        return _system_mounts_with_root(spec)
    system = spec.system
    # /usr/local: where pip puts host installs
    argv = ["--ro-bind", str(system.host_path("/usr")), "/usr", "--tmpfs", "/usr/local"]
    argv += _system_links(system)
    if system.is_host:
        for name in ETC_ALLOWED:
            path = f"/etc/{name}"
            if os.path.lexists(path):
                argv += ["--ro-bind", path, path]
    else:  # a tree built for desktops holds nothing of the host's: its /etc is the desktop's whole
        argv += ["--ro-bind", str(system.host_path("/etc")), "/etc"]
    return argv + _read_only_extras(system)


def _system_mounts_with_root(spec: SandboxSpec) -> list[str]:
    """The staged trees in place of the host's: /usr and dpkg's and apt's state idmapped,
    /etc the desktop's own view (etc_view), each to be covered by an overlay inside."""
    argv = []
    for name, target in SYSTEM_TREES.items():
        if spec.system.host_path(target).is_dir():
            argv += ["--ro-bind", str(spec.system_dir / name), target]
    argv += ["--tmpfs", "/usr/local", *_system_links(spec.system), "--ro-bind", str(spec.system_dir / "etc"), "/etc"]
    return argv + _read_only_extras(spec.system)


def _system_links(system: SystemRoot) -> list[str]:
    argv = []
    for name in SYSTEM_LINKS:
        path = system.host_path(f"/{name}")
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), f"/{name}"]
    return argv


def _read_only_extras(system: SystemRoot) -> list[str]:
    argv = []
    for path in SYS_ALLOWED:  # the host's CPUs, whichever system runs on them
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    for path in READ_ONLY_EXTRAS:
        source = system.host_path(path)
        if source.exists():
            argv += ["--ro-bind", str(source), path]
    return argv


def _thunderbird_mount(spec: SandboxSpec) -> list[str]:
    """On top of /usr (bound before it): over /usr/lib/thunderbird itself, or, for a desktop with a root of its
    own, whose init overlays /usr and would hide it, where the init moves it from (root_init.py)."""
    if spec.thunderbird_dir is None or not spec.system.host_path(THUNDERBIRD_TARGET).is_dir():
        return []
    return ["--ro-bind", str(spec.thunderbird_dir), SANDBOX_THUNDERBIRD if spec.root_inside else THUNDERBIRD_TARGET]


def _name_service(spec: SandboxSpec) -> list[str]:
    """The host's resolver settings where a tree's /etc/resolv.conf points (systemd-resolved's file, under
    /run): only a desktop with a network resolves names."""
    if not spec.network or spec.system.is_host:
        return []
    link = spec.system.host_path("/etc/resolv.conf")
    if not link.is_symlink() or not os.path.exists("/etc/resolv.conf"):
        return []
    inside = os.path.normpath(os.path.join("/etc", os.readlink(link)))
    if not inside.startswith("/run/"):
        return []
    return ["--ro-bind", "/etc/resolv.conf", inside]


def _tmpfs(path: str, size: int, perms: str | None = None) -> list[str]:
    return (["--perms", perms] if perms else []) + ["--size", str(size), "--tmpfs", path]


def _identity(spec: SandboxSpec) -> list[str]:
    """Who the sandbox's first process is: root of the harness's namespace (which becomes
    `user` itself, see root_init), or `user` in a namespace bwrap makes."""
    if spec.root_inside:
        caps = [arg for cap in (*ROOT_CAPABILITIES, *INIT_ONLY_CAPABILITIES) for arg in ("--cap-add", cap)]
        # gid 1000 is the desktops' host group, which bwrap needs to reach its bind sources in
        # the env folder; root_init takes gid 0 once they are mounted.
        return ["--userns", str(spec.userns_fd), "--uid", "0", "--gid", str(SANDBOX_UID), *caps]
    return ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]


def bwrap_argv(spec: SandboxSpec, command: list[str]) -> list[str]:
    size = spec.tmpfs_bytes
    argv = ["bwrap", *_system_mounts(spec)]
    if not spec.root_inside:  # the root view's /etc has its own passwd and group, which useradd changes
        argv += ["--ro-bind", str(spec.env_dir / "passwd"), "/etc/passwd",
                 "--ro-bind", str(spec.env_dir / "group"), "/etc/group"]
    argv += [
        "--ro-bind", str(spec.env_dir / "machine-id"), "/etc/machine-id",
        "--dev", "/dev",
        *_tmpfs("/dev/shm", size, "1777"),
        "--proc", "/proc",
        *_tmpfs("/tmp", size, "1777"),
        *_tmpfs("/var/tmp", size, "1777"),
        "--symlink", "../run", "/var/run",
        *_tmpfs("/run", size),
        *_name_service(spec),
        "--ro-bind", str(spec.src_dir), SANDBOX_SRC,
        "--ro-bind", str(spec.venv_dir), SANDBOX_VENV,
        *(["--ro-bind", str(spec.vscode_dir), SANDBOX_VSCODE] if spec.vscode_dir is not None else []),
        *(["--ro-bind", str(spec.chromium_dir), SANDBOX_CHROMIUM] if spec.chromium_dir is not None else []),
        *(["--ro-bind", str(spec.settings_dir), SANDBOX_SETTINGS] if spec.settings_dir is not None else []),
        *_thunderbird_mount(spec),
        "--ro-bind", str(spec.desktop_dir), SANDBOX_DESKTOP,
        "--perms", "0700", "--dir", f"/run/user/{SANDBOX_UID}",
        *(_tmpfs("/home", size, "0755") if spec.root_inside else ["--perms", "0755", "--dir", "/home"]),
        *storage_mounts(spec.storage),
        "--remount-ro", "/",  # the skeleton bwrap built (/etc, /var, /home...) takes no new files
        "--remount-ro", "/dev",
        *_identity(spec),
        "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--hostname", "osworld",
        "--die-with-parent", "--new-session",
        "--chdir", SANDBOX_HOME,
        "--clearenv",
    ]
    if not spec.network:
        argv.append("--unshare-net")
    for key, value in sandbox_env(spec).items():
        argv += ["--setenv", key, value]
    return argv + ["--"] + command
