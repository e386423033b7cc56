"""`osworld env prune`: each provider's `prune()`, then the port reservations of dead owners.

A run killed with -9 cannot clean up. Each provider knows its own leftovers: the docker provider's
containers carry labels naming their owner process, so it removes those whose owner is gone and
keeps those in use or started on another host (leftovers.py has the verdicts); the local provider
removes the env folders (and kills the sandboxes) of dead harnesses; VMware and VirtualBox list
their running VMs, never stopped, for nothing marks which run uses them. The port ledger
(ports.py) is shared by the providers that publish ports.

Exercised only against fake `docker`, `vmrun` and `VBoxManage` CLIs here.
"""
from __future__ import annotations

import logging

from ..errors import ProviderError
from . import provider_class, provider_names
from .leftovers import PruneResult
from .ports import PortAllocator

log = logging.getLogger("osworld.providers.prune")

VM_PROVIDERS = ("vmware", "virtualbox")


def prune(dry_run: bool = False, docker: str = "docker", include_vms: bool = True,
          port_allocator: PortAllocator | None = None, include_local: bool = True) -> PruneResult:
    """Every provider's leftovers pruned (with `dry_run`, listed), containers, VMs and folders in the
    providers' order, then the ledger entries of dead owners; `docker` is the docker CLI to use."""
    result = PruneResult()
    tools = {"docker": docker}
    for name in provider_names():
        cls = provider_class(name)
        if cls is None or (name in VM_PROVIDERS and not include_vms) or (name == "local" and not include_local):
            continue
        try:
            result.add(cls.prune(dry_run, tools.get(name)))
        except Exception as e:  # noqa: BLE001 - one provider that cannot be checked here leaves the others
            result.notes.append(f"{name} leftovers not checked: {e}")
    try:  # a dry run lists what a real one would release and remove
        result.ports_reclaimed = (port_allocator or PortAllocator()).reclaim(dry_run=dry_run)
    except (OSError, ProviderError) as e:
        result.notes.append(f"port ledger not checked: {e}")
    return result
