"""A user namespace with a root of its own for one desktop, and the system trees it may change.

`sudo` inside the desktop needs a root that is not the host's: the desktop's user
namespace maps inside uid 0 to one unprivileged host uid of the desktop's own block and
inside uids 1000.. (the user, and accounts `useradd` makes) to the next ones (see
host_ids). Only a root harness can write such a map (an unprivileged process maps one
id, its own), so it makes the namespace itself: a short-lived holder process, running as
the desktop's root uid, unshares a user namespace; the harness writes its uid and gid
maps and keeps a descriptor of it for `bwrap --userns`.

Inside, the system's files must belong to that root, or it could change nothing: they
belong to host root, which the namespace does not map. So the system trees (/usr, the
desktop's /etc, dpkg's and apt's state) reach the sandbox as idmapped mounts (host uid 0
shown as the namespace's root), read-only, which the desktop's init then covers with
overlays whose upper layers live in a size-capped tmpfs: whatever sudo changes lives
and dies with the desktop. The idmapped mounts are attached in a mount namespace of
the harness's forked child before bwrap starts, so bwrap's own mount namespace (owned by
the desktop's user namespace) receives them as locked mounts: nothing inside, root
included, can make them writable again (without that lock, root inside could remount
one read-write and write the host's /usr as host root).
"""
from __future__ import annotations

import ctypes
import functools
import os
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ....errors import ProviderError
from .host_ids import sandbox_id_range

CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18

# The new mount API (linux/mount.h); numbers are the same on every architecture since 5.2.
SYS_OPEN_TREE = 428
SYS_MOVE_MOUNT = 429
SYS_MOUNT_SETATTR = 442
OPEN_TREE_CLONE = 1
AT_FDCWD = -100
AT_EMPTY_PATH = 0x1000
MOVE_MOUNT_F_EMPTY_PATH = 0x4
MOUNT_ATTR_RDONLY = 0x1
MOUNT_ATTR_NOSUID = 0x2
MOUNT_ATTR_NODEV = 0x4
MOUNT_ATTR_IDMAP = 0x100000

# What each system tree is called under the env folder (where the harness's child attaches
# it) and where the sandbox shows it. Only trees with nothing secret in them: /etc is the
# desktop's own view (etc_view), never the host's.
SYSTEM_TREES = {"usr": "/usr", "dpkg": "/var/lib/dpkg", "apt": "/var/lib/apt"}

_libc = ctypes.CDLL(None, use_errno=True)


class NamespaceError(ProviderError, OSError):
    """A namespace call the kernel refused (errno and what was asked)."""


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise NamespaceError(err, f"{what}: {os.strerror(err)}")
    return result


@dataclass(frozen=True)
class IdMaps:
    """The lines of /proc/PID/uid_map and gid_map for one desktop."""
    uid_map: str
    gid_map: str


def id_maps(root_uid: int, ids: int, user_gid: int) -> IdMaps:
    """Inside 0 -> root_uid; inside 1000.. -> root_uid+1.. (the user and accounts made
    inside); inside 65534 (nobody) -> the block's last id. The user's group (inside 1000)
    is the desktops' shared host group, which may enter the env folders."""
    nobody = f"65534 {root_uid + ids - 1} 1\n"
    return IdMaps(uid_map=f"0 {root_uid} 1\n1000 {root_uid + 1} {ids - 2}\n" + nobody,
                  gid_map=f"0 {root_uid} 1\n1000 {user_gid} 1\n1001 {root_uid + 2} {ids - 3}\n" + nobody)


def create_user_namespace(owner_uid: int, owner_gid: int, maps: IdMaps) -> int:
    """A descriptor of a new user namespace owned by `owner_uid`, with `maps` written.

    The namespace outlives its holder process as long as the descriptor is open."""
    def unshare() -> None:
        os.setgroups([])
        os.setresgid(owner_gid, owner_gid, owner_gid)
        os.setresuid(owner_uid, owner_uid, owner_uid)
        _check(_libc.unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER)")

    # Popen returns once the holder has exec'd, so its namespace exists by then.
    holder = subprocess.Popen(["sleep", "60"], preexec_fn=unshare, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={"PATH": "/usr/bin:/bin"})
    try:
        for name, text in (("uid_map", maps.uid_map), ("gid_map", maps.gid_map)):
            with open(f"/proc/{holder.pid}/{name}", "w") as f:
                f.write(text)
        return os.open(f"/proc/{holder.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        holder.kill()
        holder.wait()


def _idmapped_clone(source: str, userns_fd: int) -> int:
    """A detached, read-only copy of the mount at `source`, its ids seen through `userns_fd`."""
    fd = _check(_libc.syscall(SYS_OPEN_TREE, AT_FDCWD, source.encode(), OPEN_TREE_CLONE | os.O_CLOEXEC),
                f"open_tree({source})")
    attr = struct.pack("=QQQQ", MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                       0, 0, userns_fd)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    try:
        _check(_libc.syscall(SYS_MOUNT_SETATTR, fd, b"", AT_EMPTY_PATH, buffer, len(attr)),
               f"mount_setattr({source}, idmap)")
    except NamespaceError:
        os.close(fd)
        raise
    return fd


def attach_system_trees(userns_fd: int, trees: dict[str, str]) -> None:
    """In a forked child, as host root, before it execs bwrap: a private mount namespace in
    which each source tree (values) is attached, idmapped and read-only, at its staging
    folder (keys). Nothing of it reaches the host's mount table."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _check(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    for staging, source in trees.items():
        fd = _idmapped_clone(source, userns_fd)
        try:
            _check(_libc.syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, staging.encode(), MOVE_MOUNT_F_EMPTY_PATH),
                   f"move_mount({source} -> {staging})")
        finally:
            os.close(fd)


@functools.lru_cache(maxsize=1)
def root_inside_unavailable() -> str:
    """Why desktops started by this process cannot have a root of their own ("" when they can)."""
    if os.geteuid() != 0:
        return ("the harness does not run as root, and only root can map the two uids a root inside "
                "the desktop needs; run the harness as root for sudo")
    ids = sandbox_id_range()
    probe_root = ids.base + ids.count - 4  # the range's last ids, which a desktop takes last
    try:
        userns = create_user_namespace(probe_root, probe_root, id_maps(probe_root, 4, ids.group))
    except (OSError, subprocess.SubprocessError) as e:
        return f"cannot create a user namespace with two mapped ids: {e}"
    try:
        for source in SYSTEM_TREES.values():
            if Path(source).is_dir():
                os.close(_idmapped_clone(source, userns))
    except NamespaceError as e:
        return f"the kernel or file system refuses idmapped mounts ({e}); Linux 5.19 or newer is needed"
    finally:
        os.close(userns)
    return ""
