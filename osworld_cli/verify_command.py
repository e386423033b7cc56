"""`osworld verify`: run every task's reference solution and a no-op; both must score as they should."""
from __future__ import annotations

import sys
import time

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .env_commands import screen_size_option
from .errors import INTERRUPTED, RUN_STOPPED, TASK_ERRORS, option_mistakes
from .task_commands import load_plugins, open_task_set, plugin_option, select_tasks, tasks_option

console = Console()


@click.command("verify")
@tasks_option
@click.option("--domain", "domains", multiple=True, help="Only this domain (repeatable).")
@click.option("--task-id", "task_ids", multiple=True, help="Only this task (repeatable).")
@click.option("--num-envs", default=1, show_default=True, type=click.IntRange(1), help="Desktops working in parallel.")
@click.option("--cache-dir", default="cache", show_default=True, help="Where task files are cached.")
@click.option("--result-dir", default=None,
              help="Keep both runs' results here (reference/ and noop/ model folders); default: a temporary folder.")
@screen_size_option
@plugin_option
def verify_command(meta, domains, task_ids, num_envs, cache_dir, result_dir, screen_size, plugins) -> None:
    """Check that each task is sound: its reference solution scores 1 and doing nothing scores 0
    (for infeasible tasks: FAIL scores 1 and DONE scores 0). Both are ordinary runs of the reference
    and no-op agents. Exits 1 if any task is not sound."""
    from runner.verify import VerifyOptions, VerifyStopped, verify

    load_plugins(plugins)
    task_set = open_task_set(meta)
    selected = select_tasks(task_set, domains, task_ids)
    console.print(f"verifying {len(selected)} task(s) from {task_set.meta_path} on {num_envs} desktop(s): "
                  "the reference solutions first, then the no-op")
    started = time.monotonic()

    def report(verdict) -> None:
        mark = "[green]sound[/]" if verdict.sound else "[red]NOT SOUND[/]"
        console.print(f"{mark} {verdict.domain}/{verdict.task_id} reference={verdict.reference_score} "
                      f"noop={verdict.noop_score} ({verdict.seconds:.0f} s)")
        if verdict.error:
            console.print(f"  {verdict.error}", markup=False, highlight=False)

    options = VerifyOptions(num_envs=num_envs, screen_size=screen_size, cache_dir=cache_dir, result_dir=result_dir,
                            domains=list(domains), task_ids=list(task_ids), plugins=list(plugins))
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
    console.print(table)
    if not all(v.sound for v in verdicts) or len(verdicts) != len(selected):
        sys.exit(TASK_ERRORS)
