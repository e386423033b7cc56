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


def format_duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


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
        self.running: dict[tuple[str, str], int] = {}
        self.started = time.monotonic()
        self._live: Live | None = None

    def __enter__(self) -> "RunProgress":
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
        head = Text(f"tasks {self.done}/{self.total} (skipped {self.skipped})   success {self.score:g}/{self.ok} = {rate}"
                    f"   errors {self.errors}   elapsed {elapsed}   eta {self.eta()}")
        table = Table("running task", "step", box=None)
        for (domain, task_id), step in sorted(self.running.items()):
            table.add_row(f"{domain}/{task_id}", str(step))
        return Group(head, table)

    def _print(self, message: str) -> None:
        if self._live is not None:
            self._live.console.print(message, highlight=False)
        else:
            self.console.print(message, highlight=False)

    def __call__(self, event: tuple) -> None:
        kind = event[0]
        if kind == "plan":
            to_run, skipped, invalid = event[1], event[2], event[3] if len(event) > 3 else []
            self.total, self.skipped = len(to_run), len(skipped)
            self._print(f"{len(to_run)} task(s) to run, {len(skipped)} already done or errored (skipped)"
                        + (f", {len(invalid)} cannot run (error records)" if invalid else ""))
            for planned in invalid:
                self._print(f"[red]cannot run[/] {planned.domain}/{planned.task_id}: {escape(planned.error)}")
        elif kind == "started":
            self.running[(event[2], event[3])] = 0
            if not self.live_mode:
                self._print(f"started  {event[2]}/{event[3]}")
        elif kind == "step":
            self.running[(event[2], event[3])] = event[4]
        elif kind == "finished":
            domain, task_id, result = event[2], event[3], event[4]
            self.running.pop((domain, task_id), None)
            self.done += 1
            if result["status"] == "ok":
                self.ok += 1
                self.score += result["score"] or 0.0
                line = f"finished {domain}/{task_id}: score {result['score']:g} in {result['steps']} step(s)"
            else:
                self.errors += 1
                line = f"[red]error[/]    {domain}/{task_id}: {result['error']}"
            self._print(line + f"   [{self.done}/{self.total}, eta {self.eta()}]")
        elif kind == "retrying":
            domain, task_id, reason = event[2], event[3], event[4]
            self.running.pop((domain, task_id), None)
            self._print(f"[yellow]retrying[/] {domain}/{task_id}: {reason}")
        elif kind == "note":
            self._print(event[1])
        elif kind == "stopped":
            self._print("[red]stopping the run[/] (the reason follows the summary)")
        elif kind == "interrupted":
            self._print("interrupted: stopping the desktops")
        if self._live is not None:
            self._live.update(self.render())
