"""Progress of a run: a live table on a terminal, one plain line per event otherwise."""
from __future__ import annotations

import sys
import time
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .events import Event, Finished, Interrupted, Note, Planned, Retrying, Started, StepTaken, Stopped
from .plan import once_per_task


def format_duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def task_name(event: Started | StepTaken | Finished | Retrying) -> str:
    return f"{event.domain}/{event.task_id}" + (f" #{event.trial}" if event.trial > 1 else "")


class RunProgress:
    """Consumes run_benchmark's events; use as a context manager around the run."""

    def __init__(self, console: Console | None = None, live: bool | None = None):
        self.console = console or Console()
        self.live_mode = sys.stdout.isatty() if live is None else live
        self.total = 0
        self.skipped = 0
        self.done = 0
        self.ok = 0
        self.errors = 0
        self.score = 0.0
        self.running: dict[str, int] = {}  # "domain/id" (and " #k" for trial k) -> step
        self.started = time.monotonic()
        self._live: Live | None = None

    def __enter__(self) -> RunProgress:
        if self.live_mode:
            self._live = Live(self.render(), console=self.console, refresh_per_second=4, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.update(self.render())
            self._live.__exit__(*exc)

    def eta(self) -> str:
        if not self.done:
            return "?"
        per_task = (time.monotonic() - self.started) / self.done
        return format_duration(per_task * (self.total - self.done))

    def render(self) -> Group:
        elapsed = format_duration(time.monotonic() - self.started)
        rate = f"{self.score / self.ok:.1%}" if self.ok else "-"
        head = Text(f"tasks {self.done}/{self.total} (skipped {self.skipped})   "
                    f"success {self.score:g}/{self.ok} = {rate}   "
                    f"errors {self.errors}   elapsed {elapsed}   eta {self.eta()}")
        table = Table("running task", "step", box=None)
        for name, step in sorted(self.running.items()):
            table.add_row(name, str(step))
        return Group(head, table)

    def _print(self, message: str) -> None:
        if self._live is not None:
            self._live.console.print(message, highlight=False)
        else:
            self.console.print(message, highlight=False)

    def __call__(self, event: Event) -> None:
        if isinstance(event, Planned):
            self.total, self.skipped = len(event.to_run), len(event.skipped)
            self._print(f"{len(event.to_run)} task(s) to run, {len(event.skipped)} already done or errored (skipped)"
                        + (f", {len(event.invalid)} cannot run (error records)" if event.invalid else ""))
            for planned in once_per_task(event.invalid):
                what = "broken" if planned.broken else "cannot run"
                self._print(f"[red]{what}[/] {planned.domain}/{planned.task_id}: {escape(planned.error)}")
            for planned in event.to_run:
                for warning in planned.warnings:
                    self._print(f"[yellow]warning[/]    {planned.domain}/{planned.task_id}: {escape(str(warning))}")
        elif isinstance(event, Started):
            self.running[task_name(event)] = 0
            if not self.live_mode:
                self._print(f"started  {task_name(event)}")
        elif isinstance(event, StepTaken):
            self.running[task_name(event)] = event.step
        elif isinstance(event, Finished):
            result, name = event.result, task_name(event)
            self.running.pop(name, None)
            self.done += 1
            if result.status == "ok":
                self.ok += 1
                self.score += result.score or 0.0
                line = f"finished {name}: score {result.score or 0.0:g} in {result.steps} step(s)"
            else:
                self.errors += 1
                line = f"[red]error[/]    {name}: {escape(str(result.error))}"
            self._print(line + f"   [{self.done}/{self.total}, eta {self.eta()}]")
        elif isinstance(event, Retrying):
            self.running.pop(task_name(event), None)
            self._print(f"[yellow]retrying[/] {task_name(event)}: {escape(event.reason)}")
        elif isinstance(event, Note):
            self._print(escape(event.message))
        elif isinstance(event, Stopped):
            self._print("[red]stopping the run[/] (the reason follows the summary)")
        elif isinstance(event, Interrupted):
            self._print("interrupted: stopping the desktops")
        if self._live is not None:
            self._live.update(self.render())
