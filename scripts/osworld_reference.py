#!/usr/bin/env python3
"""OSWorld's own code as the judge of ours: each task with the same actions, through OSWorld's DesktopEnv
(from the desktop-env package, in the reference venv) on a local desktop and through this harness, compared
step by step, getter by getter and by score (osworld_harness/experiments/osworld_reference.py).

    python scripts/osworld_reference.py --solutions [--tasks evaluation_examples/test_all.json] [--task-id ID]
    python scripts/osworld_reference.py --trajectories ../shared/vm_trajectories/uitars_osworld_verified.jsonl \\
        --osworld ../shared/osworld_examples [--cache-dir ../shared/osworld_cache] [--which successes] [--pacing 3]

Writes reference.md and reference.json to --out (each case's runs below it). Exit status 0 when every case
gave the same score both ways, 1 otherwise, 2 for a wrong option.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from osworld_harness.experiments.osworld_reference import (  # noqa: E402
    CaseComparison,
    ReferenceCase,
    run_reference,
    solution_cases,
    trajectory_cases,
)
from osworld_harness.experiments.reference_venv import ensure_venv  # noqa: E402
from osworld_harness.experiments.vm_parity import plan_parity  # noqa: E402

BUILTIN = Path(__file__).resolve().parents[1] / "evaluation_examples" / "test_all.json"


@click.command()
@click.option("--solutions", is_flag=True, help="The task set's tasks with their reference solutions.")
@click.option("--tasks", default=BUILTIN, show_default=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="With --solutions: the meta file of the task set.")
@click.option("--trajectories", type=click.Path(exists=True, path_type=Path),
              help="Recorded trajectories (as scripts/vm_parity.py reads them), replayed on their tasks.")
@click.option("--osworld", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="With --trajectories: an OSWorld checkout (or test_all.json beside examples/) holding the tasks.")
@click.option("--cache-dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A cache as OSWorld's runs leave it: the tasks whose downloads it holds run too (both sides read "
                   "copies of its files).")
@click.option("--which", default="all", show_default=True, type=click.Choice(["all", "successes", "failures"]),
              help="With --trajectories: those that scored 1 on the VM, those that did not, or all.")
@click.option("--pacing", default=3.0, show_default=True, type=click.FloatRange(0, 600, max_open=True),
              help="With --trajectories: seconds after each recorded action.")
@click.option("--task-id", "only", multiple=True, help="Only this task (repeatable).")
@click.option("--python", "python", default=None, help="The interpreter with desktop-env installed (default: the "
              "reference venv, built if missing).")
@click.option("--out", default="results/reference", show_default=True, type=click.Path(path_type=Path),
              help="Folder for reference.md, reference.json and each case's runs.")
def main(solutions: bool, tasks: Path, trajectories: Path | None, osworld: Path | None, cache_dir: Path | None,
         which: str, pacing: float, only: tuple[str, ...], python: str | None, out: Path) -> None:
    """Run each task both ways, with OSWorld's own code and with this harness, and compare."""
    if solutions == (trajectories is not None):
        raise click.UsageError("give --solutions or --trajectories (with --osworld), one of them")
    cases: list[ReferenceCase]
    if solutions:
        cases = solution_cases(tasks, only)
    else:
        if osworld is None:
            raise click.UsageError("--trajectories needs --osworld, the checkout holding their tasks")
        assert trajectories is not None
        plan = plan_parity(trajectories, osworld, list(only), which, cache_dir)
        cases = trajectory_cases(plan.meta_path, trajectories, pacing, plan.selected)
    python = python or str(ensure_venv() / "bin" / "python")
    click.echo(f"{len(cases)} case(s), OSWorld's side under {python}")

    def said(c: CaseComparison) -> None:
        verdict = "same score" if c.same_score else "DIFFERENT"
        click.echo(f"{c.key}: OSWorld {c.osworld.score if c.osworld.error is None else 'error'}, ours "
                   f"{c.ours.score if c.ours.error is None else 'error'}: {verdict}"
                   + (f"; steps: {'; '.join(c.step_differences)}" if c.step_differences else ""))

    report = run_reference(cases, python, out / "runs", cache_dir, on_case=said)
    out.mkdir(parents=True, exist_ok=True)
    (out / "reference.md").write_text(report.to_markdown())
    (out / "reference.json").write_text(report.to_json())
    click.echo(report.to_markdown().split("\n|")[0])
    click.echo(f"written: {out / 'reference.md'}, {out / 'reference.json'}")
    sys.exit(0 if all(c.same_score for c in report.comparisons) else 1)


if __name__ == "__main__":
    main()
