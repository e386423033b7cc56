#!/usr/bin/env python3
"""The OSWorld paper's main table: success rate per model and observation type, by category.

    python scripts/reproduce_main_table.py --model gpt-4o --model claude-sonnet-4-5 [osworld run options]

Each (model, observation type) is one `osworld run` into <result-dir>/main/; finished tasks are
skipped, so running the same command again resumes. Prints the plan and its cost ceiling first,
then writes <out>/main.md and main.csv (see scripts/README.md).
"""
from __future__ import annotations

from osworld_cli.experiment_command import experiment_command
from osworld_harness.experiments import paper_tables


@experiment_command(paper_tables.MAIN, paper_tables.OBSERVATION_ORDER,
                    sets_itself={"screenshot_scale", "perturb", "perturb_seed"})  # the paper's default setting
def main(models, observation_types, root, options):
    """Run (or reuse) every model x observation type and render the paper's main table."""
    return paper_tables.main_cells(models, observation_types, root, options)


if __name__ == "__main__":
    main()
