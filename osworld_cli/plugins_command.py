"""`osworld plugins`: every name each extension kind has, and where it comes from."""
from __future__ import annotations

import json

import click

from desktop_env import extensions

from .output import Column, console, format_option, rows_text, show_table
from .task_commands import load_plugins, plugin_option


@click.command("plugins")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(list(extensions.KINDS)),
              help="Only this kind (repeatable; default all).")
@click.option("--external", is_flag=True, help="Only what plugins add: leave out the built-ins.")
@plugin_option
@format_option()
def plugins_command(kinds: tuple[str, ...], external: bool, plugins: tuple[str, ...], fmt: str) -> None:
    """List getters, metrics, setup steps, providers, agents, model clients and compare_table rule types by name, each
    with where it comes from: built-in, an installed distribution's entry point (group osworld.<kind>s),
    a --plugin file, or another module; and the OSWorld names known here but not supported, with why."""
    load_plugins(plugins)
    listed: dict[str, list[tuple[str, str, str]]] = {}  # kind -> (name, from, where or why not)
    for kind in kinds or extensions.KINDS:
        try:
            registered = extensions.entries(kind)
            unsupported = extensions.unsupported_entries(kind)
        except extensions.ExtensionError as e:
            raise click.ClickException(str(e)) from None
        if external:
            registered = [entry for entry in registered if entry.source != extensions.BUILTIN]
            unsupported = []
        listed[kind] = [(e.name, e.source, e.where) for e in registered] + \
                       [(u.name, "unsupported", u.reason) for u in unsupported]
    if fmt == "json":
        click.echo(json.dumps({kind: [{"name": n, "from": f, "where": w} for n, f, w in rows]
                               for kind, rows in listed.items()}, indent=2))
        return
    if fmt != "table":
        click.echo(rows_text(fmt, ["kind", "name", "from", "where"], [[kind, *row] for kind, rows in listed.items()
                                                                     for row in rows]), nl=False)
        return
    for kind, rows in listed.items():
        title = f"{kind} ({extensions.KINDS[kind].group})"
        if not rows:
            console.print(f"{title}: none", highlight=False)
            continue
        # A name is read whole (a class's module:qualname too); a path folds rather than being cut.
        show_table([Column("name", key=True), Column("from", key=True), Column("where")], [list(r) for r in rows],
                   title=title, styles=["dim" if source == "unsupported" else None for _, source, _ in rows])
