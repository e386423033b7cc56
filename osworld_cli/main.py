"""The `osworld` command: thin verbs over the library."""
from __future__ import annotations

import logging
import os
import sys
from typing import Any

import click

from desktop_env.extensions import ExtensionError

from .compare_command import compare_command
from .coverage_command import coverage_command
from .env_commands import env_group
from .errors import CANNOT_START, show_usage_error
from .plugins_command import plugins_command
from .prefetch_command import prefetch_command
from .report_command import report_command, rescore_command
from .run_commands import demo_command, run_command, summarize_command
from .task_commands import tasks_group
from .verify_command import verify_command


class OsworldGroup(click.Group):
    """Ends every command the same way: a user's mistake in one or two lines, never the usage text."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as e:
            show_usage_error(e)
            sys.exit(e.exit_code)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        except ExtensionError as e:  # an installed plugin that cannot load, or a name registered twice
            click.echo(f"Error: {e}", err=True)
            sys.exit(CANNOT_START)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        except BrokenPipeError:  # `osworld tasks list | head`: the reader left; Python's own advice follows
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)  # an int here is click's own Exit (--help, --version)


@click.group(cls=OsworldGroup)
@click.version_option(package_name="osworld")
@click.option("-v", "--verbose", is_flag=True, help="Log progress to stderr.")
def cli(verbose: bool) -> None:
    """Benchmark computer-use agents on real desktop tasks."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")


cli.add_command(env_group)
tasks_group.add_command(prefetch_command)
tasks_group.add_command(coverage_command)
cli.add_command(tasks_group)
cli.add_command(verify_command)
for command in (run_command, summarize_command, compare_command, demo_command, report_command, rescore_command,
                plugins_command):
    cli.add_command(command)

if __name__ == "__main__":
    cli()
