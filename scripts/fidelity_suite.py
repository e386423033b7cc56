#!/usr/bin/env python3
"""The fidelity suite: an OSWorld checkout's task files that need no network, run with the no-op
agent on local desktops. Every harness error and every free pass (no-op scored > 0) is a place
where the local desktop does not behave as OSWorld's VM.

    python scripts/fidelity_suite.py --osworld ~/OSWorld [--num-envs 2] [--cpu-hogs 0] [--out results/fidelity]
        [--task-id ID] [--list]

Writes fidelity.md and fidelity.json to --out (the runs themselves below it). Exit status 0 when
there are no errors and no free passes, 1 otherwise, 2 for a wrong --osworld.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from desktop_env.tasks import UnknownSelection  # noqa: E402
from osworld_harness.experiments.fidelity import run_suite, select_tasks  # noqa: E402


@click.command()
@click.option("--osworld", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="An OSWorld checkout (or a folder with test_all.json beside examples/).")
@click.option("--num-envs", default=2, show_default=True, type=click.IntRange(1), help="Desktops at once.")
@click.option("--out", default="results/fidelity", show_default=True, type=click.Path(path_type=Path),
              help="Folder for fidelity.md, fidelity.json and the run's results.")
@click.option("--task-id", "only", multiple=True, help="Only this task (repeatable).")
@click.option("--list", "list_only", is_flag=True, help="Print the selected and excluded tasks; run nothing.")
@click.option("--cpu-hogs", default=0, show_default=True, type=click.IntRange(0),
              help="Busy loops beside the desktops for the whole run: the suite under load, where a setup's fixed "
                   "sleeps no longer match the VM's timing.")
def main(osworld: Path, num_envs: int, out: Path, only: tuple[str, ...], list_only: bool, cpu_hogs: int) -> None:
    """Run OSWorld's network-free task files with the no-op agent and report errors and free passes."""
    try:
        selection = select_tasks(osworld, list(only))
    except FileNotFoundError as e:
        raise click.BadParameter(str(e), param_hint="--osworld") from None
    except UnknownSelection as e:
        raise click.BadParameter(str(e), param_hint="--task-id") from None
    if list_only:
        click.echo(f"{len(selection.selected)} selected, {len(selection.excluded)} excluded ({selection.meta_path})")
        for domain, task_id in selection.selected:
            click.echo(f"run      {domain}/{task_id}")
        for excluded in selection.excluded:
            click.echo(f"excluded {excluded.domain}/{excluded.task_id}: {'; '.join(excluded.reasons)}")
        return
    click.echo(f"running {len(selection.selected)} task files with the no-op agent on {num_envs} desktop(s); "
               f"{len(selection.excluded)} excluded")
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cpu_hogs)]
    try:
        report = run_suite(osworld, out / "runs", num_envs=num_envs, only=list(only))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    report.cpu_hogs = cpu_hogs
    out.mkdir(parents=True, exist_ok=True)
    (out / "fidelity.md").write_text(report.to_markdown())
    (out / "fidelity.json").write_text(report.to_json())
    click.echo(report.to_markdown().split("\n## Excluded")[0])
    click.echo(f"written: {out / 'fidelity.md'}, {out / 'fidelity.json'}")
    sys.exit(0 if report.clean else 1)


if __name__ == "__main__":
    main()
