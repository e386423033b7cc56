"""Per-desktop cgroups (desktop_env/providers/local/limits.py).

The tests in the first part make real groups on this machine (as root: cgroup v1 here,
with the controller-less unified hierarchy beside it) and skip, saying why, where cgroups
cannot be written. Every group has a name unique to its test (parallel workers never
share one) and is killed and removed when the test ends, passed or not. The second part
checks parsing and the v2 files against fake cgroup folders, and runs anywhere.
"""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from desktop_env.providers.local import limits
from desktop_env.providers.local.boot.sequence import limits_hit
from desktop_env.providers.local.doctor import check_limits
from desktop_env.providers.local.limits import (
    CgroupSupport,
    DesktopCgroup,
    DesktopLimits,
    LimitEvents,
    cgroup_support,
    format_size,
    parse_size,
    prune_stale_cgroups,
)
from tests.processes import ended

SUPPORT = cgroup_support()
needs_cgroups = pytest.mark.skipif(
    not SUPPORT.complete,
    reason=f"cgroups are not writable here (root on cgroup v1, or a delegated v2 cgroup, is needed): "
           f"{SUPPORT.summary()}")


def wait_until(predicate, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.fixture
def make_group(request):
    """Makes groups named after the test (plus a random part); kills and removes them at the end."""
    groups: list[DesktopCgroup] = []
    processes: list[subprocess.Popen] = []

    def make(limits_: DesktopLimits | None = None, **kwargs) -> DesktopCgroup:
        name = f"test-{request.node.name[:40]}-{uuid.uuid4().hex[:8]}"
        group = DesktopCgroup.create(name, limits_ or DesktopLimits(), **kwargs)
        assert group is not None, f"no group made although cgroups are usable: {SUPPORT.summary()}"
        groups.append(group)
        return group

    make.processes = processes
    yield make
    for group in groups:
        group.kill_all(timeout=10)
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
    for group in groups:
        group.remove(timeout=10)


def spawn(make_group, group: DesktopCgroup, argv: list[str], **kwargs) -> subprocess.Popen:
    process = subprocess.Popen(argv, preexec_fn=group.enter_fn(), **kwargs)
    make_group.processes.append(process)
    return process


def own_cgroups() -> dict[str, str]:
    """This process's cgroup per hierarchy: {"memory": "/process_api/..", "pids": "/", "": "/"}."""
    out = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            out[controller] = path
    return out


# -- real groups -----------------------------------------------------------------------------

@needs_cgroups
def test_a_group_is_made_under_this_process_cgroup_with_the_limits_written(make_group):
    group = make_group(DesktopLimits(memory_bytes=256 << 20, pids=77, cpu_weight=50))
    own = own_cgroups()
    assert set(group.paths) == {"memory", "pids", "cpu"}
    for controller, path in group.paths.items():
        assert path.is_dir()
        assert path.name == group.dirname and group.dirname.startswith(f"osworld-{os.getpid()}-")
        assert str(path.parent).endswith(own[controller].rstrip("/")), (controller, path, own[controller])
    read = {c: (lambda name, c=c: (group.paths[c] / name).read_text().strip()) for c in group.paths}
    if group.version == "v1":
        assert int(read["memory"]("memory.limit_in_bytes")) == 256 << 20
        if (group.paths["memory"] / "memory.memsw.limit_in_bytes").exists():
            assert int(read["memory"]("memory.memsw.limit_in_bytes")) == 256 << 20
        assert read["cpu"]("cpu.shares") == "512"
    else:
        assert read["memory"]("memory.max") == str(256 << 20)
        assert read["memory"]("memory.oom.group") == "1"
        assert read["cpu"]("cpu.weight") == "50"
    assert read["pids"]("pids.max") == "77"
    assert group.in_force["memory"] == "256.0 MiB" and group.in_force["pids"] == "77"
    assert group.problems == {}


@needs_cgroups
def test_a_child_started_with_enter_fn_is_in_the_group(make_group):
    group = make_group()
    child = spawn(make_group, group, ["sleep", "1000"])
    lines = Path(f"/proc/{child.pid}/cgroup").read_text().splitlines()
    paths = {line.split(":", 2)[1]: line.split(":", 2)[2] for line in lines}
    for controller in ("memory", "pids", "cpu"):
        entry = next(path for key, path in paths.items() if controller in key.split(","))
        assert entry.endswith("/" + group.dirname), (controller, entry)
    assert child.pid in group.pids()
    # this process itself stayed where it was
    assert not any(line.endswith(group.dirname) for line in Path("/proc/self/cgroup").read_text().splitlines())


@needs_cgroups
def test_a_child_allocating_past_the_memory_limit_is_oom_killed_and_reported(make_group):
    group = make_group(DesktopLimits(memory_bytes=64 << 20))
    assert group.events() == LimitEvents(memory_limit=64 << 20, pids_limit=1024)
    assert group.events().describe() == ""
    child = spawn(make_group, group, [sys.executable, "-c", "data = b'x' * (256 << 20); print(len(data))"],
                  stdout=subprocess.PIPE)
    out, _ = child.communicate(timeout=120)
    assert child.returncode == -9, f"the child was not OOM-killed (exit {child.returncode}, {out!r})"
    events = group.events()
    assert events.oom_kills >= 1 and events.memory_max_hits >= 1
    sentence = events.describe()
    assert sentence.startswith("the desktop hit its memory limit of 64.0 MiB (")
    assert "OOM kill" in sentence and "process limit" not in sentence


FORKER = textwrap.dedent("""
    import errno, json, os, signal
    children, error = [], None
    for _ in range(50):
        try:
            pid = os.fork()
        except OSError as e:
            error = e.errno
            break
        if pid == 0:
            signal.pause()
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    print(json.dumps({"forked": len(children), "errno": error}))
""")


@needs_cgroups
def test_the_pids_limit_stops_a_fork_bomb_and_is_reported(make_group):
    group = make_group(DesktopLimits(pids=20))
    assert limits_hit(group) == ""
    child = spawn(make_group, group, [sys.executable, "-c", FORKER], stdout=subprocess.PIPE)
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 0, out
    result = json.loads(out)
    assert result["errno"] == errno.EAGAIN and result["forked"] < 20, result
    events = group.events()
    assert events.pids_max_hits >= 1 and events.oom_kills == 0
    assert events.describe() == f"the desktop hit its process limit of 20 ({events.pids_max_hits} fork" + \
        ("s" if events.pids_max_hits != 1 else "") + " refused)"
    # and a boot that was not ready in time says so after its last health answer
    assert limits_hit(group) == f" Since its group was made, {events.describe()}."
    assert limits_hit(None) == ""


@pytest.mark.parametrize("how", ["planned", "signals"])
@needs_cgroups
def test_kill_all_kills_every_member(make_group, how):
    kwargs = {}
    if how == "signals":  # v1 hierarchies only: no cgroup.kill, each process is signalled
        kwargs["hierarchies"] = [h for h in limits._plan()[0] if h.version == 1]
        if not kwargs["hierarchies"]:
            pytest.skip("no cgroup v1 hierarchy here")
    group = make_group(**kwargs)
    shell = spawn(make_group, group, ["sh", "-c", "for i in 1 2 3 4 5; do sleep 1000 & done; wait"])
    added = subprocess.Popen(["sleep", "1000"])
    make_group.processes.append(added)
    group.add(added.pid)
    members = wait_until(lambda: group.pids() if len(group.pids()) >= 7 else None, what="7 processes in the group")
    assert {shell.pid, added.pid} <= members
    assert group.kill_all(timeout=30) is True
    assert shell.wait(timeout=30) == -9 and added.wait(timeout=30) == -9
    assert group.pids() == set()
    for pid in members - {shell.pid, added.pid}:  # the shell's children, orphans now
        wait_until(lambda pid=pid: ended(pid), what=f"process {pid} to die")


@needs_cgroups
def test_remove_leaves_no_folder_and_never_raises_for_a_gone_group(make_group):
    group = make_group()
    child = spawn(make_group, group, ["sleep", "1000"])
    assert group.remove(timeout=0.2) is False  # a member is still in it
    assert all(path.is_dir() for path in group.directories)
    group.kill_all(timeout=30)
    child.wait(timeout=30)
    assert group.remove() is True
    assert not any(path.exists() for path in group.directories)
    assert group.remove() is True
    assert group.events() == LimitEvents(memory_limit=group.limits.memory_bytes, pids_limit=group.limits.pids)
    assert group.kill_all() is True


@needs_cgroups
def test_entering_a_removed_group_fails_instead_of_running_unlimited(make_group):
    group = make_group()
    assert group.remove() is True
    with pytest.raises(subprocess.SubprocessError):
        subprocess.Popen(["true"], preexec_fn=group.enter_fn())


@needs_cgroups
def test_prune_removes_empty_groups_of_dead_owners_only(make_group, request):
    dead = subprocess.Popen(["true"])
    dead.wait()
    tag = uuid.uuid4().hex[:8]
    stale_name = f"osworld-{dead.pid}-1-test-prune-{tag}"  # start time 1: no live process matches it
    busy_name = f"osworld-{dead.pid}-1-test-prune-busy-{tag}"
    hierarchies = limits._plan()[0]
    made: list[Path] = []

    def cleanup():
        for path in made:
            if path.exists():
                for pid in (path / "cgroup.procs").read_text().split():
                    try:
                        os.kill(int(pid), 9)
                    except ProcessLookupError:
                        pass
                wait_until(lambda path=path: not (path / "cgroup.procs").read_text().split(), what=f"{path} to empty")
                os.rmdir(path)
    request.addfinalizer(cleanup)

    for h in hierarchies:
        for name in (stale_name, busy_name):
            (h.parent / name).mkdir()
            made.append(h.parent / name)
    sleeper = subprocess.Popen(["sleep", "1000"])
    make_group.processes.append(sleeper)
    for h in hierarchies:
        (h.parent / busy_name / "cgroup.procs").write_text(str(sleeper.pid))
    live = make_group()  # empty, but its owner (this process) is alive

    removed = prune_stale_cgroups()
    assert not any((h.parent / stale_name).exists() for h in hierarchies)
    assert all(str(h.parent / stale_name) in removed for h in hierarchies)
    assert all((h.parent / busy_name).is_dir() for h in hierarchies)
    assert all(path.is_dir() for path in live.directories)
    assert all(limits._GROUP_RE.match(Path(path).name) for path in removed)


def test_cgroup_support_on_this_machine():
    mounted_v1 = {c for c in ("memory", "pids", "cpu") if Path(f"/sys/fs/cgroup/{c}/cgroup.procs").exists()}
    if os.geteuid() != 0 or mounted_v1 != {"memory", "pids", "cpu"}:
        support = cgroup_support()
        assert support.in_force == bool(support.controllers)
        assert all(c in support.reasons for c in ("memory", "pids", "cpu") if c not in support.controllers)
        pytest.skip(f"not a root machine with cgroup v1 memory, pids and cpu hierarchies: {support.summary()}")
    support = cgroup_support()
    assert support.version == "v1"
    assert support.usable == ("memory", "pids", "cpu")
    assert support.in_force and support.complete and support.reasons == {}
    assert support.oom_group is False
    assert support.summary().startswith("in force: cgroup v1, controllers memory, pids, cpu")
    own = own_cgroups()
    assert support.controllers["memory"].endswith(own["memory"].rstrip("/"))


def test_doctor_has_an_optional_limits_check():
    check = check_limits()
    assert check.name == "limits" and check.required is False
    assert check.ok == SUPPORT.in_force
    assert check.detail == SUPPORT.summary()


# -- anywhere: no group is made, or only fake folders ----------------------------------------

def test_create_returns_none_and_says_why_when_nothing_is_writable(tmp_path, caplog):
    blocked = tmp_path / "blocked"
    blocked.write_text("")  # a file: no group can be made "in" it
    hierarchy = limits._Hierarchy(1, tmp_path, blocked, frozenset({"memory"}))
    with caplog.at_level("WARNING", logger="osworld.local"):
        assert DesktopCgroup.create(f"nowhere-{uuid.uuid4().hex[:8]}", hierarchies=[hierarchy]) is None
    assert "per-desktop limits are not in force" in caplog.text and str(blocked) in caplog.text


def test_create_returns_none_when_cgroups_cannot_be_read(monkeypatch):
    def unreadable(*_args):
        raise PermissionError(13, "Permission denied", "/proc/self/cgroup")
    monkeypatch.setattr(limits, "_plan", unreadable)
    assert DesktopCgroup.create("unreadable") is None


@pytest.mark.parametrize("text, size", [
    ("4G", 4 << 30), ("4g", 4 << 30), ("512M", 512 << 20), ("1.5GiB", 3 << 29), ("1.5 GiB", 3 << 29),
    ("2048", 2048), ("1k", 1024), ("1Ki", 1024), ("1kB", 1000), ("1GB", 10 ** 9), ("64MiB", 64 << 20),
    (" 4G ", 4 << 30), ("0.5M", 512 << 10), ("2T", 2 << 40), ("100b", 100), (4096, 4096),
    ("unlimited", None), ("none", None), ("MAX", None), ("infinity", None),
])
def test_parse_size(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "G", "abc", "-1G", "0", "0.0001", "4X", "1.2.3G", "4 G B", "1e3", -5, True])
def test_parse_size_rejects_with_the_value_named(text):
    with pytest.raises(ValueError) as excinfo:
        parse_size(text)
    assert repr(text) in str(excinfo.value)


def test_format_size():
    assert format_size(4 << 30) == "4.0 GiB"
    assert format_size(64 << 20) == "64.0 MiB"
    assert format_size(1536) == "1.5 KiB"
    assert format_size(100) == "100 B"


def test_desktop_limits_defaults_options_and_validation():
    defaults = DesktopLimits()
    assert (defaults.memory_bytes, defaults.pids, defaults.cpu_weight) == (4 << 30, 1024, 100)
    assert defaults.tmpfs_bytes == 1 << 30 and defaults.disk_bytes == 2 << 30
    assert defaults.cpu_shares == 1024
    assert DesktopLimits(cpu_weight=1).cpu_shares == 10 and DesktopLimits(cpu_weight=10000).cpu_shares == 102400
    assert DesktopLimits(cpu_weight=None).cpu_shares is None
    parsed = DesktopLimits.from_options(memory="2G", pids="unlimited", cpu_weight="200", tmpfs="256M", disk="5G")
    assert parsed == DesktopLimits(memory_bytes=2 << 30, pids=None, cpu_weight=200, tmpfs_bytes=256 << 20,
                                   disk_bytes=5 << 30)
    assert parsed.describe().endswith("tmpfs 256.0 MiB, home 5.0 GiB")
    assert DesktopLimits.from_options() == defaults
    assert DesktopLimits.from_options(memory="none").memory_bytes is None
    for bad in ({"memory_bytes": 0}, {"pids": -1}, {"cpu_weight": 0}, {"cpu_weight": 10001},
                {"tmpfs_bytes": None}, {"disk_bytes": None}, {"disk_bytes": 0}, {"pids": 1.5},
                {"memory_bytes": True}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            DesktopLimits(**bad)
    with pytest.raises(ValueError, match="'many'"):
        DesktopLimits.from_options(pids="many")
    with pytest.raises(ValueError, match="'unlimited'"):
        DesktopLimits.from_options(tmpfs="unlimited")
    with pytest.raises(ValueError, match="the home folder needs a size, got 'none'"):
        DesktopLimits.from_options(disk="none")


def test_limit_events_sentence():
    assert LimitEvents().describe() == "" and not LimitEvents().hit
    assert LimitEvents(oom_kills=1, memory_max_hits=7, memory_limit=4 << 30).describe() == \
        "the desktop hit its memory limit of 4.0 GiB (1 OOM kill)"
    assert LimitEvents(oom_kills=3, memory_limit=64 << 20).describe() == \
        "the desktop hit its memory limit of 64.0 MiB (3 OOM kills)"
    assert LimitEvents(memory_max_hits=2, memory_limit=1 << 30).describe() == \
        "the desktop hit its memory limit of 1.0 GiB (no OOM kill)"
    assert LimitEvents(pids_max_hits=1, pids_limit=1024).describe() == \
        "the desktop hit its process limit of 1024 (1 fork refused)"
    both = LimitEvents(oom_kills=1, pids_max_hits=5, memory_limit=4 << 30, pids_limit=1024)
    assert both.hit and str(both) == \
        "the desktop hit its memory limit of 4.0 GiB (1 OOM kill) and its process limit of 1024 (5 forks refused)"


def fake_v2_group(tmp_path: Path, limits_: DesktopLimits) -> DesktopCgroup:
    folder = tmp_path / "osworld-1-1-fake"
    folder.mkdir()
    for name in ("memory.max", "memory.swap.max", "memory.oom.group", "pids.max", "cpu.weight", "cgroup.procs"):
        (folder / name).write_text("")
    group = DesktopCgroup("fake", folder.name, limits_,
                          [limits._Dir(2, folder, frozenset({"memory", "pids", "cpu"}))])
    group._apply_limits()
    return group


def test_v2_limit_files_are_written(tmp_path):
    group = fake_v2_group(tmp_path, DesktopLimits(memory_bytes=1 << 30, pids=300, cpu_weight=250))
    folder = group.paths["memory"]
    assert (folder / "memory.max").read_text() == str(1 << 30)
    assert (folder / "memory.swap.max").read_text() == "0"
    assert (folder / "memory.oom.group").read_text() == "1"
    assert (folder / "pids.max").read_text() == "300"
    assert (folder / "cpu.weight").read_text() == "250"
    assert group.version == "v2" and group.problems == {}
    assert group.in_force == {"memory": "1.0 GiB", "swap": "none", "oom group": "the whole desktop",
                              "pids": "300", "cpu": "weight 250"}


def test_v2_events_are_read_from_memory_and_pids_events(tmp_path):
    group = fake_v2_group(tmp_path, DesktopLimits())
    folder = group.paths["memory"]
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 1\n")
    (folder / "pids.events").write_text("max 4\n")
    events = group.events()
    assert (events.oom_kills, events.memory_max_hits, events.pids_max_hits) == (2, 12, 4)
    for path in folder.iterdir():
        path.unlink()
    assert group.remove() is True and not folder.exists()
    assert group.events() == events  # the last counts, once the group is gone


def test_plan_pure_v2_with_a_harness_leaf(tmp_path):
    scope = tmp_path / "user.slice" / "run.scope"
    leaf = scope / "osworld-42-7-harness"
    leaf.mkdir(parents=True)
    (scope / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    mountinfo = f"30 23 0:26 / {tmp_path} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
    hierarchies, reasons = limits._plan(mountinfo, "0::/user.slice/run.scope/osworld-42-7-harness\n")
    assert hierarchies == [limits._Hierarchy(2, tmp_path, scope, frozenset({"memory", "pids", "cpu"}),
                                             "/user.slice/run.scope/osworld-42-7-harness")]
    assert reasons == {}


def test_plan_v2_names_a_controller_not_delegated(tmp_path):
    scope = tmp_path / "app.scope"
    scope.mkdir()
    (scope / "cgroup.controllers").write_text("memory pids\n")
    hierarchies, reasons = limits._plan(f"30 23 0:26 / {tmp_path} rw - cgroup2 cgroup2 rw\n", "0::/app.scope\n")
    assert hierarchies[0].controllers == {"memory", "pids"}
    assert "cpu" in reasons and "cgroup.subtree_control" in reasons["cpu"]


def test_plan_v1_with_a_container_mount_root_and_combined_controllers(tmp_path):
    (tmp_path / "memory" / "inner").mkdir(parents=True)
    (tmp_path / "cpu,cpuacct" / "job").mkdir(parents=True)
    (tmp_path / "unified").mkdir()
    mountinfo = "\n".join([
        f"35 31 0:32 /docker/abc {tmp_path}/memory rw - cgroup cgroup rw,memory",
        f"32 31 0:29 / {tmp_path}/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct",
        f"41 31 0:38 / {tmp_path}/unified rw - cgroup2 cgroup2 rw",
    ])
    proc = "4:memory:/docker/abc/inner\n1:cpu,cpuacct:/job\n0::/\n"
    hierarchies, reasons = limits._plan(mountinfo, proc)
    by_version = {(h.version, tuple(sorted(h.controllers))): h.parent for h in hierarchies}
    assert by_version == {(1, ("memory",)): tmp_path / "memory" / "inner",
                          (1, ("cpu",)): tmp_path / "cpu,cpuacct" / "job",
                          (2, ()): tmp_path / "unified"}
    assert set(reasons) == {"pids"}


def test_support_summary_when_not_in_force():
    support = CgroupSupport("none", reasons={"memory": "cannot create a group in /x (Permission denied)"})
    assert not support.in_force and not support.complete
    assert support.summary() == ("not in force, desktops run without memory/process/CPU limits: "
                                 "cannot create a group in /x (Permission denied)")


class FakeV2Kernel:
    """Just enough of cgroup v2 for _enable_v2: subtree_control refuses (EBUSY) while the group
    holds processes; writing a PID to a cgroup.procs moves it there."""

    def __init__(self, parent: Path, procs: list[int]):
        self.parent = parent
        parent.mkdir()
        (parent / "cgroup.subtree_control").write_text("")
        (parent / "cgroup.procs").write_text("".join(f"{pid}\n" for pid in procs))

    def write(self, path, value: str) -> None:
        path = Path(path)
        if path == self.parent / "cgroup.subtree_control":
            if (self.parent / "cgroup.procs").read_text().split():
                raise OSError(errno.EBUSY, "Device or resource busy", str(path))
            enabled = set(path.read_text().split()) | {value.lstrip("+")}
            path.write_text(" ".join(sorted(enabled)))
        elif path.name == "cgroup.procs":
            pids = [p for p in (self.parent / "cgroup.procs").read_text().split() if p != value]
            (self.parent / "cgroup.procs").write_text("".join(f"{p}\n" for p in pids))
            path.write_text(value)
        else:
            raise AssertionError(f"unexpected write {value!r} to {path}")


def test_v2_the_harness_alone_in_its_cgroup_moves_into_a_leaf(tmp_path, monkeypatch):
    kernel = FakeV2Kernel(tmp_path / "app.scope", [os.getpid()])
    monkeypatch.setattr(limits, "_write", kernel.write)
    enabled, reasons = limits._enable_v2(kernel.parent, {"memory", "pids", "cpu"}, relocate=True)
    assert enabled == {"memory", "pids", "cpu"} and reasons == {}
    leaves = [p for p in kernel.parent.iterdir() if p.is_dir()]
    assert [p.name for p in leaves] == [f"{limits._owner_prefix()}harness"]
    assert (leaves[0] / "cgroup.procs").read_text() == str(os.getpid())
    assert limits._desktop_parent(leaves[0], tmp_path) == kernel.parent  # desktops go beside the leaf


def test_v2_a_shared_cgroup_is_not_taken_over(tmp_path, monkeypatch):
    kernel = FakeV2Kernel(tmp_path / "session.scope", [1, os.getpid()])
    monkeypatch.setattr(limits, "_write", kernel.write)
    enabled, reasons = limits._enable_v2(kernel.parent, {"memory", "pids"}, relocate=True)
    assert enabled == set()
    assert set(reasons) == {"memory", "pids"} and "holds processes (1 besides this one)" in reasons["memory"]
    assert "Delegate=yes" in reasons["memory"]
    assert not [p for p in kernel.parent.iterdir() if p.is_dir()]
    assert (kernel.parent / "cgroup.procs").read_text().split() == ["1", str(os.getpid())]


def test_the_limits_defaults_are_one_definition():
    """DEFAULT_DESKTOP_LIMITS is what LimitOptions, DesktopLimits and RunConfig's fields start from."""
    import dataclasses  # noqa: PLC0415

    from desktop_env.desktop_defaults import DEFAULT_DESKTOP_LIMITS  # noqa: PLC0415
    from osworld_harness.results.config import RunConfig  # noqa: PLC0415

    options = limits.LimitOptions()
    assert dataclasses.asdict(options) == DEFAULT_DESKTOP_LIMITS
    assert options.limits() == limits.DesktopLimits()
    run_defaults = {f.name: f.default for f in dataclasses.fields(RunConfig) if f.name in DEFAULT_DESKTOP_LIMITS}
    assert run_defaults == DEFAULT_DESKTOP_LIMITS
    assert limits.DesktopLimits() == limits.DesktopLimits(memory_bytes=4 << 30, pids=1024, cpu_weight=100,
                                                          tmpfs_bytes=1 << 30, disk_bytes=2 << 30)
