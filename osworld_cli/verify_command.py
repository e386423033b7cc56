"""`osworld verify`: run every task's reference solution and a no-op; both must score as they should."""
from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .env_commands import screen_size_option
from .errors import INTERRUPTED, RUN_STOPPED, TASK_ERRORS, OptionMistake, option_mistakes
from .output import console, format_option, print_table, rows_text
from .task_commands import load_plugins, open_task_set, plugin_option, select_tasks

if TYPE_CHECKING:
    from desktop_env.tasks import TaskSet
    from osworld_harness.experiments.verify import Verdict



def verify_task_set(meta: str | None) -> TaskSet:
    """The meta file --tasks names, or the test_all.json of the task folder it names (an OSWorld checkout,
    its evaluation_examples/, or a folder with test_all.json beside examples/)."""
    from osworld_harness.experiments.fidelity import find_meta_file

    if meta is not None and Path(meta).is_dir():
        try:
            meta = str(find_meta_file(Path(meta)))
        except FileNotFoundError as e:
            raise OptionMistake("--tasks", str(e)) from None
    return open_task_set(meta)


def runnable_offline(task_set: TaskSet, selected: list[tuple[str, str]], cache_dir: str
                     ) -> tuple[list[tuple[str, str]], int]:
    """(the selected tasks that run here with no network: offline ones and those whose downloads the cache
    holds, how many others were left out)."""
    from desktop_env.tasks import TaskFileError
    from desktop_env.tasks.coverage import classify

    runnable = []
    for pair in selected:
        try:
            found = classify(task_set.load(*pair, check_paths=False), cache_dir)
        except TaskFileError:
            runnable.append(pair)  # the run records it as an error, naming the file
            continue
        if found.category == "offline" or (found.category == "downloads" and found.prefetched):
            runnable.append(pair)
    return runnable, len(selected) - len(runnable)


TASK_COLUMNS = ("domain", "id", "reference", "noop", "sound", "free pass", "error")


def verdict_row(verdict: Verdict) -> list[str]:
    def score(value: float | None, ran: bool = True) -> str:
        return "-" if not ran or value is None else f"{value:g}"
    return [verdict.domain, verdict.task_id, score(verdict.reference_score, verdict.reference_ran),
            score(verdict.noop_score), "yes" if verdict.sound else "no", "yes" if verdict.free_pass else "no",
            verdict.error or ""]


@click.command("verify")
@click.option("--tasks", "meta", type=click.Path(), default=None,
              help="Meta file {domain: [ids]} with examples/ beside it, or a task folder with test_all.json "
                   "(an OSWorld checkout); default: the built-in test_all.json.")
@click.option("--domain", "domains", multiple=True, help="Only this domain (repeatable).")
@click.option("--task-id", "task_ids", multiple=True, help="Only this task (repeatable).")
@click.option("--num-envs", default=1, show_default=True, type=click.IntRange(1), help="Desktops working in parallel.")
@click.option("--cache-dir", default="cache", show_default=True, help="Where task files are cached.")
@click.option("--result-dir", default=None,
              help="Keep both runs' results here (reference/ and noop/ model folders); default: a temporary folder.")
@screen_size_option
@plugin_option
@click.option("--noop-only", is_flag=True,
              help="Only the no-op run, on the tasks that run here with no network (offline, or their downloads "
                   "prefetched into --cache-dir), listing every task doing nothing passes.")
@format_option(help="table: each task as it is judged, then a row per domain; json: the domains' rows and each "
                    "task's verdict (scores, error, seconds, sound, free pass); markdown, csv or tsv: a row per "
                    "task (domain, id, reference, noop, sound, free pass, error). Progress goes to stderr in all "
                    "but table.")
def verify_command(meta: str | None, domains: tuple[str, ...], task_ids: tuple[str, ...], num_envs: int, cache_dir: str,
                   result_dir: str | None, screen_size: tuple[int, int], plugins: tuple[str, ...],
                   noop_only: bool, fmt: str) -> None:
    """Check that each task is sound: its reference solution scores 1 and doing nothing scores 0
    (for infeasible tasks: FAIL scores 1 and DONE scores 0). Both are ordinary runs of the reference
    and no-op agents. Exits 1 if any task is not sound.

    With --noop-only (for task files without reference solutions, such as OSWorld's), only the no-op
    runs, and every task it scores above 0 is listed as a free pass: a place where the desktop starts
    where the task wants it to end."""
    from osworld_harness.experiments.verify import VerifyOptions, VerifyStopped, verify

    said = console if fmt == "table" else Console(stderr=True)  # stdout holds only the result in the other formats
    load_plugins(plugins)
    task_set = verify_task_set(meta)
    selected = select_tasks(task_set, domains, task_ids)
    if noop_only:
        selected, left_out = runnable_offline(task_set, selected, cache_dir)
        said.print(f"running the no-op agent on {len(selected)} task(s) from {task_set.meta_path} on {num_envs} "
                      f"desktop(s); {left_out} left out: they need the network or what this desktop lacks "
                      "(osworld tasks coverage says which)")
        if not selected:
            return
        task_ids = tuple(task_id for _, task_id in selected)
    else:
        said.print(f"verifying {len(selected)} task(s) from {task_set.meta_path} on {num_envs} desktop(s): "
                      "the reference solutions first, then the no-op")
    started = time.monotonic()

    def report(verdict: Verdict) -> None:
        if noop_only:
            mark = "[red]FREE PASS[/]" if verdict.free_pass else ("[red]ERROR[/]" if verdict.error else "[green]ok[/]")
            said.print(f"{mark} {verdict.domain}/{verdict.task_id} noop={verdict.noop_score} "
                          f"({verdict.seconds:.0f} s)")
        else:
            mark = "[green]sound[/]" if verdict.sound else "[red]NOT SOUND[/]"
            said.print(f"{mark} {verdict.domain}/{verdict.task_id} reference={verdict.reference_score} "
                          f"noop={verdict.noop_score} ({verdict.seconds:.0f} s)")
        if verdict.error:
            said.print(f"  {verdict.error}", markup=False, highlight=False)

    options = VerifyOptions(num_envs=num_envs, screen_size=screen_size, cache_dir=cache_dir, result_dir=result_dir,
                            domains=list(domains), task_ids=list(task_ids), plugins=list(plugins), noop_only=noop_only)
    try:
        with option_mistakes():
            verdicts = verify(str(task_set.meta_path), options, on_verdict=report)
    except VerifyStopped as e:
        said.print(f"[red]stopped:[/] {escape(str(e))}")
        sys.exit(RUN_STOPPED)
    except KeyboardInterrupt:
        said.print("stopped")
        sys.exit(INTERRUPTED)
    header = ["domain", "tasks", "sound", "not sound"]
    rows = []
    for domain in dict.fromkeys(v.domain for v in verdicts):
        mine = [v for v in verdicts if v.domain == domain]
        rows.append([domain, str(len(mine)), str(sum(v.sound for v in mine)), str(sum(not v.sound for v in mine))])
    tasks = [verdict_row(v) for v in verdicts]
    if fmt == "json":
        click.echo(json.dumps({"domains": [dict(zip(header, [row[0], *map(int, row[1:])], strict=True))
                                           for row in rows],
                               "tasks": [{**asdict(v), "sound": v.sound, "free_pass": v.free_pass} for v in verdicts]},
                              indent=2))
    elif fmt != "table":
        click.echo(rows_text(fmt, TASK_COLUMNS, tasks), nl=False)
    else:
        table = Table(*header, title=f"verify: {time.monotonic() - started:.0f} s")
        for row in rows:
            table.add_row(*row)
        print_table(table)
    free_passes = [v for v in verdicts if v.free_pass]
    if noop_only:
        said.print(f"{len(free_passes)} free pass(es)" + (":" if free_passes else ""))
        for verdict in free_passes:
            said.print(f"  {verdict.domain}/{verdict.task_id}: the no-op agent scored {verdict.noop_score:g}",
                          markup=False, highlight=False)
    if not all(v.sound for v in verdicts) or len(verdicts) != len(selected):
        sys.exit(TASK_ERRORS)
