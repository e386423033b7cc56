"""`osworld report` (a static HTML page of result folders) and `osworld rescore` (re-run evaluators on saved files)."""
from __future__ import annotations

import json
import sys

import click
from rich.text import Text

from .errors import TASK_ERRORS
from .output import Column, console, deprecated, format_option, rows_text, show_table
from .run_commands import label_option, rescored_option
from .task_commands import load_plugins, open_task_set, plugin_option, tasks_option


@click.command("report")
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--output", default="report.html", show_default=True, type=click.Path(dir_okay=True),
              help="The HTML file to write (a folder: report.html in it). Links to screenshots and recordings "
                   "are relative to it, so keep it where it can reach the results.")
@click.option("--title", default="osworld report", show_default=True, help="The page's title.")
@label_option
@rescored_option
@click.option("--tasks", "meta", type=click.Path(dir_okay=False), default=None,
              help="A meta file whose task files give the instructions of result folders that did not record "
                   "theirs (OSWorld's own); by default the task files args.json names are read.")
def report_command(results: tuple[str, ...], output: str, title: str, labels: dict[str, str], rescored: bool,
                   meta: str | None) -> None:
    """One static HTML page for result folders: summary tables, charts, a filterable task list and each
    task's instruction and step-by-step timeline (screenshots, responses, actions, errors, recording).
    Opens from disk."""
    from osworld_harness.results.report import ReportError, build_report

    try:
        path = build_report(results, output, title=title, rescored=rescored, labels=labels, tasks=meta)
    except ReportError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"wrote {path} ({path.stat().st_size // 1024} KiB); open it in a browser: {path.resolve().as_uri()}")


@click.command("rescore")
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@tasks_option
@plugin_option
@format_option()
@click.option("--json", "as_json", is_flag=True, help=deprecated("--json", "--format json"))
@click.option("--evaluator-fixes", is_flag=True,
              help="Score with our fixes of OSWorld's evaluator bugs (docs/EVALUATORS.md) instead of OSWorld's "
                   "verdicts: shows which scores the fixes change; not comparable with OSWorld's scores.")
def rescore_command(results: tuple[str, ...], meta: str | None, plugins: tuple[str, ...], fmt: str, as_json: bool,
                    evaluator_fixes: bool) -> None:
    """Re-run the evaluators of finished tasks on the result files saved at the time (rescore/ in each task
    folder), without a desktop. The new score goes to rescore.json beside the old result.txt, which is kept;
    `summarize`, `compare` and `report` use it with --rescored. The task files are those each run recorded
    in its args.json, unless --tasks names others. Exit status 1 when no task could be rescored."""
    from osworld_harness.results.rescore import rescore_results

    load_plugins(plugins)
    task_set = open_task_set(meta) if meta else None
    rows = rescore_results(results, task_set, evaluator_fixes=evaluator_fixes)
    if not rows:
        raise click.ClickException(f"no task results under {', '.join(results)}")
    rescored = [r for r in rows if r.rescorable]
    fmt = "json" if as_json else fmt
    if fmt == "json":
        click.echo(json.dumps([row.to_dict() for row in rows], indent=2))
    elif fmt != "table":
        click.echo(rows_text(fmt, ["task", "old", "new", "changed", "note"], [
            [f"{row.domain}/{row.task_id}" + (f" #{row.trial}" if row.trial > 1 else ""), row.old_text, row.new_text,
             "yes" if row.changed else "no" if row.rescorable else "-", row.note or ""] for row in rows]), nl=False)
    else:
        show_table([Column("task", key=True), Column("old", key=True), Column("new", key=True),
                    Column("changed", key=True), Column("note")],
                   [[f"{row.domain}/{row.task_id}" + (f" #{row.trial}" if row.trial > 1 else ""), row.old_text,
                     row.new_text, "[yellow]yes[/]" if row.changed else "no" if row.rescorable else "-",
                     Text(row.note or "")] for row in rows])
        changed = sum(r.changed for r in rescored)
        console.print(f"{len(rescored)} of {len(rows)} task(s) rescored, {changed} changed"
                      + ("; new scores are in each task's rescore.json (result.txt is kept): summarize --rescored "
                         "uses them" if rescored else ""))
    if not rescored:
        sys.exit(TASK_ERRORS)
