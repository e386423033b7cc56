"""The `docker` provider: an official OSWorld desktop in the public `happysixd/osworld-docker` image.

Tested only against a fake `docker` CLI (tests/providers/fake_bin/docker) and the real
docker client's flag parser with no daemon behind it: no container has been run from
here, because this machine has no Docker engine. The command lines follow the facts
of OSWorld's own Docker provider; the code is ours.

What OSWorld's provider does, and so what this one does:
- image `happysixd/osworld-docker`, a QEMU/KVM VM in a container; the VM disk
  (`path_to_vm`, OSWorld's Ubuntu.qcow2 from huggingface.co/datasets/xlangai/ubuntu_osworld)
  is bind-mounted read-only at /System.qcow2, so every container boots the pristine disk;
- environment DISK_SIZE=32G, RAM_SIZE=4G, CPU_CORES=4, `--cap-add NET_ADMIN`;
- `--device /dev/kvm` when the host has /dev/kvm, else KVM=N (software emulation:
  works, but boots many times slower; `kvm=True` makes a missing /dev/kvm an error);
- container ports 5000 (env server), 9222 (Chrome DevTools), 8006 (VNC in a browser),
  8080 (VLC's HTTP interface) published on free host ports.

What we do differently: ports come from ports.PortAllocator (a file lock plus a
ledger, so parallel workers never pick the same port) and are published on
127.0.0.1 only by default (the env server has no authentication); readiness is
polled (GET /screenshot until it answers 200, bounded by `ready_timeout`, failing
fast with the container's log if it exits) instead of fixed sleeps; every container
carries labels `osworld.owner=<pid>`, `osworld.owner_start`, `osworld.host` and
`osworld.env=<id>` so that `osworld env prune` can find the leftovers of killed runs.

revert = `docker rm -f` + a fresh `docker run` (the disk is read-only, so a new
container is the initial state); stop = `docker rm -f`; save_state is not possible.
"""
from __future__ import annotations

import atexit
import json
import logging
import os
import socket
import subprocess
import threading
import uuid
import weakref

from ..controllers.transport import Endpoint
from ..errors import MissingDependency, ProviderError, ProviderOptionError
from .base import DesktopOptions, Provider
from .leftovers import IN_USE, STALE, UNKNOWN, Leftover, PruneResult
from .ports import PortAllocator, process_alive, process_start_time
from .vm_tools import run_tool, wait_for_env_server

log = logging.getLogger("osworld.providers.docker")

IMAGE = "happysixd/osworld-docker"
VM_DISK_IN_CONTAINER = "/System.qcow2"
SERVER_PORT, CHROME_PORT, VNC_PORT, VLC_PORT = 5000, 9222, 8006, 8080
CONTAINER_PORTS = (SERVER_PORT, CHROME_PORT, VNC_PORT, VLC_PORT)
LABEL_OWNER, LABEL_OWNER_START, LABEL_HOST, LABEL_ENV = (
    "osworld.owner", "osworld.owner_start", "osworld.host", "osworld.env")
DISK_IMAGE_HINT = ("the OSWorld VM disk, e.g. Ubuntu.qcow2 unzipped from "
                   "https://huggingface.co/datasets/xlangai/ubuntu_osworld/resolve/main/Ubuntu.qcow2.zip")
DOCKER_INSTALL_HINT = "install Docker Engine (https://docs.docker.com/engine/install/)"
_PORT_CONFLICT = ("port is already allocated", "address already in use")


def docker_hint(output: str) -> str:
    lowered = output.lower()
    if "cannot connect to the docker daemon" in lowered or "is the docker daemon running" in lowered:
        return "the Docker daemon is not running: start it (e.g. `sudo systemctl start docker`)"
    if "unknown server os" in lowered:  # what `docker run --device` says when it cannot ask the daemon
        return ("the docker client could not ask the daemon for its OS: is the Docker daemon running and "
                "reachable (`docker info`)?")
    if "permission denied" in lowered and "docker.sock" in lowered:
        return ("no permission to use the Docker daemon: add your user to the `docker` group "
                "(`sudo usermod -aG docker $USER`, then log in again)")
    if any(s in lowered for s in _PORT_CONFLICT):
        return "a published host port is taken by another program"
    return ""


_live: weakref.WeakSet[DockerProvider] = weakref.WeakSet()


@atexit.register
def _remove_all() -> None:
    for provider in list(_live):
        try:
            provider.stop_emulator()
        except Exception as e:  # noqa: BLE001 - best effort at exit
            log.warning("could not remove container %s at exit: %s", provider.container_name, e)


def parse_labels(text: str) -> dict[str, str]:
    """`docker ps --format '{{json .}}'` gives labels as "k1=v1,k2=v2"."""
    labels = {}
    for item in (text or "").split(","):
        key, sep, value = item.partition("=")
        if sep:
            labels[key.strip()] = value
    return labels


def judge_container(labels: dict[str, str], this_host: str) -> tuple[str, str, int | None]:
    owner = labels.get(LABEL_OWNER, "")
    try:
        pid = int(owner)
    except ValueError:
        return UNKNOWN, f"label {LABEL_OWNER}={owner!r} is not a pid", None
    host = labels.get(LABEL_HOST)
    if host and host != this_host:
        return UNKNOWN, f"started on host {host!r}; its owner cannot be checked from {this_host!r}", pid
    if process_alive(pid, labels.get(LABEL_OWNER_START)):
        return IN_USE, f"owner process {pid} is running", pid
    return STALE, f"owner process {pid} is gone", pid


def docker_leftovers(docker: str = "docker", notes: list[str] | None = None) -> list[Leftover]:
    """Every osworld container (found by its owner label) with a verdict."""
    notes = notes if notes is not None else []
    try:
        proc = run_tool([docker, "ps", "-a", "--filter", f"label={LABEL_OWNER}", "--format", "{{json .}}"],
                        install_hint=DOCKER_INSTALL_HINT, timeout=60, check=False)
    except ProviderError as e:  # docker not installed
        notes.append(f"containers not checked: {e}")
        return []
    if proc.returncode != 0:
        notes.append(f"containers not checked: `{docker} ps` failed: {(proc.stderr or proc.stdout).strip()}")
        return []
    this_host = socket.gethostname()
    found = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            row = json.loads(line)
        except ValueError:
            notes.append(f"unparsable `docker ps` line: {line[:200]}")
            continue
        labels = parse_labels(row.get("Labels", ""))
        verdict, reason, pid = judge_container(labels, this_host)
        found.append(Leftover(kind="container", ident=row.get("ID", ""), name=row.get("Names", ""),
                              state=row.get("Status") or row.get("State", ""), verdict=verdict, reason=reason,
                              owner_pid=pid, env_id=labels.get(LABEL_ENV), host=labels.get(LABEL_HOST)))
    return found


def prune_containers(found: list[Leftover], dry_run: bool = False, docker: str = "docker") -> PruneResult:
    """Removes the stale ones of `found` (`docker rm -f`); keeps the others."""
    result = PruneResult()
    for item in found:
        if item.verdict != STALE:
            result.kept.append(item)
            continue
        if dry_run:
            result.removed.append(item)
            continue
        try:
            proc = run_tool([docker, "rm", "-f", item.ident], install_hint=DOCKER_INSTALL_HINT, timeout=120,
                            check=False)
        except ProviderError as e:
            result.failed.append((item, str(e)))
            continue
        output = (proc.stderr or proc.stdout).strip()
        if proc.returncode == 0 or "no such container" in output.lower():
            result.removed.append(item)
        else:
            result.failed.append((item, output or f"exit code {proc.returncode}"))
    return result


class DockerProvider(Provider):
    """One OSWorld VM in one container; a revert is a fresh container."""

    @classmethod
    def check_options(cls, desktop: DesktopOptions) -> None:
        """The disk image must be there before a run starts, not when its first container boots."""
        try:
            cls._check_disk(desktop.path_to_vm)
        except ProviderError as e:
            raise ProviderOptionError("path_to_vm", str(e)) from None

    @classmethod
    def prune(cls, dry_run: bool = False, tool: str | None = None) -> PruneResult:
        """Removes the containers whose owner process is gone; keeps those in use or of another host."""
        notes: list[str] = []
        found = docker_leftovers(tool or "docker", notes)
        result = prune_containers(found, dry_run, tool or "docker")
        result.notes[:0] = notes
        return result

    def __init__(self, image: str = IMAGE, docker: str = "docker", kvm: bool | None = None,
                 kvm_device: str = "/dev/kvm", ram_size: str = "4G", cpu_cores: int = 4, disk_size: str = "32G",
                 bind_address: str = "127.0.0.1", connect_host: str = "127.0.0.1",
                 ready_timeout: float | None = None, ready_path: str = "/screenshot",
                 run_timeout: float = 1800.0, command_timeout: float = 120.0, liveness_interval: float = 5.0,
                 max_poll_interval: float = 2.0,
                 port_allocator: PortAllocator | None = None, extra_env: dict[str, str] | None = None):
        self.image = image
        self.docker = docker
        self.kvm = kvm
        self.kvm_device = kvm_device
        self.environment = {"DISK_SIZE": disk_size, "RAM_SIZE": ram_size, "CPU_CORES": str(cpu_cores),
                            **(extra_env or {})}
        self.bind_address = bind_address
        self.connect_host = connect_host
        self.ready_timeout = ready_timeout
        self.ready_path = ready_path
        self.run_timeout = run_timeout  # `docker run` may pull the image first
        self.command_timeout = command_timeout
        self.liveness_interval = liveness_interval
        self.max_poll_interval = max_poll_interval
        self.ports = port_allocator or PortAllocator()  # bind-tests on 0.0.0.0, the strictest test
        self.env_id = uuid.uuid4().hex[:12]
        self.container_name = f"osworld-{self.env_id}"
        self.path_to_vm: str | None = None
        self.host_ports: dict[int, int] = {}  # container port -> host port
        self.container_id: str | None = None
        self.use_kvm: bool | None = None
        self.last_ready_s: float | None = None
        self._lock = threading.RLock()

    # -- docker CLI ---------------------------------------------------------------------------
    def _docker(self, *args: str, timeout: float | None = None, check: bool = True) -> subprocess.CompletedProcess:
        return run_tool([self.docker, *args], install_hint=DOCKER_INSTALL_HINT,
                        timeout=timeout or self.command_timeout, check=check, hint=docker_hint)

    def labels(self) -> dict[str, str]:
        pid = os.getpid()
        labels = {LABEL_OWNER: str(pid), LABEL_ENV: self.env_id, LABEL_HOST: socket.gethostname()}
        start = process_start_time(pid)
        if start:
            labels[LABEL_OWNER_START] = start
        return labels

    def run_argv(self) -> list[str]:
        """The `docker run` command line for the current ports and disk image."""
        argv = [self.docker, "run", "-d", "--name", self.container_name]
        for key, value in self.labels().items():
            argv += ["--label", f"{key}={value}"]
        environment = dict(self.environment)
        if not self.use_kvm:
            environment["KVM"] = "N"
        for key, value in environment.items():
            argv += ["-e", f"{key}={value}"]
        argv += ["--cap-add", "NET_ADMIN"]
        if self.use_kvm:
            argv += ["--device", self.kvm_device]
        argv += ["-v", f"{self.path_to_vm}:{VM_DISK_IN_CONTAINER}:ro"]
        prefix = f"{self.bind_address}:" if self.bind_address else ""
        for container_port in CONTAINER_PORTS:
            argv += ["-p", f"{prefix}{self.host_ports[container_port]}:{container_port}"]
        argv.append(self.image)
        return argv

    # -- Provider interface ---------------------------------------------------------------------
    def start_emulator(self, path_to_vm: str | None = None, headless: bool = True, os_type: str = "Ubuntu") -> None:
        with self._lock:
            if self.container_id is not None:
                return
            self.path_to_vm = self._check_disk(path_to_vm or self.path_to_vm)
            self.use_kvm = self._decide_kvm()
            self._boot()

    def get_ip_address(self, path_to_vm: str | None = None) -> Endpoint:
        if self.container_id is None:
            raise ProviderError("the docker desktop is not started; call start_emulator() first")
        return Endpoint(url=f"http://{self.connect_host}:{self.host_ports[SERVER_PORT]}")

    def save_state(self, path_to_vm: str | None = None, snapshot_name: str = "init_state") -> None:
        raise ProviderError("the docker provider cannot save snapshots: the VM disk is mounted read-only and "
                            "every revert starts a fresh container from it")

    def revert_to_snapshot(self, path_to_vm: str | None = None, snapshot_name: str = "init_state") -> str | None:
        with self._lock:
            if self.path_to_vm is None:
                raise ProviderError("the docker desktop was never started; call start_emulator() first")
            self._remove_container()
            self._boot()
            return self.path_to_vm

    def stop_emulator(self, path_to_vm: str | None = None) -> None:
        with self._lock:
            try:
                self._remove_container()
            finally:
                if self.host_ports:
                    self.ports.release(self.host_ports.values())
                    self.host_ports = {}
                _live.discard(self)

    def service_endpoint(self, port: int) -> tuple[str, int]:
        if port not in self.host_ports:
            raise ProviderError(f"the docker provider publishes container ports {', '.join(map(str, CONTAINER_PORTS))}"
                                f"{'' if self.host_ports else ' (once started)'}; port {port} is not one of them")
        return self.connect_host, self.host_ports[port]

    # -- internals --------------------------------------------------------------------------------
    @staticmethod
    def _check_disk(path_to_vm: str | None) -> str:
        if not path_to_vm:
            raise ProviderError(f"the docker provider needs path_to_vm: {DISK_IMAGE_HINT}")
        path = os.path.abspath(os.path.expanduser(path_to_vm))
        if not os.path.isfile(path):
            raise ProviderError(f"VM disk image {path} does not exist; path_to_vm must be {DISK_IMAGE_HINT}")
        return path

    def _decide_kvm(self) -> bool:
        present = os.path.exists(self.kvm_device)
        if self.kvm is True and not present:
            raise ProviderError(f"{self.kvm_device} not found: enable hardware virtualization (VT-x/AMD-V) and "
                                f"load the kvm module, or pass kvm=False to emulate without KVM (many times slower)")
        if self.kvm is False:
            return False
        if not present:
            log.warning("%s not found: the VM runs without KVM (KVM=N), which is many times slower; "
                        "enable virtualization for real runs", self.kvm_device)
        return present

    def _ready_timeout(self) -> float:
        if self.ready_timeout is not None:
            return self.ready_timeout
        return 300.0 if self.use_kvm else 1200.0

    def _boot(self) -> None:
        """A new container, ready; on failure nothing is left running and no port is held."""
        _live.add(self)
        try:
            self._run_and_wait()
        except BaseException:
            try:
                self._remove_container()  # e.g. Ctrl-C while waiting: leave nothing running
            except ProviderError as e:
                log.warning("could not remove container %s: %s", self.container_name, e)
            if self.host_ports:
                self.ports.release(self.host_ports.values())
                self.host_ports = {}
            _live.discard(self)
            raise

    def _allocate_host_ports(self) -> dict[int, int]:
        """A free host port for each of CONTAINER_PORTS."""
        return dict(zip(CONTAINER_PORTS, self.ports.allocate(len(CONTAINER_PORTS), "docker"), strict=True))

    def _run_and_wait(self) -> None:
        """docker run (new ports on a port conflict), then wait for the env server."""
        if not self.host_ports:
            self.host_ports = self._allocate_host_ports()
        for attempt in range(3):
            try:
                proc = self._docker(*self.run_argv()[1:], timeout=self.run_timeout)
            except MissingDependency:
                raise
            except ProviderError as e:
                self._docker("rm", "-f", self.container_name, check=False)  # a 'created' container may remain
                if attempt < 2 and any(s in str(e).lower() for s in _PORT_CONFLICT):
                    log.warning("host port conflict for %s, retrying with other ports: %s", self.container_name, e)
                    old = list(self.host_ports.values())
                    self.host_ports = self._allocate_host_ports()
                    self.ports.release(old)
                    continue
                raise
            self.container_id = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else self.container_name
            break
        url = f"http://{self.connect_host}:{self.host_ports[SERVER_PORT]}"
        try:
            self.last_ready_s = wait_for_env_server(
                url, self._ready_timeout(), path=self.ready_path, what=f"container {self.container_name}",
                still_alive=self._container_problem, liveness_interval=self.liveness_interval,
                max_poll_interval=self.max_poll_interval)
        except ProviderError as e:
            logs = self._logs_tail()
            self._remove_container()
            raise ProviderError(f"{e}" + (f"\ncontainer log (last lines):\n{logs}" if logs else "")
                                + ("" if self.use_kvm else "\n(no KVM: the VM boots slowly; raise ready_timeout "
                                                            "or enable /dev/kvm)")) from None
        log.info("container %s ready in %.1f s at %s", self.container_name, self.last_ready_s, url)

    def _container_problem(self) -> str | None:
        proc = self._docker("inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", self.container_name,
                            check=False)
        if proc.returncode != 0:
            return f"the container is gone ({(proc.stderr or proc.stdout).strip()})"
        status, _, code = proc.stdout.strip().partition(" ")
        if status in ("exited", "dead"):
            return f"the container {status} with code {code or '?'}"
        return None

    def _logs_tail(self, lines: int = 40) -> str:
        try:
            proc = self._docker("logs", "--tail", str(lines), self.container_name, check=False)
        except ProviderError:
            return ""
        return (proc.stdout + proc.stderr).strip()[-4000:]

    def _remove_container(self) -> None:
        if self.container_id is None:
            return
        proc = self._docker("rm", "-f", self.container_name, check=False)
        if proc.returncode != 0 and "no such container" not in (proc.stderr + proc.stdout).lower():
            raise ProviderError(f"`{self.docker} rm -f {self.container_name}` failed with exit code "
                                f"{proc.returncode}: {(proc.stderr or proc.stdout).strip()}"
                                + (f"\n{docker_hint(proc.stderr)}" if docker_hint(proc.stderr) else ""))
        self.container_id = None
