"""`--slowest-report=PATH`: keeps the run's slowest tests and files, which `--durations` only prints.

A test's time is its setup, call and teardown together (a module fixture's cost lands on the
first test that asks for it). The report is Markdown: the wall time, the load average at the
start and the end (a time taken beside other work says so), the N slowest tests, and the files
by total time. Under pytest-xdist the controller, which sees every worker's reports, writes it.
"""
from __future__ import annotations

import os
import time
from collections import defaultdict
from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("slowest report")
    group.addoption("--slowest-report", metavar="PATH", default=None,
                    help="write the slowest tests and files of this run to PATH (Markdown)")
    group.addoption("--slowest-count", type=int, default=30, metavar="N",
                    help="how many tests and files --slowest-report lists (default 30)")


class SlowestReport:
    def __init__(self, path: Path, count: int, args: list[str]) -> None:
        self.path = path
        self.count = count
        self.args = args
        self.seconds: dict[str, float] = defaultdict(float)
        self.outcomes: dict[str, str] = {}
        # when each xdist worker's last report came in: a worker that ran out of tests long before the
        # other finished is wall time the suite's order, not its tests, cost
        self.last_report_at: dict[str, float] = {}
        self.started = time.monotonic()
        self.load_at_start = os.getloadavg()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] += report.duration
        worker = getattr(getattr(report, "node", None), "gateway", None)
        self.last_report_at[getattr(worker, "id", "main")] = time.monotonic() - self.started
        if report.when == "call" or report.outcome != "passed":
            self.outcomes.setdefault(report.nodeid, report.outcome)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(self.render(time.monotonic() - self.started, os.getloadavg()))

    def render(self, wall: float, load_at_end: tuple[float, float, float]) -> str:
        by_file: dict[str, float] = defaultdict(float)
        tests_in_file: dict[str, int] = defaultdict(int)
        for nodeid, seconds in self.seconds.items():
            by_file[nodeid.split("::")[0]] += seconds
            tests_in_file[nodeid.split("::")[0]] += 1
        total = sum(self.seconds.values())
        lines = [
            "# Slowest tests",
            "",
            f"`pytest {' '.join(self.args)}`, {time.strftime('%Y-%m-%d %H:%M %Z')}: {len(self.seconds)} tests, "
            f"{wall:.0f} s wall, {total:.0f} s of test time (setup + call + teardown, all workers). "
            f"Load average {self.load_at_start[0]:.1f} at the start, {load_at_end[0]:.1f} at the end.",
            "",
            "Each worker's last test ended at: "
            + ", ".join(f"{worker} {at:.0f} s" for worker, at in sorted(self.last_report_at.items())) + ".",
            "",
            f"## The {self.count} slowest tests",
            "",
            "| seconds | outcome | test |",
            "|---:|---|---|",
        ]
        slowest = sorted(self.seconds.items(), key=lambda item: item[1], reverse=True)[: self.count]
        lines += [f"| {seconds:.2f} | {self.outcomes.get(nodeid, 'passed')} | `{nodeid}` |"
                  for nodeid, seconds in slowest]
        lines += ["", f"## The {self.count} slowest files", "", "| seconds | tests | file |", "|---:|---:|---|"]
        files = sorted(by_file.items(), key=lambda item: item[1], reverse=True)[: self.count]
        lines += [f"| {seconds:.1f} | {tests_in_file[path]} | `{path}` |" for path, seconds in files]
        return "\n".join(lines) + "\n"


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("slowest_report")
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(
            SlowestReport(Path(path), config.getoption("slowest_count"), list(config.invocation_params.args)),
            "slowest-report")
