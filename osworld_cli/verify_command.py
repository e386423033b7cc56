"""`osworld verify`: run every task's reference solution and a no-op; both must score as they should."""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table

from .env_commands import screen_size_option
from .errors import INTERRUPTED, RUN_STOPPED, TASK_ERRORS, OptionMistake, option_mistakes
from .output import console, print_table
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
def verify_command(meta: str | None, domains: tuple[str, ...], task_ids: tuple[str, ...], num_envs: int, cache_dir: str,
                   result_dir: str | None, screen_size: tuple[int, int], plugins: tuple[str, ...],
                   noop_only: bool) -> None:
    """Check that each task is sound: its reference solution scores 1 and doing nothing scores 0
    (for infeasible tasks: FAIL scores 1 and DONE scores 0). Both are ordinary runs of the reference
    and no-op agents. Exits 1 if any task is not sound.

    With --noop-only (for task files without reference solutions, such as OSWorld's), only the no-op
    runs, and every task it scores above 0 is listed as a free pass: a place where the desktop starts
    where the task wants it to end."""
    from osworld_harness.experiments.verify import VerifyOptions, VerifyStopped, verify

    load_plugins(plugins)
    task_set = verify_task_set(meta)
    selected = select_tasks(task_set, domains, task_ids)
    if noop_only:
        selected, left_out = runnable_offline(task_set, selected, cache_dir)
        console.print(f"running the no-op agent on {len(selected)} task(s) from {task_set.meta_path} on {num_envs} "
                      f"desktop(s); {left_out} left out: they need the network or what this desktop lacks "
                      "(osworld tasks coverage says which)")
        if not selected:
            return
        task_ids = tuple(task_id for _, task_id in selected)
    else:
        console.print(f"verifying {len(selected)} task(s) from {task_set.meta_path} on {num_envs} desktop(s): "
                      "the reference solutions first, then the no-op")
    started = time.monotonic()

    def report(verdict: Verdict) -> None:
        if noop_only:
            mark = "[red]FREE PASS[/]" if verdict.free_pass else ("[red]ERROR[/]" if verdict.error else "[green]ok[/]")
            console.print(f"{mark} {verdict.domain}/{verdict.task_id} noop={verdict.noop_score} "
                          f"({verdict.seconds:.0f} s)")
        else:
            mark = "[green]sound[/]" if verdict.sound else "[red]NOT SOUND[/]"
            console.print(f"{mark} {verdict.domain}/{verdict.task_id} reference={verdict.reference_score} "
                          f"noop={verdict.noop_score} ({verdict.seconds:.0f} s)")
        if verdict.error:
            console.print(f"  {verdict.error}", markup=False, highlight=False)

    options = VerifyOptions(num_envs=num_envs, screen_size=screen_size, cache_dir=cache_dir, result_dir=result_dir,
                            domains=list(domains), task_ids=list(task_ids), plugins=list(plugins), noop_only=noop_only)
    try:
        with option_mistakes():
            verdicts = verify(str(task_set.meta_path), options, on_verdict=report)
    except VerifyStopped as e:
        console.print(f"[red]stopped:[/] {escape(str(e))}")
        sys.exit(RUN_STOPPED)
    except KeyboardInterrupt:
        console.print("stopped")
        sys.exit(INTERRUPTED)
    table = Table("domain", "tasks", "sound", "not sound", title=f"verify: {time.monotonic() - started:.0f} s")
    for domain in dict.fromkeys(v.domain for v in verdicts):
        mine = [v for v in verdicts if v.domain == domain]
        table.add_row(domain, str(len(mine)), str(sum(v.sound for v in mine)), str(sum(not v.sound for v in mine)))
    print_table(table)
    free_passes = [v for v in verdicts if v.free_pass]
    if noop_only:
        console.print(f"{len(free_passes)} free pass(es)" + (":" if free_passes else ""))
        for verdict in free_passes:
            console.print(f"  {verdict.domain}/{verdict.task_id}: the no-op agent scored {verdict.noop_score:g}",
                          markup=False, highlight=False)
    if not all(v.sound for v in verdicts) or len(verdicts) != len(selected):
        sys.exit(TASK_ERRORS)
