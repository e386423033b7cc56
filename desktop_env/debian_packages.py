"""What dpkg says about this machine's Debian packages: asked by the doctor, VS Code's build and
the versions a run records (osworld_harness/execution/run.py), through one query."""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path


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
