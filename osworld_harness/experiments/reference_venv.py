"""OSWorld's own code in a venv of its own: the PyPI package desktop-env (OSWorld's desktop_env and mm_agents)
with only what its controllers, getters and metrics import (osworld_reference_requirements.txt beside this
file, installed with --no-deps: its declared dependencies include torch, transformers and cloud SDKs).

Made once, under the user's cache, keyed by the requirements' content as the env server's venv is (a change
of pins makes a new one), built aside and renamed into place: an interrupted build leaves nothing half-made.
scripts/osworld_reference.py and the tests that compare with OSWorld's code run its Python; nothing of this
repository is on its path, so `import desktop_env` there is OSWorld's.

    python -m osworld_harness.experiments.reference_venv     # make it (scripts/install.sh does)
"""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

from desktop_env.providers.local.paths import build_aside, cache_dir

REQUIREMENTS = Path(__file__).with_name("osworld_reference_requirements.txt")


class ReferenceVenvError(RuntimeError):
    """Building the reference venv failed; the message names the step and its output."""


def venv_dir() -> Path:
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:12]
    return cache_dir() / f"osworld-reference-{digest}"


def venv_python() -> Path:
    return venv_dir() / "bin" / "python"


def ensure_venv() -> Path:
    """The reference venv, made once (built aside, then renamed into place)."""
    target = venv_dir()
    if (target / "bin" / "python").exists():
        return target
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")

    def build(staging: Path) -> None:
        python = str(staging / "bin" / "python")
        # Byte code compiled as it installs: the drivers run with PYTHONDONTWRITEBYTECODE, and would
        # otherwise compile pandas, scipy and the rest on each run.
        install = [uv, "pip", "install", "-q", "--compile-bytecode", "--python", python] if uv else \
            [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--compile"]
        steps = [[sys.executable, "-m", "venv", *(["--without-pip"] if uv else []), str(staging)],
                 [*install, "--no-deps", "-r", str(REQUIREMENTS)]]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True)
            if done.returncode != 0:
                raise ReferenceVenvError(f"could not build OSWorld's reference venv at {target}: {' '.join(step)} "
                                         f"failed: {(done.stderr or done.stdout).strip()[-1500:]}")

    return build_aside(target, build)


if __name__ == "__main__":
    started = time.monotonic()
    existed = venv_python().exists()
    try:
        made = ensure_venv()
    except ReferenceVenvError as e:
        sys.exit(str(e))
    print(f"OSWorld's reference venv: {made} ({'there' if existed else f'made in {time.monotonic() - started:.0f} s'})")
