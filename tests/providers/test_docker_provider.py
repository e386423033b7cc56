"""The docker provider's state machine (start -> ready -> revert -> stop) against a fake docker CLI.

The fake `docker run` starts a tiny env server on the host port published for
container port 5000, so readiness is really polled over HTTP; `docker rm -f` kills it.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest

from desktop_env.controllers.python import PythonController
from desktop_env.controllers.transport import Endpoint
from desktop_env.desktop_env import DesktopEnv
from desktop_env.errors import MissingDependency, ProviderError
from desktop_env.providers import PROVIDER_NAMES, create_provider
from desktop_env.providers.docker import DockerProvider
from desktop_env.providers.ports import process_start_time

from .fake_env_server import PNG


@pytest.fixture
def disk(tmp_path):
    path = tmp_path / "vm" / "Ubuntu.qcow2"
    path.parent.mkdir()
    path.write_bytes(b"QFI\xfb")
    return str(path)


@pytest.fixture
def kvm(tmp_path):
    device = tmp_path / "kvm"
    device.write_text("")
    return str(device)


def make(providers, allocator, kvm_device, **options) -> DockerProvider:
    provider = DockerProvider(port_allocator=allocator, kvm_device=kvm_device, **options)
    providers.append(provider)
    return provider


def expected_run(provider: DockerProvider, disk: str, kvm_device: str | None) -> list[str]:
    p = provider.host_ports
    argv = ["docker", "run", "-d", "--name", f"osworld-{provider.env_id}",
            "--label", f"osworld.owner={os.getpid()}", "--label", f"osworld.env={provider.env_id}",
            "--label", f"osworld.host={socket.gethostname()}",
            "--label", f"osworld.owner_start={process_start_time(os.getpid())}",
            "-e", "DISK_SIZE=32G", "-e", "RAM_SIZE=4G", "-e", "CPU_CORES=4"]
    argv += ["-e", "KVM=N", "--cap-add", "NET_ADMIN"] if kvm_device is None else \
        ["--cap-add", "NET_ADMIN", "--device", kvm_device]
    argv += ["-v", f"{disk}:/System.qcow2:ro",
             "-p", f"127.0.0.1:{p[5000]}:5000", "-p", f"127.0.0.1:{p[9222]}:9222",
             "-p", f"127.0.0.1:{p[8006]}:8006", "-p", f"127.0.0.1:{p[8080]}:8080",
             "happysixd/osworld-docker"]
    return argv


def answers(url: str) -> bool:
    controller = PythonController(Endpoint(url=url), retries=0, timeout_s=5)
    try:
        return controller.get_vm_platform() == "Linux"
    except Exception:  # noqa: BLE001
        return False
    finally:
        controller.close()


def test_start_revert_stop(fake_cli, providers, allocator, disk, kvm):
    provider = make(providers, allocator, kvm)
    provider.start_emulator(disk, headless=True, os_type="Ubuntu")

    name = f"osworld-{provider.env_id}"
    assert fake_cli.calls() == [expected_run(provider, disk, kvm)]
    ports = provider.host_ports
    assert sorted(ports) == [5000, 8006, 8080, 9222] and len(set(ports.values())) == 4
    assert all(allocator.low <= port <= allocator.high for port in ports.values())
    held = allocator.held()
    assert set(held) == set(ports.values()) and {e["pid"] for e in held.values()} == {os.getpid()}

    endpoint = provider.get_ip_address(disk)
    assert endpoint.url == f"http://127.0.0.1:{ports[5000]}"
    assert answers(endpoint.url)  # the harness's own controller reaches the env server
    assert provider.service_endpoint(9222) == ("127.0.0.1", ports[9222])
    assert provider.service_endpoint(8080) == ("127.0.0.1", ports[8080])
    with pytest.raises(ProviderError, match="port 1234 is not one of them"):
        provider.service_endpoint(1234)
    [container] = fake_cli.docker_state().values()
    first_server = container["server_pid"]

    fake_cli.clear()
    assert provider.revert_to_snapshot(disk, "init_state") == disk
    assert fake_cli.calls() == [["docker", "rm", "-f", name], expected_run(provider, disk, kvm)]
    assert provider.host_ports == ports  # the same ports, still reserved
    [container] = fake_cli.docker_state().values()
    assert container["server_pid"] != first_server
    assert answers(provider.get_ip_address(disk).url)

    fake_cli.clear()
    provider.stop_emulator(disk)
    assert fake_cli.calls() == [["docker", "rm", "-f", name]]
    assert fake_cli.docker_state() == {}
    assert allocator.held() == {}
    assert not answers(endpoint.url)
    provider.stop_emulator(disk)  # idempotent: nothing left to remove
    assert fake_cli.calls() == [["docker", "rm", "-f", name]]


def test_without_kvm_the_vm_is_emulated_and_the_timeout_longer(fake_cli, providers, allocator, disk, tmp_path, caplog):
    provider = make(providers, allocator, str(tmp_path / "no-kvm"))
    with caplog.at_level("WARNING", logger="osworld.providers.docker"):
        provider.start_emulator(disk)
    assert fake_cli.calls() == [expected_run(provider, disk, None)]
    assert "KVM=N" in caplog.text and "slower" in caplog.text
    assert provider._ready_timeout() == 1200.0


def test_kvm_required_but_missing_is_an_error(fake_cli, providers, allocator, disk, tmp_path):
    provider = make(providers, allocator, str(tmp_path / "no-kvm"), kvm=True)
    with pytest.raises(ProviderError, match=r"no-kvm not found: enable hardware virtualization.*kvm=False"):
        provider.start_emulator(disk)
    assert fake_cli.calls() == []


def test_kvm_false_never_passes_the_device(fake_cli, providers, allocator, disk, kvm):
    provider = make(providers, allocator, kvm, kvm=False)
    provider.start_emulator(disk)
    assert fake_cli.calls() == [expected_run(provider, disk, None)]


def test_options_change_the_command_line(fake_cli, providers, allocator, disk, kvm):
    provider = make(providers, allocator, kvm, image="example/osworld:dev", ram_size="8G", cpu_cores=8,
                    bind_address="0.0.0.0")
    provider.start_emulator(disk)
    [argv] = fake_cli.calls()
    assert argv[-1] == "example/osworld:dev"
    assert "RAM_SIZE=8G" in argv and "CPU_CORES=8" in argv
    assert f"0.0.0.0:{provider.host_ports[5000]}:5000" in argv
    assert provider.get_ip_address().url == f"http://127.0.0.1:{provider.host_ports[5000]}"


def test_readiness_is_polled_not_slept(fake_cli, providers, allocator, disk, kvm):
    fake_cli.set(FAKE_DOCKER_SERVER_DELAY="0.8", FAKE_DOCKER_FAIL_FIRST="2")
    provider = make(providers, allocator, kvm, max_poll_interval=0.2)
    started = time.monotonic()
    provider.start_emulator(disk)
    assert 0.8 <= provider.last_ready_s <= time.monotonic() - started < 15
    assert answers(provider.get_ip_address().url)


def test_a_desktop_that_never_answers_times_out_and_is_removed(fake_cli, providers, allocator, disk, kvm):
    fake_cli.set(FAKE_DOCKER_SERVER="none")
    provider = make(providers, allocator, kvm, ready_timeout=1.0)
    with pytest.raises(ProviderError) as info:
        provider.start_emulator(disk)
    message = str(info.value)
    assert f"container osworld-{provider.env_id}'s env server at http://127.0.0.1:" in message
    assert "did not answer GET /screenshot within 1 s" in message
    assert "container log (last lines):\n❯ Booting image using QEMU emulator..." in message
    name = f"osworld-{provider.env_id}"
    assert fake_cli.calls()[-2:] == [["docker", "logs", "--tail", "40", name], ["docker", "rm", "-f", name]]
    assert fake_cli.docker_state() == {}
    assert allocator.held() == {}
    assert provider.host_ports == {}


def test_a_container_that_exits_fails_fast_with_its_log(fake_cli, providers, allocator, disk, kvm):
    fake_cli.set(FAKE_DOCKER_SERVER="exit")
    provider = make(providers, allocator, kvm, ready_timeout=120.0, liveness_interval=0.2)
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"stopped before its env server .* the container exited with code 1"
                                            r"(?s:.*)KVM acceleration not available"):
        provider.start_emulator(disk)
    assert time.monotonic() - started < 20
    name = f"osworld-{provider.env_id}"
    assert ["docker", "inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", name] in fake_cli.calls()
    assert fake_cli.calls()[-1] == ["docker", "rm", "-f", name]
    assert allocator.held() == {}


def test_docker_missing(fake_cli, providers, allocator, disk, kvm, monkeypatch, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    provider = make(providers, allocator, kvm)
    with pytest.raises(MissingDependency, match=r"^docker not found on PATH: install Docker Engine"):
        provider.start_emulator(disk)
    assert allocator.held() == {}


def test_a_daemon_error_carries_its_stderr_and_a_hint(fake_cli, providers, allocator, disk, kvm):
    daemon = "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
    fake_cli.fail(["docker", "run"], stderr=daemon + "\n", code=125)
    provider = make(providers, allocator, kvm)
    with pytest.raises(ProviderError) as info:
        provider.start_emulator(disk)
    message = str(info.value)
    assert "failed with exit code 125: " + daemon in message
    assert "the Docker daemon is not running: start it" in message
    name = f"osworld-{provider.env_id}"
    assert fake_cli.calls()[-1] == ["docker", "rm", "-f", name]  # a 'created' container would not survive
    assert allocator.held() == {}


def test_permission_denied_on_the_socket_says_how_to_fix_it(fake_cli, providers, allocator, disk, kvm):
    fake_cli.fail(["docker", "run"], code=126, stderr="docker: permission denied while trying to connect to the "
                  "Docker daemon socket at unix:///var/run/docker.sock: Post ...: dial unix /var/run/docker.sock: "
                  "connect: permission denied.\n")
    provider = make(providers, allocator, kvm)
    with pytest.raises(ProviderError, match="add your user to the `docker` group"):
        provider.start_emulator(disk)


def test_a_port_conflict_is_retried_on_other_ports(fake_cli, providers, allocator, disk, kvm):
    fake_cli.fail(["docker", "run"], code=125, times=1, stderr="docker: Error response from daemon: driver failed "
                  "programming external connectivity on endpoint x: Bind for 127.0.0.1:21000 failed: port is "
                  "already allocated.\n")
    provider = make(providers, allocator, kvm)
    provider.start_emulator(disk)
    runs = [c for c in fake_cli.calls() if c[1] == "run"]
    assert len(runs) == 2
    assert fake_cli.calls()[1] == ["docker", "rm", "-f", f"osworld-{provider.env_id}"]
    first_ports = {a.split(":")[1] for a in runs[0] if a.startswith("127.0.0.1:")}
    second_ports = {a.split(":")[1] for a in runs[1] if a.startswith("127.0.0.1:")}
    assert first_ports.isdisjoint(second_ports)
    assert set(allocator.held()) == set(provider.host_ports.values())
    assert runs[1] == expected_run(provider, disk, kvm)


def test_disk_image_is_required(fake_cli, providers, allocator, kvm, tmp_path):
    provider = make(providers, allocator, kvm)
    with pytest.raises(ProviderError, match="needs path_to_vm: the OSWorld VM disk, e.g. Ubuntu.qcow2"):
        provider.start_emulator(None)
    with pytest.raises(ProviderError, match="missing.qcow2 does not exist"):
        provider.start_emulator(str(tmp_path / "missing.qcow2"))
    assert fake_cli.calls() == []


def test_a_relative_disk_path_is_mounted_absolute(fake_cli, providers, allocator, kvm, disk, monkeypatch):
    monkeypatch.chdir(os.path.dirname(os.path.dirname(disk)))
    provider = make(providers, allocator, kvm)
    provider.start_emulator("vm/Ubuntu.qcow2")
    assert f"{disk}:/System.qcow2:ro" in fake_cli.calls()[0]


def test_not_started_and_snapshots(fake_cli, providers, allocator, kvm):
    provider = make(providers, allocator, kvm)
    with pytest.raises(ProviderError, match="not started"):
        provider.get_ip_address()
    with pytest.raises(ProviderError, match="never started"):
        provider.revert_to_snapshot(None, "init_state")
    with pytest.raises(ProviderError, match="cannot save snapshots"):
        provider.save_state(None, "mine")


def test_create_provider_knows_the_new_names(fake_cli):
    assert {"docker", "vmware", "virtualbox"} <= set(PROVIDER_NAMES)
    assert type(create_provider("docker")).__name__ == "DockerProvider"
    assert type(create_provider("vmware")).__name__ == "VMwareProvider"
    assert type(create_provider("virtualbox")).__name__ == "VirtualBoxProvider"
    with pytest.raises(ProviderError, match="known providers: local, remote, docker, vmware, virtualbox"):
        create_provider("hyperv")


REAL_DOCKER = shutil.which("docker", path="/usr/local/bin:/usr/bin:/bin")


@pytest.mark.skipif(REAL_DOCKER is None, reason="no docker client installed")
def test_the_real_docker_client_accepts_our_command_line(providers, allocator, disk, kvm, monkeypatch):
    """The real client parses every flag before it needs a daemon; pointed at no daemon, it stops there.

    (With --device it asks the daemon for its OS first and says "unknown server OS" instead.)
    """
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/osworld-test.sock")
    monkeypatch.delenv("DOCKER_CONTEXT", raising=False)
    provider = DockerProvider(docker=REAL_DOCKER, port_allocator=allocator, kvm_device=kvm)
    providers.append(provider)
    provider.path_to_vm = disk
    provider.host_ports = dict(zip((5000, 9222, 8006, 8080), (21001, 21002, 21003, 21004), strict=True))
    for use_kvm, expected in ((False, "Cannot connect to the Docker daemon"), (True, "unknown server OS")):
        provider.use_kvm = use_kvm
        proc = subprocess.run(provider.run_argv(), capture_output=True, text=True, timeout=60)
        assert proc.returncode == 125
        assert expected in proc.stderr, proc.stderr
        assert "unknown flag" not in proc.stderr and "invalid" not in proc.stderr
    provider.host_ports = {}
    with pytest.raises(ProviderError, match=r"(?s)unknown server OS.*is the Docker daemon running"):
        provider.start_emulator(disk)
    assert allocator.held() == {}
    provider.kvm = False
    with pytest.raises(ProviderError, match=r"(?s)Cannot connect to the Docker daemon.*daemon is not running"):
        provider.start_emulator(disk)


def test_desktop_env_drives_the_docker_provider(fake_cli, allocator, disk, kvm):
    """DesktopEnv(provider_name="docker"): start on construction, a revert on the second reset, rm on close."""
    env = DesktopEnv(provider_name="docker", path_to_vm=disk, require_a11y_tree=False, cache_dir=str(kvm) + ".cache",
                     port_allocator=allocator, kvm_device=kvm)
    try:
        provider = env.provider
        name = f"osworld-{provider.env_id}"
        assert fake_cli.calls() == [expected_run(provider, disk, kvm)]
        assert env.reset({"id": "t1", "instruction": "first"})["screenshot"] == PNG
        assert len(fake_cli.calls()) == 1  # a fresh desktop is not reverted again
        assert env.reset({"id": "t2", "instruction": "second"})["screenshot"] == PNG
        assert fake_cli.calls()[1:] == [["docker", "rm", "-f", name], expected_run(provider, disk, kvm)]
    finally:
        env.close()
    assert fake_cli.calls()[-1] == ["docker", "rm", "-f", name]
    assert fake_cli.docker_state() == {} and allocator.held() == {}
