"""`osworld compare RESULTS_A RESULTS_B`: two runs over the same tasks, paired (osworld_harness/results/compare.py)."""
from __future__ import annotations

import click
from rich.text import Text

from .errors import CANNOT_START
from .output import Column, console, format_option, rows_text, show_table
from .run_commands import label_option, rescored_option


class CannotCompare(click.ClickException):
    """Folders that hold no run, several, or runs over different tasks: nothing is compared."""

    exit_code = CANNOT_START


@click.command("compare")
@click.argument("result_a", type=click.Path(exists=True, file_okay=False))
@click.argument("result_b", type=click.Path(exists=True, file_okay=False))
@click.option("--common", is_flag=True,
              help="Compare only the tasks both runs finished from the same task file, saying what is left out "
                   "(without it, runs over different tasks are refused).")
@format_option(help="table; markdown; json; csv or tsv: the per-group rows.")
@label_option
@rescored_option
def compare_command(result_a: str, result_b: str, common: bool, fmt: str, labels: dict[str, str],
                    rescored: bool) -> None:
    """Run A against run B, task by task: the difference of the mean scores (errors as 0) with a paired 95%
    interval and a test (exact McNemar with one trial per task, else a paired bootstrap), per domain and
    category, and the tasks each run scored higher on. Each folder is one run (…/ACTION_SPACE/OBS/MODEL)."""
    from osworld_harness.results.compare import (
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

    unknown = [where for where in labels if where not in (result_a, result_b)]
    if unknown:
        raise click.BadParameter(f"{unknown[0]!r} is neither RESULT_A nor RESULT_B", param_hint="--label")
    try:
        result = compare_runs(pick_run(result_a, rescored, labels.get(result_a)),
                              pick_run(result_b, rescored, labels.get(result_b)), common=common)
    except CompareError as e:
        raise CannotCompare(str(e)) from None
    if fmt == "json":
        click.echo(to_json(result))
        return
    if fmt == "markdown":
        click.echo(to_markdown(result))
        return
    if fmt in ("csv", "tsv"):
        click.echo(rows_text(fmt, GROUP_COLUMNS, group_rows(result)), nl=False)
        return
    for line in headline(result):
        console.print(Text(line), soft_wrap=True)
    rows = group_rows(result)
    show_table([Column(name, key=name in ("group", "A−B points", "95% CI")) for name in GROUP_COLUMNS], rows,
               styles=["bold" if cells[0] == "Overall" else None for cells in rows])
    for title, names in won_and_lost(result):
        console.print(Text(f"{title}: {', '.join(names) or 'none'}"), soft_wrap=True)
