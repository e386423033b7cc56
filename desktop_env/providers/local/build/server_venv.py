"""The env server's Python: the desktop system's own Python plus a venv for pyautogui.

The server must run on the system Python because python3-pyatspi (the a11y tree)
only exists there; pyautogui is not packaged by Debian or Ubuntu, so it lives in a venv made
with --system-site-packages. The venv is keyed by the requirements' content, so a
change of pins makes a new one instead of mutating a venv that envs may be using.

On the host that is Debian's Python; in the Ubuntu 22.04 userland, the tree's Python 3.10,
whose venv is made inside the tree (in_tree.py) at the path desktops mount it at, and filled
from the harness's side (uv, for Python 3.10), so nothing of the host's Python is in it.
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
from ..sandbox_layout import SANDBOX_VENV
from ..system_root import HOST_SYSTEM, SystemRoot
from .in_tree import InTreeError, run_in_tree

SYSTEM_PYTHON = "/usr/bin/python3"
REQUIREMENTS = Path(__file__).resolve().parents[3] / "server" / "requirements.txt"
SYSTEM_MODULES = ("Xlib", "PIL", "pyatspi")


def venv_dir(system: SystemRoot = HOST_SYSTEM) -> Path:
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:12]
    return sandbox_share_dir() / f"server-venv-{system.tag()}{digest}"


def check_system_python() -> None:
    if not Path(SYSTEM_PYTHON).exists():
        raise MissingDependency(f"{SYSTEM_PYTHON} not found: install Debian's python3 (apt-get install python3)")
    probe = subprocess.run([SYSTEM_PYTHON, "-c", f"import {', '.join(SYSTEM_MODULES)}"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        raise MissingDependency(
            f"{SYSTEM_PYTHON} cannot import {', '.join(SYSTEM_MODULES)}: {probe.stderr.strip().splitlines()[-1:]}; "
            "install them with: apt-get install python3-xlib python3-pil python3-pyatspi")


def ensure_server_venv(system: SystemRoot = HOST_SYSTEM) -> Path:
    """Returns the venv folder, creating it once (atomically: built aside, then renamed)."""
    target = venv_dir(system)
    if (target / "bin" / "python").is_symlink() or (target / "bin" / "python").exists():
        return target
    if not system.is_host:
        return build_aside(target, lambda staging: _build_in_tree(staging, system, target))
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


def _build_in_tree(staging: Path, system: SystemRoot, target: Path) -> None:
    """The venv made by the tree's own Python where desktops mount it (its links name the tree's python3),
    then pyautogui and its pins installed into its site-packages for the tree's Python version."""
    try:
        run_in_tree(system, [SYSTEM_PYTHON, "-c", f"import {', '.join(SYSTEM_MODULES)}"])
        run_in_tree(system, [SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", "--without-pip", SANDBOX_VENV],
                    binds={str(staging): SANDBOX_VENV})
        version = run_in_tree(system, [SYSTEM_PYTHON, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
    except InTreeError as e:
        raise MissingDependency(f"could not build the env server's venv at {target} in the {system.name} tree: "
                                f"{e}") from None
    site = staging / "lib" / f"python{version}" / "site-packages"
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    # Pure-Python packages (some only as sdists, built by the harness's Python into version-free wheels).
    install = ([uv, "pip", "install", "-q", "--python", sys.executable, "--python-version", version] if uv else
               [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check"])
    try:
        subprocess.run([*install, "--no-deps", "--target", str(site), "-r", str(REQUIREMENTS)], check=True,
                       capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        raise MissingDependency(f"could not install the env server's packages into {site}: {' '.join(e.cmd)} "
                                f"failed: {(e.stderr or e.stdout).strip()[-500:]}") from None
    shutil.rmtree(site / "bin", ignore_errors=True)  # the packages' scripts, made for the harness's Python
    # pyautogui itself connects to an X display as it is imported: found, not imported, here.
    check = "import importlib.util, pyperclip, pytweening, pymsgbox; assert importlib.util.find_spec('pyautogui')"
    try:
        run_in_tree(system, [f"{SANDBOX_VENV}/bin/python", "-c", check], binds={str(staging): SANDBOX_VENV})
    except InTreeError as e:
        raise MissingDependency(f"the env server's venv at {target} does not import its packages: {e}") from None
    for folder, _, _ in os.walk(staging):
        os.chmod(folder, 0o755)  # mkdtemp made it 0700; the desktops' uid must read it
