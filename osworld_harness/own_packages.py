"""This harness's own `mm_agents`, `desktop_env` and `lib_run_single` before any of the same name: a folder on
PYTHONPATH that holds OSWorld's (a checkout) comes before the installed harness on sys.path, and the harness
would import OSWorld's packages as its own (`cannot import name 'NO_ANSWER' from 'mm_agents.prompts'`).
`osworld_harness/__init__.py` calls put_ours_first(), so `import osworld_harness` (and with it the `osworld`
command, and every module of the library, whose package is imported first) sees ours. Standard library
only: it runs before anything of the harness is imported. The checkout's agents still run, each in a process of
its own whose path has the checkout first (mm_agents/agent_process.py: `--agent mm_agents.agent:PromptAgent`
finds it on PYTHONPATH)."""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

HARNESS_ROOT = Path(__file__).resolve().parents[1]
SHADOWED = ("mm_agents", "desktop_env", "lib_run_single")


def shadowing(name: str) -> str | None:
    """Where `name` would be imported from when that is not this harness's folder; None when it is ours."""
    if name in sys.modules:
        return None
    spec = importlib.util.find_spec(name)
    origin = spec.origin if spec is not None else None
    if origin is None or HARNESS_ROOT in Path(origin).resolve().parents:
        return None
    return origin


def put_ours_first() -> None:
    if any(shadowing(name) for name in SHADOWED):
        sys.path.insert(0, str(HARNESS_ROOT))
        importlib.invalidate_caches()
