#!/usr/bin/env python3
"""What more trials buy: the overall score and its 95% interval from the first k trials of every task,
for k = 1 .. K, of each run under the given folders (a run of --trials K holds its runs of fewer trials).

    python scripts/trial_intervals.py results/ [more result folders]

Prints a markdown table: run, k, tasks, score (errors as 0), its 95% interval and width, pass@k,
pass^k and the share of tasks that flip (see osworld_harness/results/stats.py).
"""
from __future__ import annotations

import click

from osworld_harness.results.summary import find_runs, group_stats, interval_text, pct


@click.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
def main(results: tuple[str, ...]) -> None:
    """The interval of each run's score with its first 1, 2, ... K trials."""
    click.echo("| run | trials (k) | tasks | score | 95% CI | CI width (points) | pass@k | pass^k | flips |")
    click.echo("|---|---|---|---|---|---|---|---|---|")
    for run in (run for path in results for run in find_runs(path)):
        for k in range(1, max(r.trial for r in run.records) + 1):
            row = group_stats("Overall", [r for r in run.records if r.trial <= k])
            interval = row.score.interval if row.score else None
            width = "-" if interval is None else f"{100 * interval.width:.1f}"
            click.echo(f"| {run.label} | {k} | {row.tasks} | {pct(row.success_rate_errors_as_zero)} | "
                       f"{interval_text(row.score)} | {width} | {pct(row.pass_at_k) if k > 1 else '-'} | "
                       f"{pct(row.pass_all_k) if k > 1 else '-'} | {pct(row.flips)} |")


if __name__ == "__main__":
    main()
