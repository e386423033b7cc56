"""`osworld env prune`: remove what killed runs left behind (containers, port reservations, env folders)."""
from __future__ import annotations

import json
import sys

import click
from rich.table import Table

from desktop_env.providers.prune import prune

from .output import console, deprecated, format_option, print_table, rows_text


@click.command("prune")
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@format_option(help="table; json (the whole result); markdown, csv or tsv: the table's rows.")
@click.option("--json", "as_json", is_flag=True, help=deprecated("--json", "--format json"))
@click.option("--no-vms", is_flag=True, help="Do not list running VMware / VirtualBox VMs.")
@click.option("--docker", default="docker", show_default=True, help="The docker CLI to use.")
def prune_command(dry_run: bool, fmt: str, as_json: bool, no_vms: bool, docker: str) -> None:
    """Remove what killed runs left behind: each provider's leftovers (containers, local env folders
    and sandboxes whose owner process is gone) and dead processes' port reservations; list the
    containers in use and running VMs."""
    result = prune(dry_run=dry_run, docker=docker, include_vms=not no_vms)
    fmt = "json" if as_json else fmt
    if fmt == "json":
        click.echo(json.dumps({"dry_run": dry_run, **result.to_dict()}, indent=2))
        sys.exit(1 if result.failed else 0)
    rows = ([(x, "would remove" if dry_run else "removed") for x in result.removed]
            + [(x, "kept") for x in result.kept] + [(x, f"FAILED: {err}") for x, err in result.failed])
    header = ["kind", "name", "id", "state", "verdict", "action", "why"]
    cells = [[item.kind, item.name, "" if item.ident == item.name else item.ident, item.state, item.verdict, action,
              item.reason] for item, action in rows]
    if fmt != "table":
        click.echo(rows_text(fmt, header, cells), nl=False)
        sys.exit(1 if result.failed else 0)
    if rows:
        table = Table(*header)
        for row in cells:
            table.add_row(*row)
        print_table(table)
    else:
        console.print("no osworld containers or running VMs found")
    if result.ports_reclaimed:
        console.print(f"{'would release' if dry_run else 'released'} {len(result.ports_reclaimed)} port "
                      "reservation(s) of dead processes")
    for path in result.env_dirs_removed:
        console.print(f"{'would remove' if dry_run else 'removed'} stale env folder {path}")
    for note in result.notes:
        console.print(f"[yellow]note:[/] {note}")
    if result.failed:
        sys.exit(1)
