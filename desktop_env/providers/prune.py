"""Leftovers of killed runs: containers, port reservations, local env folders, running VMs.

A run killed with -9 cannot clean up. Every container the docker provider starts
carries the labels `osworld.owner=<pid>`, `osworld.owner_start=<start time>`,
`osworld.host=<hostname>` and `osworld.env=<id>`, so `find_leftovers()` can list them
and judge each one: its owner process is gone (stale: `prune()` removes it), alive
(in use: kept), or on another host (unknown: kept). Port reservations of dead owners
are dropped from the ledger, and the local provider's stale env folders removed.
Running VMware / VirtualBox VMs are listed but never stopped: nothing marks which
run uses them, so they are reported as "unknown" for a person to judge.

Exercised only against fake `docker`, `vmrun` and `VBoxManage` CLIs here.
"""
from __future__ import annotations

import json
import logging
import shutil
import socket
from dataclasses import asdict, dataclass, field

from ..errors import ProviderError
from .docker import DOCKER_INSTALL_HINT, LABEL_ENV, LABEL_HOST, LABEL_OWNER, LABEL_OWNER_START
from .ports import PortAllocator, process_alive
from .virtualbox import parse_vm_list
from .vm_tools import run_tool
from .vmware import default_host_type

log = logging.getLogger("osworld.providers.prune")

STALE, IN_USE, UNKNOWN = "stale", "in use", "unknown"


@dataclass
class Leftover:
    kind: str                   # "container" or "vm"
    ident: str                  # container ID, VM path or UUID
    name: str
    state: str                  # docker's status, or "running"
    verdict: str                # stale / in use / unknown
    reason: str
    owner_pid: int | None = None
    env_id: str | None = None
    host: str | None = None


@dataclass
class PruneResult:
    removed: list[Leftover] = field(default_factory=list)
    kept: list[Leftover] = field(default_factory=list)
    failed: list[tuple[Leftover, str]] = field(default_factory=list)
    ports_reclaimed: list[int] = field(default_factory=list)
    env_dirs_removed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"removed": [asdict(x) for x in self.removed], "kept": [asdict(x) for x in self.kept],
                "failed": [{**asdict(x), "error": err} for x, err in self.failed],
                "ports_reclaimed": self.ports_reclaimed, "env_dirs_removed": self.env_dirs_removed,
                "notes": self.notes}


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


def vm_leftovers(notes: list[str] | None = None, vmrun: str = "vmrun",
                 vboxmanage: str = "VBoxManage") -> list[Leftover]:
    """Running VMware / VirtualBox VMs (when those tools are installed), never judged."""
    notes = notes if notes is not None else []
    found = []
    if shutil.which(vmrun):
        host_type = default_host_type()
        try:
            out = run_tool([vmrun, "-T", host_type, "list"], install_hint="", timeout=60).stdout
        except ProviderError as e:
            notes.append(f"VMware VMs not checked: {e}")
        else:
            for path in (line.strip() for line in out.splitlines()[1:]):
                if path:
                    found.append(Leftover(kind="vm", ident=path, name=path, state="running", verdict=UNKNOWN,
                                          reason=f"a running VMware VM; nothing tells which run uses it: if none "
                                                 f"does, `{vmrun} -T {host_type} stop {path}`"))
    if shutil.which(vboxmanage):
        try:
            out = run_tool([vboxmanage, "list", "runningvms"], install_hint="", timeout=60).stdout
        except ProviderError as e:
            notes.append(f"VirtualBox VMs not checked: {e}")
        else:
            for name, uuid in parse_vm_list(out):
                found.append(Leftover(kind="vm", ident=uuid, name=name, state="running", verdict=UNKNOWN,
                                      reason=f"a running VirtualBox VM; nothing tells which run uses it: if none "
                                             f"does, `{vboxmanage} controlvm {uuid} poweroff`"))
    return found


def find_leftovers(docker: str = "docker", include_vms: bool = True, notes: list[str] | None = None) -> list[Leftover]:
    """Every osworld container with a verdict, plus running VMs (unknown)."""
    notes = notes if notes is not None else []
    found = docker_leftovers(docker, notes)
    if include_vms:
        found += vm_leftovers(notes)
    return found


def prune(dry_run: bool = False, docker: str = "docker", include_vms: bool = True,
          port_allocator: PortAllocator | None = None, include_local: bool = True) -> PruneResult:
    """Removes stale containers (owner gone) and the ledger entries / env folders of dead owners."""
    result = PruneResult()
    for item in find_leftovers(docker, include_vms, result.notes):
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
    try:  # a dry run lists what a real one would release and remove
        result.ports_reclaimed = (port_allocator or PortAllocator()).reclaim(dry_run=dry_run)
    except (OSError, ProviderError) as e:
        result.notes.append(f"port ledger not checked: {e}")
    if include_local:
        try:
            from .local.provider import prune_stale_env_dirs
            result.env_dirs_removed = [str(p) for p in prune_stale_env_dirs(dry_run=dry_run)]
        except Exception as e:  # noqa: BLE001 - the local provider may not be usable here
            result.notes.append(f"local env folders not checked: {e}")
    return result
