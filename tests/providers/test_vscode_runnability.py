"""VS Code that is not installed is runnable or not the same way in `osworld tasks coverage`, the run's plan (its
dry run) and `osworld env doctor`, as apps.py decides: buildable here (its build's prerequisites present) is
runnable, "built before the first desktop starts"; not buildable is cannot-run everywhere."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from desktop_env.providers.local import apps, doctor
from desktop_env.providers.local.build import vscode
from osworld_cli.main import cli
from tests.tasks.test_coverage import task_set

BLOCKER = "installing VS Code needs npm (the npm registry's client) to fetch Node.js: install it"


@pytest.fixture
def meta(tmp_path, monkeypatch):
    monkeypatch.setenv("OSWORLD_SANDBOX_SHARE", str(tmp_path / "share"))  # VS Code not installed
    return task_set(tmp_path / "tasks", {"vs_code/settings": {}, "vs_code/keys": {},
                                         "multi_apps/code": {"related_apps": ["vscode"]}, "os/plain": {}})


def said(*args: str) -> str:
    done = CliRunner().invoke(cli, list(args), terminal_width=300)
    return " ".join(done.output.split())


def dry_run(meta, tmp_path) -> str:
    return said("run", "--agent", "noop", "--model", "m", "--obs", "screenshot", "--dry-run", "--tasks", str(meta),
                "--result-dir", str(tmp_path / "r"))


def test_buildable_vs_code_is_runnable_in_all_three_with_the_same_note(meta, tmp_path, monkeypatch):
    monkeypatch.setattr(vscode, "build_blocker", lambda: None)
    assert apps.missing_apps() == {}
    coverage = said("tasks", "coverage", str(meta))
    assert "VS Code: not installed: built before the first desktop starts (a few minutes); its 3 task(s) are " \
           "counted as running here" in coverage
    said("tasks", "coverage", "--json", str(tmp_path / "c.json"), str(meta))
    assert json.loads((tmp_path / "c.json").read_text())["total"]["cannot_run_because"] == {}
    plan = dry_run(meta, tmp_path)
    assert "cannot run here: " not in plan
    assert "VS Code: not installed: built before the first desktop starts (a few minutes); its 3 task(s) are " \
           "counted as running here" in plan
    check = doctor.check_vscode()
    assert check.ok and apps.BUILT_FIRST in check.detail


def test_unbuildable_vs_code_cannot_run_in_all_three(meta, tmp_path, monkeypatch):
    monkeypatch.setattr(vscode, "build_blocker", lambda: BLOCKER)
    assert apps.missing_apps() == {"VS Code": f"VS Code is not installed, and {BLOCKER}"}
    coverage = said("tasks", "coverage", "--list", str(meta))
    assert coverage.count("cannot run here vs_code/") == 2 and "cannot run here multi_apps/code" in coverage
    assert "built before the first desktop starts" not in coverage
    plan = dry_run(meta, tmp_path)
    assert "built before the first desktop starts" not in plan
    assert "cannot run here: 3 task(s) (VS Code 3)" in plan, plan
    assert BLOCKER in plan
    check = doctor.check_vscode()
    assert not check.ok and "cannot be built" in check.detail and "its tasks cannot run here" in check.detail
    assert apps.BUILT_FIRST not in check.detail
