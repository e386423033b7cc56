#!/usr/bin/env python3
"""The paper's screenshot-resolution analysis: the same runs with the screenshot scaled before the
model sees it (its coordinates scaled back to the screen).

    python scripts/analysis_screenshot_scale.py --model gpt-4o [--scale 0.2 --scale 0.4 ...] [osworld run options]

Each scale is one `osworld run --screenshot-scale S` per model and observation type into
<result-dir>/screenshot_scale/<S>/; scale 1.0 is the main table's run and reuses <result-dir>/main.
Writes <out>/screenshot_scale.md and .csv (see scripts/README.md).
"""
from __future__ import annotations

import click

from osworld_cli.experiment_command import experiment_command
from osworld_harness.experiments import paper_tables


@experiment_command(paper_tables.SCREENSHOT_SCALE, ("screenshot",),
                    sets_itself={"screenshot_scale", "perturb", "perturb_seed"})
@click.option("--scale", "scales", multiple=True, default=(0.2, 0.4, 0.6, 0.8, 1.0), show_default=True,
              type=click.FloatRange(0, 1, min_open=True), help="Screenshot scale factors (repeatable).")
def main(models, observation_types, root, options, scales):
    """Run (or reuse) every model x observation type x scale and render the success rate per scale."""
    return paper_tables.analysis_cells(paper_tables.SCREENSHOT_SCALE, paper_tables.scale_settings(list(scales)),
                                      models, observation_types, root, options)


if __name__ == "__main__":
    main()
