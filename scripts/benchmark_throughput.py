#!/usr/bin/env python3
"""Throughput of the harness: tasks per hour with the reference agent, for 1, 2, 4 desktops,
on the local backend and on Ray, and how many desktops fit per core and per GiB.

    python scripts/benchmark_throughput.py [--envs 1 --envs 2 --envs 4] [--backend local --backend ray]
                                           [--tasks META.json] [--domain D] [--ray-address ADDR] [--out DIR]

Every measurement is a full run into a fresh results folder (nothing is resumed). Without
--ray-address, Ray runs as a local instance started for each measurement. Writes
throughput.md, throughput.json and the runs themselves (runs/<backend>-<n>/) to --out
(see scripts/README.md for measured figures).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from desktop_env.tasks import load_task_set  # noqa: E402
from desktop_env.tasks.loader import BUILTIN_ROOT  # noqa: E402
from osworld_harness.execution.run import RunConfig  # noqa: E402
from osworld_harness.experiments.throughput import ThroughputResult, measure, to_markdown  # noqa: E402

GAIN_WORTH_A_DESKTOP = 1.10  # one more desktop per core pays if it adds at least 10% tasks/hour


def fit_summary(results: list[ThroughputResult]) -> str:
    """How many desktops fit: per GiB from the memory each added, per core from where throughput
    stops growing."""
    lines = []
    for backend in dict.fromkeys(r.backend for r in results):
        runs = sorted((r for r in results if r.backend == backend), key=lambda r: r.num_envs)
        widest = runs[-1]
        per_gib = 1024 / widest.memory_per_env_mib if widest.memory_per_env_mib else float("inf")
        best = runs[0]
        for run in runs[1:]:
            if run.tasks_per_hour >= best.tasks_per_hour * GAIN_WORTH_A_DESKTOP:
                best = run
        lines.append(f"- {backend}: {widest.memory_per_env_mib:g} MiB per desktop at {widest.num_envs} desktops "
                     f"(about {per_gib:.1f} desktops per GiB); throughput grows up to {best.num_envs} desktop(s) on "
                     f"{best.cores} core(s) ({best.num_envs / best.cores:g} per core, "
                     f"{best.tasks_per_hour:g} tasks/hour)")
    return "\n".join(lines) + "\n"


@click.command()
@click.option("--envs", "env_counts", multiple=True, type=click.IntRange(1), default=(1, 2, 4), show_default=True,
              help="Desktop counts to measure (repeatable).")
@click.option("--backend", "backends", multiple=True, type=click.Choice(["local", "ray"]), default=("local", "ray"),
              show_default=True, help="Backends to measure (repeatable).")
@click.option("--tasks", default=str(BUILTIN_ROOT / "test_small.json"), show_default=True, help="Meta file of tasks.")
@click.option("--domain", "domains", multiple=True, help="Only this domain (repeatable).")
@click.option("--task-limit", default=None, type=click.IntRange(1), help="Only the first N selected tasks.")
@click.option("--ray-address", default=None, help="A running Ray cluster; default: a local instance per run.")
@click.option("--record/--no-record", default=True, show_default=True, help="Record screens as a real run does.")
@click.option("--out", default="results/throughput", show_default=True, help="Folder for throughput.md/.json.")
def main(env_counts, backends, tasks, domains, task_limit, ray_address, record, out) -> None:
    """Measure tasks/hour of the reference agent for each backend x desktop count."""
    selected = load_task_set(tasks).select(list(domains) or None, None)[:task_limit]
    task_count = len(selected)
    base = RunConfig(agent="oracle", model="reference", observation_type="screenshot", tasks=tasks,
                     domains=list(domains), task_ids=[task_id for _, task_id in selected] if task_limit else [],
                     record=record, ray_address=ray_address,
                     cache_dir=str(Path(out).resolve() / "cache"))
    plan = [(backend, n) for backend in backends for n in env_counts]
    click.echo(f"{len(plan)} run(s) of {task_count} task(s) each with the reference agent: "
               + ", ".join(f"{b} x{n}" for b, n in plan))
    results = []
    for backend, n in plan:
        click.echo(f"-- {backend}, {n} desktop(s) ...")
        result = measure(base, backend, n, Path(out) / "runs" / f"{backend}-{n}")
        click.echo(f"   {result.tasks_per_hour:g} tasks/hour, {result.ok} ok, {result.errors} error(s), "
                   f"{result.wall_s:g} s, peak +{result.peak_extra_memory_mib:g} MiB, CPU {result.cpu_busy_share:.0%}")
        results.append(result)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    report = to_markdown(results) + "\n" + fit_summary(results)
    (folder / "throughput.md").write_text(report)
    (folder / "throughput.json").write_text(json.dumps([r.as_dict() for r in results], indent=2) + "\n")
    click.echo(report)
    if any(r.errors for r in results):
        sys.exit(f"some tasks ended in errors: the figures above are not comparable; see status.json under {out}/runs")


if __name__ == "__main__":
    main()
