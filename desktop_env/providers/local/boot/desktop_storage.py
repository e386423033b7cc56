"""Where a desktop may write, and how much: nothing it writes reaches the host's disk.

Every writable place inside is memory with a size cap, charged to the desktop's own
memory limit (tmpfs pages belong to the cgroup of the process that writes them):

* the home folder: a tmpfs of `disk_bytes` (--desktop-disk, 2 GiB by default), filled from
  the home template at each boot by the desktop's first command, as `user`; a reset is a
  new, empty tmpfs. `df ~` inside shows the cap, and a write past it fails with ENOSPC.
* the runtime folder (/run/osworld: the session's logs, its bus, recordings): a folder of
  the capped /run tmpfs. The harness's own files for the session (session.json, the note
  saying why sudo is missing) are bound into it read-only from the host folder they are
  written in.
* what the sandbox writes to its stdout and stderr (which any process inside can reopen
  through /proc): a pipe the harness drains, keeping only its last `LOG_TAIL_BYTES`.
* /dev: read-only (bwrap's /dev is a tmpfs without a cap that its user would own).

The harness reads inside only through the sandbox's own root (/proc/<pid>/root), one path
component at a time and never following a symlink the desktop planted.
"""
from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from ..limits import format_size
from ..sandbox_layout import SANDBOX_HOME, SANDBOX_HOME_TEMPLATE, SANDBOX_RUNTIME, UNAVAILABLE_NOTE

LOGS = f"{SANDBOX_RUNTIME}/logs"
HARNESS_FILES = ("session.json", UNAVAILABLE_NOTE)  # written by the harness, read-only inside
LOG_TAIL_BYTES = 64 * 1024
# A home with less than this left counts as full: a write that failed with ENOSPC leaves
# the filesystem with less than one write's worth of room.
FULL_MARGIN = 1 << 20

# The desktop's first command, as `user`: the home's tmpfs starts empty. The session is
# not exec'd so that, when it fails, the tails of its logs (which vanish with the
# sandbox's memory) reach the sandbox's output, which the harness keeps.
_START = (f"cp -a --no-preserve=ownership {SANDBOX_HOME_TEMPLATE}/. \"$HOME\" && chmod 700 \"$HOME\" || exit 1\n"
          "\"$@\"\n"
          "status=$?\n"
          f"[ $status -eq 0 ] || tail -n 15 {LOGS}/*.log >&2\n"
          "exit $status\n")


@dataclass(frozen=True)
class Storage:
    disk_bytes: int        # the home's cap
    home_template: Path    # host folder the home is copied from at boot
    harness_dir: Path      # host folder of this boot's session.json (and sudo note)


def mounts(storage: Storage) -> list[str]:
    """bwrap arguments for the runtime folder and the home, after /run and /home exist.

    With a root inside, bwrap makes them as that root; root_init hands them to `user`."""
    argv = ["--perms", "0700", "--dir", SANDBOX_RUNTIME, "--perms", "0700", "--dir", LOGS]
    for name in HARNESS_FILES:
        if (storage.harness_dir / name).exists():
            argv += ["--ro-bind", str(storage.harness_dir / name), f"{SANDBOX_RUNTIME}/{name}"]
    argv += ["--ro-bind", str(storage.home_template), SANDBOX_HOME_TEMPLATE,
             "--perms", "0700", "--size", str(storage.disk_bytes), "--tmpfs", SANDBOX_HOME]
    return argv


def start_command(command: list[str]) -> list[str]:
    """`command` run once the home is filled from the template (see _START)."""
    return ["/bin/sh", "-c", _START, "start-desktop", *command]


# -- reading inside --------------------------------------------------------------------------

def _open_inside(pid: int, path: str, flags: int = os.O_PATH) -> int:
    """An fd for absolute `path` as sandbox process `pid` sees it; no component may be a symlink."""
    fd = os.open(f"/proc/{pid}/root", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in [p for p in path.split("/") if p]:
            if part == "..":
                raise ValueError(f"no '..' inside the sandbox: {path!r}")
            step = os.open(part, flags | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = step
        return fd
    except BaseException:
        os.close(fd)
        raise


def home_full(pid: int, cap: int) -> str:
    """A sentence when the home of sandbox process `pid` is full, else "" (also when unreadable)."""
    try:
        fd = _open_inside(pid, SANDBOX_HOME)
    except (OSError, ValueError):
        return ""
    try:
        info = os.fstatvfs(fd)
    finally:
        os.close(fd)
    if info.f_bavail * info.f_frsize < FULL_MARGIN or info.f_favail == 0:
        return f"the desktop filled its home folder (a cap of {format_size(cap)})"
    return ""


def read_tail(name: str, dir_fd: int | None = None, limit: int = LOG_TAIL_BYTES) -> str:
    """The last `limit` bytes of regular file `name` (relative to `dir_fd`), never following a
    symlink in its place; "" when unreadable."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return ""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return ""
        os.lseek(fd, max(0, info.st_size - limit), os.SEEK_SET)
        return os.read(fd, limit).decode("utf-8", "replace")
    finally:
        os.close(fd)


def log_tails(pid: int, limit: int = LOG_TAIL_BYTES, max_files: int = 64) -> dict[str, str]:
    """{name: last bytes} of the session's logs in sandbox process `pid`'s runtime folder (the first
    `max_files` by name: the folder is the sandbox's, which may fill it)."""
    try:
        fd = _open_inside(pid, LOGS, os.O_RDONLY)
    except (OSError, ValueError):
        return {}
    try:
        names = sorted(n for n in os.listdir(fd) if n.endswith(".log"))[:max_files]
        return {name: read_tail(name, fd, limit) for name in names}
    finally:
        os.close(fd)


def copy_home_caches(pid: int, names: tuple[str, ...], into: Path, limit: int) -> int:
    """Copies ~/.cache/<name> of sandbox process `pid` into `into`/<name> for each of `names` that exists:
    folders and regular files only (a symlink or anything else is left out), at most `limit` bytes in
    all (ValueError past it). The bytes copied."""
    copied = 0
    for name in names:
        try:
            top = _open_inside(pid, f"{SANDBOX_HOME}/.cache/{name}", os.O_RDONLY)
        except OSError:  # missing, or not a folder (a symlink in its place: ELOOP)
            continue
        try:
            for folder, _, files, folder_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
                target = into / name / folder
                target.mkdir(parents=True, exist_ok=True)
                for file in files:
                    copied += _copy_regular(file, folder_fd, target / file, limit - copied)
        finally:
            os.close(top)
    return copied


def _copy_regular(name: str, dir_fd: int, target: Path, room: int) -> int:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:  # a symlink (ELOOP), or gone meanwhile
        return 0
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return 0
        if info.st_size > room:
            raise ValueError(f"the desktop's caches are larger than a start-up's ({target.name}: {info.st_size} bytes)")
        data = os.read(fd, info.st_size)
    finally:
        os.close(fd)
    target.write_bytes(data)
    return len(data)


class OutputTail:
    """A pipe for a child's stdout and stderr, drained by a thread that keeps the last `limit`
    bytes: whatever the child writes, the host keeps no more than that."""

    def __init__(self, limit: int = LOG_TAIL_BYTES):
        self.limit = limit
        self._read_fd, self.write_fd = os.pipe()
        self._data = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="sandbox-output", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        with os.fdopen(self._read_fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(65536):
                with self._lock:
                    self._data += chunk
                    if len(self._data) > 2 * self.limit:
                        del self._data[:-self.limit]

    def close_writer(self) -> None:
        """Once the child has it: the pipe ends when the last process inside closes it."""
        os.close(self.write_fd)

    def text(self) -> str:
        with self._lock:
            return bytes(self._data[-self.limit:]).decode("utf-8", "replace")

    def wait(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

