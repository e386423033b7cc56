"""The command line every paper-table script shares (scripts/reproduce_main_table.py and the analyses).

Each script declares only what it varies (its own options) and how its cells are built; this
adds the rest: --model, --obs, --out, --dry-run, --table-only, and every `osworld run` option
the script does not set itself, taken from `osworld run` so the two never drift apart.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from desktop_env.tasks import TaskFileError
from mm_agents.loader import AgentLoadError
from osworld_harness.execution.run import RunOptionError
from osworld_harness.experiments import paper_tables

from .errors import OptionMistake
from .output import console
from .run_commands import CLI_ONLY, run_command
from .run_options import config_values
from .task_commands import load_plugins

# Build the cells: (models, observation types, result root, osworld run options, the script's own options).
CellBuilder = Callable[..., list[paper_tables.Cell]]


def experiment_command(experiment: paper_tables.Experiment, default_observations: tuple[str, ...],
                       sets_itself: set[str]) -> Callable[[CellBuilder], click.Command]:
    """Turns a cell builder, decorated with the script's own click options, into the script's command.
    `sets_itself`: the `osworld run` options the script varies or fixes, so not passed through."""
    def decorate(build_cells: CellBuilder) -> click.Command:
        own = list(reversed(getattr(build_cells, "__click_params__", [])))

        def main(models: tuple[str, ...], observation_types: tuple[str, ...], out: str | None, dry_run: bool,
                 table_only: bool, plugins: tuple[str, ...], **options: Any) -> None:
            load_plugins(plugins)
            own_values = {param.name: options.pop(param.name) for param in own}
            options = {**config_values(options), "plugins": list(plugins)}
            root = options["result_dir"]
            try:
                cells = build_cells(list(models), list(observation_types), root, options, **own_values)
                paper_tables.reproduce(experiment, cells, out or f"{root}/tables", console, dry_run, table_only)
            except KeyboardInterrupt:
                console.print("stopped; finished tasks are kept, run the same command again to resume")
                sys.exit(130)
            except RunOptionError as e:
                raise OptionMistake(e.option, e.detail) from e
            # bad options, a folder of other settings, a broken task
            except (ValueError, TaskFileError, AgentLoadError) as e:
                raise click.ClickException(str(e)) from e

        common = [
            click.Option(["--model", "models"], multiple=True, required=True, help="A model (repeatable)."),
            click.Option(["--obs", "observation_types"], multiple=True, default=default_observations,
                         show_default=True, type=click.Choice(paper_tables.OBSERVATION_ORDER),
                         help="Observation types (repeatable)."),
            *own,
            click.Option(["--out"], default=None,
                         help=f"Folder for {experiment.name}.md and .csv (default: RESULT_DIR/tables)."),
            click.Option(["--dry-run"], is_flag=True, help="Print the plan and its cost, run nothing."),
            click.Option(["--table-only"], is_flag=True,
                         help="Run nothing; make the table from the results already there."),
        ]
        passed_through = [p for p in run_command.params
                          if p.name not in sets_itself | {"model", "observation_type", *CLI_ONLY}]
        return click.Command(experiment.name, callback=main, params=common + passed_through,
                             help=build_cells.__doc__)
    return decorate
