"""--desktop-memory/-pids/-cpu-weight/-tmpfs/-disk, shared by `run` and `env serve`."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

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
        click.option("--desktop-memory", default="4G", show_default=True, callback=_checked("memory"),
                     help="Memory limit of each local desktop (e.g. 2G, 512M, unlimited)."),
        click.option("--desktop-pids", default="1024", show_default=True, callback=_checked("pids"),
                     help="Process/thread limit of each local desktop (or unlimited)."),
        click.option("--desktop-cpu-weight", default="100", show_default=True, callback=_checked("cpu_weight"),
                     help="CPU weight of each local desktop, 1..10000 (100 = a normal share)."),
        click.option("--desktop-tmpfs", default="1G", show_default=True, callback=_checked("tmpfs"),
                     help="Size cap of each in-memory folder of a local desktop (/tmp, /dev/shm, /run)."),
        click.option("--desktop-disk", default="2G", show_default=True, callback=_checked("disk"),
                     help="Size cap of the home folder of a local desktop; it lives in memory, counted in "
                          "--desktop-memory. Filling it is a limit hit, like an OOM kill."),
    ]
    for option in reversed(options):
        command = option(command)
    return command
