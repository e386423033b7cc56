"""How the `osworld` command ends: its exit statuses and the one-line messages for a user's mistakes.

A mistake in what the user asked for (an option, a file it names) is never a traceback: it is
`Error: <option>: <what is wrong and what would be right>`, and the exit status says whether
anything ran (README, "Exit statuses").
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

OK = 0
TASK_ERRORS = 1      # the run finished, but some selected task ended in an error record (or: checks failed)
CANNOT_START = 2     # nothing ran: a mistake in the options or the files they name
RUN_STOPPED = 3      # the run stopped early: the same fatal error (model endpoint, agent) on consecutive tasks
INTERRUPTED = 130    # Ctrl-C


class OptionMistake(click.ClickException):
    """An option whose value cannot work; shown as `Error: --option: message`, exit status 2."""

    exit_code = CANNOT_START

    def __init__(self, option: str, message: str):
        super().__init__(f"{option}: {message}")
        self.option = option


def selection_mistake(error: Exception) -> OptionMistake:
    """A desktop_env.tasks.UnknownSelection, as the option that asked for it."""
    return OptionMistake("--domain" if getattr(error, "field", None) == "domain" else "--task-id", str(error))


class CannotStart(click.ClickException):
    """Nothing could run, for a reason that is not one option (a cluster that cannot be reached)."""

    exit_code = CANNOT_START


def show_usage_error(error: click.UsageError) -> None:
    """click's own usage errors (a bad choice, a number out of range), in two lines instead of the usage text."""
    hint = ""
    if error.ctx is not None:
        hint = f"Try '{error.ctx.command_path} --help' for help."
    click.echo(f"Error: {error.format_message()}", err=True)
    if hint:
        click.echo(hint, err=True)


@contextmanager
def option_mistakes() -> Iterator[None]:
    """The library's refusals of what the user asked for, as `Error: --option: message` (exit status 2)."""
    from desktop_env.tasks import TaskFileError, UnknownSelection
    from osworld_harness.execution.ray_backend import RayUnavailable
    from osworld_harness.execution.run import RunOptionError

    try:
        yield
    except RunOptionError as e:
        raise OptionMistake(e.option, e.detail) from None
    except UnknownSelection as e:
        raise selection_mistake(e) from None
    except TaskFileError as e:  # the meta file itself; a broken task file is the task's error record
        raise OptionMistake("--tasks", str(e)) from None
    except RayUnavailable as e:
        raise CannotStart(str(e)) from None
