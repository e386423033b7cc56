"""The bubblewrap command line for one sandboxed desktop.

What a desktop sees is an allow-list: the system's programs and libraries (/usr and
its merged-/usr links), the parts of /etc that apps read, the font cache, the env
server's own code and venv (copies, never the checkout), and its private home and
runtime folders. Nothing else of the host exists inside: no homes, /root, /opt, /srv,
/var/lib, no checkout, task files, expected files, solutions, caches or results,
wherever the user keeps them. Every tmpfs has a size cap. /proc is the desktop's own
(its PID namespace); /sys shows only the CPU topology that apps size themselves by.

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

SANDBOX_UID = 1000
SANDBOX_USER = "user"
SANDBOX_HOME = "/home/user"
SANDBOX_RUNTIME = "/run/osworld"
SANDBOX_SRC = "/run/osworld-lib/src"  # under /run, a tmpfs, where mount points can be made
SANDBOX_VENV = "/run/osworld-lib/venv"

# The merged-/usr top-level entries: links on current systems, folders on older ones.
SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")

# What of /etc the desktop's apps and tools read: the loader, fonts, locale and time
# zone, MIME and name-service tables, certificates, and each app's own folder. Left
# out on purpose: environment, profile.d and the like (where hosts keep API keys),
# shadow files, sudoers, ssh, security policies, service configs.
ETC_ALLOWED = (
    "X11", "alternatives", "bash.bashrc", "bash_completion.d", "ca-certificates", "ca-certificates.conf",
    "chromium", "chromium.d", "dbus-1", "dconf", "debian_version", "dictionaries-common", "fonts", "gai.conf",
    "ghostscript", "gimp", "glvnd", "gtk-2.0", "gtk-3.0", "gtk-4.0", "host.conf", "hosts", "inputrc",
    "ImageMagick-6", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "libpaper.d", "libreoffice", "locale.alias",
    "locale.conf", "locale.gen", "localtime", "magic", "magic.mime", "mailcap", "mailcap.order", "mime.types",
    "mtab", "netconfig", "networks", "nsswitch.conf", "openal", "os-release", "papersize", "pango", "perl",
    "protocols", "pulse", "python3", "python3.11", "resolv.conf", "rpc", "sensors3.conf", "services", "sgml",
    "shells", "skel", "ssl/certs", "ssl/openssl.cnf", "terminfo", "thunderbird", "timezone", "vdpau_wrapper.cfg",
    "vlc", "vulkan", "xdg", "xml",
)

SYS_ALLOWED = ("/sys/devices/system/cpu",)
READ_ONLY_EXTRAS = ("/var/cache/fontconfig",)  # without it every boot rebuilds the font cache in the home


@dataclass
class SandboxSpec:
    env_dir: Path          # host folder of this env: home-N/, run-N/, passwd, group, machine-id
    src_dir: Path          # folder that contains the env server's copy of the desktop_env package
    venv_dir: Path         # the env server's venv
    network: bool = False
    extra_env: dict[str, str] = field(default_factory=dict)
    # Each boot gets its own home and runtime folders, so a reset need not wait for the
    # previous sandbox's processes to be reaped before the next one starts.
    generation: int = 0
    tmpfs_bytes: int = 1 << 30   # cap of each tmpfs inside (/tmp, /dev/shm, /run, /var/tmp)

    @property
    def home(self) -> Path:
        return self.env_dir / f"home-{self.generation}"

    @property
    def runtime(self) -> Path:
        return self.env_dir / f"run-{self.generation}"

    @property
    def bwrap_log(self) -> Path:
        return self.env_dir / f"bwrap-{self.generation}.log"

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
    }
    env.update(spec.extra_env)
    return env


def _system_mounts() -> list[str]:
    argv = ["--ro-bind", "/usr", "/usr", "--tmpfs", "/usr/local"]  # /usr/local: where pip puts host installs
    for name in SYSTEM_LINKS:
        path = f"/{name}"
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for name in ETC_ALLOWED:
        path = f"/etc/{name}"
        if os.path.lexists(path):
            argv += ["--ro-bind", path, path]
    for path in (*SYS_ALLOWED, *READ_ONLY_EXTRAS):
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    return argv


def _tmpfs(path: str, size: int, perms: str | None = None) -> list[str]:
    return (["--perms", perms] if perms else []) + ["--size", str(size), "--tmpfs", path]


def bwrap_argv(spec: SandboxSpec, command: list[str]) -> list[str]:
    size = spec.tmpfs_bytes
    argv = ["bwrap", *_system_mounts()]
    argv += [
        "--ro-bind", str(spec.env_dir / "passwd"), "/etc/passwd",
        "--ro-bind", str(spec.env_dir / "group"), "/etc/group",
        "--ro-bind", str(spec.env_dir / "machine-id"), "/etc/machine-id",
        "--dev", "/dev",
        *_tmpfs("/dev/shm", size, "1777"),
        "--proc", "/proc",
        *_tmpfs("/tmp", size, "1777"),
        *_tmpfs("/var/tmp", size, "1777"),
        "--symlink", "../run", "/var/run",
        *_tmpfs("/run", size),
        "--ro-bind", str(spec.src_dir), SANDBOX_SRC,
        "--ro-bind", str(spec.venv_dir), SANDBOX_VENV,
        "--bind", str(spec.runtime), SANDBOX_RUNTIME,
        "--perms", "0700", "--dir", f"/run/user/{SANDBOX_UID}",
        "--perms", "0755", "--dir", "/home",
        "--bind", str(spec.home), SANDBOX_HOME,
        "--remount-ro", "/",  # the skeleton bwrap built (/etc, /var, /home...) takes no new files
        "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
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
