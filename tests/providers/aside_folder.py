"""A folder of packages fetched aside (aside_packages.py), laid out as a build leaves it: an executable
standing in for the program at `program`, and packages.txt listing `packages`. Shared by the Chromium 120
and GNOME Settings 41 install tests."""
from __future__ import annotations

from pathlib import Path

from desktop_env.providers.local.build.aside_packages import MANIFEST, DebianPackage, manifest_text


def install(root: Path, program: Path, packages: list[DebianPackage]) -> Path:
    executable = root / program
    executable.parent.mkdir(parents=True)
    executable.write_text("#!/bin/sh\n")
    executable.chmod(0o755)
    (root / MANIFEST).write_text(manifest_text(packages))
    return root
