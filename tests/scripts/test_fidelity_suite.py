"""The fidelity suite: which OSWorld task files it runs (on small task files of our own, and on the
real ones in ../shared when they are there), and a handful of real ones end to end on local desktops."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_env.resources import cache_name
from osworld_harness.experiments.fidelity import find_meta_file, select_tasks

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "osworld_examples"
needs_shared = pytest.mark.skipif(not (SHARED / "test_all.json").is_file(),
                                  reason="no ../shared/osworld_examples (OSWorld's task files) here")

OFFLINE_EVALUATOR = {"func": "exact_match", "result": {"type": "vm_command_line", "command": "echo hi"},
                     "expected": {"type": "rule", "rules": {"expected": "hi\n"}}}


def checkout(root: Path, tasks: dict[str, dict]) -> Path:
    """An OSWorld checkout's layout: evaluation_examples/test_all.json beside examples/<domain>/<id>.json."""
    examples = root / "evaluation_examples"
    index: dict[str, list[str]] = {}
    for name, fields in tasks.items():
        domain, task_id = name.split("/")
        task = {"id": task_id, "instruction": "Do it.", "config": [], "evaluator": OFFLINE_EVALUATOR, **fields}
        (examples / "examples" / domain).mkdir(parents=True, exist_ok=True)
        (examples / "examples" / domain / f"{task_id}.json").write_text(json.dumps(task))
        index.setdefault(domain, []).append(task_id)
    (examples / "test_all.json").write_text(json.dumps(index))
    return root


def test_each_network_rule_excludes_a_task_and_says_why(tmp_path):
    root = checkout(tmp_path, {
        "os/offline": {"config": [{"type": "execute", "parameters": {"command": ["touch", "/home/user/x"]}}]},
        "chrome/history-as-data": {"config": [{"type": "update_browse_history", "parameters": {"history": [
            {"url": "https://example.com/a", "title": "A", "visit_time_from_now_in_seconds": 60}]}}]},
        "gimp/download": {"config": [{"type": "download", "parameters": {"files": [
            {"url": "https://example.com/a.png", "path": "/home/user/a.png"}]}}]},
        "chrome/live-page": {"config": [{"type": "chrome_open_tabs",
                                         "parameters": {"urls_to_open": ["https://www.example.org/"]}}]},
        "os/apt": {"config": [{"type": "execute", "parameters": {
            "command": "echo {CLIENT_PASSWORD} | sudo -S apt-get install -y sysstat", "shell": True}}]},
        "multi_apps/cloud-expected": {"evaluator": {**OFFLINE_EVALUATOR, "expected": {
            "type": "cloud_file", "path": "https://example.com/gold.docx", "dest": "gold.docx"}}},
        "os/url-in-instruction": {"instruction": "Download https://example.com/x.zip to the Desktop."},
        "vs_code/settings": {"config": [{"type": "launch", "parameters": {"command": ["code"]}}]},
        "vs_code/marketplace": {"config": [{"type": "command", "parameters": {
            "command": ["code", "--install-extension", "ms-python.python"]}}]},
        "vs_code/vsix": {"config": [{"type": "execute", "parameters": {
            "command": "code --install-extension ~/eval-0.0.1.vsix", "shell": True}}]},
        "chrome/local-page": {"config": [{"type": "chrome_open_tabs",
                                          "parameters": {"urls_to_open": ["http://localhost:8000/a.html"]}}]},
    })
    selection = select_tasks(root)
    assert selection.meta_path == find_meta_file(root) == root / "evaluation_examples" / "test_all.json"
    assert sorted(selection.selected) == [("chrome", "history-as-data"), ("chrome", "local-page"), ("os", "offline"),
                                          ("vs_code", "settings"), ("vs_code", "vsix")]
    reasons = {e.task_id: " | ".join(e.reasons) for e in selection.excluded}
    assert reasons == {
        "download": "config[0].parameters.files[0].url downloads https://example.com/a.png",
        "live-page": "config[0] (chrome_open_tabs) opens https://www.example.org/",
        "apt": "config[0] runs 'apt-get install', which fetches from the network",
        "cloud-expected": "evaluator.expected.path downloads https://example.com/gold.docx",
        "url-in-instruction": "the instruction names https://example.com/x.zip",
        "marketplace": "config[0] runs '--install-extension\", \"ms-python.python', which fetches from the network",
    }


def test_a_folder_that_is_no_checkout_is_refused_by_name(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not an OSWorld checkout"):
        find_meta_file(tmp_path)
    result = subprocess.run([sys.executable, "scripts/fidelity_suite.py", "--osworld", str(tmp_path), "--list"],
                            cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 2 and "is not an OSWorld checkout" in result.stderr


@needs_shared
def test_on_osworlds_own_task_files_the_selection_keeps_the_offline_ones():
    selection = select_tasks(SHARED)
    selected = {task_id[:8] for _, task_id in selection.selected}
    excluded = {e.task_id[:8]: e.reasons for e in selection.excluded}
    assert len(selection.selected) + len(selection.excluded) == 296
    assert len(selection.selected) == 51
    # Offline by what they do: GNOME settings, VLC's settings, Chrome's profile, the default video player,
    # and a browsing history written as data.
    assert {"a4d98375", "8ba5ae7a", "030eeff7", "937087b6", "44ee5668"} <= selected
    # VS Code's settings and keybindings tasks; not the one that installs an extension from the marketplace.
    assert {"9439a27b", "930fdb3b", "982d12a5"} <= selected
    assert any("--install-extension" in reason for reason in excluded["e2b5e914"])
    assert any("apt update" in reason for reason in excluded["9656a811"])  # installs jq in its setup
    # Scored by an extension the agent can only get from the marketplace (autoDocstring, Python).
    assert any("njpwerner.autodocstring" in reason for reason in excluded["4e60007a"])
    assert any("ms-python.python" in reason for reason in excluded["eabc805a"])
    assert any("opens https://www.drugs.com/" in reason for reason in excluded["b070486d"])


# The handful end to end: a Chrome window activated as "Google Chrome", the default video player,
# gsettings of GNOME's desktop schemas and of the settings daemon's, VLC's settings file.
HANDFUL = ["93eabf48-6a27-4cb6-b963-7d5fe1e0d3a9", "937087b6-f668-4ba6-9110-60682ee33441",
           "a4d98375-215b-4a4d-aee9-3d4370fccc41", "bedcedc4-4d72-425e-ad62-21960b11fe0d",
           "8ba5ae7a-5ae5-4eab-9fcc-5dd4fe3abf89"]


@needs_shared
@pytest.mark.desktop
def test_a_handful_of_osworld_tasks_give_no_error_and_no_free_pass(tmp_path):
    out = tmp_path / "fidelity"
    args = [sys.executable, "scripts/fidelity_suite.py", "--osworld", str(SHARED), "--num-envs", "2", "--out", str(out)]
    for task_id in HANDFUL:
        args += ["--task-id", task_id]
    result = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=900)
    report = json.loads((out / "fidelity.json").read_text())
    assert (report["tasks"], report["errors"], report["free_passes"]) == (5, [], []), result.stdout + result.stderr
    assert result.returncode == 0
    assert {o["task_id"]: (o["status"], o["score"]) for o in report["outcomes"]} == {t: ("ok", 0.0) for t in HANDFUL}
    assert "| 5 | 0 | 0 |" in (out / "fidelity.md").read_text()


def test_a_task_whose_downloads_a_cache_holds_runs_offline_and_one_missing_a_file_does_not(tmp_path):
    """A cache as OSWorld's runs leave it (`<cache>/<task id>/<uuid5(url)>_<name>`, no prefetch manifest), as
    ../shared/osworld_cache is: the parity suite replays the tasks whose every file it holds."""
    two_files = {"config": [{"type": "download", "parameters": {"files": [
        {"url": "https://example.com/a.xlsx", "path": "/home/user/a.xlsx"},
        {"url": "https://example.com/b.xlsx", "path": "/home/user/b.xlsx"}]}}]}
    root = checkout(tmp_path / "osworld", {"libreoffice_calc/cached": two_files, "libreoffice_calc/half": two_files})
    cache = tmp_path / "cache"
    for task_id, urls in (("cached", ["a", "b"]), ("half", ["a"])):
        (cache / task_id).mkdir(parents=True)
        for stem in urls:
            (cache / task_id / cache_name(f"https://example.com/{stem}.xlsx", f"{stem}.xlsx")).write_bytes(b"PK")
    assert [t for _, t in select_tasks(root).selected] == []
    with_cache = select_tasks(root, cache_dir=cache)
    assert with_cache.selected == [("libreoffice_calc", "cached")]
    assert with_cache.excluded[0].task_id == "half" and len(with_cache.excluded[0].reasons) == 2
