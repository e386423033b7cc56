#!/usr/bin/env python3
"""The paper's trajectory-history analysis: the same runs with the agent keeping 0, 1, 2, 3 or all
past steps (observation and answer) in its prompt.

    python scripts/analysis_history_length.py --model gpt-4o [--history 0 --history all ...] [osworld run options]

Each length is one `osworld run --max-trajectory-length N` per model and observation type into
<result-dir>/history/<N|all>/; "all" is max_trajectory_length = max_steps, which no episode can
exceed. The main table's length (3, `osworld run`'s default) is the main table's run and reuses
<result-dir>/main. Writes <out>/history.md and .csv (see scripts/README.md).
"""
from __future__ import annotations

import click

from osworld_cli.experiment_command import experiment_command
from osworld_harness.experiments import paper_tables


def history_length(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str]:
    try:
        return [paper_tables.parse_history_length(value) for value in values]
    except ValueError as e:
        raise click.BadParameter(str(e)) from e


@experiment_command(paper_tables.HISTORY, ("screenshot",),
                    sets_itself={"max_trajectory_length", "screenshot_scale", "perturb", "perturb_seed"})
@click.option("--history", "lengths", multiple=True, default=("0", "1", "2", "3", paper_tables.HISTORY_ALL),
              show_default=True, callback=history_length,
              help=f"Past steps kept in the prompt: an integer or {paper_tables.HISTORY_ALL!r} (repeatable).")
def main(models, observation_types, root, options, lengths):
    """Run (or reuse) every model x observation type x history length and render the success rate per length."""
    settings = paper_tables.history_settings(lengths, options["max_steps"])
    return paper_tables.analysis_cells(paper_tables.HISTORY, settings, models, observation_types, root, options)


if __name__ == "__main__":
    main()
