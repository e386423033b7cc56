"""What dpkg says about Debian packages: this machine's, asked by the doctor and VS Code's build through one
query, and any system's, read from its dpkg status file (the versions a run records of the desktop's apps,
the Ubuntu 22.04 tree's lock)."""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DPKG_STATUS = Path("var/lib/dpkg/status")  # under a system's root


@dataclass(frozen=True)
class InstalledPackage:
    """One installed package of a dpkg status file."""
    name: str
    version: str
    architecture: str


def read_package_list(path: Path) -> list[str]:
    """A package list file: one name per line, `#` comments and blank lines left out."""
    lines = path.read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def package_field(packages: Sequence[str], field: str, timeout: float | None = None) -> dict[str, str] | None:
    """dpkg's `field` (a dpkg-query format name: Status, Version...) of each of `packages` dpkg
    knows, by package name; None where there is no dpkg-query. Raises subprocess.TimeoutExpired
    after `timeout` seconds."""
    if shutil.which("dpkg-query") is None:
        return None
    out = subprocess.run(["dpkg-query", "-W", f"-f=${{Package}} ${{{field}}}\n", *packages],
                         capture_output=True, text=True, timeout=timeout).stdout
    return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)


def missing_packages(packages: list[str]) -> list[str]:
    """Those of `packages` dpkg does not have installed (all of them where there is no dpkg)."""
    status = package_field(packages, "Status")
    if status is None:
        return packages
    return [p for p in packages if not status.get(p, "").endswith("install ok installed")]


def installed_packages(status: Path) -> list[InstalledPackage]:
    """Every package a dpkg status file says is installed, by name. Read as text, so that a tree's is read
    without running its dpkg; a package removed but for its configuration files (or half installed) is not."""
    packages = []
    for stanza in status.read_text().split("\n\n"):
        fields = _fields(stanza)
        if fields.get("Status", "").endswith(" installed") and "Package" in fields:
            packages.append(InstalledPackage(fields["Package"], fields.get("Version", ""),
                                             fields.get("Architecture", "")))
    return sorted(packages, key=lambda p: p.name)


def _fields(stanza: str) -> dict[str, str]:
    """A deb822 stanza's fields' first lines (a continuation line starts with a space)."""
    return dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and not line.startswith(" "))
