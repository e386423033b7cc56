"""Leftovers of killed runs: found by their labels, judged by their owner pid, removed by prune."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner
from rich.console import Console

from desktop_env.providers.docker import docker_leftovers, parse_labels
from desktop_env.providers.leftovers import IN_USE, STALE, UNKNOWN
from desktop_env.providers.local.boot.env_dir import runtime_root
from desktop_env.providers.ports import PortAllocator, process_start_time
from desktop_env.providers.prune import prune
from desktop_env.providers.virtualbox import running_virtualbox_vms
from desktop_env.providers.vmware import running_vmware_vms
from osworld_cli import prune_command as prune_cli
from osworld_cli.main import cli
from osworld_cli.prune_command import prune_command

from .conftest import worker_port_range

HOST = socket.gethostname()


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def seed_container(fake_cli, name: str, **labels: str) -> None:
    argv = ["docker", "run", "-d", "--name", name]
    for key, value in labels.items():
        argv += ["--label", f"{key.replace('_', '.', 1)}={value}"]
    fake_cli.run(*argv, "happysixd/osworld-docker")


@pytest.fixture
def seeded(fake_cli):
    fake_cli.set(FAKE_DOCKER_SERVER="none")
    me, start = str(os.getpid()), process_start_time(os.getpid())
    seed_container(fake_cli, "osworld-dead", osworld_owner=str(dead_pid()), osworld_env="dead", osworld_host=HOST)
    seed_container(fake_cli, "osworld-alive", osworld_owner=me, osworld_owner_start=start, osworld_env="alive",
                   osworld_host=HOST)
    seed_container(fake_cli, "osworld-recycled", osworld_owner=me, osworld_owner_start="1", osworld_env="recycled",
                   osworld_host=HOST)
    seed_container(fake_cli, "osworld-elsewhere", osworld_owner=str(dead_pid()), osworld_env="far",
                   osworld_host="another-machine")
    seed_container(fake_cli, "unrelated")  # no osworld label: never listed
    fake_cli.clear()
    return fake_cli


def test_docker_leftovers_judges_each_container(seeded):
    notes: list[str] = []
    found = {x.name: x for x in docker_leftovers(notes=notes)}
    assert seeded.calls() == [["docker", "ps", "-a", "--filter", "label=osworld.owner", "--format", "{{json .}}"]]
    assert set(found) == {"osworld-dead", "osworld-alive", "osworld-recycled", "osworld-elsewhere"}
    assert found["osworld-dead"].verdict == STALE and "is gone" in found["osworld-dead"].reason
    assert found["osworld-alive"].verdict == IN_USE and found["osworld-alive"].owner_pid == os.getpid()
    assert found["osworld-recycled"].verdict == STALE  # same pid, another process
    assert found["osworld-elsewhere"].verdict == UNKNOWN and "another-machine" in found["osworld-elsewhere"].reason
    assert found["osworld-dead"].env_id == "dead" and found["osworld-dead"].state == "Up 5 seconds"
    assert notes == []


def test_prune_removes_only_stale_containers(seeded, tmp_path):
    result = prune(include_vms=False, include_local=False, port_allocator=PortAllocator(tmp_path / "p"))
    removed = {x.name: x.ident for x in result.removed}
    assert set(removed) == {"osworld-dead", "osworld-recycled"}
    assert {x.name for x in result.kept} == {"osworld-alive", "osworld-elsewhere"}
    rm_calls = [c for c in seeded.calls() if c[1] == "rm"]
    assert sorted(rm_calls) == sorted(["docker", "rm", "-f", ident] for ident in removed.values())
    assert {c["name"] for c in seeded.docker_state().values()} == {"osworld-alive", "osworld-elsewhere", "unrelated"}


def test_dry_run_removes_nothing(seeded):
    result = prune(dry_run=True, include_vms=False, include_local=False)
    assert {x.name for x in result.removed} == {"osworld-dead", "osworld-recycled"}
    assert all(c[1] == "ps" for c in seeded.calls())


def test_a_failed_removal_is_reported(seeded, tmp_path):
    seeded.fail(["docker", "rm"], stderr="Error response from daemon: container is dead or marked for removal\n")
    result = prune(include_vms=False, include_local=False, port_allocator=PortAllocator(tmp_path / "p"))
    assert result.removed == []
    assert {x.name for x, _ in result.failed} == {"osworld-dead", "osworld-recycled"}
    assert "marked for removal" in result.failed[0][1]


def test_running_vms_are_listed_but_never_stopped(fake_cli, tmp_path):
    vmx = tmp_path / "Ubuntu.vmx"
    vmx.write_text("")
    fake_cli.run("vmrun", "-T", "ws", "start", str(vmx), "nogui")
    fake_cli.run("VBoxManage", "startvm", "Ubuntu", "--type", "headless")
    fake_cli.clear()
    notes: list[str] = []
    vms = {x.name: x for x in [*running_vmware_vms(notes=notes), *running_virtualbox_vms(notes=notes)]}
    assert set(vms) == {str(vmx), "Ubuntu"}
    assert all(x.verdict == UNKNOWN for x in vms.values())
    assert f"vmrun -T ws stop {vmx}" in vms[str(vmx)].reason
    assert "VBoxManage controlvm 0f8c2d6e-1b1a-4c3e-9a57-2f1f4f1d9b10 poweroff" in vms["Ubuntu"].reason
    result = prune(include_local=False, port_allocator=PortAllocator(tmp_path / "p"))
    assert {x.name for x in result.kept} == {str(vmx), "Ubuntu"}
    assert not [c for c in fake_cli.calls() if "stop" in c or "poweroff" in c]


def test_without_docker_nothing_is_checked_and_it_says_so(fake_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    notes: list[str] = []
    assert docker_leftovers(notes=notes) == []
    assert notes == ["containers not checked: docker not found on PATH: install Docker Engine "
                     "(https://docs.docker.com/engine/install/)"]


def test_a_daemon_error_is_a_note(fake_cli):
    fake_cli.fail(["docker", "ps"], stderr="Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
                                           "Is the docker daemon running?\n")
    notes: list[str] = []
    assert docker_leftovers(notes=notes) == []
    assert "Cannot connect to the Docker daemon" in notes[0]


def test_parse_labels():
    assert parse_labels("osworld.env=abc,osworld.owner=12,empty=,junk") == {
        "osworld.env": "abc", "osworld.owner": "12", "empty": ""}


OWNER = textwrap.dedent("""
    import sys
    from desktop_env.providers.docker import DockerProvider
    from desktop_env.providers.ports import PortAllocator
    ledger, low, high, disk, kvm = sys.argv[1:]
    provider = DockerProvider(port_allocator=PortAllocator(ledger, port_range=(int(low), int(high))), kvm_device=kvm)
    provider.start_emulator(disk)
    print(provider.container_name, provider.get_ip_address().url, flush=True)
    sys.stdin.read()  # until killed
""")


def test_a_run_killed_with_sigkill_leaves_a_container_that_prune_removes(fake_cli, tmp_path):
    """start -> ready in another process -> kill -9 -> the container and its ports are leftovers -> prune."""
    disk = tmp_path / "Ubuntu.qcow2"
    disk.write_bytes(b"")
    low, high = worker_port_range()
    ledger = tmp_path / "ledger"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), *sys.path])}
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(ledger), str(low), str(high), str(disk),
                              str(tmp_path / "no-kvm")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=env)
    try:
        name, url = owner.stdout.readline().split()
        [leftover] = [x for x in docker_leftovers() if x.name == name]
        assert leftover.verdict == IN_USE and leftover.owner_pid == owner.pid
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    allocator = PortAllocator(ledger, port_range=(low, high))
    assert {e["pid"] for e in allocator.held().values()} == {owner.pid}
    fake_cli.clear()

    result = prune(include_vms=False, include_local=False, port_allocator=allocator)
    assert [x.name for x in result.removed] == [name]
    assert fake_cli.calls()[-1] == ["docker", "rm", "-f", result.removed[0].ident]
    assert fake_cli.docker_state() == {}
    assert len(result.ports_reclaimed) == 4 and allocator.held() == {}


def test_the_cli(seeded, tmp_path, monkeypatch):
    monkeypatch.setenv("OSWORLD_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setattr(prune_cli, "console", Console(width=250))
    runner = CliRunner()
    dry = runner.invoke(prune_command, ["--dry-run", "--json", "--no-vms"])
    assert dry.exit_code == 0, dry.output
    data = json.loads(dry.output)
    assert data["dry_run"] is True
    assert {x["name"] for x in data["removed"]} == {"osworld-dead", "osworld-recycled"}
    assert len(seeded.docker_state()) == 5

    table = runner.invoke(prune_command, ["--no-vms"])
    assert table.exit_code == 0, table.output
    assert "osworld-dead" in table.output and "removed" in table.output and "in use" in table.output
    assert len(seeded.docker_state()) == 3

    seeded.fail(["docker", "rm"], stderr="boom\n")
    seed_container(seeded, "osworld-dead2", osworld_owner=str(dead_pid()), osworld_host=HOST)
    failed = runner.invoke(prune_command, ["--no-vms", "--json"])
    assert failed.exit_code == 1
    assert json.loads(failed.output)["failed"][0]["error"] == "boom"


def test_a_dry_run_lists_the_env_folders_and_port_reservations_prune_removes(fake_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("OSWORLD_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setattr(prune_cli, "console", Console(width=250))

    root = runtime_root()
    for name, owner in (("env-dead", dead_pid()), ("env-alive", os.getpid())):
        (root / name).mkdir()
        (root / name / "owner.pid").write_text(str(owner))
    low, high = worker_port_range()
    allocator = PortAllocator(tmp_path / "ports", port_range=(low, high))
    ledger = {str(low): {"pid": dead_pid(), "host": HOST}, str(low + 1): {"pid": os.getpid(), "host": HOST}}
    allocator.ledger_path.write_text(json.dumps(ledger))

    dry = prune(dry_run=True, include_vms=False, port_allocator=allocator)
    assert dry.env_dirs_removed == [str(root / "env-dead")] and dry.ports_reclaimed == [low]
    assert (root / "env-dead").is_dir() and len(allocator.held()) == 2

    monkeypatch.setattr("desktop_env.providers.prune.PortAllocator", lambda: allocator)
    shown = CliRunner().invoke(prune_command, ["--dry-run", "--no-vms"])
    assert f"would remove stale env folder {root / 'env-dead'}" in shown.output
    assert "would release 1 port reservation(s)" in shown.output and (root / "env-dead").is_dir()

    real = prune(include_vms=False, port_allocator=allocator)
    assert (real.env_dirs_removed, real.ports_reclaimed) == (dry.env_dirs_removed, dry.ports_reclaimed)
    assert not (root / "env-dead").exists() and (root / "env-alive").is_dir() and list(allocator.held()) == [low + 1]


def test_env_help_names_prune_among_its_commands():
    help_text = CliRunner().invoke(cli, ["env", "--help"], terminal_width=200).output
    summary = help_text.split("Options:")[0]
    assert "prune" in summary, help_text
    assert any(line.split()[:1] == ["prune"] for line in help_text.split("Commands:")[1].splitlines()), help_text
