"""`osworld rescore`: save the result files at the end of an episode, re-run the evaluator on them offline."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from openpyxl import Workbook
from openpyxl.worksheet.worksheet import Worksheet

from desktop_env.desktop_env import DesktopEnv
from desktop_env.evaluators.context import LiveContext, NotRecorded
from desktop_env.evaluators.getters import chrome
from desktop_env.evaluators.recording import MAX_BYTES, RecordingContext, ReplayContext
from desktop_env.evaluators.registry import get_getter
from desktop_env.evaluators.scoring import score_task
from desktop_env.extensions import load_plugin
from desktop_env.tasks import load_task_set
from desktop_env.tasks.loader import BUILTIN_ROOT
from osworld_cli.report_command import rescore_command
from osworld_harness.results.rescore import (
    NotRescorable,
    RescoreError,
    read_manifest,
    rescore_results,
    rescore_task,
    save_rescore_inputs,
)

GOLD_TEXT = "total: 42\n"
SHEET_RULES = {"rules": [{"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0"}]}


def xlsx(path: Path, rows: list[list]) -> Path:
    book = Workbook()
    sheet = book.active
    assert isinstance(sheet, Worksheet)  # a new workbook's one sheet
    for row in rows:
        sheet.append(row)
    path.parent.mkdir(parents=True, exist_ok=True)
    book.save(path)
    return path


def write_json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=1))


TASKS: dict[str, dict[str, dict[str, Any]]] = {  # domain -> task id -> evaluator
    "multi_apps": {
        "text-and-sheet": {
            "func": ["compare_text_file", "compare_table"],
            "result": [{"type": "vm_file", "path": "/home/user/notes.txt", "dest": "notes.txt"},
                       {"type": "vm_file", "path": "/home/user/Documents/book.xlsx", "dest": "book.xlsx"}],
            "expected": [{"type": "cloud_file", "path": "../../files/text-and-sheet/gold.txt", "dest": "gold.txt"},
                         {"type": "cloud_file", "path": "../../files/text-and-sheet/gold.xlsx",
                          "dest": "gold_expected.xlsx"}],
            "options": [{}, SHEET_RULES]},
    },
    "chrome": {
        "homepage-json": {
            "func": "check_json",
            "result": {"type": "vm_file", "path": "/home/user/.config/app/settings.json", "dest": "settings.json"},
            "expected": {"type": "rule", "rules": {"expect": [{"key": ["homepage"], "method": "eq",
                                                               "ref": "http://intranet/"}]}}},
        "give-up": {"func": "infeasible"},
    },
    "os": {
        "count-lines": {
            "func": "check_include_exclude",
            "result": {"type": "vm_command_line", "command": "wc -l ~/notes.txt", "shell": True},
            "expected": {"type": "rule", "rules": {"include": ["3"], "exclude": []}}},
    },
}


@pytest.fixture
def tasks(tmp_path) -> Path:
    """A meta file, its task files, and their gold files (relative to the task files, as the built-in ones)."""
    root = tmp_path / "tasks"
    for domain, tasks_of in TASKS.items():
        for task_id, evaluator in tasks_of.items():
            write_json(root / "examples" / domain / f"{task_id}.json",
                       {"id": task_id, "instruction": f"do {task_id}", "config": [], "evaluator": evaluator})
    write_json(root / "test_all.json", {domain: list(t) for domain, t in TASKS.items()})
    gold = root / "files" / "text-and-sheet"
    gold.mkdir(parents=True)
    (gold / "gold.txt").write_text(GOLD_TEXT)
    xlsx(gold / "gold.xlsx", [["item", "amount"], ["a", 40], ["b", 2]])
    return root / "test_all.json"


class FakeDesktop:
    """A desktop's files by path, as the env server's /file serves them, and a shell that answers `wc -l`."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.asked: list[str] = []

    def get_file(self, path: str) -> bytes | None:
        self.asked.append(path)
        return self.files.get(path)

    def get_vm_desktop_path(self) -> str:
        return "/home/user/Desktop"

    def run_command(self, command, shell: bool = False) -> dict:
        name = command.split()[-1].replace("~", "/home/user")
        lines = len(self.files[name].splitlines()) if name in self.files else 0
        return {"status": "success", "output": f"{lines} {command.split()[-1]}\n", "error": "", "returncode": 0}


class EpisodeEnv:
    """What DesktopEnv.evaluate hands the getters: a cache folder, the task's folder, a controller,
    and the recording context it makes for each evaluation."""

    def __init__(self, cache_dir: Path, task_files_dir: Path, desktop_files: dict[str, bytes],
                 max_bytes: int = MAX_BYTES):
        self.cache_dir = str(cache_dir)
        self.task_dir = str(task_files_dir)
        self.controller = FakeDesktop(desktop_files)
        self.evaluation_context = RecordingContext(LiveContext(self), max_bytes=max_bytes)


def run_episode_end(meta: Path, results: Path, domain: str, task_id: str, desktop_files: dict[str, bytes],
                    last_action: str = "DONE", max_bytes: int = MAX_BYTES, cache_root: Path | None = None):
    """What run_episode does at the end: evaluate (real getters and metrics, recorded), write result.txt
    and status.json, then save the recording. Returns (task folder, score, manifest, env)."""
    task = load_task_set(meta).load(domain, task_id)
    task_dir = results / "pyautogui" / "screenshot" / "gpt-4o" / domain / task_id
    task_dir.mkdir(parents=True)
    started = time.time()
    write_json(task_dir / "status.json", {"status": "running", "started": _iso(started), "steps": 1})
    (task_dir / "traj.jsonl").write_text(json.dumps({"step_num": 1, "action": last_action, "response": "ok"}) + "\n")
    env = EpisodeEnv((cache_root or results.parent / "cache") / task_id, task.task_dir, desktop_files, max_bytes)
    Path(env.cache_dir).mkdir(parents=True, exist_ok=True)
    if task.evaluator["func"] == "infeasible":
        score = 1.0 if last_action == "FAIL" else 0.0
    else:
        score = 0.0 if last_action == "FAIL" else score_task(env, task.evaluator)
    (task_dir / "result.txt").write_text(f"{score}\n")
    manifest = save_rescore_inputs(env, task.config, task_dir)
    write_json(task_dir / "status.json", {"status": "ok", "started": _iso(started), "finished": _iso(time.time()),
                                          "steps": 1})
    return task_dir, score, manifest, env


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).isoformat(timespec="milliseconds")


def book_bytes(tmp_path: Path, rows: list[list]) -> bytes:
    return xlsx(tmp_path / "made" / f"{len(rows)}-{rows[-1][-1]}.xlsx", rows).read_bytes()


def file_reads(manifest: dict) -> dict[str, dict]:
    """{desktop path: recorded answer} of the read_file calls."""
    return {c["args"]["path"]: c["answer"] for c in manifest["calls"] if c["op"] == "read_file"}


def blob_name(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- recorded answers replayed -----------------------------------------------------------------------

def test_rescore_reruns_real_metrics_on_the_recorded_files(tasks, tmp_path):
    good_book = book_bytes(tmp_path, [["item", "amount"], ["a", 40], ["b", 2]])
    task_dir, score, manifest, _ = run_episode_end(tasks, tmp_path / "results", "multi_apps", "text-and-sheet", {
        "/home/user/notes.txt": GOLD_TEXT.encode(), "/home/user/Documents/book.xlsx": good_book})
    assert score == 1.0
    assert manifest["version"] == 2
    assert file_reads(manifest) == {
        "/home/user/notes.txt": {"blob": blob_name(GOLD_TEXT.encode()), "size": len(GOLD_TEXT)},
        "/home/user/Documents/book.xlsx": {"blob": blob_name(good_book), "size": len(good_book)}}
    assert [c["asked_by"] for c in manifest["calls"]] == ["result getter 'vm_file' of metric 'compare_text_file'",
                                                         "result getter 'vm_file' of metric 'compare_table'"]
    saved = task_dir / "rescore" / "files"
    assert (saved / blob_name(good_book)).read_bytes() == good_book
    assert manifest["total_bytes"] == len(GOLD_TEXT) + len(good_book)
    assert manifest["evaluator"] == TASKS["multi_apps"]["text-and-sheet"]
    assert set(manifest["metrics"]) == {"compare_text_file", "compare_table"}
    assert json.loads((task_dir / "rescore" / "manifest.json").read_text()) == manifest

    task = load_task_set(tasks).load("multi_apps", "text-and-sheet")
    assert rescore_task(task_dir, task) == (1.0, 1.0)
    record = json.loads((task_dir / "rescore.json").read_text())
    assert (record["old_score"], record["new_score"], record["changed"], record["rescorable"]) == \
        (1.0, 1.0, False, True)
    assert record["evaluator_changed"] is False and record["rescored_at"]
    assert record["metrics"]["compare_table"]["now"] == record["metrics"]["compare_table"]["when_scored"]
    assert [m["func"] for m in record["evaluation"]["metrics"]] == ["compare_text_file", "compare_table"]

    # the gold file is corrected after the run: the same recorded files now score 0, result.txt keeps the old score
    (tasks.parent / "files" / "text-and-sheet" / "gold.xlsx").unlink()
    xlsx(tasks.parent / "files" / "text-and-sheet" / "gold.xlsx", [["item", "amount"], ["a", 41], ["b", 2]])
    assert rescore_task(task_dir, task) == (1.0, 0.0)
    record = json.loads((task_dir / "rescore.json").read_text())
    assert record["changed"] is True and record["evaluation"]["score"] == 0.0
    assert record["evaluation"]["explanation"]  # the metric's reason for the new 0 is kept
    assert (task_dir / "result.txt").read_text() == "1.0\n"
    assert (saved / blob_name(good_book)).read_bytes() == good_book  # rescoring works on a temporary cache


def test_a_getter_the_evaluation_never_reached_is_recorded_too(tasks, tmp_path):
    """conj "and": the first metric fails, so the evaluation never fetched the sheet; saving runs that
    getter through the recording, and once the text gold is fixed the rescore counts the (correct) sheet."""
    good_book = book_bytes(tmp_path, [["item", "amount"], ["a", 40], ["b", 2]])
    task_dir, score, manifest, env = run_episode_end(tasks, tmp_path / "results", "multi_apps", "text-and-sheet", {
        "/home/user/notes.txt": b"Total: 42\n", "/home/user/Documents/book.xlsx": good_book})
    assert score == 0.0
    assert env.controller.asked == ["/home/user/notes.txt", "/home/user/Documents/book.xlsx"]
    assert file_reads(manifest)["/home/user/Documents/book.xlsx"]["size"] == len(good_book)
    task = load_task_set(tasks).load("multi_apps", "text-and-sheet")
    assert rescore_task(task_dir, task) == (0.0, 0.0)
    (tasks.parent / "files" / "text-and-sheet" / "gold.txt").write_text("Total: 42\n")
    assert rescore_task(task_dir, task) == (0.0, 1.0)


def test_a_file_missing_on_the_desktop_is_recorded_absent_and_still_scores_0(tasks, tmp_path):
    task_dir, score, manifest, _ = run_episode_end(tasks, tmp_path / "results", "chrome", "homepage-json", {})
    assert score == 0.0
    assert file_reads(manifest) == {"/home/user/.config/app/settings.json": {"absent": True}}
    assert list((task_dir / "rescore" / "files").iterdir()) == []
    task = load_task_set(tasks).load("chrome", "homepage-json")
    assert rescore_task(task_dir, task) == (0.0, 0.0)
    assert "found nothing" in json.loads((task_dir / "rescore.json").read_text())["evaluation"]["explanation"]


def test_rule_expected_getter_and_a_changed_rule(tasks, tmp_path):
    settings = json.dumps({"homepage": "http://intranet/"}).encode()
    task_dir, score, _, _ = run_episode_end(tasks, tmp_path / "results", "chrome", "homepage-json",
                                            {"/home/user/.config/app/settings.json": settings})
    assert score == 1.0
    task = load_task_set(tasks).load("chrome", "homepage-json")
    assert rescore_task(task_dir, task) == (1.0, 1.0)
    task.config["evaluator"]["expected"]["rules"]["expect"][0]["ref"] = "http://intranet/home"
    assert rescore_task(task_dir, task) == (1.0, 0.0)
    assert json.loads((task_dir / "rescore.json").read_text())["evaluator_changed"] is True


def test_a_stale_cache_file_of_an_earlier_run_is_not_taken_for_this_one(tasks, tmp_path):
    cache = tmp_path / "cache" / "homepage-json"
    cache.mkdir(parents=True)
    (cache / "settings.json").write_text('{"homepage": "http://intranet/"}')  # an earlier run's fetch
    task_dir, score, manifest, _ = run_episode_end(tasks, tmp_path / "results", "chrome", "homepage-json", {})
    assert score == 0.0  # the desktop has no settings.json: vm_file gave None, the old file was not read
    assert file_reads(manifest) == {"/home/user/.config/app/settings.json": {"absent": True}}
    task = load_task_set(tasks).load("chrome", "homepage-json")
    assert rescore_task(task_dir, task) == (0.0, 0.0)


def test_a_command_the_desktop_ran_is_replayed_from_its_recorded_output(tasks, tmp_path):
    task_dir, score, manifest, _ = run_episode_end(tasks, tmp_path / "results", "os", "count-lines",
                                                   {"/home/user/notes.txt": b"a\nb\nc\n"})
    assert score == 1.0
    assert [(c["op"], c["answer"]["value"]["output"]) for c in manifest["calls"]] == [
        ("run_command", "3 ~/notes.txt\n")]
    task = load_task_set(tasks).load("os", "count-lines")
    task.config["evaluator"]["expected"]["rules"]["include"] = ["4"]
    assert rescore_task(task_dir, task) == (1.0, 0.0)


# -- what cannot be rescored ----------------------------------------------------------------------

def test_a_call_that_was_not_recorded_makes_the_task_not_rescorable(tasks, tmp_path):
    task_dir, _, _, _ = run_episode_end(tasks, tmp_path / "results", "os", "count-lines",
                                        {"/home/user/notes.txt": b"a\nb\nc\n"})
    task = load_task_set(tasks).load("os", "count-lines")
    task.config["evaluator"]["result"]["command"] = "wc -l ~/other.txt"
    with pytest.raises(NotRescorable, match="result getter 'vm_command_line' of metric 'check_include_exclude' asked "
                                            "for run_command\\(command='wc -l ~/other.txt', shell=True\\), which was "
                                            "not recorded"):
        rescore_task(task_dir, task)
    record = json.loads((task_dir / "rescore.json").read_text())
    assert (record["rescorable"], record["old_score"], record["new_score"]) == (False, 1.0, None)
    assert "run_command" in record["reason"]
    assert (task_dir / "result.txt").read_text() == "1.0\n"


def test_size_bound_skips_big_answers_and_the_task_is_then_not_rescorable(tasks, tmp_path):
    big = book_bytes(tmp_path, [["item", "amount"]] + [[f"row {i}", i] for i in range(3000)])
    assert len(big) > 20_000
    task_dir, score, manifest, _ = run_episode_end(tasks, tmp_path / "results", "multi_apps", "text-and-sheet", {
        "/home/user/notes.txt": GOLD_TEXT.encode(), "/home/user/Documents/book.xlsx": big}, max_bytes=20_000)
    assert score == 0.0
    reads = file_reads(manifest)
    assert reads["/home/user/notes.txt"]["size"] == len(GOLD_TEXT)
    assert reads["/home/user/Documents/book.xlsx"] == {"too_large": len(big), "bound": 20_000}
    assert manifest["total_bytes"] == len(GOLD_TEXT)
    assert sorted(p.name for p in (task_dir / "rescore" / "files").iterdir()) == [blob_name(GOLD_TEXT.encode())]
    assert any("book.xlsx" in note and "over the bound" in note for note in manifest["notes"])
    task = load_task_set(tasks).load("multi_apps", "text-and-sheet")
    with pytest.raises(NotRescorable, match="'compare_table'.*book.xlsx.*over the bound on saved files"):
        rescore_task(task_dir, task)


def test_a_task_scored_before_recording_existed_is_not_rescorable(tasks, tmp_path):
    task_dir = tmp_path / "results" / "chrome" / "homepage-json"
    task_dir.mkdir(parents=True)
    (task_dir / "result.txt").write_text("0.0\n")
    task = load_task_set(tasks).load("chrome", "homepage-json")
    with pytest.raises(NotRescorable, match="nothing was recorded"):
        rescore_task(task_dir, task)


def test_a_version_1_manifest_says_to_run_the_task_again(tasks, tmp_path):
    task_dir = tmp_path / "results" / "chrome" / "homepage-json"
    write_json(task_dir / "rescore" / "manifest.json", {"version": 1, "files": [], "evaluator": {}})
    (task_dir / "result.txt").write_text("0.0\n")
    task = load_task_set(tasks).load("chrome", "homepage-json")
    with pytest.raises(NotRescorable, match="made by an older osworld.*re-run the task to rescore it"):
        rescore_task(task_dir, task)


def test_a_path_the_task_did_not_name_when_it_ran_was_not_recorded(tasks, tmp_path):
    settings = json.dumps({"homepage": "http://intranet/"}).encode()
    task_dir, _, _, _ = run_episode_end(tasks, tmp_path / "results", "chrome", "homepage-json",
                                        {"/home/user/.config/app/settings.json": settings})
    task = load_task_set(tasks).load("chrome", "homepage-json")
    task.config["evaluator"]["result"]["path"] = "/home/user/.config/app/other.json"
    with pytest.raises(NotRescorable, match="read_file\\(path='/home/user/.config/app/other.json'\\), which was not"):
        rescore_task(task_dir, task)


def replay_of(tmp_path: Path, calls: list[dict]) -> ReplayContext:
    manifest = {"version": 2, "evaluated_at": "2025-03-07T23:30:00+00:00", "calls": calls}
    return ReplayContext(manifest, tmp_path / "files", tmp_path / "cache", None, {"id": "t"})


def test_an_old_style_getter_reaching_the_env_cannot_be_replayed(tmp_path):
    ctx = replay_of(tmp_path, [{"op": "read_file", "args": {"path": "/home/user/a.txt"}, "answer": {"absent": True}}])
    assert ctx.read_file("/home/user/a.txt") is None
    with pytest.raises(NotRecorded, match="old getter\\(env, config\\) style"):
        ctx.controller.get_file("/home/user/a.txt")
    with pytest.raises(NotRecorded, match="old getter\\(env, config\\) style"):
        ctx.provider.service_endpoint(8080)


def test_chrome_devtools_websockets_are_live_only_but_its_tab_list_and_absence_replay(tmp_path):
    """The DevTools tab list is HTTP through the context (recorded); evaluating JavaScript in a tab is a
    websocket conversation, which is not: a getter that had it cannot be replayed. One that found
    Chrome unreachable (and fell back) replays as it ran."""
    tabs = json.dumps([{"id": "A", "type": "page", "title": "Page A", "url": "http://site/a.html",
                        "webSocketDebuggerUrl": "ws://127.0.0.1:1/devtools/page/A"}]).encode()
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / blob_name(tabs)).write_bytes(tabs)
    tab_list = {"op": "http", "args": {"service": "chrome_devtools", "path": "/json/list", "method": "GET",
                                       "auth": None}, "answer": {"status": 200, "blob": blob_name(tabs)}}
    ctx = replay_of(tmp_path, [tab_list, {"op": "endpoint", "args": {"service": "chrome_devtools"},
                                          "answer": {"live_only": True}}])
    assert chrome.active_url_from_accessTree(ctx, {}) == "http://site/a.html"
    with pytest.raises(NotRecorded, match="chrome_devtools through endpoint\\(\\).*live only") as raised:
        chrome.open_tabs_info(ctx, {})
    asker = str(raised.value).split(" talks to ")[0]
    assert str(raised.value).count(asker) == 1  # said once, not prefixed again by the replay
    unreachable = {**tab_list, "answer": {"unavailable": "port 9222 is not reachable"}}
    assert chrome.open_tabs_info(replay_of(tmp_path, [unreachable]), {}) is None


def test_a_metric_crash_is_an_error_not_a_score(tasks, tmp_path):
    settings = json.dumps({"homepage": "http://intranet/"}).encode()
    task_dir, _, _, _ = run_episode_end(tasks, tmp_path / "results", "chrome", "homepage-json",
                                        {"/home/user/.config/app/settings.json": settings})
    task = load_task_set(tasks).load("chrome", "homepage-json")
    task.config["evaluator"]["expected"]["rules"]["expect"][0]["method"] = "no-such-method"
    with pytest.raises(RescoreError, match="check_json"):
        rescore_task(task_dir, task)
    record = json.loads((task_dir / "rescore.json").read_text())
    assert record["new_score"] is None and "check_json" in record["error"]


# -- infeasible tasks and FAIL, from the trajectory -------------------------------------------------

def test_infeasible_and_fail_are_scored_from_the_last_action(tasks, tmp_path):
    task_dir, score, _, _ = run_episode_end(tasks, tmp_path / "r1", "chrome", "give-up", {}, last_action="FAIL")
    task = load_task_set(tasks).load("chrome", "give-up")
    assert score == 1.0 and rescore_task(task_dir, task) == (1.0, 1.0)
    settings = json.dumps({"homepage": "http://intranet/"}).encode()
    task_dir, score, manifest, _ = run_episode_end(tasks, tmp_path / "r2", "chrome", "homepage-json",
                                                   {"/home/user/.config/app/settings.json": settings},
                                                   last_action="FAIL")
    assert score == 0.0 and manifest["calls"] == []  # FAIL decided it: no getter ran, none was run after
    assert rescore_task(task_dir, load_task_set(tasks).load("chrome", "homepage-json")) == (0.0, 0.0)


def test_relative_dates_resolve_against_the_time_of_the_live_evaluation(tmp_path):
    ctx = replay_of(tmp_path, [])  # evaluated 2025-03-07 23:30 UTC, already the 8th in Tokyo
    config = {"rules": {"relativeTime": {"from": "tomorrow"}, "expected": {"time": "{Year}-{Month0D}-{Day0D}"},
                        "timezone": "Asia/Tokyo"}}
    assert get_getter("rule_relativeTime")(ctx, config)["expected"]["time"] == "2025-03-09"


# -- many folders, and the command ------------------------------------------------------------------

def build_run(tasks: Path, tmp_path: Path) -> Path:
    results = tmp_path / "results"
    good_book = book_bytes(tmp_path, [["item", "amount"], ["a", 40], ["b", 2]])
    run_episode_end(tasks, results, "multi_apps", "text-and-sheet", {
        "/home/user/notes.txt": GOLD_TEXT.encode(), "/home/user/Documents/book.xlsx": good_book})
    run_episode_end(tasks, results, "chrome", "homepage-json", {})
    unrecorded = results / "pyautogui" / "screenshot" / "gpt-4o" / "os" / "count-lines"
    unrecorded.mkdir(parents=True)
    (unrecorded / "result.txt").write_text("1.0\n")
    unknown = results / "pyautogui" / "screenshot" / "gpt-4o" / "os" / "not-a-task"
    unknown.mkdir(parents=True)
    (unknown / "result.txt").write_text("0.0\n")
    return results


def test_rescore_results_over_a_run(tasks, tmp_path):
    results = build_run(tasks, tmp_path)
    rows = {row.task_id: row for row in rescore_results([results], load_task_set(tasks))}
    assert set(rows) == {"text-and-sheet", "homepage-json", "count-lines", "not-a-task"}
    assert (rows["text-and-sheet"].old, rows["text-and-sheet"].new, rows["text-and-sheet"].changed) == (1.0, 1.0, False)
    assert rows["homepage-json"].rescorable and rows["homepage-json"].new == 0.0
    assert not rows["count-lines"].rescorable and "nothing was recorded" in rows["count-lines"].note
    assert rows["not-a-task"].note.startswith("not in ")


def test_cli_prints_old_and_new_side_by_side(tasks, tmp_path):
    results = build_run(tasks, tmp_path)
    (tasks.parent / "files" / "text-and-sheet" / "gold.txt").write_text("total: 43\n")
    result = CliRunner().invoke(rescore_command, [str(results), "--tasks", str(tasks)])
    assert result.exit_code == 0, result.output
    lines = {line.split("\t")[0]: line.split("\t")[1:] for line in result.output.splitlines() if "\t" in line}
    assert lines["multi_apps/text-and-sheet"][:3] == ["1", "0", "yes"]
    assert lines["chrome/homepage-json"][:3] == ["0", "0", "no"]
    assert lines["os/count-lines"][:3] == ["1", "-", "-"] and "nothing was recorded" in lines["os/count-lines"][3]
    assert "2 of 4 task(s) rescored, 1 changed" in result.output
    result = CliRunner().invoke(rescore_command, [str(results), "--tasks", str(tasks), "--json"])
    rows = {r["task_id"]: r for r in json.loads(result.output)}
    assert rows["text-and-sheet"]["changed"] is True and rows["text-and-sheet"]["new"] == 0.0
    assert read_manifest(Path(rows["text-and-sheet"]["task_dir"]))["task_id"] == "text-and-sheet"


def test_cli_with_the_built_in_tasks(tmp_path):
    """Default --tasks: a built-in calc task whose saved result is its own gold workbook scores 1."""
    meta = BUILTIN_ROOT / "test_all.json"
    task = load_task_set(meta).load("libreoffice_calc", "calc-order-line-totals")
    gold = (task.task_dir / task.evaluator["expected"]["path"]).read_bytes()
    task_dir, score, _, _ = run_episode_end(meta, tmp_path / "results", "libreoffice_calc", "calc-order-line-totals",
                                            {task.evaluator["result"]["path"]: gold})
    assert score == 1.0
    result = CliRunner().invoke(rescore_command, [str(tmp_path / "results")])
    assert result.exit_code == 0, result.output
    assert "libreoffice_calc/calc-order-line-totals" in result.output
    assert "1 of 1 task(s) rescored, 0 changed" in result.output
    assert json.loads((task_dir / "rescore.json").read_text())["new_score"] == 1.0


def test_cli_reads_the_task_set_each_run_recorded_and_fails_when_nothing_was_rescored(tasks, tmp_path):
    results = build_run(tasks, tmp_path)
    run_dir = results / "pyautogui" / "screenshot" / "gpt-4o"
    (run_dir / "args.json").write_text(json.dumps({"config": {"tasks": str(tasks), "max_steps": 15}}))
    result = CliRunner().invoke(rescore_command, [str(results)])
    assert result.exit_code == 0 and "2 of 4 task(s) rescored" in result.output
    only_unrecorded = run_dir / "os" / "count-lines"
    result = CliRunner().invoke(rescore_command, [str(only_unrecorded)])
    assert result.exit_code == 1 and "0 of 1 task(s) rescored, 0 changed" in result.output
    assert "summarize --rescored" not in result.output


# -- on a real desktop ------------------------------------------------------------------------------

@pytest.mark.desktop
def test_save_after_a_real_evaluation_then_rescore_offline(tmp_path):
    """A real DesktopEnv scores a task reading a file and GIMP's config (found from the desktop's home);
    the saved files then give the same score with the desktop closed, and a gold fix changes it."""
    task = {"id": "rescore-live", "instruction": "", "config": [], "evaluator": {
        "func": ["check_json", "check_config_status"],
        "result": [{"type": "vm_file", "path": "/home/user/Documents/settings.json", "dest": "settings.json"},
                   {"type": "gimp_config_file", "file_name": "gimprc", "dest": "gimprc"}],
        "expected": [{"type": "rule", "rules": {"expect": [{"key": ["zoom"], "method": "eq", "ref": 2}]}},
                     {"type": "rule", "rules": {"key": "undo-levels", "value": "50"}}]}}
    task_dir = tmp_path / "results" / "pyautogui" / "screenshot" / "m" / "gimp" / "rescore-live"
    task_dir.mkdir(parents=True)
    write_json(task_dir / "status.json", {"status": "running", "started": _iso(time.time())})
    env = DesktopEnv(screen_size=(1024, 768), require_a11y_tree=False, cache_dir=str(tmp_path / "cache"))
    try:
        env.reset(task)
        env.controller.upload_file("/home/user/Documents/settings.json", b'{"zoom": 2}')
        env.controller.upload_file("/home/user/.config/GIMP/2.10/gimprc", b"(undo-levels 50)\n")
        env.step("DONE", pause=0)
        score = env.evaluate()
        manifest = save_rescore_inputs(env, task, task_dir)
    finally:
        env.close()
    (task_dir / "result.txt").write_text(f"{score}\n")
    write_json(task_dir / "status.json", {"status": "ok", "started": _iso(time.time()), "finished": _iso(time.time())})
    assert score == 1.0
    desktop = next(c["answer"]["value"] for c in manifest["calls"] if c["op"] == "desktop_path")
    assert desktop.endswith("/Desktop")
    assert {path: answer["size"] for path, answer in file_reads(manifest).items()} == {
        "/home/user/Documents/settings.json": len(b'{"zoom": 2}'),
        str(Path(desktop).parent / ".config/GIMP/2.10/gimprc"): len(b"(undo-levels 50)\n")}
    assert rescore_task(task_dir, task) == (1.0, 1.0)
    task["evaluator"]["expected"][1]["rules"]["value"] = "60"
    assert rescore_task(task_dir, task) == (1.0, 0.0)


def test_the_wallpaper_the_desktop_gave_is_replayed(tasks, tmp_path):
    """vm_wallpaper writes what the desktop gave to `dest`: the recorded bytes are what the rescore reads."""
    class WallpaperDesktop(FakeDesktop):
        def get_vm_wallpaper(self) -> bytes:
            return GOLD_TEXT.encode()

    task = {"id": "wallpaper", "instruction": "", "config": [], "evaluator": {
        "func": "compare_text_file", "result": {"type": "vm_wallpaper", "dest": "wall.txt"},
        "expected": {"type": "cloud_file", "path": "../../files/text-and-sheet/gold.txt", "dest": "gold.txt"}}}
    task_dir = tmp_path / "results" / "os" / "wallpaper"
    task_dir.mkdir(parents=True)
    env = EpisodeEnv(tmp_path / "cache", tasks.parent / "examples" / "os", {})
    env.controller = WallpaperDesktop({})
    Path(env.cache_dir).mkdir(parents=True)
    assert score_task(env, task["evaluator"]) == 1.0
    (task_dir / "result.txt").write_text("1.0\n")
    manifest = save_rescore_inputs(env, task, task_dir)
    assert [(c["op"], c["answer"]["size"]) for c in manifest["calls"]] == [("wallpaper", len(GOLD_TEXT))]
    assert rescore_task(task_dir, task, task_files_dir=tasks.parent / "examples" / "os") == (1.0, 1.0)


PLUGIN = '''
from desktop_env.evaluators.outcome import MetricResult
from desktop_env.evaluators.registry import getter, metric


@getter("test_plugin_line_count")
def line_count(ctx, config):
    """How many lines a desktop file has; None when it is not there."""
    data = ctx.read_file(config["path"])
    return None if data is None else len(data.decode().splitlines())


@metric("test_plugin_at_least")
def at_least(result, expected):
    ok = result >= expected["min"]
    return MetricResult(float(ok), f"the file has {result} lines, the task wants at least {expected['min']}")
'''


@pytest.mark.desktop
def test_a_plugin_getter_is_rescored_offline_from_a_real_run(tmp_path):
    """A plugin's getter reads a desktop file through the context during a real evaluation; with the
    desktop closed and the task's rule changed, `osworld rescore --plugin` (a fresh process) gives the
    new score and the plugin metric's explanation."""
    plugin = tmp_path / "line_plugin.py"
    plugin.write_text(PLUGIN)
    load_plugin(str(plugin))
    task = {"id": "plugin-lines", "instruction": "write three lines", "config": [], "evaluator": {
        "func": "test_plugin_at_least", "result": {"type": "test_plugin_line_count", "path": "/home/user/notes.txt"},
        "expected": {"type": "rule", "rules": {"min": 3}}}}
    root = tmp_path / "tasks"
    write_json(root / "examples" / "os" / "plugin-lines.json", task)
    write_json(root / "test_all.json", {"os": ["plugin-lines"]})
    task_dir = tmp_path / "results" / "pyautogui" / "screenshot" / "m" / "os" / "plugin-lines"
    task_dir.mkdir(parents=True)
    env = DesktopEnv(screen_size=(1024, 768), require_a11y_tree=False, cache_dir=str(tmp_path / "cache"))
    try:
        env.reset(task, options={"task_dir": str(root / "examples" / "os")})
        env.controller.upload_file("/home/user/notes.txt", b"one\ntwo\nthree\n")
        env.step("DONE", pause=0)
        evaluation = env.evaluate_explained()
        manifest = save_rescore_inputs(env, task, task_dir)
    finally:
        env.close()
    assert (evaluation.score, evaluation.explanation) == (1.0, "the file has 3 lines, the task wants at least 3")
    assert [(c["op"], c["args"], c["asked_by"]) for c in manifest["calls"]] == [
        ("read_file", {"path": "/home/user/notes.txt"},
         "result getter 'test_plugin_line_count' of metric 'test_plugin_at_least'")]
    (task_dir / "result.txt").write_text("1.0\n")
    (task_dir / "traj.jsonl").write_text(json.dumps({"step_num": 1, "action": "DONE"}) + "\n")
    write_json(task_dir / "status.json", {"status": "ok", "started": _iso(time.time()), "finished": _iso(time.time())})

    task["evaluator"]["expected"]["rules"]["min"] = 4
    write_json(root / "examples" / "os" / "plugin-lines.json", task)
    done = subprocess.run([sys.executable, "-m", "osworld_cli.main", "rescore", str(tmp_path / "results"),
                           "--tasks", str(root / "test_all.json"), "--plugin", str(plugin), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    assert (row["old"], row["new"], row["changed"], row["rescorable"]) == (1.0, 0.0, True, True)
    assert row["explanation"] == "the file has 3 lines, the task wants at least 4"
    record = json.loads((task_dir / "rescore.json").read_text())
    assert record["evaluation"]["metrics"][0]["explanation"] == "the file has 3 lines, the task wants at least 4"
