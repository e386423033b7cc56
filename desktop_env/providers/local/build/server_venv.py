"""The env server's Python: Debian's system Python plus a venv for pyautogui.

The server must run on the system Python because python3-pyatspi (the a11y tree)
only exists there; pyautogui is not packaged by Debian, so it lives in a venv made
with --system-site-packages. The venv is keyed by the requirements' content, so a
change of pins makes a new one instead of mutating a venv that envs may be using.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ....errors import MissingDependency
from ..paths import build_aside, sandbox_share_dir

SYSTEM_PYTHON = "/usr/bin/python3"
REQUIREMENTS = Path(__file__).resolve().parents[3] / "server" / "requirements.txt"
SYSTEM_MODULES = ("Xlib", "PIL", "pyatspi")


def venv_dir() -> Path:
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:12]
    return sandbox_share_dir() / f"server-venv-{digest}"


def check_system_python() -> None:
    if not Path(SYSTEM_PYTHON).exists():
        raise MissingDependency(f"{SYSTEM_PYTHON} not found: install Debian's python3 (apt-get install python3)")
    probe = subprocess.run([SYSTEM_PYTHON, "-c", f"import {', '.join(SYSTEM_MODULES)}"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        raise MissingDependency(
            f"{SYSTEM_PYTHON} cannot import {', '.join(SYSTEM_MODULES)}: {probe.stderr.strip().splitlines()[-1:]}; "
            "install them with: apt-get install python3-xlib python3-pil python3-pyatspi")


def ensure_server_venv() -> Path:
    """Returns the venv folder, creating it once (atomically: built aside, then renamed)."""
    target = venv_dir()
    if (target / "bin" / "python").exists():
        return target
    check_system_python()

    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")

    def build(staging: Path) -> None:
        # With uv (scripts/install.sh puts it in the harness's venv) the venv needs no pip of its own:
        # seconds instead of a minute.
        venv = [SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", *(["--without-pip"] if uv else []),
                str(staging)]
        install = [uv, "pip", "install", "-q", "--python", str(staging / "bin" / "python")] if uv else \
            [str(staging / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        try:
            subprocess.run(venv, check=True, capture_output=True, text=True)
            subprocess.run([*install, "--no-deps", "-r", str(REQUIREMENTS)], check=True, capture_output=True,
                           text=True)
        except subprocess.CalledProcessError as e:
            raise MissingDependency(
                f"could not build the env server's venv at {target}: {' '.join(e.cmd)} failed: "
                f"{(e.stderr or e.stdout).strip()[-500:]} (is python3-venv installed?)") from None
        os.chmod(staging, 0o755)  # mkdtemp made it 0700; the desktops' uid must read it

    return build_aside(target, build)
