"""`osworld tasks coverage`: per domain, which tasks run here offline, need downloads, need the live web,
or cannot run here and why."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from .output import console, deprecated, format_option, print_table, rows_text
from .task_commands import load_tasks

if TYPE_CHECKING:
    from desktop_env.tasks.coverage import CoverageReport



COLUMNS = ("domain", "tasks", "offline", "downloads", "prefetched", "live web or account", "cannot run here",
           "why not")


def coverage_rows(report: CoverageReport) -> list[list[str]]:
    """One row per domain and a last one for the total, as the table and the Markdown show them."""
    rows = []
    for name, d in list(report.by_domain().items()) + [("total", report.total())]:
        ranked = sorted(d.blockers.items(), key=lambda kv: (-kv[1], kv[0]))
        why = ", ".join(f"{blocker} {count}" for blocker, count in ranked)
        rows.append([name, str(d.tasks), str(d.offline), str(d.downloads),
                     str(d.prefetched) if report.cache_dir is not None else "-", str(d.live_web), str(d.cannot_run),
                     why])
    return rows


def coverage_table(report: CoverageReport, title: str) -> Table:
    table = Table(*COLUMNS, title=title)
    rows = coverage_rows(report)
    for i, row in enumerate(rows):
        table.add_row(*row, end_section=i == len(rows) - 2)
    return table


def coverage_markdown(report: CoverageReport) -> str:
    """The table as Markdown, for a README or a paper's appendix (the total row in bold)."""
    rows = coverage_rows(report)
    rows[-1][0] = f"**{rows[-1][0]}**"
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows]) + "\n"


def to_build_lines(tasks: list[Any]) -> list[str]:
    """The apps a run builds before its first desktop starts, and how many of the tasks need each (counted as
    runnable, as the run's plan and `env doctor` count them)."""
    from desktop_env.providers.local.apps import apps_to_build
    from desktop_env.tasks.coverage import needs_vscode

    needs = {"VS Code": needs_vscode}
    lines = []
    for app, note in apps_to_build().items():
        count = sum(needs[app](task) is not None for task in tasks) if app in needs else 0
        if count:
            lines.append(f"{app}: {note}; its {count} task(s) are counted as running here")
    return lines


@click.command("coverage")
@click.argument("paths", nargs=-1, required=True)
@click.option("--cache-dir", default="cache", show_default=True,
              help="The cache `tasks prefetch` filled (the run's --cache-dir): are the downloads there?")
@format_option(help="table; markdown (for a README or a paper's appendix, the total in bold); json (each domain "
                    "and each task's category with its reasons); csv; tsv.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON to this file too. " + deprecated("--json FILE", "--format json > FILE"))
@click.option("--list", "list_tasks", is_flag=True, help="Also print each task that does not run offline, and why.")
@click.option("--markdown", is_flag=True, help=deprecated("--markdown", "--format markdown"))
def coverage_command(paths: tuple[str, ...], cache_dir: str, fmt: str, json_path: Path | None, list_tasks: bool,
                     markdown: bool) -> None:
    """What can run here: per domain, how many of the tasks PATHs name (task files, meta files or
    folders) run offline, need only files downloaded by URL (and whether `tasks prefetch` put them in
    the cache), need a live website or an account (`run --network`), or cannot run here, with what
    they need by name (an app this desktop lacks, an account, a live scripted website...)."""
    from desktop_env.tasks.coverage import coverage

    tasks = load_tasks(paths)
    report = coverage(tasks, cache_dir)
    if list_tasks:
        for task in report.tasks:
            if task.category != "offline":
                console.print(f"{task.category:16} {task.domain}/{task.task_id}: {'; '.join(task.reasons)}",
                              markup=False, highlight=False, soft_wrap=True)
    fmt = "markdown" if markdown else fmt
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=1))
    elif fmt == "markdown":
        click.echo(coverage_markdown(report), nl=False)
    elif fmt != "table":
        click.echo(rows_text(fmt, COLUMNS, coverage_rows(report)), nl=False)
    else:
        print_table(coverage_table(report, f"coverage of {len(tasks)} task(s) ({', '.join(paths)})"))
    for line in to_build_lines(tasks) if fmt in ("table", "markdown") else []:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if json_path is not None:
        json_path.write_text(json.dumps(report.to_json(), indent=1) + "\n")
        if fmt != "json":
            console.print(f"written: {json_path}")
