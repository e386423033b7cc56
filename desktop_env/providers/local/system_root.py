"""Where a desktop's system comes from: the host's own programs, or Ubuntu 22.04's tree built for the purpose.

A desktop's /usr, /etc and the system state apps read (dpkg's and apt's, the font cache) are mounted from one
root: the host's `/` (Debian's packages, dressed as Ubuntu's: VM_DIFFERENCES.md), or the Ubuntu 22.04 userland
that `osworld env setup --ubuntu-userland` builds (build/ubuntu_userland.py), whose packages are OSWorld's VM's
own. Each part that reads system files to build what desktops mount (the desktop's XDG view, its /etc, the
env server's venv) reads them under `path`, and names them inside the desktop by their path there.

A leaf module: the boot and the builds share it without importing each other.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SystemRoot:
    """The folder a desktop's system files are read from on the host; `name` says which system it is."""
    path: Path = Path("/")
    name: str = "host"

    @property
    def is_host(self) -> bool:
        return self.path == Path("/")

    def host_path(self, inside: str | Path) -> Path:
        """Where the file a desktop sees at `inside` (an absolute path) is on the host."""
        return self.path / str(inside).lstrip("/")

    def inside_path(self, host: Path) -> Path:
        """Where a desktop sees the host's `host`, a path under `path`."""
        return Path("/") / host.relative_to(self.path)

    def tag(self) -> str:
        """A short name for the caches built from this root ("" for the host's: its names stay as they were)."""
        if self.is_host:
            return ""
        return f"{self.name}-{hashlib.sha256(str(self.path).encode()).hexdigest()[:8]}-"


HOST_SYSTEM = SystemRoot()
