"""The vmware provider against a fake vmrun; the "guest" env server is a local HTTP server."""
from __future__ import annotations

import socket

import pytest

from desktop_env.errors import MissingDependency, ProviderError
from desktop_env.providers import vmware
from desktop_env.providers.vmware import VMwareProvider

from .fake_env_server import serve_in_thread


@pytest.fixture
def guest():
    server = serve_in_thread()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def vmx(tmp_path):
    path = tmp_path / "Ubuntu" / "Ubuntu.vmx"
    path.parent.mkdir()
    path.write_text('.encoding = "UTF-8"\n')
    return str(path)


def make(providers, guest, **options) -> VMwareProvider:
    options.setdefault("poll_interval", 0.05)
    provider = VMwareProvider(host_type="ws", server_port=guest.server_address[1], **options)
    providers.append(provider)
    return provider


def vmrun(*args):
    return ["vmrun", "-T", "ws", *args]


def test_start_revert_save_stop(fake_cli, providers, guest, vmx):
    provider = make(providers, guest)
    provider.start_emulator(vmx, headless=True, os_type="Ubuntu")
    assert fake_cli.calls() == [vmrun("list"), vmrun("start", vmx, "nogui"), vmrun("getGuestIPAddress", vmx, "-wait")]
    port = guest.server_address[1]
    assert provider.get_ip_address(vmx).url == f"http://127.0.0.1:{port}"
    assert "/screenshot" in guest.hits  # readiness was checked over HTTP
    assert provider.service_endpoint(9222) == ("127.0.0.1", 9222)

    fake_cli.clear()
    assert provider.revert_to_snapshot(vmx, "init_state") == vmx
    # The snapshot was taken powered off (the fake's default): revert leaves the VM off, so it is started.
    assert fake_cli.calls() == [vmrun("revertToSnapshot", vmx, "init_state"), vmrun("list"),
                                vmrun("start", vmx, "nogui"), vmrun("getGuestIPAddress", vmx, "-wait")]

    fake_cli.clear()
    provider.save_state(vmx, "after_setup")
    provider.stop_emulator(vmx)
    assert fake_cli.calls() == [vmrun("snapshot", vmx, "after_setup"), vmrun("stop", vmx)]
    provider.stop_emulator(vmx)  # already off: vmrun says so, which is not an error
    fake_cli.clear()
    provider.revert_to_snapshot(vmx, "after_setup")  # the snapshot it saved exists
    assert fake_cli.calls()[0] == vmrun("revertToSnapshot", vmx, "after_setup")


def test_a_running_vm_is_not_started_again_and_a_window_is_allowed(fake_cli, providers, guest, vmx):
    fake_cli.run("vmrun", "-T", "ws", "start", vmx)
    fake_cli.clear()
    provider = make(providers, guest)
    provider.start_emulator(vmx, headless=False)
    assert fake_cli.calls() == [vmrun("list"), vmrun("getGuestIPAddress", vmx, "-wait")]
    provider.stop_emulator()
    fake_cli.clear()
    provider.start_emulator(vmx, headless=False)
    assert fake_cli.calls()[1] == vmrun("start", vmx)  # no nogui: VMware opens its window


def test_a_snapshot_taken_while_running_needs_no_start(fake_cli, providers, guest, vmx):
    fake_cli.set(FAKE_SNAPSHOT_POWERED="on")
    provider = make(providers, guest)
    provider.start_emulator(vmx)
    fake_cli.clear()
    provider.revert_to_snapshot(vmx, "init_state")
    assert fake_cli.calls() == [vmrun("revertToSnapshot", vmx, "init_state"), vmrun("list"),
                                vmrun("getGuestIPAddress", vmx, "-wait")]


def test_the_guest_ip_is_retried_until_vmware_tools_answer(fake_cli, providers, guest, vmx):
    fake_cli.set(FAKE_VMRUN_IP_FAILS="3")
    provider = make(providers, guest)
    provider.start_emulator(vmx)
    assert fake_cli.calls("vmrun").count(vmrun("getGuestIPAddress", vmx, "-wait")) == 4


def test_no_guest_ip_in_time_names_vmware_tools(fake_cli, providers, guest, vmx):
    fake_cli.set(FAKE_VMRUN_IP_FAILS="1000")
    provider = make(providers, guest, ip_timeout=0.5)
    with pytest.raises(ProviderError, match=r"no guest IP for .*Ubuntu.vmx within 0.5 s \(last: Error: The VMware "
                                            r"Tools are not running.*are VMware Tools installed"):
        provider.start_emulator(vmx)


def test_an_env_server_that_never_answers_times_out(fake_cli, providers, vmx):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    provider = VMwareProvider(host_type="ws", server_port=port, ready_timeout=0.5, poll_interval=0.05)
    providers.append(provider)
    with pytest.raises(ProviderError, match=rf"VMware VM .*Ubuntu.vmx's env server at http://127.0.0.1:{port} did not "
                                            r"answer GET /screenshot within 0.5 s"):
        provider.start_emulator(vmx)


def test_vmrun_errors_are_reported_with_its_output(fake_cli, providers, guest, vmx):
    provider = make(providers, guest)
    provider.start_emulator(vmx)
    with pytest.raises(ProviderError, match=r"`vmrun -T ws revertToSnapshot .*Ubuntu.vmx nope` failed with exit code "
                                            r"255: Error: Invalid snapshot name 'nope'"):
        provider.revert_to_snapshot(vmx, "nope")
    fake_cli.fail(["vmrun", "-T", "ws", "stop"], stdout="Error: Insufficient permissions\n", code=255)
    with pytest.raises(ProviderError, match="Insufficient permissions"):
        provider.stop_emulator(vmx)


def test_vmrun_missing(fake_cli, providers, guest, vmx, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    provider = make(providers, guest)
    with pytest.raises(MissingDependency, match=r"^vmrun not found on PATH: install VMware Workstation Pro"):
        provider.start_emulator(vmx)


def test_path_to_vm_must_be_an_existing_vmx(fake_cli, providers, guest, tmp_path):
    provider = make(providers, guest)
    with pytest.raises(ProviderError, match="needs path_to_vm: the .vmx file"):
        provider.start_emulator(None)
    with pytest.raises(ProviderError, match="must be a VMware .vmx file"):
        provider.start_emulator(str(tmp_path / "disk.qcow2"))
    with pytest.raises(ProviderError, match="missing.vmx does not exist"):
        provider.start_emulator(str(tmp_path / "missing.vmx"))
    assert fake_cli.calls() == []


def test_fusion_on_macos(monkeypatch):
    monkeypatch.setattr(vmware.platform, "system", lambda: "Darwin")
    assert VMwareProvider().host_type == "fusion"
    monkeypatch.setattr(vmware.platform, "system", lambda: "Linux")
    assert VMwareProvider().host_type == "ws"
