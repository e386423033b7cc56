"""The env server's own code, copied out of the checkout for the desktops to mount.

A desktop must not see the checkout: it holds the task files, their expected files,
reference solutions, caches and results. So only the modules the env server imports
(the `desktop_env.server` package and the small modules it shares with the
harness) are copied to a folder keyed by their content, and that folder alone is
mounted. The server's imports are pinned by a test, so a new import outside this
list fails loudly instead of silently pulling the checkout back in.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from ....errors import SandboxStartError
from ..paths import build_aside, sandbox_share_dir
from .server_venv import SYSTEM_PYTHON

PACKAGE_DIR = Path(__file__).resolve().parents[3]  # desktop_env/
SHARED_MODULES = ("__init__.py", "a11y_namespaces.py", "desktop_defaults.py")
SERVER_PACKAGE = "server"
# Part of the folder's key: bumped when what is built beside the files changes (v2: their byte code).
LAYOUT = b"byte-code-v2"


def server_files() -> list[Path]:
    """The files a desktop needs, relative to the folder holding `desktop_env`."""
    files = [PACKAGE_DIR / name for name in SHARED_MODULES]
    for path in sorted((PACKAGE_DIR / SERVER_PACKAGE).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            files.append(path)
    return [path.relative_to(PACKAGE_DIR.parent) for path in files]


def _digest(files: list[Path]) -> str:
    digest = hashlib.sha256(LAYOUT + b"\0")
    for relative in files:
        digest.update(str(relative).encode() + b"\0")
        digest.update((PACKAGE_DIR.parent / relative).read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def ensure_server_code() -> Path:
    """The folder to mount as the server's source (it holds `desktop_env/`), made once per content."""
    files = server_files()
    target = sandbox_share_dir() / f"server-src-{_digest(files)}"
    if target.is_dir():
        return target
    return build_aside(target, lambda staging: _copy_files(staging, files))


def _copy_files(staging: Path, files: list[Path]) -> None:
    for relative in files:
        destination = staging / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PACKAGE_DIR.parent / relative, destination)
    _compile(staging)
    for folder, _dirs, names in os.walk(staging):
        os.chmod(folder, 0o755)  # mkdtemp made it 0700; the desktops' uid must read it
        for name in names:
            path = os.path.join(folder, name)
            os.chmod(path, 0o755 if os.stat(path).st_mode & 0o100 else 0o644)


def _compile(staging: Path) -> None:
    """Byte code beside the copies, made by the Python the server runs on: the folder is mounted read-only
    and the desktops do not write byte code, so without it every boot compiles the server anew. The
    copies keep their modification times (copy2), which is what the byte code is checked against."""
    try:
        subprocess.run([SYSTEM_PYTHON, "-m", "compileall", "-q", str(staging)], check=True, capture_output=True,
                       text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        detail = getattr(e, "stderr", None) or e
        raise SandboxStartError(f"cannot compile the env server's code in {staging} with {SYSTEM_PYTHON}: "
                                f"{str(detail).strip()[-500:]}") from None
