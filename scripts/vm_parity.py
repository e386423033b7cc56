#!/usr/bin/env python3
"""The VM parity suite: trajectories recorded on OSWorld's VM replayed on local desktops, and how many
end as they ended there (osworld_harness/experiments/vm_parity.py says why this measures the desktop as agents meet it).

    python scripts/vm_parity.py --trajectories ../shared/vm_trajectories/uitars_osworld_verified.jsonl \\
        --osworld ../shared/osworld_examples [--cache-dir ../shared/osworld_cache] [--num-envs 2] [--pacing 3] \\
        [--which successes] [--out results/parity]

Writes parity.md and parity.json to --out (the runs themselves below it). Exit status 0 when every
replayed trajectory ended as on the VM, 1 otherwise, 2 for a wrong option.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from mm_agents.replay import TrajectoryFileError  # noqa: E402
from osworld_harness.experiments.vm_parity import plan_parity, run_parity  # noqa: E402

CAUSES = Path(__file__).with_name("vm_parity_causes.json")


@click.command()
@click.option("--trajectories", required=True, type=click.Path(exists=True, path_type=Path),
              help="Recorded trajectories: a JSON-lines file (task_id, actions, exec_prefix, score_on_vm) or a "
                   "results folder in OSWorld's layout.")
@click.option("--osworld", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="An OSWorld checkout (or a folder with test_all.json beside examples/) holding the tasks.")
@click.option("--cache-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A cache as OSWorld's runs leave it (<cache>/<task id>/<name>): the tasks whose downloads it holds "
                   "are replayed too, on a copy of it under --out.")
@click.option("--num-envs", default=2, show_default=True, type=click.IntRange(1), help="Desktops at once.")
@click.option("--pacing", default=3.0, show_default=True, type=click.FloatRange(0, 600, max_open=True),
              help="Seconds after each action (OSWorld's --sleep_after_execution in its UI-TARS runs).")
@click.option("--which", default="all", show_default=True, type=click.Choice(["all", "successes", "failures"]),
              help="Replay the trajectories that scored 1 on the VM, those that did not, or all.")
@click.option("--task-id", "only", multiple=True, help="Only this task (repeatable).")
@click.option("--causes", default=CAUSES, show_default=True, type=click.Path(dir_okay=False, path_type=Path),
              help="JSON file mapping task ids to why they disagree, read from their step screenshots.")
@click.option("--out", default="results/parity", show_default=True, type=click.Path(path_type=Path),
              help="Folder for parity.md, parity.json and the run's results.")
@click.option("--list", "list_only", is_flag=True, help="Print what would be replayed; run nothing.")
def main(trajectories: Path, osworld: Path, cache_dir: Path | None, num_envs: int, pacing: float, which: str,
         only: tuple[str, ...], causes: Path, out: Path, list_only: bool) -> None:
    """Replay recorded trajectories whose tasks run offline here and compare their scores with the VM's."""
    try:
        plan = plan_parity(trajectories, osworld, list(only), which, cache_dir)
    except (FileNotFoundError, TrajectoryFileError) as e:
        raise click.BadParameter(str(e)) from None
    if list_only:
        click.echo(f"{len(plan.selected)} to replay, {len(plan.excluded)} do not run offline, "
                   f"{len(plan.without_task_file)} have no task file in {plan.meta_path}")
        for domain, task_id in plan.selected:
            click.echo(f"replay   {domain}/{task_id} (VM score {plan.trajectories[task_id].score})")
        for excluded in plan.excluded:
            click.echo(f"excluded {excluded.domain}/{excluded.task_id}: {'; '.join(excluded.reasons)[:200]}")
        return
    click.echo(f"replaying {len(plan.selected)} trajectories on {num_envs} desktop(s), {pacing:g} s apart")
    report = run_parity(trajectories, osworld, out / "runs", num_envs=num_envs, pacing=pacing, only=list(only),
                        which=which, causes=causes, cache_dir=cache_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "parity.md").write_text(report.to_markdown())
    (out / "parity.json").write_text(report.to_json())
    click.echo(report.to_markdown().split("\n## Every replayed task")[0])
    click.echo(f"written: {out / 'parity.md'}, {out / 'parity.json'}")
    sys.exit(0 if not report.disagreements() else 1)


if __name__ == "__main__":
    main()
