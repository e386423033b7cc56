"""--desktop-memory/-pids/-cpu-weight/-tmpfs/-disk, shared by `run` and `env serve`: the local provider's own
options (its Options class), made like every run option from RunConfig's fields (run_options.py), each checked
as the provider reads it."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from osworld_harness.results.config import RunConfig
from osworld_harness.results.options import described

from .run_options import run_option

Command = TypeVar("Command", bound=Callable[..., Any])
DESKTOP_LIMITS = tuple(name for name in described(RunConfig) if name.startswith("desktop_"))


def desktop_limit_options(command: Command) -> Command:
    """Per-desktop resource limits of the local provider (a cgroup, tmpfs sizes and the home's size)."""
    for name in reversed(DESKTOP_LIMITS):
        command = run_option(name)(command)
    return command
