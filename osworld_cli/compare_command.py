"""`osworld compare RESULTS_A RESULTS_B`: two runs over the same tasks, paired (osworld_harness/results/compare.py);
a side given as several shard folders (-a, -b) is one run, combined as `summarize` combines them."""
from __future__ import annotations

import click
from rich.text import Text

from .errors import CANNOT_START
from .output import Column, console, format_option, rows_text, show_table
from .run_commands import label_option, rescored_option


class CannotCompare(click.ClickException):
    """Folders that hold no run, several, or runs over different tasks: nothing is compared."""

    exit_code = CANNOT_START


FOLDER = click.Path(exists=True, file_okay=False)


@click.command("compare")
@click.argument("result_a", required=False, type=FOLDER)
@click.argument("result_b", required=False, type=FOLDER)
@click.option("-a", "more_a", multiple=True, type=FOLDER, metavar="DIR",
              help="A folder of run A besides RESULT_A (repeatable): its shards' folders (`run --shard I/N`), when "
                   "they are not in one folder. With -a and -b, RESULT_A and RESULT_B may be left out.")
@click.option("-b", "more_b", multiple=True, type=FOLDER, metavar="DIR",
              help="A folder of run B besides RESULT_B (repeatable), as -a is of A.")
@click.option("--common", is_flag=True,
              help="Compare only the tasks both runs finished from the same task file, saying what is left out "
                   "(without it, runs over different tasks are refused).")
@format_option(help="table; markdown; json; csv or tsv: the per-group rows.")
@label_option
@rescored_option
def compare_command(result_a: str | None, result_b: str | None, more_a: tuple[str, ...], more_b: tuple[str, ...],
                    common: bool, fmt: str, labels: dict[str, str], rescored: bool) -> None:
    """Run A against run B, task by task: the difference of the mean scores (errors as 0) with a paired 95%
    interval and a test (exact McNemar with one trial per task, else a paired bootstrap), per domain and
    category, and the tasks each run scored higher on. Each side is one run: its folder
    (…/ACTION_SPACE/OBS/MODEL), a folder holding its shards' folders, or its shards' folders one by one
    (`osworld compare SHARD_A1 SHARD_B1 -a SHARD_A2 -b SHARD_B2`, or -a and -b alone), combined into one
    run as `summarize` combines them."""
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

    side_a = [*([result_a] if result_a else []), *more_a]
    side_b = [*([result_b] if result_b else []), *more_b]
    if not side_a or not side_b:
        raise click.UsageError("give both runs: RESULT_A RESULT_B, with more folders of either run by -a and -b "
                               "(its shards' folders)")
    overlap = sorted(set(side_a) & set(side_b))
    if overlap:
        raise click.BadParameter(f"{overlap[0]} is given for both A and B", param_hint="-a/-b")
    unknown = [where for where in labels if where not in side_a + side_b]
    if unknown:
        raise click.BadParameter(f"{unknown[0]!r} is none of the folders of A or B", param_hint="--label")
    try:
        result = compare_runs(pick_run(side_a, rescored, labels), pick_run(side_b, rescored, labels), common=common)
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
