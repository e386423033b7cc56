"""--desktop-memory/-pids/-cpu-weight/-tmpfs/-disk, shared by `run` and `env serve`."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from .run_options import run_option

Command = TypeVar("Command", bound=Callable[..., Any])


def _checked(option: str) -> Callable[[click.Context, click.Parameter, str], str]:
    def check(ctx: click.Context, param: click.Parameter, value: str) -> str:
        from desktop_env.providers.local.limits import DesktopLimits

        try:
            DesktopLimits.from_options(**{option: value})
        except ValueError as e:
            raise click.BadParameter(str(e)) from None
        return value
    return check


def desktop_limit_options(command: Command) -> Command:
    """Per-desktop resource limits of the local provider (a cgroup, tmpfs sizes and the home's size)."""
    options = [
        run_option("desktop_memory", callback=_checked("memory")),
        run_option("desktop_pids", callback=_checked("pids")),
        run_option("desktop_cpu_weight", callback=_checked("cpu_weight")),
        run_option("desktop_tmpfs", callback=_checked("tmpfs")),
        run_option("desktop_disk", callback=_checked("disk")),
    ]
    for option in reversed(options):
        command = option(command)
    return command
