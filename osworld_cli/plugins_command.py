"""`osworld plugins`: every name each extension kind has, and where it comes from."""
from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from desktop_env import extensions

from .task_commands import load_plugins, plugin_option

console = Console()


@click.command("plugins")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(list(extensions.KINDS)),
              help="Only this kind (repeatable; default all).")
@click.option("--external", is_flag=True, help="Only what plugins add: leave out the built-ins.")
@plugin_option
def plugins_command(kinds: tuple[str, ...], external: bool, plugins: tuple[str, ...]) -> None:
    """List getters, metrics, setup steps, providers, agents, model clients and compare_table rule types by name, each
    with where it comes from: built-in, an installed distribution's entry point (group osworld.<kind>s),
    a --plugin file, or another module; and the OSWorld names known here but not supported, with why."""
    load_plugins(plugins)
    for kind in kinds or extensions.KINDS:
        try:
            registered = extensions.entries(kind)
            unsupported = extensions.unsupported_entries(kind)
        except extensions.ExtensionError as e:
            raise click.ClickException(str(e)) from None
        if external:
            registered = [entry for entry in registered if entry.source != extensions.BUILTIN]
            unsupported = []
        info = extensions.KINDS[kind]
        table = Table(title=f"{kind} ({info.group})", title_justify="left")
        for column in ("name", "from", "where"):  # folded, never cut: a path or a name is read whole
            table.add_column(column, overflow="fold")
        for entry in registered:
            table.add_row(entry.name, entry.source, entry.where)
        for refused in unsupported:
            table.add_row(refused.name, "unsupported", refused.reason, style="dim")
        if registered or unsupported:
            console.print(table, soft_wrap=True)
        else:
            console.print(f"{kind} ({info.group}): none", highlight=False)
