"""`osworld report` (a static HTML page of result folders) and `osworld rescore` (re-run evaluators on saved files)."""
from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.table import Table

from .task_commands import load_plugins, open_task_set, plugin_option, tasks_option

console = Console() if sys.stdout.isatty() else Console(width=200)


@click.command("report")
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--output", default="report.html", show_default=True, type=click.Path(dir_okay=True),
              help="The HTML file to write (a folder: report.html in it). Links to screenshots and recordings "
                   "are relative to it, so keep it where it can reach the results.")
@click.option("--title", default="osworld report", show_default=True, help="The page's title.")
def report_command(results: tuple[str, ...], output: str, title: str) -> None:
    """One static HTML page for result folders: summary tables, charts, a filterable task list and each
    task's step-by-step timeline (screenshots, responses, actions, errors, recording). Opens from disk."""
    from runner.report import ReportError, build_report

    try:
        path = build_report(results, output, title=title)
    except ReportError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"wrote {path} ({path.stat().st_size // 1024} KiB); open it in a browser: {path.resolve().as_uri()}")


@click.command("rescore")
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@tasks_option
@plugin_option
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@click.option("--evaluator-fixes", is_flag=True,
              help="Score with our fixes of OSWorld's evaluator bugs (docs/EVALUATORS.md) instead of OSWorld's "
                   "verdicts: shows which scores the fixes change; not comparable with OSWorld's scores.")
def rescore_command(results: tuple[str, ...], meta: str | None, plugins: tuple[str, ...], as_json: bool,
                    evaluator_fixes: bool) -> None:
    """Re-run the evaluators of finished tasks on the result files saved at the time (rescore/ in each task
    folder), without a desktop. The new score goes to rescore.json beside the old result.txt, which is kept."""
    import json

    from runner.rescore import rescore_results

    load_plugins(plugins)
    task_set = open_task_set(meta)
    rows = rescore_results(results, task_set, evaluator_fixes=evaluator_fixes)
    if not rows:
        raise click.ClickException(f"no task results under {', '.join(results)}")
    if as_json:
        click.echo(json.dumps([row.to_dict() for row in rows], indent=2))
        return
    table = Table("task", "old", "new", "changed", "note")
    for row in rows:
        changed = "[yellow]yes[/]" if row.changed else "no" if row.rescorable else "-"
        trial = f" #{row.trial}" if row.trial > 1 else ""
        table.add_row(f"{row.domain}/{row.task_id}{trial}", row.old_text, row.new_text, changed, row.note or "")
    console.print(table)
    rescored = [r for r in rows if r.rescorable]
    console.print(f"{len(rescored)} of {len(rows)} task(s) rescored, {sum(r.changed for r in rescored)} changed; "
                  "new scores are in each task's rescore.json (result.txt is kept)")
