#!/usr/bin/env python3
"""The paper's UI-perturbation analysis: the same tasks with the task's windows moved and resized
(layout) or unrelated windows opened (clutter) after setup, and the success rate lost against the
unperturbed runs.

    python scripts/analysis_perturbation.py --model gpt-4o [--perturb layout] [--perturb-seed 0] [osworld run options]

Each perturbation is one `osworld run --perturb P --perturb-seed N` per model and observation
type into <result-dir>/perturb/<P>/; the unperturbed baseline is the main table's run and reuses
<result-dir>/main. Writes <out>/perturb.md and .csv with each row's drop against the baseline,
over the tasks scored in both (see scripts/README.md).
"""
from __future__ import annotations

import click

from osworld_cli.experiment_command import experiment_command
from osworld_harness.experiments import paper_tables
from osworld_harness.results.config import PERTURBATIONS


@experiment_command(paper_tables.PERTURBATION, ("screenshot",), sets_itself={"screenshot_scale", "perturb"})
@click.option("--perturb", "perturbations", multiple=True, default=PERTURBATIONS, show_default=True,
              type=click.Choice(PERTURBATIONS),
              help="Perturbations (repeatable); the unperturbed baseline always runs.")
def main(models, observation_types, root, options, perturbations):
    """Run (or reuse) the unperturbed and perturbed runs and render the success rate and its drop."""
    settings = paper_tables.perturbation_settings(list(perturbations))
    return paper_tables.analysis_cells(paper_tables.PERTURBATION, settings, models, observation_types, root, options)


if __name__ == "__main__":
    main()
