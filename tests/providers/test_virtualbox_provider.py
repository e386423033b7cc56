"""The virtualbox provider against a fake VBoxManage; the "guest" env server is a local HTTP server."""
from __future__ import annotations

import json

import pytest

from desktop_env.errors import MissingDependency, ProviderError
from desktop_env.providers.virtualbox import VirtualBoxProvider, parse_vm_list, uuid_from_vbox_file

from .fake_env_server import serve_in_thread

UUID = "0f8c2d6e-1b1a-4c3e-9a57-2f1f4f1d9b10"  # the fake's default VM "Ubuntu"
IP = ["guestproperty", "get", UUID, "/VirtualBox/GuestInfo/Net/0/V4/IP"]


@pytest.fixture
def guest():
    server = serve_in_thread()
    yield server
    server.shutdown()
    server.server_close()


def make(providers, guest, **options) -> VirtualBoxProvider:
    options.setdefault("poll_interval", 0.05)
    provider = VirtualBoxProvider(server_port=guest.server_address[1], **options)
    providers.append(provider)
    return provider


def vbox(*args):
    return ["VBoxManage", *args]


def test_start_revert_save_stop_by_name(fake_cli, providers, guest):
    provider = make(providers, guest)
    provider.start_emulator("Ubuntu", headless=True, os_type="Ubuntu")
    assert fake_cli.calls() == [vbox("list", "vms"), vbox("list", "runningvms"),
                                vbox("startvm", UUID, "--type", "headless"), vbox(*IP)]
    port = guest.server_address[1]
    assert provider.get_ip_address("Ubuntu").url == f"http://127.0.0.1:{port}"
    assert "/screenshot" in guest.hits
    assert provider.service_endpoint(8080) == ("127.0.0.1", 8080)

    fake_cli.clear()
    assert provider.revert_to_snapshot("Ubuntu", "init_state") == "Ubuntu"
    assert fake_cli.calls() == [vbox("list", "runningvms"), vbox("controlvm", UUID, "poweroff"),
                                vbox("snapshot", UUID, "restore", "init_state"), vbox("list", "runningvms"),
                                vbox("startvm", UUID, "--type", "headless"), vbox(*IP)]

    fake_cli.clear()
    provider.save_state("Ubuntu", "after_setup")
    provider.stop_emulator("Ubuntu")
    provider.stop_emulator("Ubuntu")  # already off: nothing to power off
    assert fake_cli.calls() == [vbox("snapshot", UUID, "take", "after_setup"), vbox("list", "runningvms"),
                                vbox("controlvm", UUID, "poweroff"), vbox("list", "runningvms")]


def test_a_vbox_file_gives_the_uuid_without_asking(fake_cli, providers, guest, tmp_path):
    machine = tmp_path / "Ubuntu.vbox"
    machine.write_text(f'<?xml version="1.0"?>\n<VirtualBox xmlns="http://www.virtualbox.org/" version="1.19">'
                       f'<Machine uuid="{{{UUID.upper()}}}" name="Ubuntu" OSType="Ubuntu_64"/></VirtualBox>')
    assert uuid_from_vbox_file(str(machine)) == UUID
    provider = make(providers, guest)
    provider.start_emulator(str(machine), headless=False)
    assert fake_cli.calls() == [vbox("list", "runningvms"), vbox("startvm", UUID), vbox(*IP)]


def test_a_uuid_and_other_vms(fake_cli, providers, guest):
    fake_cli.set(FAKE_VBOX_VMS=json.dumps({"Windows 10": "11111111-2222-3333-4444-555555555555", "Ubuntu": UUID}))
    provider = make(providers, guest)
    provider.start_emulator("{" + UUID + "}")
    assert fake_cli.calls()[2] == vbox("startvm", UUID, "--type", "headless")
    assert parse_vm_list('"Windows 10" {11111111-2222-3333-4444-555555555555}\n"Ubuntu" {' + UUID + '}\n') == [
        ("Windows 10", "11111111-2222-3333-4444-555555555555"), ("Ubuntu", UUID)]


def test_the_ip_is_polled_until_the_guest_additions_report_it(fake_cli, providers, guest):
    fake_cli.set(FAKE_VBOX_IP_UNSET="3")
    provider = make(providers, guest)
    provider.start_emulator("Ubuntu")
    assert fake_cli.calls().count(vbox(*IP)) == 4


def test_no_ip_in_time_names_the_guest_additions(fake_cli, providers, guest):
    fake_cli.set(FAKE_VBOX_IP_UNSET="100000")
    provider = make(providers, guest, ip_timeout=0.4)
    with pytest.raises(ProviderError, match=r"no guest IP for VirtualBox VM Ubuntu within 0.4 s \(last: No value "
                                            r"set!\); are the Guest Additions installed"):
        provider.start_emulator("Ubuntu")


def test_a_restore_right_after_poweroff_waits_for_the_session_lock(fake_cli, providers, guest):
    fake_cli.set(FAKE_VBOX_LOCKED_RESTORES="2")
    provider = make(providers, guest)
    provider.start_emulator("Ubuntu")
    fake_cli.clear()
    provider.revert_to_snapshot("Ubuntu", "init_state")
    assert fake_cli.calls().count(vbox("snapshot", UUID, "restore", "init_state")) == 3


def test_vboxmanage_errors_are_reported(fake_cli, providers, guest):
    provider = make(providers, guest)
    with pytest.raises(ProviderError, match=r"no VirtualBox VM named 'Debian' .* registered VMs: \"Ubuntu\""):
        provider.start_emulator("Debian")
    provider.start_emulator("Ubuntu")
    with pytest.raises(ProviderError, match=r"`VBoxManage snapshot .* restore nope` failed with exit code 1: "
                                            r"VBoxManage: error: Could not find a snapshot named 'nope'"):
        provider.revert_to_snapshot("Ubuntu", "nope")


def test_a_nat_address_gets_a_networking_hint(fake_cli, providers, guest):
    fake_cli.set(FAKE_VM_IP="10.0.2.15")
    provider = make(providers, guest, ready_timeout=0.5)
    with pytest.raises(ProviderError,
                       match=r"(?s)did not answer.*10.0.2.15 is VirtualBox's NAT address.*--nic1 bridged"):
        provider.start_emulator("Ubuntu")


def test_vboxmanage_missing(fake_cli, providers, guest, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    provider = make(providers, guest)
    with pytest.raises(MissingDependency, match=r"^VBoxManage not found on PATH: install VirtualBox"):
        provider.start_emulator("Ubuntu")


def test_path_to_vm_is_required(fake_cli, providers, guest, tmp_path):
    provider = make(providers, guest)
    with pytest.raises(ProviderError, match="needs path_to_vm"):
        provider.start_emulator(None)
    with pytest.raises(ProviderError, match="machine file .*missing.vbox does not exist"):
        provider.start_emulator(str(tmp_path / "missing.vbox"))
    bad = tmp_path / "bad.vbox"
    bad.write_text("<VirtualBox/>")
    with pytest.raises(ProviderError, match="no <Machine uuid=...>"):
        provider.start_emulator(str(bad))
    assert fake_cli.calls() == []
