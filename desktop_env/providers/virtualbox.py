"""The `virtualbox` provider: an official OSWorld VM in VirtualBox, driven by VBoxManage.

Tested only against a fake `VBoxManage` (tests/providers/fake_bin/VBoxManage) that
records its command lines and answers the way VBoxManage does; it has never driven a
real VirtualBox VM, because this machine has no VirtualBox. It follows OSWorld's
VirtualBox provider:

- `path_to_vm` is the VM's .vbox file (its UUID is read from the XML), its name or
  its UUID (both looked up in `VBoxManage list vms`);
- start: `VBoxManage startvm <uuid> --type headless` (no --type with a window) unless
  `VBoxManage list runningvms` shows it running;
- the env server is http://<guest IP>:5000, the IP read from
  `VBoxManage guestproperty get <uuid> /VirtualBox/GuestInfo/Net/0/V4/IP` (needs the
  Guest Additions; OSWorld's setup bridges NIC 1 so that the host reaches that IP);
- revert: `controlvm <uuid> poweroff` if running, `snapshot <uuid> restore <name>`, start;
- save_state: `snapshot <uuid> take <name>`; stop: `controlvm <uuid> poweroff`.

Differences from OSWorld: poweroff instead of savestate (the state is discarded by
the restore anyway), and bounded polling for the IP and the env server instead of
fixed sleeps and endless retries. `path_to_vm` names one VM; parallel environments
need one VM each.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import threading
import time
import xml.etree.ElementTree as ET

from ..controllers.transport import Endpoint
from ..errors import ProviderError, ProviderOptionError
from ..waiting import poll_until
from .base import DesktopOptions, Provider
from .leftovers import UNKNOWN, Leftover, PruneResult
from .vm_tools import run_tool, wait_for_env_server

log = logging.getLogger("osworld.providers.virtualbox")

VBOX_INSTALL_HINT = ("install VirtualBox (https://www.virtualbox.org/wiki/Downloads); on Windows add "
                     "C:\\Program Files\\Oracle\\VirtualBox to PATH")
IP_PROPERTY = "/VirtualBox/GuestInfo/Net/0/V4/IP"
_VM_LINE = re.compile(r'^"(?P<name>.*)"\s+\{(?P<uuid>[0-9a-fA-F-]+)\}\s*$')
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_IPV4 = re.compile(r"^(?:\d{1,3}\.){3}\d{1,3}$")


def parse_vm_list(output: str) -> list[tuple[str, str]]:
    """(name, uuid) pairs from `VBoxManage list vms` / `list runningvms`."""
    pairs = []
    for line in output.splitlines():
        match = _VM_LINE.match(line.strip())
        if match:
            pairs.append((match["name"], match["uuid"].lower()))
    return pairs


def uuid_from_vbox_file(path: str) -> str:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise ProviderError(f"cannot read the VirtualBox machine file {path}: {e}") from None
    machine = root.find(".//{http://www.virtualbox.org/}Machine")
    if machine is None:
        machine = root.find(".//Machine")
    uuid = (machine.get("uuid") if machine is not None else None) or ""
    uuid = uuid.strip("{}").lower()
    if not _UUID.match(uuid):
        raise ProviderError(f"no <Machine uuid=...> in the VirtualBox machine file {path}")
    return uuid


def running_virtualbox_vms(vboxmanage: str = "VBoxManage", notes: list[str] | None = None) -> list[Leftover]:
    """Running VirtualBox VMs (when VBoxManage is installed), never judged: nothing marks which run uses one."""
    notes = notes if notes is not None else []
    if not shutil.which(vboxmanage):
        return []
    try:
        out = run_tool([vboxmanage, "list", "runningvms"], install_hint="", timeout=60).stdout
    except ProviderError as e:
        notes.append(f"VirtualBox VMs not checked: {e}")
        return []
    return [Leftover(kind="vm", ident=uuid, name=name, state="running", verdict=UNKNOWN,
                     reason=f"a running VirtualBox VM; nothing tells which run uses it: if none "
                            f"does, `{vboxmanage} controlvm {uuid} poweroff`")
            for name, uuid in parse_vm_list(out)]


class VirtualBoxProvider(Provider):
    @classmethod
    def prune(cls, dry_run: bool = False, tool: str | None = None) -> PruneResult:
        """Lists the running VMs for a person to judge; stops none."""
        result = PruneResult()
        result.kept = running_virtualbox_vms(tool or "VBoxManage", result.notes)
        return result

    @classmethod
    def check_options(cls, desktop: DesktopOptions) -> None:
        """A VM named by its .vbox file must be there before a run starts; one named by its name or UUID is
        looked up with VBoxManage when its desktop boots."""
        if not desktop.path_to_vm:
            raise ProviderOptionError("path_to_vm", "the virtualbox provider needs path_to_vm: the .vbox file, "
                                                    "name or UUID of an OSWorld VM")
        path = os.path.abspath(os.path.expanduser(desktop.path_to_vm))
        if desktop.path_to_vm.lower().endswith(".vbox") and not os.path.isfile(path):
            raise ProviderOptionError("path_to_vm", f"VirtualBox machine file {path} does not exist")

    def __init__(self, vboxmanage: str = "VBoxManage", server_port: int = 5000, ready_timeout: float = 300.0,
                 ip_timeout: float = 300.0, ready_path: str = "/screenshot", command_timeout: float = 120.0,
                 poll_interval: float = 1.0, liveness_interval: float = 10.0, unlock_timeout: float = 30.0):
        self.vboxmanage = vboxmanage
        self.server_port = server_port
        self.ready_timeout = ready_timeout
        self.ip_timeout = ip_timeout
        self.ready_path = ready_path
        self.command_timeout = command_timeout
        self.poll_interval = poll_interval
        self.liveness_interval = liveness_interval
        self.unlock_timeout = unlock_timeout
        self.path_to_vm: str | None = None
        self.uuid: str | None = None
        self.headless = True
        self.ip: str | None = None
        self.last_ready_s: float | None = None
        self._lock = threading.RLock()

    # -- VBoxManage ---------------------------------------------------------------------------
    def _vbox(self, *args: str, check: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess:
        return run_tool([self.vboxmanage, *args], install_hint=VBOX_INSTALL_HINT,
                        timeout=timeout or self.command_timeout, check=check)

    def resolve(self, path_to_vm: str | None) -> str:
        """The VM's UUID from a .vbox path, a VM name or a UUID."""
        if not path_to_vm:
            raise ProviderError("the virtualbox provider needs path_to_vm: the .vbox file, name or UUID of an "
                                "OSWorld VM")
        if path_to_vm == self.path_to_vm and self.uuid:
            return self.uuid
        if path_to_vm.lower().endswith(".vbox"):
            path = os.path.abspath(os.path.expanduser(path_to_vm))
            if not os.path.isfile(path):
                raise ProviderError(f"VirtualBox machine file {path} does not exist")
            uuid = uuid_from_vbox_file(path)
        else:
            vms = parse_vm_list(self._vbox("list", "vms").stdout)
            wanted = path_to_vm.strip("{}").lower()
            matches = [u for name, u in vms if name == path_to_vm or u == wanted]
            if not matches:
                known = ", ".join(f'"{name}"' for name, _ in vms) or "none"
                raise ProviderError(f"no VirtualBox VM named {path_to_vm!r} (a .vbox file, VM name or UUID); "
                                    f"registered VMs: {known}")
            uuid = matches[0]
        self.path_to_vm, self.uuid = path_to_vm, uuid
        return uuid

    def is_running(self, uuid: str) -> bool:
        return any(u == uuid for _, u in parse_vm_list(self._vbox("list", "runningvms").stdout))

    # -- Provider interface ---------------------------------------------------------------------
    def start_emulator(self, path_to_vm: str | None = None, headless: bool = True, os_type: str = "Ubuntu") -> None:
        with self._lock:
            uuid = self.resolve(path_to_vm or self.path_to_vm)
            self.headless = headless
            self._start_if_off(uuid)
            self._wait_ready(uuid)

    def get_ip_address(self, path_to_vm: str | None = None) -> Endpoint:
        with self._lock:
            if self.ip is None:
                self.ip = self._guest_ip(self.resolve(path_to_vm or self.path_to_vm))
            return Endpoint(url=f"http://{self.ip}:{self.server_port}")

    def save_state(self, path_to_vm: str | None = None, snapshot_name: str = "init_state") -> None:
        uuid = self.resolve(path_to_vm or self.path_to_vm)
        self._vbox("snapshot", uuid, "take", snapshot_name)

    def revert_to_snapshot(self, path_to_vm: str | None = None, snapshot_name: str = "init_state") -> str | None:
        with self._lock:
            uuid = self.resolve(path_to_vm or self.path_to_vm)
            self.ip = None
            if self.is_running(uuid):
                self._vbox("controlvm", uuid, "poweroff")
            self._restore(uuid, snapshot_name)
            self._start_if_off(uuid)
            self._wait_ready(uuid)
            return self.path_to_vm

    def stop_emulator(self, path_to_vm: str | None = None) -> None:
        with self._lock:
            if not (path_to_vm or self.path_to_vm):
                return
            uuid = self.resolve(path_to_vm or self.path_to_vm)
            if self.is_running(uuid):
                self._vbox("controlvm", uuid, "poweroff")
            self.ip = None

    def service_endpoint(self, port: int) -> tuple[str, int]:
        if self.ip is None:
            raise ProviderError("the VirtualBox desktop is not started; call start_emulator() first")
        return self.ip, port  # an OSWorld VM serves Chrome's 9222 and VLC's 8080 on its own IP

    # -- internals --------------------------------------------------------------------------------
    def _start_if_off(self, uuid: str) -> None:
        if self.is_running(uuid):
            return
        self._vbox("startvm", uuid, *(["--type", "headless"] if self.headless else []))

    def _restore(self, uuid: str, snapshot_name: str) -> None:
        """snapshot restore; right after a poweroff the VM's session may still be locked for a moment."""
        deadline = time.monotonic() + self.unlock_timeout
        delay = 0.2
        while True:  # backs off (0.2 s doubling to 2 s) and fails at once on any error but the lock: not wait_until's
            proc = self._vbox("snapshot", uuid, "restore", snapshot_name, check=False)
            if proc.returncode == 0:
                return
            output = (proc.stderr.strip() or proc.stdout.strip())
            if "lock" not in output.lower() or time.monotonic() + delay > deadline:
                raise ProviderError(f"`{self.vboxmanage} snapshot {uuid} restore {snapshot_name}` failed with exit "
                                    f"code {proc.returncode}: {output}")
            time.sleep(delay)
            delay = min(delay * 2, 2.0)

    def _guest_ip(self, uuid: str) -> str:
        last = ""

        def guest_ip() -> str | None:
            nonlocal last
            proc = self._vbox("guestproperty", "get", uuid, IP_PROPERTY, check=False)
            out = proc.stdout.strip()
            if proc.returncode == 0 and out.startswith("Value:"):
                ip = out.split(":", 1)[1].strip()
                if _IPV4.match(ip):
                    return ip
            last = out or proc.stderr.strip() or f"exit code {proc.returncode}"
            return None

        ip = poll_until(guest_ip, self.ip_timeout, self.poll_interval)
        if ip is None:
            raise ProviderError(f"no guest IP for VirtualBox VM {self.path_to_vm} within {self.ip_timeout:g} s "
                                f"(last: {last}); are the Guest Additions installed and running in the VM?")
        return ip

    def _wait_ready(self, uuid: str) -> None:
        self.ip = self._guest_ip(uuid)
        url = f"http://{self.ip}:{self.server_port}"

        def still_alive() -> str | None:
            return None if self.is_running(uuid) else "the VM is not running any more"

        try:
            self.last_ready_s = wait_for_env_server(url, self.ready_timeout, path=self.ready_path,
                                                    what=f"VirtualBox VM {self.path_to_vm}", still_alive=still_alive,
                                                    liveness_interval=self.liveness_interval)
        except ProviderError as e:
            if self.ip.startswith("10.0.2."):
                raise ProviderError(
                    f"{e}\n{self.ip} is VirtualBox's NAT address, which the host cannot reach: attach NIC 1 to a "
                    f"bridged or host-only network as OSWorld's setup does (VBoxManage modifyvm <vm> --nic1 bridged "
                    f"--bridgeadapter1 <host interface>)") from None
            raise
        log.info("VirtualBox VM %s ready at %s", self.path_to_vm, url)
