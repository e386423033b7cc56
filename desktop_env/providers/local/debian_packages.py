"""Which Debian packages are installed: the one question the doctor, VS Code's build and the
coverage report ask of dpkg."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def read_package_list(path: Path) -> list[str]:
    """A package list file: one name per line, `#` comments and blank lines left out."""
    lines = path.read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def missing_packages(packages: list[str]) -> list[str]:
    """Those of `packages` dpkg does not have installed (all of them where there is no dpkg)."""
    if shutil.which("dpkg-query") is None:
        return packages
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Status}\n", *packages],
                         capture_output=True, text=True).stdout
    installed = {line.split()[0] for line in out.splitlines() if line.endswith("install ok installed")}
    return [p for p in packages if p not in installed]
