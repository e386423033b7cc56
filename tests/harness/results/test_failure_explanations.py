"""`osworld summarize --failures` and the report say why each task failed: the explanation the
evaluation left in status.json (here, compare_table's on two real workbooks differing in one cell);
old folders and OSWorld's say that none was recorded; errors show their error."""
from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from openpyxl.worksheet.worksheet import Worksheet

from desktop_env.evaluators.outcome import Evaluation, MetricPart
from desktop_env.evaluators.scoring import MetricCall, call_metric
from osworld_cli.main import cli
from osworld_harness.results.report import build_report
from osworld_harness.results.summary import NO_EXPLANATION, failures, find_runs

RUN = ("pyautogui", "screenshot", "noop")


def workbook(path: Path, b3: object) -> str:
    book = openpyxl.Workbook()
    sheet = book.active
    assert isinstance(sheet, Worksheet)  # a new workbook's one sheet
    sheet.append(["name", "salary"])
    sheet.append(["Ada", 5200])
    sheet.append(["Linus", b3])
    book.save(path)
    return str(path)


def task_folder(root: Path, domain: str, task_id: str) -> Path:
    folder = root.joinpath(*RUN, domain, task_id)
    folder.mkdir(parents=True)
    return folder


def finished(folder: Path, score: float, evaluation: Evaluation | None) -> None:
    (folder / "result.txt").write_text(f"{score}\n")
    status = {"status": "ok", "steps": 1, "started": "2026-01-01T10:00:00+00:00",
              "finished": "2026-01-01T10:00:05+00:00"}
    if evaluation is not None:
        status["evaluation"] = evaluation.to_json()
    (folder / "status.json").write_text(json.dumps(status))


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    files = tmp_path / "files"
    files.mkdir()
    gold = workbook(files / "gold.xlsx", 6100)
    call = MetricCall("compare_table", {"type": "vm_file"}, {"type": "cloud_file"},
                      {"rules": [{"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0"}]})
    for task_id, salary in (("wrong-cell", 6000), ("right", 6100)):
        outcome = call_metric(call, workbook(files / f"{task_id}.xlsx", salary), gold)
        evaluation = Evaluation(outcome.score, outcome.explanation,
                                (MetricPart("compare_table", outcome.score, outcome.explanation),))
        finished(task_folder(root, "libreoffice_calc", task_id), outcome.score, evaluation)
    finished(task_folder(root, "libreoffice_calc", "old-run"), 0.0, None)  # written before explanations
    errored = task_folder(root, "os", "crashed")
    (errored / "status.json").write_text(json.dumps({"status": "error", "error": {
        "type": "EvaluationError", "message": "result getter 'vm_file' failed: the desktop went away"}}))
    return root


def test_failures_carry_the_metrics_explanation_of_the_differing_cell(results):
    (run,) = find_runs(results)
    listed = {f.task_id: f for f in failures(run)}
    assert set(listed) == {"wrong-cell", "old-run", "crashed"}  # "right" scored 1
    wrong = listed["wrong-cell"]
    assert (wrong.outcome, wrong.score) == ("fail", 0.0)
    assert "B3" in wrong.explanation and "6000" in wrong.explanation and "6100" in wrong.explanation
    assert listed["old-run"].explanation == NO_EXPLANATION
    assert (listed["crashed"].outcome, listed["crashed"].score) == ("error", None)
    assert "the desktop went away" in listed["crashed"].explanation


def test_summarize_failures_prints_each_failed_task_with_why(results):
    shown = CliRunner().invoke(cli, ["summarize", "--failures", str(results)], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert "failures (3)" in shown.output
    assert "libreoffice_calc/wrong-cell" in shown.output and "cell B3 6000 vs expected 6100" in shown.output
    assert NO_EXPLANATION in shown.output and "EvaluationError" in shown.output
    assert "libreoffice_calc/right" not in shown.output
    plain = CliRunner().invoke(cli, ["summarize", str(results)])
    assert plain.exit_code == 0 and "wrong-cell" not in plain.output


def test_summarize_failures_in_markdown_and_json(results):
    markdown = CliRunner().invoke(cli, ["summarize", "--failures", "--format", "markdown", str(results)])
    row = next(line for line in markdown.output.splitlines() if "wrong-cell" in line)
    assert "| fail | 0 |" in row and "cell B3 6000 vs expected 6100" in row
    data = json.loads(CliRunner().invoke(cli, ["summarize", "--failures", "--format", "json", str(results)]).output)
    by_id = {f["task_id"]: f for f in data["failures"]}
    assert "cell B3" in by_id["wrong-cell"]["explanation"] and by_id["old-run"]["explanation"] == NO_EXPLANATION
    assert data["runs"][0]["groups"]  # the summary itself is still there


def test_the_report_shows_why_beside_each_failed_task(results, tmp_path):
    page = build_report([results], tmp_path / "report.html").read_text()
    assert "<th>why</th>" in page
    row = next(line for line in page.split("<tr ") if 'data-id="wrong-cell"' in line)
    assert "cell B3 6000 vs expected 6100" in row
    old = next(line for line in page.split("<tr ") if 'data-id="old-run"' in line)
    assert NO_EXPLANATION in old
    assert "<h3>evaluation</h3>" in page  # each task's details keep the evaluation too
