"""OSWorld's own code, for the tests that compare with it: the PyPI package desktop-env (OSWorld's
desktop_env and mm_agents) in a venv of its own, with only what its controllers, getters and metrics
import (osworld_harness/experiments/reference_venv.py, which scripts/install.sh runs to make it).

OSWORLD_CHECKOUT=path runs a checkout's code instead (on PYTHONPATH), under OSWORLD_PYTHON or else the
reference venv's Python; OSWORLD_PYTHON alone names another interpreter with desktop-env installed.

A test that finds no reference, or whose reference cannot import a module, skips saying which; on CI
(CI=true) it fails instead, since a skip there would leave a comparison unchecked without a sign.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from osworld_harness.experiments.reference_venv import venv_dir

ON_CI = os.environ.get("CI", "").lower() in ("true", "1")


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
        unavailable(f"no OSWorld reference venv at {venv_python.parent.parent} (osworld_harness/experiments/"
                    "reference_venv.py): `make install` makes it")
    return Reference(python)


def osworld_checkout() -> Path:
    """OSWorld's repository itself, for what its PyPI package leaves out (lib_run_single.py, its runner
    scripts, evaluation_examples/): OSWORLD_CHECKOUT, else /work/OSWorld."""
    return Path(os.environ.get("OSWORLD_CHECKOUT", "/work/OSWorld"))
