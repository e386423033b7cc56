"""One output vocabulary: `--format table|markdown|json|csv|tsv` on every command that prints a table, the old
flags (`--markdown`, `--json`, `--json FILE`) kept as deprecated aliases; and piped, a table is plain
tab-separated lines, neither padded to its widest row nor cut."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from desktop_env.providers.local.doctor import run_checks
from desktop_env.tasks import load_task_set
from osworld_cli.errors import TASK_ERRORS
from osworld_cli.main import cli
from osworld_cli.output import FORMATS
from tests.file_server import FileServer

from .test_task_scope import ran

ROOT = Path(__file__).resolve().parents[3]
IDS = [task_id for _, task_id in load_task_set(None).select()]
TABLE_COMMANDS = [["tasks", "list"], ["tasks", "coverage"], ["plugins"], ["summarize"], ["compare"], ["rescore"],
                  ["env", "prune"], ["env", "bench"], ["env", "doctor"], ["tasks", "validate"], ["tasks", "prefetch"],
                  ["verify"]]


def invoke(*args: str) -> str:
    done = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.output


@pytest.mark.parametrize("command", TABLE_COMMANDS, ids=" ".join)
def test_every_table_command_offers_the_same_formats(command):
    shown = " ".join(CliRunner().invoke(cli, [*command, "--help"], terminal_width=200).output.split())
    assert f"--format [{'|'.join(FORMATS)}]" in shown


@pytest.mark.parametrize("fmt", FORMATS[1:])
def test_the_task_list_in_each_format_has_every_id(fmt):
    out = invoke("tasks", "list", "--format", fmt)
    if fmt == "json":
        ids = [t["id"] for t in json.loads(out)]
    elif fmt == "markdown":
        ids = [line.split(" | ")[1] for line in out.splitlines()[2:]]
    else:
        rows = list(csv.reader(io.StringIO(out), delimiter="," if fmt == "csv" else "\t"))
        ids = [row[1] for row in rows[1:]]
    assert ids == IDS


def test_summarize_and_compare_give_tsv(tmp_path):
    a, b = ran(tmp_path / "a", domains=["os"]), ran(tmp_path / "b", domains=["os"])
    summary = [line.split("\t") for line in invoke("summarize", "--format", "tsv", str(a)).splitlines()]
    as_csv = list(csv.reader(io.StringIO(invoke("summarize", "--format", "csv", str(a)))))
    assert summary == as_csv and summary[0][0] == "run"
    compared = invoke("compare", "--format", "csv", str(a), str(b)).splitlines()
    assert compared[0].startswith("group,") and any(line.startswith("Overall,") for line in compared)


def write_task(root: Path, task_id: str, task: dict) -> Path:
    path = root / "examples" / "os" / f"{task_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": task_id, "instruction": "Do it.", **task}))
    return path


def results_of(*args: str) -> tuple[int, str]:
    """The exit status and stdout alone (progress goes to stderr in the formats other than table)."""
    done = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return done.exit_code, done.stdout


def test_tasks_validate_gives_a_row_per_finding_and_the_summary_in_json(tmp_path):
    write_task(tmp_path, "unknown", {"evaluator": {"func": "no_such_metric"}})
    write_task(tmp_path, "fine", {"evaluator": {"func": "infeasible"}})
    (tmp_path / "examples" / "os" / "cut.json").write_text('{"id": "cut", "instru')
    status, out = results_of("tasks", "validate", str(tmp_path), "--format", "tsv")
    assert status == TASK_ERRORS
    header, *rows = [line.split("\t") for line in out.splitlines()]
    assert header == ["category", "file", "field", "value", "kind", "reason"]
    assert sorted((row[0], Path(row[1]).name, row[3]) for row in rows) == [
        ("broken", "cut.json", ""), ("unknown name", "unknown.json", "no_such_metric")]
    status, out = results_of("tasks", "validate", str(tmp_path), "--format", "json")
    found = json.loads(out)
    assert status == TASK_ERRORS and found["summary"]["files"] == 3 and found["summary"]["valid"] == 1
    assert found["summary"]["broken"] == 1 and found["summary"]["unknown names"] == 1
    assert [f["field"] for f in found["findings"] if f["category"] == "unknown name"] == ["evaluator.func"]
    status, out = results_of("tasks", "validate", str(tmp_path), "--format", "csv", "--quiet")
    assert list(csv.reader(io.StringIO(out)))[1][:3] == ["3", "1", "1"]


def test_tasks_prefetch_gives_a_row_per_file_and_keeps_its_progress_off_stdout(tmp_path):
    with FileServer({"/files/notes.txt": b"some notes\n"}) as server:
        write_task(tmp_path, "notes", {"config": [{"type": "download", "parameters": {"files": [
            {"url": f"{server.url}/files/notes.txt", "path": "/home/user/notes.txt"},
            {"url": f"{server.url}/files/gone.txt", "path": "/home/user/gone.txt"}]}}],
            "evaluator": {"func": "infeasible"}})
        cache = str(tmp_path / "cache")
        status, out = results_of("tasks", "prefetch", str(tmp_path / "examples"), "--cache-dir", cache, "--format",
                                 "json")
        assert status == TASK_ERRORS  # gone.txt is a 404
        fetched = json.loads(out)  # stdout is the JSON alone
        assert fetched["counts"] == {"files": 2, "fetched": 1, "already in the cache": 0,
                                     "copied from another task": 0, "failed": 1}
        assert {(f["url"].rsplit("/", 1)[1], f["status"]) for f in fetched["files"]} == {("notes.txt", "fetched"),
                                                                                         ("gone.txt", "failed")}
        status, out = results_of("tasks", "prefetch", str(tmp_path / "examples"), "--cache-dir", cache, "--format",
                                 "csv")
    rows = {row[4].rsplit("/", 1)[-1]: row for row in csv.reader(io.StringIO(out))}
    assert rows["url"][:3] == ["status", "domain", "task"]
    assert rows["notes.txt"][:3] == ["cached", "os", "notes"] and rows["gone.txt"][0] == "failed"
    assert "HTTP 404" in rows["gone.txt"][6]


def test_verify_gives_a_row_per_task_and_each_verdict_in_json(tmp_path):
    write_task(tmp_path, "t", {"evaluator": {"func": "nope"}})  # cannot run: both runs record an error, no desktop
    (tmp_path / "test_all.json").write_text(json.dumps({"os": ["t"]}))
    args = ["verify", "--tasks", str(tmp_path / "test_all.json"), "--result-dir", str(tmp_path / "results")]
    status, out = results_of(*args, "--format", "tsv")
    assert status == TASK_ERRORS
    header, row = [line.split("\t") for line in out.splitlines()]
    assert header == ["domain", "id", "reference", "noop", "sound", "free pass", "error"]
    assert row[:6] == ["os", "t", "-", "-", "no", "no"] and "InvalidTask" in row[6]
    status, out = results_of(*args, "--format", "json")
    verdicts = json.loads(out)
    assert verdicts["domains"] == [{"domain": "os", "tasks": 1, "sound": 0, "not sound": 1}]
    assert [(v["task_id"], v["sound"], v["reference_score"]) for v in verdicts["tasks"]] == [("t", False, None)]


def test_the_old_flags_still_work_and_say_they_are_deprecated(tmp_path):
    meta = str(ROOT / "evaluation_examples" / "test_all.json")
    assert invoke("tasks", "coverage", meta, "--markdown") == invoke("tasks", "coverage", meta, "--format", "markdown")
    out = tmp_path / "c.json"
    invoke("tasks", "coverage", meta, "--json", str(out))
    assert json.loads(out.read_text()) == json.loads(invoke("tasks", "coverage", meta, "--format", "json"))
    helped = " ".join(invoke("tasks", "coverage", "--help").split())
    assert "--markdown Deprecated: use --format markdown" in helped
    assert "Deprecated: use --format json > FILE" in helped
    assert "Deprecated: use --format json" in " ".join(invoke("env", "prune", "--help").split())


def test_a_piped_table_is_neither_padded_nor_cut():
    def piped(*args: str) -> list[str]:
        done = subprocess.run([sys.executable, "-m", "osworld_cli.main", *args], capture_output=True, text=True,
                              cwd=ROOT, timeout=300)
        return done.stdout.splitlines()

    listed = piped("tasks", "list")
    assert listed[1] == "domain\tid\tinstruction" and [line.split("\t")[1] for line in listed[2:]] == IDS
    assert all(line == line.rstrip() for line in listed)  # the title and every row as long as it is
    doctor = piped("env", "doctor")
    fixes = {line.split("\t")[0]: line.split("\t")[3] for line in doctor[1:]}
    assert fixes == {check.name: check.fix for check in run_checks()}
