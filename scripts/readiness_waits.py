#!/usr/bin/env python3
"""How long the desktop took to show what each task's setup launched, per app, from a results folder.

OSWorld's runner sleeps a fixed 60 s after a reset before the agent's first screenshot; the harness waits
instead until the launched apps are up and the screen holds still (status.json `readiness`). This reads
those waits from every task folder under the given paths and prints, per launched app, the median and
p95 of the wait before the first observation and of the launch steps' own waits.

    python scripts/readiness_waits.py results/parity [results/fidelity ...] [--markdown]
"""
from __future__ import annotations

import json
import os
import shlex
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import click


def program(command: str) -> str:
    try:
        words = shlex.split(command)
    except ValueError:
        return command.split()[0] if command.split() else "?"
    for word in words:
        if "=" in word and not word.startswith(("/", ".")):
            continue  # VLC_VERBOSE=-1 vlc ...
        return os.path.basename(word)
    return "?"


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]


def collect(paths: tuple[str, ...]) -> tuple[dict[str, list[float]], dict[str, list[float]], int]:
    first: dict[str, list[float]] = defaultdict(list)
    steps: dict[str, list[float]] = defaultdict(list)
    tasks = 0
    for root in paths:
        for status_file in sorted(Path(root).rglob("status.json")):
            try:
                readiness = json.loads(status_file.read_text()).get("readiness") or {}
            except (OSError, ValueError):
                continue
            observation = readiness.get("first_observation") or {}
            if not observation.get("supported"):
                continue
            tasks += 1
            launched = sorted({program(launch["command"]) for launch in observation.get("launches") or []
                               if launch.get("gui")}) or ["(nothing launched)"]
            first["+".join(launched)].append(float(observation.get("waited_s") or 0))
            for step in readiness.get("steps") or []:
                steps[program(step.get("started") or "?")].append(float(step.get("waited_s") or 0))
    return first, steps, tasks


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--markdown", is_flag=True, help="Print Markdown tables.")
def main(paths: tuple[str, ...], markdown: bool) -> None:
    """Per-app waits for the first observation and for launch steps, from status.json files under PATHS."""
    first, steps, tasks = collect(paths)
    if not tasks:
        sys.exit(f"no status.json with a readiness record under {', '.join(paths)}")
    for title, table in (("wait before the first observation (s; the VM sleeps 60)", first),
                         ("a launch step's wait for its app's window and a still desktop (s)", steps)):
        rows = [(name, len(v), statistics.median(v), p95(v), max(v)) for name, v in sorted(table.items())]
        if markdown:
            click.echo(f"\n{title}\n\n| launched | tasks | median | p95 | max |\n|---|---|---|---|---|")
            for name, count, median, high, top in rows:
                click.echo(f"| {name} | {count} | {median:.1f} | {high:.1f} | {top:.1f} |")
        else:
            click.echo(f"\n{title}")
            for name, count, median, high, top in rows:
                click.echo(f"  {name:30} {count:4d}  median {median:5.1f}  p95 {high:5.1f}  max {top:5.1f}")
    click.echo(f"\n{tasks} task folder(s)")


if __name__ == "__main__":
    main()
