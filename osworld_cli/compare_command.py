"""`osworld compare RESULTS_A RESULTS_B`: two runs over the same tasks, paired (runner/compare.py)."""
from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .errors import CANNOT_START

console = Console() if sys.stdout.isatty() else Console(width=200)


class CannotCompare(click.ClickException):
    """Folders that hold no run, several, or runs over different tasks: nothing is compared."""

    exit_code = CANNOT_START


@click.command("compare")
@click.argument("result_a", type=click.Path(exists=True, file_okay=False))
@click.argument("result_b", type=click.Path(exists=True, file_okay=False))
@click.option("--common", is_flag=True,
              help="Compare only the tasks both runs finished from the same task file, saying what is left out "
                   "(without it, runs over different tasks are refused).")
@click.option("--format", "fmt", default="table", show_default=True, type=click.Choice(["table", "markdown", "json"]))
def compare_command(result_a: str, result_b: str, common: bool, fmt: str) -> None:
    """Run A against run B, task by task: the difference of the mean scores (errors as 0) with a paired 95%
    interval and a test (exact McNemar with one trial per task, else a paired bootstrap), per domain and
    category, and the tasks each run scored higher on. Each folder is one run (…/ACTION_SPACE/OBS/MODEL)."""
    from runner.compare import (
        GROUP_COLUMNS,
        CompareError,
        compare_runs,
        group_rows,
        headline,
        pick_run,
        to_json,
        to_markdown,
        won_and_lost,
    )

    try:
        result = compare_runs(pick_run(result_a), pick_run(result_b), common=common)
    except CompareError as e:
        raise CannotCompare(str(e)) from None
    if fmt == "json":
        click.echo(to_json(result))
        return
    if fmt == "markdown":
        click.echo(to_markdown(result))
        return
    for line in headline(result):
        console.print(Text(line), soft_wrap=True)
    table = Table(*GROUP_COLUMNS)
    for cells in group_rows(result):
        table.add_row(*cells, style="bold" if cells[0] == "Overall" else None)
    console.print(table)
    for title, names in won_and_lost(result):
        console.print(Text(f"{title}: {', '.join(names) or 'none'}"))
