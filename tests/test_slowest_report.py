"""The `--slowest-report` file: the slowest tests and files, and when each worker ran out of tests."""
from __future__ import annotations

from types import SimpleNamespace

from tests.slowest import SlowestReport


def report(nodeid: str, when: str, duration: float, worker: str | None) -> SimpleNamespace:
    node = SimpleNamespace(gateway=SimpleNamespace(id=worker)) if worker else None
    return SimpleNamespace(nodeid=nodeid, when=when, duration=duration, outcome="passed", node=node)


def test_a_tests_phases_add_up_and_its_file_totals_its_tests(tmp_path):
    slowest = SlowestReport(tmp_path / "slowest.md", count=5, args=["-m", "desktop"])
    for when, seconds in [("setup", 2.0), ("call", 5.0), ("teardown", 1.0)]:
        slowest.pytest_runtest_logreport(report("tests/a.py::test_long", when, seconds, "gw0"))
    slowest.pytest_runtest_logreport(report("tests/a.py::test_short", "call", 0.5, "gw1"))
    text = slowest.render(10.0, (1.0, 1.0, 1.0))
    assert "| 8.00 | passed | `tests/a.py::test_long` |" in text
    assert "| 8.5 | 2 | `tests/a.py` |" in text


def test_it_says_when_each_worker_ran_out_of_tests(tmp_path, monkeypatch):
    clock = iter([100.0, 130.0, 190.0])
    monkeypatch.setattr("tests.slowest.time.monotonic", lambda: next(clock))
    slowest = SlowestReport(tmp_path / "slowest.md", count=5, args=[])
    slowest.pytest_runtest_logreport(report("tests/a.py::test_one", "call", 30.0, "gw1"))
    slowest.pytest_runtest_logreport(report("tests/a.py::test_two", "call", 90.0, "gw0"))
    assert "Each worker's last test ended at: gw0 90 s, gw1 30 s." in slowest.render(90.0, (1.0, 1.0, 1.0))


def test_without_workers_the_run_itself_is_the_one_worker(tmp_path):
    slowest = SlowestReport(tmp_path / "slowest.md", count=5, args=[])
    slowest.pytest_runtest_logreport(report("tests/a.py::test_one", "call", 1.0, None))
    assert "Each worker's last test ended at: main " in slowest.render(1.0, (1.0, 1.0, 1.0))
