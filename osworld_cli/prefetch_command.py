"""`osworld tasks prefetch`: the files tasks name by URL, into the cache, so runs need no network."""
from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn
from rich.table import Table

from .errors import TASK_ERRORS, OptionMistake
from .output import format_option, print_table, rows_text

if TYPE_CHECKING:
    from desktop_env.tasks.prefetch import FileOutcome
    from desktop_env.tasks.remote_files import RemoteFile
from .task_commands import load_tasks

console = Console()
FILE_COLUMNS = ("status", "domain", "task", "field", "url", "name", "message")


def progress_bar(bar: Progress, files: int) -> Any:
    """The library's progress callbacks drawing one bar for the files and one for the current file's bytes."""
    from desktop_env.tasks.prefetch import Progress as Callbacks

    current = bar.add_task("", total=None, visible=False)
    done = 0

    def on_file(file: RemoteFile) -> None:
        shown = file.url.rstrip("/").rsplit("/", 1)[-1][-40:]
        bar.update(current, description=f"[{done + 1}/{files}] {file.domain}/{file.task_id[:8]} {shown}",
                   completed=0, total=None, visible=True)

    def on_start(url: str, total: int | None, already: int) -> None:
        bar.update(current, total=total, completed=already)

    def on_done(outcome: FileOutcome) -> None:
        nonlocal done
        done += 1
        if outcome.status == "failed":
            bar.console.print(f"[red]failed[/] {escape(outcome.file.task_file)}: {escape(outcome.file.field)}: "
                              f"{escape(outcome.message)}", highlight=False, soft_wrap=True)
        elif outcome.message:
            bar.console.print(f"[yellow]fetched again[/] {escape(outcome.message)}", highlight=False, soft_wrap=True)

    return Callbacks(on_file=on_file, on_start=on_start, on_bytes=lambda n: bar.advance(current, n), on_done=on_done)


@click.command("prefetch")
@click.argument("paths", nargs=-1, required=True)
@click.option("--cache-dir", default="cache", show_default=True, help="The cache runs read (run's --cache-dir).")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(1),
              help="Seconds without data before a download fails.")
@format_option(help="table: the counts; json: the counts, each file and each name refused; markdown, csv or tsv: "
                    "a row per file (status, domain, task, field, url, name, message). Progress goes to stderr "
                    "in all but table.")
def prefetch_command(paths: tuple[str, ...], cache_dir: str, timeout: float, fmt: str) -> None:
    """Download every file the tasks' setup and evaluator name by URL (download steps, cloud files,
    expected files) into the cache, where runs read them, and write the cache's manifest with each
    file's size and sha256. Runs of these tasks then read only the cache and need no network.

    PATHs are task files, meta files or folders of them. An interrupted download is continued on
    the next call; a file already there and unchanged is not fetched again. Exit status 1 when a
    file could not be fetched.
    """
    from desktop_env.cache_manifest import ManifestError
    from desktop_env.tasks.prefetch import prefetch
    from desktop_env.tasks.remote_files import remote_files

    tasks = load_tasks(paths)
    files = len({(f.task_id, f.name) for task in tasks for f in remote_files(task)[0]})
    said = console if fmt == "table" else Console(stderr=True)  # stdout holds only the result in the other formats
    said.print(f"{len(tasks)} task(s) name {files} file(s) by URL; cache: {cache_dir}")
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    try:
        with Progress(*columns, console=said, transient=True) as bar:
            report = prefetch(tasks, cache_dir, progress_bar(bar, files), timeout=timeout)
    except ManifestError as e:
        raise OptionMistake("--cache-dir", str(e)) from None
    for refused in report.refused:
        said.print(f"[red]refused[/] {escape(refused)}", highlight=False, soft_wrap=True)
    header = ["files", "fetched", "already in the cache", "copied from another task", "failed"]
    counts = [len(report.outcomes), report.count("fetched"), report.count("cached"), report.count("copied"),
              len(report.failed)]
    rows = [[o.status, o.file.domain, o.file.task_id, o.file.field, o.file.url, o.file.name, o.message]
            for o in report.outcomes]
    if fmt == "json":
        click.echo(json.dumps({"counts": dict(zip(header, counts, strict=True)),
                               "files": [dict(zip(FILE_COLUMNS, row, strict=True)) for row in rows],
                               "refused": report.refused}, indent=2))
    elif fmt != "table":
        click.echo(rows_text(fmt, FILE_COLUMNS, rows), nl=False)
    else:
        table = Table(*header, title="prefetch")
        table.add_row(*map(str, counts))
        print_table(table)
    if report.failed or report.refused:
        sys.exit(TASK_ERRORS)
