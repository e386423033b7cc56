"""The first process of a desktop that has a root of its own: throwaway system, sudo broker, then `user`.

Started by bwrap as root of the desktop's user namespace (never the host's root), with a
short list of capabilities (sandbox.ROOT_CAPABILITIES, plus CAP_SYS_ADMIN for the mounts
below), it:
1. covers each read-only system tree (/usr, /etc, dpkg's and apt's state) with an overlay
   whose upper layer lives in a size-capped tmpfs, so root's changes (sudo, useradd, apt)
   stay inside this desktop and vanish with it at reset;
2. makes the rest of the system writable for root (the root folder's tmpfs, capped);
3. starts the sudo broker (sudo_broker) as root, without CAP_SYS_ADMIN, so nothing after
   this step can mount, unmount or remount anything;
4. becomes `user` (uid 1000) with no capabilities at all and execs the session.

    python -m desktop_env.server.root_init --upper-bytes N SESSION_JSON -- COMMAND...
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
from pathlib import Path

from .sandbox_paths import THUNDERBIRD_DIR, THUNDERBIRD_TARGET, USER_UID
from .sudo_broker import BROKER_LOG, SOCKET_DIR

OVERLAID = ("/usr", "/etc", "/var/lib/dpkg", "/var/lib/apt")
UPPER_ROOT = "/run/osworld-root"  # holds the overlays' upper and work folders; root only
# Folders root's tools expect on a system (apt's download and log folders).
ROOT_FOLDERS = ("/var/cache/apt/archives/partial", "/var/log/apt", "/root")
USR_LOCAL = ("bin", "etc", "games", "include", "lib", "man", "sbin", "share", "src")  # as Debian ships it
SUDO_CLIENT = Path(__file__).with_name("shims") / "sudo"

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_MOVE = 0x2000
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522
CAP_SYS_ADMIN = 21
CAP_LAST = 63  # PR_CAPBSET_DROP answers EINVAL past the kernel's last capability

_libc = ctypes.CDLL(None, use_errno=True)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    if _libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(), flags,
                   data and data.encode()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {fstype or ''} {target} ({data or ''}): {os.strerror(err)}")


def overlay_system(upper_bytes: int) -> None:
    os.makedirs(UPPER_ROOT, mode=0o700, exist_ok=True)  # on /run, the sandbox's tmpfs
    _mount("tmpfs", UPPER_ROOT, "tmpfs", MS_NOSUID | MS_NODEV, f"size={upper_bytes},mode=0700")
    machine_id = Path("/etc/machine-id").read_text()  # bound over the /etc view; the overlay hides the bind
    for target in OVERLAID:
        if not os.path.ismount(target):
            continue
        layer = Path(UPPER_ROOT) / target.strip("/").replace("/", "-")
        (layer / "upper").mkdir(parents=True)
        (layer / "work").mkdir()
        # The lower layer is the idmapped read-only mount already at `target`; the overlay covers it.
        _mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV,
               f"lowerdir={target},upperdir={layer}/upper,workdir={layer}/work,userxattr")
    # A folder mounted on top of /usr would be hidden by the overlay (its lower layer is /usr's mount alone):
    # Thunderbird 115, staged elsewhere by the harness, moves over the overlay's /usr/lib/thunderbird.
    if os.path.ismount(THUNDERBIRD_DIR) and os.path.isdir(THUNDERBIRD_TARGET):
        _mount(THUNDERBIRD_DIR, THUNDERBIRD_TARGET, None, MS_MOVE, None)
    # What was hidden under /usr stays hidden: the host's /usr/local (pip's host installs).
    _mount("tmpfs", "/usr/local", "tmpfs", MS_NOSUID | MS_NODEV, f"size={upper_bytes},mode=0755")
    for name in USR_LOCAL:
        os.mkdir(f"/usr/local/{name}", 0o755)
    Path("/etc/machine-id").write_text(machine_id)
    # The root folder bwrap built (/var, /opt, /srv...): writable for root, capped.
    _mount(None, "/", None, MS_REMOUNT | MS_BIND, None)
    _mount(None, "/", None, MS_REMOUNT, f"size={upper_bytes}")
    for folder in ROOT_FOLDERS:
        os.makedirs(folder, exist_ok=True)
    os.chmod("/root", 0o700)
    sudo = Path("/usr/bin/sudo")  # for scripts that name it by its path
    if sudo.exists() or sudo.is_symlink():
        sudo.unlink()
    sudo.symlink_to(SUDO_CLIENT)


def _drop_from_bounding_set(capabilities) -> None:
    for cap in capabilities:
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: no such cap
            err = ctypes.get_errno()
            raise OSError(err, f"cannot drop capability {cap}: {os.strerror(err)}")


def _clear_inherited_capabilities() -> None:
    """bwrap hands its capabilities on as inheritable and ambient too, and a root process's
    exec takes those back whatever the bounding set says: both emptied."""
    if _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot clear ambient capabilities: {os.strerror(err)}")
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # two of {effective, permitted, inheritable}
    if _libc.capget(header, data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capget: {os.strerror(err)}")
    data[2] = data[5] = 0
    if _libc.capset(header, data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")


def start_broker(session_json: str, logs: Path) -> None:
    """The broker, reparented to the sandbox's pid 1 (a double fork), so the session never
    reaps or waits for it."""
    os.makedirs(SOCKET_DIR, mode=0o755, exist_ok=True)
    child = os.fork()
    if child:
        os.waitpid(child, 0)
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        _drop_from_bounding_set([CAP_SYS_ADMIN])
        _clear_inherited_capabilities()
        log = os.open(logs / BROKER_LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.execv(sys.executable, [sys.executable, "-m", "desktop_env.server.sudo_broker", session_json])
    finally:
        os._exit(127)


def open_skeleton(private: tuple[str, ...]) -> None:
    """bwrap made the folders leading to its mounts (/var/lib, /run/user, /run/osworld-lib...)
    as root here, some 0700, which `user` could not cross: made 0755, as on a system."""
    for top in ("/", "/run"):
        device = os.lstat(top).st_dev
        for folder, dirs, _ in os.walk(top):
            dirs[:] = [d for d in dirs if os.lstat(os.path.join(folder, d)).st_dev == device
                       and os.path.join(folder, d) not in private]
            if os.lstat(folder).st_mode & 0o777 == 0o700:
                os.chmod(folder, 0o755)


def become_user(home: str, session_runtime: Path) -> None:
    """uid/gid 1000, no capability left to gain, even by exec."""
    runtime = f"/run/user/{USER_UID}"
    open_skeleton(private=("/root", UPPER_ROOT, runtime, str(session_runtime)))
    # made by bwrap, so owned by root here: the XDG runtime folder, the session's runtime
    # folder and its logs, and the home's tmpfs (desktop_storage)
    for folder in (runtime, session_runtime, session_runtime / "logs", home):
        os.chown(folder, USER_UID, USER_UID)
    _drop_from_bounding_set(range(CAP_LAST + 1))
    _clear_inherited_capabilities()
    os.setgroups([USER_UID])
    os.setresgid(USER_UID, USER_UID, USER_UID)
    os.setresuid(USER_UID, USER_UID, USER_UID)  # clears every capability (no keep-caps)
    os.chdir(home)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="root_init")
    parser.add_argument("--upper-bytes", type=int, required=True)
    parser.add_argument("session_json")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if os.getuid() != 0:
        sys.exit("root_init: must start as root of the desktop's user namespace")
    os.setgroups([])
    os.setresgid(0, 0, 0)  # bwrap ran as gid 1000, the host group that may enter the env folder
    overlay_system(args.upper_bytes)
    session_runtime = Path(args.session_json).parent
    start_broker(args.session_json, session_runtime / "logs")
    become_user(os.environ["HOME"], session_runtime)  # the sandbox's environment always has it
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
