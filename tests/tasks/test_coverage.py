"""`osworld tasks coverage`: each task in one category (offline, downloads and whether they are
prefetched, live web, cannot run here with what it needs by name), per domain, as a table and as JSON."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from desktop_env.providers.local import apps
from desktop_env.tasks import load_task, load_task_set
from desktop_env.tasks.coverage import classify, coverage
from desktop_env.tasks.prefetch import prefetch
from osworld_cli.main import cli
from tests.file_server import FileServer

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "osworld_examples"
EVALUATOR = {"func": "exact_match", "result": {"type": "vm_command_line", "command": "echo hi"},
             "expected": {"type": "rule", "rules": {"expected": "hi\n"}}}


def task_set(root: Path, tasks: dict[str, dict]) -> Path:
    index: dict[str, list[str]] = {}
    for name, fields in tasks.items():
        domain, task_id = name.split("/")
        path = root / "examples" / domain / f"{task_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"id": task_id, "instruction": "Do it.", "config": [], "evaluator": EVALUATOR,
                                    **fields}))
        index.setdefault(domain, []).append(task_id)
    (root / "test_all.json").write_text(json.dumps(index))
    return root / "test_all.json"


def tasks_of(meta: Path) -> list:
    listed = load_task_set(meta)
    return [listed.load(*pair, check_paths=False) for pair in listed.select()]


def example_tasks(root: Path, url: str) -> Path:
    return task_set(root, {
        "os/offline": {"config": [{"type": "execute", "parameters": {"command": ["touch", "/home/user/x"]}}]},
        "os/download": {"config": [{"type": "download", "parameters": {"files": [
            {"url": f"{url}/a.txt", "path": "/home/user/a.txt"}]}}]},
        "chrome/live-page": {"config": [{"type": "chrome_open_tabs",
                                         "parameters": {"urls_to_open": ["https://www.example.org/"]}}]},
        "chrome/gold-file": {"evaluator": {**EVALUATOR, "expected": {"type": "cloud_file", "path": f"{url}/g.txt",
                                                                              "dest": "g.txt"}}},
        "multi_apps/drive": {"config": [{"type": "googledrive", "parameters": {}}]},
        "multi_apps/code": {"related_apps": ["vscode", "chrome"]},
        "vs_code/settings": {},
        "os/typo": {"evaluator": {**EVALUATOR, "func": "exact_mach"}},
    })


def test_each_task_is_in_one_category_with_its_reasons_and_what_it_needs_by_name(tmp_path):
    meta = example_tasks(tmp_path, "https://files.example.com")
    found = {c.task_id: c for c in coverage(tasks_of(meta), missing_apps=lambda: {"VS Code": "not installed"}).tasks}
    assert {t: c.category for t, c in found.items()} == {
        "offline": "offline", "download": "downloads", "live-page": "live web", "gold-file": "downloads",
        "drive": "cannot run here", "code": "cannot run here", "settings": "cannot run here", "typo": "cannot run here"}
    assert found["download"].reasons == ["downloads 1 file(s) from files.example.com"]
    assert found["live-page"].reasons == ["config[0] (chrome_open_tabs) opens https://www.example.org/"]
    assert found["drive"].blockers == ["Google Drive"]
    assert found["code"].blockers == ["VS Code"] and "its related apps name VS Code" in found["code"].reasons[0]
    assert found["typo"].blockers == ["unknown metric exact_mach"]
    assert found["offline"].reasons == [] and found["download"].prefetched is None


def test_once_the_desktop_has_vs_code_its_tasks_are_classified_by_what_else_they_need(tmp_path):
    meta = example_tasks(tmp_path, "https://files.example.com")
    by_id = {t.id: t for t in tasks_of(meta)}
    assert classify(by_id["settings"], missing_apps=dict).category == "offline"
    assert classify(by_id["code"], missing_apps=dict).category == "offline"


def test_downloads_are_counted_prefetched_once_the_cache_holds_them(tmp_path):
    cache = tmp_path / "cache"
    with FileServer({"/a.txt": b"input", "/g.txt": b"gold"}) as server:
        meta = example_tasks(tmp_path, server.url)
        before = coverage(tasks_of(meta), cache).by_domain()
        assert (before["os"].downloads, before["os"].prefetched) == (1, 0)
        prefetch([t for t in tasks_of(meta) if t.id == "download"], cache)
    after = coverage(tasks_of(meta), cache)
    assert (after.by_domain()["os"].prefetched, after.by_domain()["chrome"].prefetched) == (1, 0)
    (cache / "download").rename(tmp_path / "moved")
    assert coverage(tasks_of(meta), cache).by_domain()["os"].prefetched == 0


def test_the_command_prints_the_table_and_writes_the_same_as_json(tmp_path, monkeypatch):
    # whatever this machine has
    monkeypatch.setitem(apps.APP_CHECKS, "VS Code", lambda: apps.AppState(None, "not installed"))
    meta = example_tasks(tmp_path, "https://files.example.com")
    out = tmp_path / "coverage.json"
    outcome = CliRunner().invoke(cli, ["tasks", "coverage", str(meta), "--cache-dir", str(tmp_path / "cache"),
                                       "--json", str(out), "--list"], terminal_width=200)
    assert outcome.exit_code == 0, outcome.output
    assert "live web         chrome/live-page: config[0] (chrome_open_tabs) opens https://www.example.org/" \
        in outcome.output
    rows = {line.split("\t")[0]: line.split("\t")[1:] for line in outcome.output.splitlines() if "\t" in line}
    assert rows["os"][:6] == ["3", "1", "1", "0", "0", "1"]
    assert rows["total"][0] == "8"
    report = json.loads(out.read_text())
    assert report["domains"]["os"] == {"tasks": 3, "offline": 1, "downloads": 1, "prefetched": 0, "live_web": 0,
                                       "cannot_run_here": 1, "cannot_run_because": {"unknown metric exact_mach": 1}}
    assert report["total"]["tasks"] == 8 and len(report["tasks"]) == 8
    assert report["total"]["cannot_run_because"]["VS Code"] == 2
    markdown = CliRunner().invoke(cli, ["tasks", "coverage", str(meta), "--cache-dir", str(tmp_path / "cache"),
                                        "--markdown"])
    lines = markdown.output.splitlines()
    assert lines[0].startswith("| domain | tasks | offline |")
    assert any(line.startswith("| os | 3 | 1 | 1 | 0 | 0 | 1 |") for line in lines[2:])
    assert lines[-1].startswith("| **total** | 8 |")


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/osworld_examples is not beside this checkout")
def test_on_osworlds_task_files_only_accounts_live_scripted_sites_and_vs_code_keep_a_task_from_running():
    report = coverage([load_task(p, check_paths=False) for p in sorted((SHARED / "examples").rglob("*.json"))],
                      missing_apps=lambda: {"VS Code": "not installed"})
    total = report.total()
    assert total.tasks == 296
    assert set(total.blockers) == {"VS Code", "Google Drive", "a website login", "a live scripted website"}
    assert (total.offline, total.downloads, total.live_web, total.cannot_run) == (43, 167, 48, 38)


def test_a_task_scored_by_an_extension_the_setup_does_not_bring_needs_the_marketplace(tmp_path):
    def lists(extension: str) -> dict:
        return {**EVALUATOR, "func": "is_extension_installed",
                "result": {"type": "vm_command_line", "command": ["code", "--list-extensions", "|", "grep", extension]},
                "expected": {"type": "rule", "rules": {"type": "contain", "expected": extension}}}
    meta = task_set(tmp_path, {
        "vs_code/by-id": {"evaluator": lists("ms-python.python")},
        "vs_code/from-vsix": {"evaluator": lists("undefined_publisher.test"), "config": [
            {"type": "execute", "parameters": {"command": "code --install-extension ~/t.vsix", "shell": True}}]},
        "vs_code/file-listed": {"evaluator": {**lists("x"), "result": {
            "type": "vm_command_line", "command": ["ls", "/home/user", "|", "grep", "t.py"]}}},
    })
    found = {c.task_id: c for c in coverage(tasks_of(meta), missing_apps=dict).tasks}
    assert found["by-id"].category == "live web"
    assert "ms-python.python" in found["by-id"].reasons[0] and "marketplace" in found["by-id"].reasons[0]
    assert found["from-vsix"].category == "offline" and found["file-listed"].category == "offline"
