"""Per-desktop resource limits with cgroups: memory, processes and CPU share.

Each desktop gets its own group, made under the harness's own cgroup so its limits nest
inside whatever limits the harness already has:

* cgroup v2 (the unified hierarchy, `cgroup.controllers` lists memory/pids/cpu): one group
  with memory.max, memory.swap.max = 0, memory.oom.group = 1 (an OOM kill takes the whole
  desktop), pids.max and cpu.weight. The controllers are enabled in the harness's
  cgroup.subtree_control; when the harness's cgroup holds no process but the harness
  itself, the harness first moves itself into a leaf group (`osworld-<pid>-<start>-harness`),
  as v2 allows controllers only for groups without processes of their own.
* cgroup v1 (one hierarchy per controller, e.g. /sys/fs/cgroup/memory, /pids, /cpu): one
  group in each, with memory.limit_in_bytes and memory.memsw.limit_in_bytes (RAM + swap
  capped together), pids.max and cpu.shares (cpu.weight 100 -> 1024 shares). v1 has no
  group OOM kill: the kernel kills the biggest process of the group only.
* Both: when a unified (v2) hierarchy is mounted beside v1 ones, the desktop also gets a
  group there even without controllers, for its atomic `cgroup.kill`.

Where no hierarchy can be written (a normal user without a delegated cgroup), `create`
returns None and logs why once; the desktop then runs without limits.

Group names are `osworld-<pid>-<start time>-<name>`: the owner's PID and start time (in
clock ticks since boot), so `prune_stale_cgroups` can tell groups of a killed harness from
those of one that is alive.
"""
from __future__ import annotations

import errno
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from ...desktop_defaults import DEFAULT_DESKTOP_LIMITS
from ...waiting import poll_until

log = logging.getLogger("osworld.local")

CONTROLLERS = ("memory", "pids", "cpu")
GROUP_PREFIX = "osworld-"
HARNESS_LEAF = "harness"
PROBE_NAME = "probe"
_GROUP_RE = re.compile(r"^osworld-(\d+)-(\d+)-(.+)$")
_V1_NON_CONTROLLER_OPTIONS = {"rw", "ro", "noprefix", "xattr", "clone_children", "cpuset_v2_mode", "none"}

_lock = threading.Lock()          # enabling v2 controllers / moving the harness: one thread at a time
_logged_reasons: set[str] = set()


# -- sizes -----------------------------------------------------------------------------------

_UNLIMITED = {"unlimited", "none", "max", "infinity"}
_SIZE_RE = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1}
for _power, _letter in enumerate("kmgtp", start=1):
    _UNITS[_letter] = _UNITS[_letter + "i"] = _UNITS[_letter + "ib"] = 1 << (10 * _power)
    _UNITS[_letter + "b"] = 1000 ** _power  # SI: kB, MB, GB


def parse_size(text: str | int) -> int | None:
    """Bytes in `text`: "4G", "512M", "1.5GiB", "2048" (bytes), "1GB" (10^9, SI).

    K/M/G/T (with or without "i"/"iB") are powers of 1024, kB/MB/GB/TB powers of 1000.
    "unlimited", "none", "max" and "infinity" give None (no limit). Anything else, zero
    or a negative size raises ValueError naming the value.
    """
    if isinstance(text, bool):
        raise ValueError(f"not a size: {text!r}")
    if isinstance(text, int):
        if text <= 0:
            raise ValueError(f"a size must be positive, got {text!r}")
        return text
    value = str(text).strip()
    if value.lower() in _UNLIMITED:
        return None
    match = _SIZE_RE.match(value)
    if not match:
        raise ValueError(f"not a size: {text!r} (expected e.g. 4G, 512M, 1.5GiB or unlimited)")
    number, unit = match.groups()
    if unit.lower() not in _UNITS:
        raise ValueError(f"unknown unit {unit!r} in size {text!r} (use K, M, G, T, KiB.., kB..)")
    try:
        size = int(Decimal(number) * _UNITS[unit.lower()])
    except InvalidOperation:
        raise ValueError(f"not a size: {text!r}") from None
    if size <= 0:
        raise ValueError(f"a size must be positive, got {text!r}")
    return size


def format_size(size: int) -> str:
    """4294967296 -> "4.0 GiB"; 1536 -> "1.5 KiB"; 100 -> "100 B"."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _parse_count(text: str | int, what: str) -> int | None:
    if isinstance(text, bool):
        raise ValueError(f"{what} must be a whole number, got {text!r}")
    if isinstance(text, str):
        if text.strip().lower() in _UNLIMITED:
            return None
        try:
            text = int(text.strip())
        except ValueError:
            raise ValueError(f"{what} must be a whole number or 'unlimited', got {text!r}") from None
    return text


def _parse_cap(text: str, what: str) -> int:
    size = parse_size(text)
    if size is None:
        raise ValueError(f"{what} needs a size, got {text!r}")
    return size


# -- the limits ------------------------------------------------------------------------------

_SIZES = ("tmpfs_bytes", "disk_bytes")  # always capped: never None

@dataclass(frozen=True)
class LimitOptions:
    """The local provider's own run options (Provider.Options): each desktop's limits as the command line
    gives them (`--desktop-memory 4G`), named as RunConfig's fields."""
    desktop_memory: str = DEFAULT_DESKTOP_LIMITS["desktop_memory"]
    desktop_pids: str = DEFAULT_DESKTOP_LIMITS["desktop_pids"]
    desktop_cpu_weight: str = DEFAULT_DESKTOP_LIMITS["desktop_cpu_weight"]
    desktop_tmpfs: str = DEFAULT_DESKTOP_LIMITS["desktop_tmpfs"]
    desktop_disk: str = DEFAULT_DESKTOP_LIMITS["desktop_disk"]

    def limits(self) -> DesktopLimits:
        return DesktopLimits.from_options(memory=self.desktop_memory, pids=self.desktop_pids,
                                          cpu_weight=self.desktop_cpu_weight, tmpfs=self.desktop_tmpfs,
                                          disk=self.desktop_disk)


_DEFAULT_OPTIONS = LimitOptions()

@dataclass(frozen=True)
class DesktopLimits:
    """Each desktop's limits, parsed; the defaults are LimitOptions' (DEFAULT_DESKTOP_LIMITS), parsed."""
    # hard cap of RAM (+ swap); None = no limit
    memory_bytes: int | None = parse_size(_DEFAULT_OPTIONS.desktop_memory)
    # processes and threads; None = no limit
    pids: int | None = _parse_count(_DEFAULT_OPTIONS.desktop_pids, "pids")
    # v2 scale 1..10000 (100 = a normal share); v1 cpu.shares = weight * 10.24
    cpu_weight: int | None = _parse_count(_DEFAULT_OPTIONS.desktop_cpu_weight, "cpu_weight")
    # size of each tmpfs in the sandbox (/tmp, /dev/shm, /run), for bwrap --size
    tmpfs_bytes: int = _parse_cap(_DEFAULT_OPTIONS.desktop_tmpfs, "a tmpfs")
    # size of the home folder (a tmpfs too: see desktop_storage)
    disk_bytes: int = _parse_cap(_DEFAULT_OPTIONS.desktop_disk, "the home folder")

    def __post_init__(self) -> None:
        for name in ("memory_bytes", "pids", "cpu_weight", "tmpfs_bytes", "disk_bytes"):
            value = getattr(self, name)
            if value is None and name not in _SIZES:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                allowed = "a positive whole number" + ("" if name in _SIZES else " or None")
                raise ValueError(f"{name} must be {allowed}, got {value!r}")
        if self.cpu_weight is not None and not 1 <= self.cpu_weight <= 10000:
            raise ValueError(f"cpu_weight must be within 1..10000 (100 = a normal share), got {self.cpu_weight!r}")

    @classmethod
    def from_options(cls, memory: str | None = None, pids: str | int | None = None,
                     cpu_weight: str | int | None = None, tmpfs: str | None = None,
                     disk: str | None = None) -> DesktopLimits:
        """From command-line strings ("4G", "1024", "unlimited"); an option left None keeps its default."""
        defaults = cls()
        return cls(
            memory_bytes=defaults.memory_bytes if memory is None else parse_size(memory),
            pids=defaults.pids if pids is None else _parse_count(pids, "pids"),
            cpu_weight=defaults.cpu_weight if cpu_weight is None else _parse_count(cpu_weight, "cpu_weight"),
            tmpfs_bytes=defaults.tmpfs_bytes if tmpfs is None else _parse_cap(tmpfs, "a tmpfs"),
            disk_bytes=defaults.disk_bytes if disk is None else _parse_cap(disk, "the home folder"),
        )

    @property
    def cpu_shares(self) -> int | None:
        """cpu.weight on v1's scale (cpu.shares, 2..262144): 100 -> 1024."""
        if self.cpu_weight is None:
            return None
        return max(2, min(262144, self.cpu_weight * 1024 // 100))

    def describe(self) -> str:
        parts = [f"memory {'unlimited' if self.memory_bytes is None else format_size(self.memory_bytes)}",
                 f"pids {'unlimited' if self.pids is None else self.pids}",
                 f"cpu weight {'default' if self.cpu_weight is None else self.cpu_weight}",
                 f"tmpfs {format_size(self.tmpfs_bytes)}", f"home {format_size(self.disk_bytes)}"]
        return ", ".join(parts)


@dataclass(frozen=True)
class LimitEvents:
    """What the kernel counted in a desktop's group since it was made."""
    oom_kills: int = 0          # processes killed by the OOM killer in the group
    memory_max_hits: int = 0    # times the group's memory use reached its limit (v2 memory.events max, v1 failcnt)
    pids_max_hits: int = 0      # forks refused for the pids limit
    memory_limit: int | None = None
    pids_limit: int | None = None

    @property
    def hit(self) -> bool:
        return bool(self.oom_kills or self.memory_max_hits or self.pids_max_hits)

    def describe(self) -> str:
        """One sentence naming the limits that were hit, or "" when none was."""
        parts = []
        if self.oom_kills or self.memory_max_hits:
            limit = "" if self.memory_limit is None else f" of {format_size(self.memory_limit)}"
            kills = (f"{self.oom_kills} OOM kill{'s' if self.oom_kills != 1 else ''}" if self.oom_kills
                     else "no OOM kill")
            parts.append(f"its memory limit{limit} ({kills})")
        if self.pids_max_hits:
            limit = "" if self.pids_limit is None else f" of {self.pids_limit}"
            refused = f"{self.pids_max_hits} fork{'s' if self.pids_max_hits != 1 else ''} refused"
            parts.append(f"its process limit{limit} ({refused})")
        return f"the desktop hit {' and '.join(parts)}" if parts else ""

    __str__ = describe


# -- where the hierarchies are ---------------------------------------------------------------

@dataclass(frozen=True)
class _Hierarchy:
    version: int                    # 1 or 2
    mount: Path                     # where it is mounted
    parent: Path                    # where desktop groups are made: the process's own cgroup here
    controllers: frozenset[str]     # the wanted controllers it offers; empty = v2, only for cgroup.kill
    cgroup_path: str = "/"          # the process's own cgroup, as /proc/self/cgroup names it


def _read(path: Path | str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: Path | str | bytes, value: str) -> None:  # bytes: enter_fn's pre-encoded paths
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _unescape_mount(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _parse_mountinfo(text: str) -> list[tuple[str, str, str, set[str]]]:
    """(fstype, mount point, root, super options) of every cgroup and cgroup2 mount."""
    mounts = []
    for line in text.splitlines():
        before, sep, after = line.partition(" - ")
        if not sep:
            continue
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        mounts.append((tail[0], _unescape_mount(fields[4]), _unescape_mount(fields[3]), set(tail[2].split(","))))
    return mounts


def _parse_proc_cgroup(text: str) -> list[tuple[str, set[str], str]]:
    """(hierarchy id, controllers, path) of each line of /proc/<pid>/cgroup."""
    entries = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            entries.append((parts[0], set(filter(None, parts[1].split(","))), parts[2].strip()))
    return entries


def _locate(mount: str, root: str, path: str) -> Path | None:
    """The directory of cgroup `path` in a hierarchy mounted at `mount` from `root`."""
    path = path.removesuffix(" (deleted)")
    if root == "/":
        relative = path.lstrip("/")
    elif path == root:
        relative = ""
    elif path.startswith(root.rstrip("/") + "/"):
        relative = path[len(root.rstrip("/")) + 1:]
    else:
        return None
    directory = Path(mount, relative) if relative else Path(mount)
    return directory if directory.is_dir() else None


def _desktop_parent(own: Path, mount: Path) -> Path:
    """Desktop groups go beside the harness's leaf group if it moved itself into one (v2)."""
    match = _GROUP_RE.match(own.name)
    if own != mount and match and match.group(3) == HARNESS_LEAF:
        return own.parent
    return own


def _plan(mountinfo: str | None = None, proc_cgroup: str | None = None) -> tuple[list[_Hierarchy], dict[str, str]]:
    """The hierarchies a desktop group would be made in, and why each controller not offered is not."""
    mounts = _parse_mountinfo(mountinfo if mountinfo is not None else _read("/proc/self/mountinfo"))
    entries = _parse_proc_cgroup(proc_cgroup if proc_cgroup is not None else _read("/proc/self/cgroup"))
    hierarchies: list[_Hierarchy] = []
    reasons: dict[str, str] = {}
    taken: set[str] = set()

    for _, controllers, path in entries:  # v1: one hierarchy per set of controllers mounted together
        wanted = controllers & set(CONTROLLERS)
        if not wanted:
            continue
        candidates = [(m, r) for fstype, m, r, options in mounts
                      if fstype == "cgroup" and controllers <= options - _V1_NON_CONTROLLER_OPTIONS]
        own = None
        for mount, root in sorted(candidates, key=lambda c: c[1] != "/"):
            own = _locate(mount, root, path)
            if own is not None:
                break
        if own is None:
            for c in wanted:
                reasons[c] = (f"the v1 {','.join(sorted(controllers))} hierarchy is not mounted where this process "
                              f"can see its cgroup {path}")
            continue
        hierarchies.append(_Hierarchy(1, Path(mount), own, frozenset(wanted), path))
        taken |= wanted

    for hierarchy_id, controllers, path in entries:  # v2: the line "0::/path"
        if hierarchy_id != "0" or controllers:
            continue
        own = None
        for fstype, mount, root, _ in mounts:
            if fstype == "cgroup2":
                own = _locate(mount, root, path)
                if own is not None:
                    break
        if own is None:
            break
        parent = _desktop_parent(own, Path(mount))
        try:
            offered = set(_read(parent / "cgroup.controllers").split())
        except OSError:
            offered = set()
        wanted = (offered & set(CONTROLLERS)) - taken
        for c in set(CONTROLLERS) - taken - offered:
            reasons[c] = (f"the {c} controller is not offered to {parent} "
                          f"(it is not enabled in {parent.parent}/cgroup.subtree_control)"
                          if parent != Path(mount) else f"the unified hierarchy at {mount} has no {c} controller")
        hierarchies.append(_Hierarchy(2, Path(mount), parent, frozenset(wanted), path))
        taken |= wanted
        break

    enabled = _kernel_controllers()
    for c in CONTROLLERS:
        if c not in taken and c not in reasons:
            reasons[c] = (f"the kernel has no {c} controller (or it is disabled on its command line)"
                          if enabled is not None and c not in enabled else
                          f"no cgroup hierarchy with the {c} controller is mounted")
    return hierarchies, reasons


def _kernel_controllers() -> set[str] | None:
    try:
        lines = _read("/proc/cgroups").splitlines()
    except OSError:
        return None
    return {line.split()[0] for line in lines[1:] if len(line.split()) >= 4 and line.split()[3] == "1"}


# -- owners ----------------------------------------------------------------------------------

def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat)."""
    try:
        stat = _read(f"/proc/{pid}/stat")
    except OSError:
        return None
    try:
        return int(stat[stat.rindex(")") + 2:].split()[19])
    except (ValueError, IndexError):
        return None


def _owner_prefix() -> str:
    pid = os.getpid()
    return f"{GROUP_PREFIX}{pid}-{_start_time(pid) or 0}-"


def _owner_alive(pid: int, start: int) -> bool:
    return _start_time(pid) == start


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:120] or "desktop"


def _note_unavailable(reason: str) -> None:
    if reason in _logged_reasons:
        log.debug("per-desktop limits are not in force: %s", reason)
    else:
        _logged_reasons.add(reason)
        log.warning("per-desktop limits are not in force, desktops run without them: %s", reason)


# -- v2: enabling controllers ----------------------------------------------------------------

def _procs(directory: Path) -> set[int]:
    try:
        return {int(line) for line in _read(directory / "cgroup.procs").split()}
    except (OSError, ValueError):
        return set()


def _enable_v2(parent: Path, wanted: set[str], *, relocate: bool) -> tuple[set[str], dict[str, str]]:
    """Enables `wanted` in parent/cgroup.subtree_control; returns those enabled and why the others are not.

    v2 refuses (EBUSY) while `parent` holds processes itself (its root excepted); when the
    only one is this process and `relocate` is set, it first moves into a leaf group.
    """
    reasons: dict[str, str] = {}
    with _lock:
        try:
            enabled = set(_read(parent / "cgroup.subtree_control").split())
        except OSError as e:
            return set(), {c: f"cannot read {parent}/cgroup.subtree_control: {e.strerror}" for c in wanted}
        errors: dict[str, OSError] = {}
        for attempt in range(2):
            errors = {}
            for c in sorted(wanted - enabled):
                try:
                    _write(parent / "cgroup.subtree_control", f"+{c}")
                    enabled.add(c)
                except OSError as e:
                    errors[c] = e
            busy = any(e.errno == errno.EBUSY for e in errors.values())
            if not (busy and relocate and attempt == 0):
                break
            others = _procs(parent) - {os.getpid()}
            if others:
                break
            leaf = parent / f"{_owner_prefix()}{HARNESS_LEAF}"
            try:
                leaf.mkdir(exist_ok=True)
                _write(leaf / "cgroup.procs", str(os.getpid()))
            except OSError as e:
                log.warning("could not move the harness into the leaf group %s: %s", leaf, e.strerror)
                break
            log.info("moved the harness into %s so that %s can hold limited desktop groups", leaf, parent)
        for c, error in errors.items():
            if error.errno == errno.EBUSY:
                other_pids = _procs(parent) - {os.getpid()}
                if not other_pids and not relocate:
                    reasons[c] = (f"{parent} holds processes, so cgroup v2 enables no controller for groups in it; "
                                  f"this process is the only one there, and a harness alone in its cgroup moves "
                                  f"itself into a leaf group first, so limits would be in force for it")
                    continue
                reasons[c] = (f"{parent} holds processes ({len(other_pids)} besides this one), and cgroup v2 enables "
                              f"controllers only for groups without processes of their own: start the harness in "
                              f"a delegated cgroup of its own, e.g. `systemd-run --scope -p Delegate=yes osworld ...`")
            elif error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                reasons[c] = f"no write access to {parent}/cgroup.subtree_control ({error.strerror}): not delegated"
            else:
                reasons[c] = f"cannot enable {c} in {parent}/cgroup.subtree_control: {error.strerror}"
    return wanted & enabled, reasons


# -- support, for the doctor -----------------------------------------------------------------

@dataclass(frozen=True)
class CgroupSupport:
    version: str                                   # "v1", "v2", "v1+v2" (controllers in both), "none"
    controllers: dict[str, str] = field(default_factory=dict)  # usable controller -> folder desktop groups go in
    reasons: dict[str, str] = field(default_factory=dict)      # controller not usable -> why
    swap_limited: bool = False                     # swap counted in the memory limit (v1 memsw, v2 memory.swap.max)
    oom_group: bool = False                        # an OOM kill takes the whole desktop (v2 memory.oom.group)
    kill: str = ""                                 # how kill_all works: "cgroup.kill" or "signals each process"

    @property
    def usable(self) -> tuple[str, ...]:
        return tuple(c for c in CONTROLLERS if c in self.controllers)

    @property
    def in_force(self) -> bool:
        """Whether a desktop started now gets a group with at least one limit."""
        return bool(self.controllers)

    @property
    def complete(self) -> bool:
        return all(c in self.controllers for c in CONTROLLERS)

    def summary(self) -> str:
        if not self.in_force:
            why = "; ".join(dict.fromkeys(self.reasons.values())) or "no cgroup hierarchy found"
            return f"not in force, desktops run without memory/process/CPU limits: {why}"
        state = "in force" if self.complete else "partly in force"
        text = f"{state}: cgroup {self.version}, controllers {', '.join(self.usable)}"
        extras = []
        if "memory" in self.controllers:
            extras.append("swap capped with memory" if self.swap_limited else "swap not capped")
            extras.append("OOM kills the whole desktop" if self.oom_group else "OOM kills one process")
        if self.kill:
            extras.append(f"kill via {self.kill}")
        if extras:
            text += f" ({'; '.join(extras)})"
        missing = [f"{c}: {self.reasons[c]}" for c in CONTROLLERS if c not in self.controllers and c in self.reasons]
        if missing:
            text += "; not usable: " + "; ".join(missing)
        return text


def _version_name(versions: set[int]) -> str:
    return {frozenset(): "none", frozenset({1}): "v1", frozenset({2}): "v2"}.get(frozenset(versions), "v1+v2")


def cgroup_support() -> CgroupSupport:
    """What a desktop started now would get, found by making (and removing) a probe group."""
    try:
        return _support()
    except Exception as e:
        return CgroupSupport("none", reasons={c: f"cannot read this process's cgroups: {type(e).__name__}: {e}"
                                              for c in CONTROLLERS})


def _support() -> CgroupSupport:
    hierarchies, reasons = _plan()
    controllers: dict[str, str] = {}
    versions: set[int] = set()
    swap = oom_group = False
    kill = ""
    probe_name = f"{_owner_prefix()}{PROBE_NAME}"
    for h in hierarchies:
        usable = set(h.controllers)
        if h.version == 2 and usable:
            usable, why = _enable_v2(h.parent, usable, relocate=False)
            reasons.update(why)
        probe = h.parent / probe_name
        try:
            probe.mkdir()
        except FileExistsError:
            pass
        except OSError as e:
            for c in h.controllers:
                reasons[c] = (f"cannot create a group in {h.parent} ({e.strerror})"
                              + (": cgroup v1 hierarchies are writable by root only" if h.version == 1 else
                                 ": the harness's cgroup is not delegated to this user"))
            continue
        try:
            if h.version == 2 and (probe / "cgroup.kill").exists():
                kill = "cgroup.kill"
            if "memory" in usable:
                swap = (probe / ("memory.memsw.limit_in_bytes" if h.version == 1 else "memory.swap.max")).exists()
                oom_group = h.version == 2 and (probe / "memory.oom.group").exists()
        finally:
            _rmdir(probe)
        for c in usable:
            controllers[c] = str(h.parent)
            reasons.pop(c, None)
        if usable:
            versions.add(h.version)
    if controllers and not kill:
        kill = "signals each process"
    reasons = {c: r for c, r in reasons.items() if c not in controllers}
    return CgroupSupport(_version_name(versions), controllers, reasons,
                         swap_limited=swap, oom_group=oom_group, kill=kill)


def _rmdir(path: Path) -> bool:
    try:
        os.rmdir(path)
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


# -- one desktop's group ---------------------------------------------------------------------

@dataclass
class _Dir:
    version: int
    path: Path
    controllers: frozenset[str]


class DesktopCgroup:
    """One desktop's group, in every hierarchy that has one of its controllers."""

    def __init__(self, name: str, dirname: str, limits: DesktopLimits, dirs: list[_Dir]):
        self.name = name
        self.dirname = dirname                     # the group's folder name in every hierarchy
        self.limits = limits
        self._dirs = dirs
        self.paths: dict[str, Path] = {c: d.path for d in dirs for c in d.controllers}  # controller -> folder
        self.in_force: dict[str, str] = {}         # limit -> value as written, e.g. {"memory": "4.0 GiB"}
        self.problems: dict[str, str] = {}         # limit that could not be set -> why
        self._last = LimitEvents(memory_limit=limits.memory_bytes, pids_limit=limits.pids)
        self._procs_paths = tuple(os.fsencode(d.path / "cgroup.procs") for d in dirs)

    def __repr__(self) -> str:
        return f"DesktopCgroup({self.dirname!r}, {self.version}, {self.in_force})"

    @property
    def directories(self) -> list[Path]:
        return [d.path for d in self._dirs]

    @property
    def version(self) -> str:
        return _version_name({d.version for d in self._dirs if d.controllers})

    # -- making it ----------------------------------------------------------------------------
    @classmethod
    def create(cls, name: str, limits: DesktopLimits | None = None, *,
               hierarchies: list[_Hierarchy] | None = None) -> DesktopCgroup | None:
        """A new group with `limits` written, or None (and the reason logged once) when no
        hierarchy can take one here. Never raises for an environment without cgroups."""
        limits = limits or DesktopLimits()
        try:
            return cls._create(name, limits, hierarchies)
        except OSError as e:
            _note_unavailable(f"cannot create a cgroup for {name!r}: {e}")
        except Exception as e:  # a cgroup file this module does not understand: run unlimited, say why
            log.warning("cannot create a cgroup for %r", name, exc_info=True)
            _note_unavailable(f"cannot create a cgroup for {name!r}: {type(e).__name__}: {e}")
        return None

    @classmethod
    def _create(cls, name: str, limits: DesktopLimits, hierarchies: list[_Hierarchy] | None) -> DesktopCgroup | None:
        reasons: dict[str, str] = {}
        if hierarchies is None:
            hierarchies, reasons = _plan()
        plan: list[tuple[_Hierarchy, frozenset[str]]] = []
        for h in hierarchies:
            controllers = set(h.controllers)
            if h.version == 2 and controllers:
                controllers, not_enabled = _enable_v2(h.parent, controllers, relocate=True)
                reasons.update(not_enabled)
            plan.append((h, frozenset(controllers)))
        base = f"{_owner_prefix()}{_safe_name(name)}"
        for attempt in range(1, 101):
            dirname = base if attempt == 1 else f"{base}.{attempt}"
            dirs, clash = cls._make_dirs(plan, dirname, reasons)
            if not clash:
                break
        else:
            raise FileExistsError(errno.EEXIST, "no free group name", base)
        if not any(d.controllers for d in dirs):
            for d in dirs:
                _rmdir(d.path)
            why = "; ".join(f"{c}: {r}" for c, r in sorted(reasons.items())) or "no cgroup controller is usable"
            _note_unavailable(why)
            return None
        group = cls(name, dirname, limits, dirs)
        try:
            group._apply_limits()
        except BaseException:
            group.remove()
            raise
        for c, why in reasons.items():
            if c not in group.paths:
                group.problems[c] = why
        if group.problems:
            log.warning("desktop %s: limits not set: %s", name,
                        "; ".join(f"{k}: {v}" for k, v in group.problems.items()))
        log.debug("desktop %s: cgroup %s, %s", name, group.version, group.in_force)
        return group

    @staticmethod
    def _make_dirs(plan: list[tuple[_Hierarchy, frozenset[str]]], dirname: str,
                   reasons: dict[str, str]) -> tuple[list[_Dir], bool]:
        dirs: list[_Dir] = []
        for h, controllers in plan:
            path = h.parent / dirname
            try:
                path.mkdir()
            except FileExistsError:
                for d in dirs:
                    _rmdir(d.path)
                return [], True
            except OSError as e:
                for c in controllers:
                    reasons[c] = (f"cannot create a group in {h.parent} ({e.strerror})"
                                  + (": cgroup v1 hierarchies are writable by root only" if h.version == 1 else ""))
                continue
            dirs.append(_Dir(h.version, path, controllers))
        return dirs, False

    def _apply_limits(self) -> None:
        limits = self.limits
        for d in self._dirs:
            if "memory" in d.controllers:
                self._apply_memory(d)
            if "pids" in d.controllers and limits.pids is not None:
                self._set(d.path / "pids.max", str(limits.pids), "pids", str(limits.pids))
            if "cpu" in d.controllers and limits.cpu_weight is not None:
                if d.version == 2:
                    self._set(d.path / "cpu.weight", str(limits.cpu_weight), "cpu", f"weight {limits.cpu_weight}")
                else:
                    self._set(d.path / "cpu.shares", str(limits.cpu_shares), "cpu",
                              f"weight {limits.cpu_weight} (cpu.shares {limits.cpu_shares})")

    def _apply_memory(self, d: _Dir) -> None:
        size = self.limits.memory_bytes
        if d.version == 2:
            if size is not None:
                self._set(d.path / "memory.max", str(size), "memory", format_size(size))
                if (d.path / "memory.swap.max").exists():
                    self._set(d.path / "memory.swap.max", "0", "swap", "none")
                else:
                    self.problems["swap"] = "no memory.swap.max (swap accounting is off)"
            self._set(d.path / "memory.oom.group", "1", "oom group", "the whole desktop")
        elif size is not None:
            # RAM first: memsw (RAM + swap) may never be below it.
            self._set(d.path / "memory.limit_in_bytes", str(size), "memory", format_size(size))
            if (d.path / "memory.memsw.limit_in_bytes").exists():
                self._set(d.path / "memory.memsw.limit_in_bytes", str(size), "swap", "within the memory limit")
            else:
                self.problems["swap"] = "no memory.memsw.limit_in_bytes (swap accounting is off)"

    def _set(self, path: Path, value: str, what: str, shown: str) -> None:
        try:
            _write(path, value)
            self.in_force[what] = shown
        except OSError as e:
            self.problems[what] = f"cannot write {value} to {path}: {e.strerror}"

    # -- members ------------------------------------------------------------------------------
    def enter_fn(self) -> Callable[[], None]:
        """A function for subprocess's preexec_fn: moves the calling (forked) process into the group.

        It only opens, writes and closes files whose names are ready made; a failure raises
        OSError, which makes Popen fail rather than start the desktop outside its limits.
        """
        paths = self._procs_paths

        def enter() -> None:
            for path in paths:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, b"0")  # 0 = the writing process
                finally:
                    os.close(fd)

        return enter

    def add(self, pid: int) -> None:
        """Moves process `pid` (all its threads) into the group."""
        for path in self._procs_paths:
            _write(path, str(pid))

    def pids(self) -> set[int]:
        """Host PIDs of every process in the group."""
        members: set[int] = set()
        for d in self._dirs:
            members |= _procs(d.path)
        return members

    def kill_all(self, timeout: float = 5.0) -> bool:
        """SIGKILLs every process in the group and waits (up to `timeout`) until it is empty.

        Atomic with cgroup.kill (v2 groups, including the controller-less one beside v1
        hierarchies); otherwise each member is signalled through a pidfd after checking that
        it is still in this group, round after round until none is left. True once empty.
        """
        for d in self._dirs:
            if d.version == 2 and (d.path / "cgroup.kill").exists():
                try:
                    _write(d.path / "cgroup.kill", "1")
                except OSError as e:
                    log.debug("cgroup.kill in %s: %s", d.path, e)
        deadline = time.monotonic() + timeout
        pause = 0.002
        while True:  # kills each round and backs off from 2 ms: not wait_until's fixed interval
            members = self.pids()
            if not members:
                return True
            for pid in members:
                self._kill_member(pid)
            if time.monotonic() >= deadline:
                return not self.pids()
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _kill_member(self, pid: int) -> None:
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            return
        except (OSError, AttributeError):
            pidfd = None
        try:
            if self._is_member(pid):  # after pinning it: its PID cannot have been reused since
                if pidfd is None:
                    os.kill(pid, signal.SIGKILL)
                else:
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass
        finally:
            if pidfd is not None:
                os.close(pidfd)

    def _is_member(self, pid: int) -> bool:
        try:
            entries = _parse_proc_cgroup(_read(f"/proc/{pid}/cgroup"))
        except OSError:
            return False
        return any(path.rsplit("/", 1)[-1] == self.dirname for _, _, path in entries)

    # -- what happened ------------------------------------------------------------------------
    def events(self) -> LimitEvents:
        """Counts since the group was made; after remove(), the last counts read."""
        oom, memory_hits, pids_hits = self._last.oom_kills, self._last.memory_max_hits, self._last.pids_max_hits
        for d in self._dirs:
            if "memory" in d.controllers:
                if d.version == 2:
                    counts = _keyed(d.path / "memory.events")
                    oom = counts.get("oom_kill", oom)
                    memory_hits = counts.get("max", memory_hits)
                else:
                    oom = _keyed(d.path / "memory.oom_control").get("oom_kill", oom)
                    hits = [h for h in (_number(d.path / name) for name in ("memory.failcnt", "memory.memsw.failcnt"))
                            if h is not None]
                    # Some kernels no longer count failcnt; a peak at the limit is a hit all the same.
                    limit = _number(d.path / "memory.limit_in_bytes")
                    peak = _number(d.path / "memory.max_usage_in_bytes")
                    if limit is not None and peak is not None and peak >= limit:
                        hits.append(1)
                    if hits:
                        memory_hits = max(memory_hits, *hits)
            if "pids" in d.controllers:
                pids_hits = _keyed(d.path / "pids.events").get("max", pids_hits)
        self._last = LimitEvents(oom, memory_hits, pids_hits, self.limits.memory_bytes, self.limits.pids)
        return self._last

    # -- removing it --------------------------------------------------------------------------
    def remove(self, timeout: float = 2.0) -> bool:
        """Removes the group's folders once empty, retrying for up to `timeout` seconds.

        Never raises; True when every folder is gone (also when it was gone already). A group
        that still has processes after `timeout` is left (and logged): call kill_all() first.
        """
        try:
            self.events()
        except OSError:
            pass
        left: list[_Dir] = list(self._dirs)
        errors: list[OSError] = []

        def removed() -> bool:
            nonlocal left, errors
            failed = []
            for d in left:
                try:
                    os.rmdir(d.path)
                except FileNotFoundError:
                    pass
                except OSError as e:
                    failed.append((d, e))
            left, errors = [d for d, _ in failed], [e for _, e in failed]
            return not left

        if poll_until(removed, timeout, 0.02):
            return True
        log.warning("could not remove cgroup %s: %s", ", ".join(str(d.path) for d in left),
                    "; ".join(e.strerror or str(e) for e in errors))
        return False


def _keyed(path: Path) -> dict[str, int]:
    """"key value" lines (memory.events, pids.events, memory.oom_control) as a dict; {} if unreadable."""
    try:
        text = _read(path)
    except OSError:
        return {}
    counts = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    return counts


def _number(path: Path) -> int | None:
    try:
        return int(_read(path).strip())
    except (OSError, ValueError):
        return None


# -- leftovers -------------------------------------------------------------------------------

def prune_stale_cgroups() -> list[str]:
    """Removes empty `osworld-` groups whose owning harness is gone (killed with -9, say).

    Looks through every hierarchy a desktop group could be in; a group that still has
    processes, or whose owner is alive, is left. Returns the folders removed.
    """
    try:
        hierarchies, _ = _plan()
    except OSError as e:
        log.debug("no cgroups to prune: %s", e)
        return []
    removed: list[str] = []
    for h in hierarchies:
        for path in _walk_groups(h.mount):
            match = _GROUP_RE.match(path.name)
            if match is None or _owner_alive(int(match.group(1)), int(match.group(2))):
                continue
            try:
                os.rmdir(path)
                removed.append(str(path))
            except FileNotFoundError:
                pass
            except OSError as e:
                log.info("left the stale cgroup %s: %s", path, e.strerror)
    return removed


def _walk_groups(root: Path, depth: int = 12) -> list[Path]:
    """Every `osworld-` folder under `root` (not looking inside them)."""
    found: list[Path] = []
    stack = [(root, 0)]
    while stack:
        directory, level = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                if not entry.is_dir(follow_symlinks=False):
                    continue
            except OSError:
                continue
            if entry.name.startswith(GROUP_PREFIX):
                found.append(Path(entry.path))
            elif level < depth:
                stack.append((Path(entry.path), level + 1))
    return found
