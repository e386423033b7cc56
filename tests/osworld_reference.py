"""OSWorld's own code, for the tests that compare with it: the PyPI package desktop-env (OSWorld's
desktop_env and mm_agents) in a venv of its own, with only what its controllers, getters and metrics
import (tests/osworld_reference_requirements.txt, installed with --no-deps). scripts/install.sh makes it
(`python -m tests.osworld_reference`), keyed by the requirements' content as the env server's venv is, so
a change of pins makes a new one.

OSWORLD_CHECKOUT=path runs a checkout's code instead (on PYTHONPATH), under OSWORLD_PYTHON or else the
reference venv's Python; OSWORLD_PYTHON alone names another interpreter with desktop-env installed.

A test that finds no reference, or whose reference cannot import a module, skips saying which; on CI
(CI=true) it fails instead, since a skip there would leave a comparison unchecked without a sign.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from desktop_env.providers.local.paths import build_aside, cache_dir

REQUIREMENTS = Path(__file__).with_name("osworld_reference_requirements.txt")
ON_CI = os.environ.get("CI", "").lower() in ("true", "1")


class ReferenceVenvError(RuntimeError):
    """Building the reference venv failed; the message names the step and its output."""


def venv_dir() -> Path:
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:12]
    return cache_dir() / f"osworld-reference-{digest}"


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


@dataclass(frozen=True)
class Reference:
    """The interpreter that runs OSWorld's code, and the checkout on its path if one was named."""

    python: str
    checkout: str | None = None

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a process that imports OSWorld's `desktop_env`, never ours."""
        env = {**os.environ, **extra}
        env.pop("PYTHONPATH", None)
        if self.checkout:
            env["PYTHONPATH"] = self.checkout
        return env

    def run(self, args: list[str], what: str, **kwargs) -> subprocess.CompletedProcess[str]:
        """`python args...` under the reference; a module it cannot import skips (fails on CI) naming it."""
        done = subprocess.run([self.python, *args], env=kwargs.pop("env", self.env()), capture_output=True,
                              text=True, **kwargs)
        module = missing_module(done.stderr) if done.returncode != 0 else None
        if module:
            unavailable(f"{what} cannot import {module!r} under {self.python}: "
                        f"{done.stderr.strip().splitlines()[-1]}")
        return done


def missing_module(stderr: str) -> str | None:
    found = re.findall(r"ModuleNotFoundError: No module named '([^']+)'", stderr)
    return found[-1] if found else None


def unavailable(reason: str) -> NoReturn:
    if ON_CI:
        pytest.fail(f"{reason} (CI=true: the comparison with OSWorld's code must run there)", pytrace=False)
    pytest.skip(reason)


def reference() -> Reference:
    """OSWorld's code as the environment names it (see the module's doc), or a skip (a failure on CI)
    saying what is missing."""
    venv_python = venv_dir() / "bin" / "python"
    python = os.environ.get("OSWORLD_PYTHON") or (str(venv_python) if venv_python.exists() else None)
    checkout = os.environ.get("OSWORLD_CHECKOUT")
    if checkout:
        if not Path(checkout, "desktop_env", "evaluators", "metrics", "__init__.py").is_file():
            unavailable(f"OSWORLD_CHECKOUT={checkout} is no OSWorld checkout (no desktop_env/evaluators/metrics)")
        return Reference(python or sys.executable, checkout)
    if not python:
        unavailable(f"no OSWorld reference venv at {venv_python.parent.parent} (tests/osworld_reference_requirements"
                    ".txt): `make install` makes it")
    return Reference(python)


def osworld_checkout() -> Path:
    """OSWorld's repository itself, for what its PyPI package leaves out (lib_run_single.py, its runner
    scripts, evaluation_examples/): OSWORLD_CHECKOUT, else /work/OSWorld."""
    return Path(os.environ.get("OSWORLD_CHECKOUT", "/work/OSWorld"))


if __name__ == "__main__":
    started = time.monotonic()
    existed = (venv_dir() / "bin" / "python").exists()
    try:
        made = ensure_venv()
    except ReferenceVenvError as e:
        sys.exit(str(e))
    print(f"OSWorld's reference venv: {made} ({'there' if existed else f'made in {time.monotonic() - started:.0f} s'})")
