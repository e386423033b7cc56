"""Whether a desktop boot gets a root of its own (for `sudo`), and what that boot needs for it.

With one (a root harness on a kernel with idmapped mounts): a new user namespace per
boot, the system trees to attach in the harness's child, and root_init wrapped around
the session command. Without: the reason, written where the desktop's `sudo` reads it,
so it fails with one clear line (exit 1) instead of "command not found".
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ....errors import SandboxStartError
from ..build.etc_view import ensure_etc_view
from ..sandbox_layout import SANDBOX_RUNTIME, SANDBOX_VENV, UNAVAILABLE_NOTE
from ..system_root import HOST_SYSTEM, SystemRoot
from .host_ids import IDS_PER_DESKTOP, SandboxIdentity
from .sandbox import SandboxSpec
from .userns import SYSTEM_TREES, attach_system_trees, create_user_namespace, id_maps, root_inside_unavailable


@dataclass
class RootInside:
    reason: str = ""                 # why there is no root inside ("" when there is)
    userns_fd: int | None = None
    host_uid: int | None = None      # the host uid of root inside, which bwrap starts as
    trees: dict[str, str] = field(default_factory=dict)  # staging folder -> host tree to attach there

    @property
    def enabled(self) -> bool:
        return self.userns_fd is not None

    def pass_fds(self) -> tuple[int, ...]:
        return (self.userns_fd,) if self.userns_fd is not None else ()

    def attach_fn(self):
        if not self.enabled:
            return None
        userns_fd, trees = self.userns_fd, dict(self.trees)
        return lambda: attach_system_trees(userns_fd, trees)

    def wrap(self, command: list[str], spec: SandboxSpec) -> list[str]:
        if not self.enabled:
            return command
        return [f"{SANDBOX_VENV}/bin/python", "-m", "desktop_env.server.root_init",
                "--upper-bytes", str(spec.tmpfs_bytes), f"{SANDBOX_RUNTIME}/session.json", "--", *command]

    def explain_absence(self, runtime: Path) -> None:
        if not self.enabled:
            (runtime / UNAVAILABLE_NOTE).write_text(self.reason + "\n")

    def close(self) -> None:
        """The namespace lives on in the sandbox; the harness's descriptor is no longer needed."""
        if self.userns_fd is not None:
            os.close(self.userns_fd)
            self.userns_fd = None


def root_inside_for(env_dir: Path, identity: SandboxIdentity | None,
                    system: SystemRoot = HOST_SYSTEM) -> RootInside:
    reason = root_inside_unavailable()
    if reason or identity is None:
        return RootInside(reason=reason or "this desktop runs as a single uid")
    staging = env_dir / "system"
    trees = {"etc": str(ensure_etc_view(system))}
    trees.update({name: str(system.host_path(target)) for name, target in SYSTEM_TREES.items()
                  if system.host_path(target).is_dir()})
    for name in trees:
        (staging / name).mkdir(parents=True, exist_ok=True)
    os.chmod(staging, 0o755)
    maps = id_maps(identity.root_uid, IDS_PER_DESKTOP, identity.gid)
    try:
        userns_fd = create_user_namespace(identity.root_uid, identity.gid, maps)
    except OSError as e:
        raise SandboxStartError(f"cannot make the user namespace of the desktop in {env_dir}: {e}") from e
    return RootInside(userns_fd=userns_fd, host_uid=identity.root_uid,
                      trees={str(staging / name): source for name, source in trees.items()})
