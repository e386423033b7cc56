"""The `vmware` provider: an official OSWorld VM in VMware Workstation (Linux, Windows) or Fusion (macOS).

Tested only against a fake `vmrun` (tests/providers/fake_bin/vmrun) that records its
command lines and answers the way vmrun does; it has never driven a real VMware VM,
because this machine has no VMware. The commands follow OSWorld's VMware provider:

    vmrun -T ws list                                   is the VM running?
    vmrun -T ws start <vm.vmx> nogui                   start (nogui when headless)
    vmrun -T ws getGuestIPAddress <vm.vmx> -wait       its IP, once VMware Tools run
    vmrun -T ws revertToSnapshot <vm.vmx> <snapshot>   revert (then start if it is off)
    vmrun -T ws snapshot <vm.vmx> <snapshot>           save_state
    vmrun -T ws stop <vm.vmx>                          stop

(`-T fusion` on macOS.) The env server is http://<guest IP>:5000 and the VM's Chrome
and VLC ports are reached on the same IP. Instead of OSWorld's fixed sleeps, the
provider waits for the guest IP (bounded by `ip_timeout`) and then polls
GET /screenshot until it answers (bounded by `ready_timeout`).

`path_to_vm` names one .vmx; parallel environments need one VM each (OSWorld's
VM manager clones them; this provider does not).
"""
from __future__ import annotations

import logging
import os
import platform
import re
import shutil
import subprocess
import threading
import time

from ..controllers.transport import Endpoint
from ..errors import MissingDependency, ProviderError, ProviderOptionError
from .base import DesktopOptions, Provider
from .leftovers import UNKNOWN, Leftover, PruneResult
from .vm_tools import run_tool, wait_for_env_server

log = logging.getLogger("osworld.providers.vmware")

VMRUN_INSTALL_HINT = ("install VMware Workstation Pro (Linux, Windows) or VMware Fusion (macOS), "
                      "which ship vmrun, and put it on PATH")
_IPV4 = re.compile(r"^(?:\d{1,3}\.){3}\d{1,3}$")


def default_host_type() -> str:
    return "fusion" if platform.system() == "Darwin" else "ws"


def running_vmware_vms(vmrun: str = "vmrun", notes: list[str] | None = None) -> list[Leftover]:
    """Running VMware VMs (when vmrun is installed), never judged: nothing marks which run uses one."""
    notes = notes if notes is not None else []
    if not shutil.which(vmrun):
        return []
    host_type = default_host_type()
    try:
        out = run_tool([vmrun, "-T", host_type, "list"], install_hint="", timeout=60).stdout
    except ProviderError as e:
        notes.append(f"VMware VMs not checked: {e}")
        return []
    return [Leftover(kind="vm", ident=path, name=path, state="running", verdict=UNKNOWN,
                     reason=f"a running VMware VM; nothing tells which run uses it: if none "
                            f"does, `{vmrun} -T {host_type} stop {path}`")
            for path in (line.strip() for line in out.splitlines()[1:]) if path]


class VMwareProvider(Provider):
    @classmethod
    def check_options(cls, desktop: DesktopOptions) -> None:
        """The .vmx file must be there before a run starts, not when its first desktop boots."""
        try:
            cls._check_vmx(desktop.path_to_vm)
        except ProviderError as e:
            raise ProviderOptionError("path_to_vm", str(e)) from None

    @classmethod
    def prune(cls, dry_run: bool = False, tool: str | None = None) -> PruneResult:
        """Lists the running VMs for a person to judge; stops none."""
        result = PruneResult()
        result.kept = running_vmware_vms(tool or "vmrun", result.notes)
        return result

    def __init__(self, vmrun: str = "vmrun", host_type: str | None = None, server_port: int = 5000,
                 ready_timeout: float = 300.0, ip_timeout: float = 300.0, ready_path: str = "/screenshot",
                 command_timeout: float = 300.0, poll_interval: float = 1.0, liveness_interval: float = 10.0):
        self.vmrun = vmrun
        self.host_type = host_type or default_host_type()
        self.server_port = server_port
        self.ready_timeout = ready_timeout
        self.ip_timeout = ip_timeout
        self.ready_path = ready_path
        self.command_timeout = command_timeout
        self.poll_interval = poll_interval
        self.liveness_interval = liveness_interval
        self.vmx: str | None = None
        self.headless = True
        self.ip: str | None = None
        self.last_ready_s: float | None = None
        self._lock = threading.RLock()

    # -- vmrun --------------------------------------------------------------------------------
    def _vmrun(self, *args: str, timeout: float | None = None, check: bool = True) -> subprocess.CompletedProcess:
        return run_tool([self.vmrun, "-T", self.host_type, *args], install_hint=VMRUN_INSTALL_HINT,
                        timeout=timeout or self.command_timeout, check=check)

    def running_vms(self) -> list[str]:
        """Paths of the running VMs, as `vmrun list` prints them."""
        out = self._vmrun("list").stdout
        return [line.strip() for line in out.splitlines()[1:] if line.strip()]

    def is_running(self, vmx: str) -> bool:
        target = os.path.normcase(os.path.abspath(vmx))
        return any(os.path.normcase(os.path.abspath(path)) == target for path in self.running_vms())

    # -- Provider interface ---------------------------------------------------------------------
    def start_emulator(self, path_to_vm: str | None = None, headless: bool = True, os_type: str = "Ubuntu") -> None:
        with self._lock:
            self.vmx = vmx = self._check_vmx(path_to_vm or self.vmx)
            self.headless = headless
            self._start_if_off(vmx)
            self._wait_ready(vmx)

    def get_ip_address(self, path_to_vm: str | None = None) -> Endpoint:
        with self._lock:
            if self.ip is None:
                self.vmx = vmx = self._check_vmx(path_to_vm or self.vmx)
                self.ip = self._guest_ip(vmx)
            return Endpoint(url=f"http://{self.ip}:{self.server_port}")

    def save_state(self, path_to_vm: str | None = None, snapshot_name: str = "init_state") -> None:
        vmx = self._check_vmx(path_to_vm or self.vmx)
        self._vmrun("snapshot", vmx, snapshot_name)

    def revert_to_snapshot(self, path_to_vm: str | None = None, snapshot_name: str = "init_state") -> str | None:
        with self._lock:
            self.vmx = vmx = self._check_vmx(path_to_vm or self.vmx)
            self.ip = None
            self._vmrun("revertToSnapshot", vmx, snapshot_name)
            self._start_if_off(vmx)  # a snapshot taken while powered off reverts to a stopped VM
            self._wait_ready(vmx)
            return vmx

    def stop_emulator(self, path_to_vm: str | None = None) -> None:
        with self._lock:
            vmx = path_to_vm or self.vmx
            if vmx is None:
                return
            proc = self._vmrun("stop", vmx, check=False)
            output = (proc.stdout + proc.stderr).strip()
            if proc.returncode != 0 and "not powered on" not in output.lower():
                raise ProviderError(f"`{self.vmrun} -T {self.host_type} stop {vmx}` failed with exit code "
                                    f"{proc.returncode}: {output}")
            self.ip = None

    def service_endpoint(self, port: int) -> tuple[str, int]:
        if self.ip is None:
            raise ProviderError("the VMware desktop is not started; call start_emulator() first")
        return self.ip, port  # an OSWorld VM serves Chrome's 9222 and VLC's 8080 on its own IP

    # -- internals --------------------------------------------------------------------------------
    @staticmethod
    def _check_vmx(path_to_vm: str | None) -> str:
        if not path_to_vm:
            raise ProviderError("the vmware provider needs path_to_vm: the .vmx file of an OSWorld VM "
                                "(e.g. Ubuntu/Ubuntu.vmx from huggingface.co/datasets/xlangai/ubuntu_osworld)")
        path = os.path.abspath(os.path.expanduser(path_to_vm))
        if not path.lower().endswith(".vmx"):
            raise ProviderError(f"path_to_vm must be a VMware .vmx file, got {path_to_vm!r}")
        if not os.path.isfile(path):
            raise ProviderError(f"VMware VM {path} does not exist")
        return path

    def _start_if_off(self, vmx: str) -> None:
        if self.is_running(vmx):
            return
        argv = ["start", vmx] + (["nogui"] if self.headless else [])
        self._vmrun(*argv)

    def _guest_ip(self, vmx: str) -> str:
        deadline = time.monotonic() + self.ip_timeout
        last = ""
        while True:  # each `-wait` call is given the time left, which wait_until does not tell its condition
            remaining = deadline - time.monotonic()
            try:
                proc = self._vmrun("getGuestIPAddress", vmx, "-wait", timeout=max(1.0, remaining), check=False)
            except MissingDependency:
                raise
            except ProviderError as e:  # the -wait call outlived the deadline
                last = str(e)
            else:
                ip = proc.stdout.strip()
                if proc.returncode == 0 and _IPV4.match(ip):
                    return ip
                last = (proc.stdout.strip() or proc.stderr.strip() or f"exit code {proc.returncode}")
            if time.monotonic() + self.poll_interval > deadline:
                raise ProviderError(f"no guest IP for {vmx} within {self.ip_timeout:g} s (last: {last}); "
                                    f"are VMware Tools installed and running in the VM?")
            time.sleep(self.poll_interval)

    def _wait_ready(self, vmx: str) -> None:
        self.ip = self._guest_ip(vmx)
        url = f"http://{self.ip}:{self.server_port}"

        def still_alive() -> str | None:
            return None if self.is_running(vmx) else "the VM is not running any more"

        self.last_ready_s = wait_for_env_server(url, self.ready_timeout, path=self.ready_path,
                                                what=f"VMware VM {vmx}", still_alive=still_alive,
                                                liveness_interval=self.liveness_interval)
        log.info("VMware VM %s ready at %s", vmx, url)
