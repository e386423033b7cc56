"""The Ubuntu font family, which Ubuntu's desktop uses everywhere (`Ubuntu 11`, `Ubuntu Mono 13`).

Debian does not package it; the npm registry does, as the TrueType files of Google Fonts'
Ubuntu and Ubuntu Mono families (the Ubuntu Font Licence allows this), which `npm pack`
fetches with its integrity check. They are unpacked once beside the env server's code (public
files, which a normal user's harness may share with root's) and the desktop's view holds
them. Without npm the desktop falls back to DejaVu (`osworld env doctor` says so).
"""
from __future__ import annotations

import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from ....errors import DesktopEnvError
from ..paths import build_aside, sandbox_share_dir

PACKAGES = ("@expo-google-fonts/ubuntu@0.4.1", "@expo-google-fonts/ubuntu-mono@0.4.1")
FAMILIES = ("Ubuntu", "Ubuntu Mono")


class FontsUnavailable(DesktopEnvError, RuntimeError):
    """The Ubuntu fonts could not be fetched (no npm, or the registry refused)."""


def fonts_dir() -> Path:
    names = (package.rsplit("/", 1)[-1].replace("@", "-") for package in PACKAGES)
    return sandbox_share_dir() / ("fonts-" + "-".join(names))


def ensure_ubuntu_fonts() -> Path:
    """The folder of the families' .ttf files, fetched on first use. Raises FontsUnavailable."""
    target = fonts_dir()
    if target.is_dir():
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise FontsUnavailable("npm is not installed, so the Ubuntu fonts cannot be fetched (apt-get install npm)")
    return build_aside(target, lambda staging: _fetch(npm, staging))


def _fetch(npm: str, staging: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result = subprocess.run([npm, "pack", "--silent", "--pack-destination", tmp, *PACKAGES],
                                capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            raise FontsUnavailable(f"npm pack {' '.join(PACKAGES)} failed: {result.stderr.strip()[-500:]}")
        for archive in sorted(Path(tmp).glob("*.tgz")):
            with tarfile.open(archive) as tar:
                for member in tar.getmembers():
                    if member.isfile() and member.name.endswith(".ttf"):
                        source = tar.extractfile(member)  # None only for what is not a regular file
                        if source is not None:
                            (staging / Path(member.name).name).write_bytes(source.read())
    if not any(staging.glob("*.ttf")):
        raise FontsUnavailable(f"npm's packages {' '.join(PACKAGES)} held no .ttf file")
    staging.chmod(0o755)
