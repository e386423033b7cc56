"""Which host uid a sandboxed desktop runs as.

bwrap maps the desktop's `user` (uid 1000 inside) onto the uid that starts bwrap. A
harness running as root would make that host root: agent code could then change host
settings through /proc/sys and leave root-owned setuid files. So a root harness starts
each desktop as an unprivileged uid of its own, taken from a range no account uses
(root's subordinate range in /etc/subuid when there is one), with one group shared by
all desktops. That group may traverse the harness's runtime folders, which are closed to
everyone else: bwrap resolves its bind sources as the user it runs as, and once inside,
a desktop sees only what was bound, never those folders themselves.

Each desktop takes a block of IDS_PER_DESKTOP ids: the first is root inside its user
namespace (sudo), the second its `user` (uid 1000 inside), the next ones the accounts
that `useradd` makes inside (1001...), the last `nobody` (65534). A slot is held with an flock on a file in the runtime
folder, so concurrent harnesses never hand out the same ids while their desktop lives.
"""
from __future__ import annotations

import fcntl
import os
import pwd
from dataclasses import dataclass
from pathlib import Path

from ....errors import SandboxStartError

DEFAULT_BASE = 1_600_000_000  # far above any account's uid and the usual subordinate ranges
SLOTS = 1024
IDS_PER_DESKTOP = 64  # root, user, 61 accounts made inside, nobody


@dataclass(frozen=True)
class IdRange:
    base: int
    count: int

    @property
    def group(self) -> int:
        """The gid every desktop runs with; the runtime folders are group-traversable by it."""
        return self.base


def sandbox_id_range() -> IdRange:
    """$OSWORLD_SANDBOX_UID_BASE, else root's range in /etc/subuid, else DEFAULT_BASE."""
    configured = os.environ.get("OSWORLD_SANDBOX_UID_BASE")
    if configured:
        try:
            base = int(configured)
        except ValueError:
            raise SandboxStartError(f"OSWORLD_SANDBOX_UID_BASE must be a number, got {configured!r}") from None
        if base < 1000:
            raise SandboxStartError(f"OSWORLD_SANDBOX_UID_BASE={base} would overlap system accounts; use >= 100000")
        return IdRange(base, 1 + SLOTS * IDS_PER_DESKTOP)
    subordinate = _subordinate_range("root", Path("/etc/subuid"))
    if subordinate is not None and subordinate.count > IDS_PER_DESKTOP:
        # The first id of the range is the group; desktops take blocks of the ones after it.
        return IdRange(subordinate.base, min(subordinate.count, 1 + SLOTS * IDS_PER_DESKTOP))
    return IdRange(DEFAULT_BASE, 1 + SLOTS * IDS_PER_DESKTOP)


def _subordinate_range(user: str, path: Path) -> IdRange | None:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.strip().split(":")
        if len(fields) == 3 and fields[0] in (user, "0"):
            try:
                return IdRange(int(fields[1]), int(fields[2]))
            except ValueError:
                continue
    return None


@dataclass
class SandboxIdentity:
    """A block of host ids held for one desktop until `release()`: `uid` runs its user,
    `root_uid` is root inside it (when it has a user namespace of its own)."""
    uid: int
    gid: int
    _lock_fd: int | None = None

    @property
    def root_uid(self) -> int:
        return self.uid - 1

    def release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing drops the flock
            self._lock_fd = None


def _uid_is_an_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def acquire_identity(lock_dir: Path) -> SandboxIdentity:
    """Takes a free block of the range, locked in `lock_dir` (the harness's runtime root)."""
    ids = sandbox_id_range()
    for first in range(ids.base + 1, ids.base + ids.count - IDS_PER_DESKTOP + 1, IDS_PER_DESKTOP):
        uid = first + 1
        if _uid_is_an_account(first) or _uid_is_an_account(uid):
            continue
        fd = os.open(lock_dir / f"uid-{first}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return SandboxIdentity(uid=uid, gid=ids.group, _lock_fd=fd)
    raise SandboxStartError(f"every block of {IDS_PER_DESKTOP} sandbox uids from {ids.base + 1} to "
                            f"{ids.base + ids.count - 1} is in use")
