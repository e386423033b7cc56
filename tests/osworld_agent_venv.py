"""A venv of the tests' own with OSWorld's agents as PyPI publishes them (desktop-env 1.0.2's mm_agents) and
what OSWorld's PromptAgent imports (tests/osworld_agent_requirements.txt), made once under the user's cache,
keyed by the requirements' content, built aside and renamed into place as the reference venv is. Nothing of this
repository is on its path: its `mm_agents` is OSWorld's."""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from desktop_env.providers.local.paths import build_aside, cache_dir

REQUIREMENTS = Path(__file__).with_name("osworld_agent_requirements.txt")


def agent_venv_python() -> Path:
    """The venv's Python, the venv made first if it is not there (about a minute, from PyPI)."""
    target = cache_dir() / f"osworld-agents-{hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:12]}"
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")

    def build(staging: Path) -> None:
        python = str(staging / "bin" / "python")
        install = [uv, "pip", "install", "-q", "--python", python] if uv else \
            [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        for step in ([sys.executable, "-m", "venv", *(["--without-pip"] if uv else []), str(staging)],
                     [*install, "--no-deps", "-r", str(REQUIREMENTS)]):
            done = subprocess.run(step, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(step)} failed: {(done.stderr or done.stdout).strip()[-1500:]}")

    if not (target / "bin" / "python").exists():
        build_aside(target, build)
    return target / "bin" / "python"
