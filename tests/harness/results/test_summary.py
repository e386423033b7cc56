"""`osworld summarize` on a hand-made results tree: exact figures, errors kept apart."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from osworld_harness.results.report import recorded_table
from osworld_harness.results.summary import (
    find_runs,
    recorded_disagreement_lines,
    run_heading,
    summarize_run,
    table_rows,
    to_csv,
    to_json,
    to_markdown,
)


def task(root: Path, domain: str, task_id: str, score: float | None = None, status: str | None = "ok",
         steps: int = 3, seconds: int = 10, usage: dict | None = None, osworld_style: bool = False) -> None:
    folder = root / "pyautogui" / "screenshot" / "gpt-4o" / domain / task_id
    folder.mkdir(parents=True)
    if score is not None:
        (folder / "result.txt").write_text(f"{score}\n")
    if osworld_style:
        (folder / "traj.jsonl").write_text("\n".join(json.dumps({"step_num": n}) for n in range(1, steps + 1)))
        return
    record: dict = {"status": status, "steps": steps, "started": "2026-01-01T10:00:00+00:00",
              "finished": f"2026-01-01T10:00:{seconds:02d}+00:00"}
    if status == "error":
        record["error"] = {"type": "RuntimeError", "message": "model API 500"}
    if usage:
        record["usage"] = usage
    (folder / "status.json").write_text(json.dumps(record))


def build(root: Path) -> None:
    task(root, "libreoffice_calc", "a", 1.0, usage={"input_tokens": 100, "output_tokens": 10, "cost_usd": 0.01})
    task(root, "libreoffice_calc", "b", 0.0, usage={"input_tokens": 50, "output_tokens": 5, "cost_usd": 0.005})
    task(root, "libreoffice_calc", "c", None, status="error", steps=1, seconds=4)
    task(root, "libreoffice_writer", "d", 0.5, steps=5, seconds=20)
    task(root, "os", "e", 1.0, osworld_style=True, steps=2)
    task(root, "os", "f", None, status="running")


def by_name(rows):
    return {row.name: row for row in rows}


def test_per_domain_category_and_overall_figures(tmp_path):
    build(tmp_path)
    (run,) = find_runs(tmp_path)
    rows = by_name(summarize_run(run))
    calc = rows["libreoffice_calc"]
    assert (calc.tasks, calc.finished, calc.successes, calc.errors) == (3, 2, 1.0, 1)
    assert calc.success_rate == 0.5 and calc.success_rate_errors_as_zero == 1 / 3
    assert calc.avg_steps == round((3 + 3 + 1) / 3, 2) and calc.avg_seconds == 8.0
    assert (calc.input_tokens, calc.output_tokens, calc.cost_usd) == (150, 15, 0.015)
    office = rows["Office"]
    assert (office.tasks, office.finished, office.successes, office.errors) == (4, 3, 1.5, 1)
    assert office.success_rate == 0.5
    os_row = rows["os"]
    assert (os_row.tasks, os_row.finished, os_row.successes, os_row.incomplete, os_row.errors) == (2, 1, 1.0, 1, 0)
    assert os_row.avg_steps == 2  # read from OSWorld's traj.jsonl
    overall = rows["Overall"]
    assert (overall.tasks, overall.finished, overall.successes, overall.errors, overall.incomplete) == (6, 4, 2.5, 1, 1)
    assert overall.success_rate == 2.5 / 4 and overall.success_rate_errors_as_zero == 2.5 / 5
    assert list(rows) == ["libreoffice_calc", "libreoffice_writer", "os", "OS", "Office", "Overall"]


def test_formats_carry_the_same_figures(tmp_path):
    build(tmp_path)
    summaries = [(run, summarize_run(run)) for run in find_runs(tmp_path)]
    data = json.loads(to_json(summaries))
    overall = data["runs"][0]["groups"][-1]
    assert overall["name"] == "Overall" and (overall["score"], overall["score_without_errors"]) == (0.5, 0.625)
    assert overall["score_low"] < 0.5 < overall["score_high"] and overall["errors"] == 1
    markdown = to_markdown(summaries)
    assert "| Overall | 6 | 6 | 50.0% | " in markdown and " | 1 | 62.5% | 1 | " in markdown
    assert to_csv(summaries).splitlines()[0].startswith("run,path,step_budgets,name,tasks")


def test_json_and_csv_list_each_tasks_status_and_score_after_the_groups(tmp_path):
    build(tmp_path)
    summaries = [(run, summarize_run(run)) for run in find_runs(tmp_path)]
    tasks = json.loads(to_json(summaries))["runs"][0]["tasks"]
    assert [(t["domain"], t["task_id"], t["trial"], t["status"], t["score"]) for t in tasks] == [
        ("libreoffice_calc", "a", 1, "ok", 1.0), ("libreoffice_calc", "b", 1, "ok", 0.0),
        ("libreoffice_calc", "c", 1, "error", None), ("libreoffice_writer", "d", 1, "ok", 0.5),
        ("os", "e", 1, "ok", 1.0), ("os", "f", 1, "incomplete", None)]
    rows = list(csv.DictReader(io.StringIO(to_csv(summaries))))
    assert [(r["kind"], r["name"]) for r in rows[:6]] == [
        ("domain", "libreoffice_calc"), ("domain", "libreoffice_writer"), ("domain", "os"), ("category", "OS"),
        ("category", "Office"), ("overall", "Overall")]
    assert [(r["kind"], r["name"], r["task_id"], r["status"], r["score"]) for r in rows[6:]] == [
        ("task", "libreoffice_calc", "a", "ok", "1.0"), ("task", "libreoffice_calc", "b", "ok", "0.0"),
        ("task", "libreoffice_calc", "c", "error", ""), ("task", "libreoffice_writer", "d", "ok", "0.5"),
        ("task", "os", "e", "ok", "1.0"), ("task", "os", "f", "incomplete", "")]


def test_two_runs_side_by_side(tmp_path):
    build(tmp_path)
    other = tmp_path / "pyautogui" / "a11y_tree" / "claude" / "os" / "x"
    other.mkdir(parents=True)
    (other / "result.txt").write_text("1.0\n")
    summaries = [(run, summarize_run(run)) for run in find_runs(tmp_path)]
    assert len(summaries) == 2
    assert "side by side" in to_markdown(summaries)


def trial(root: Path, task_id: str, k: int, score: float | None, sha: str = "f" * 64, cost: float | None = None,
          domain: str = "os", model: str = "m") -> None:
    folder = root / "pyautogui" / "screenshot" / model / domain / task_id
    folder = folder / "trials" / str(k) if k > 1 else folder
    folder.mkdir(parents=True)
    record: dict = {"format": 2, "status": "ok" if score is not None else "error", "task_id": task_id, "trial": k,
                    "task_sha256": sha, "steps": 1}
    if score is None:
        record["error"] = {"type": "LLMError", "message": "HTTP 500"}
    else:
        (folder / "result.txt").write_text(f"{score}\n")
    if cost is not None:
        record["usage"] = {"input_tokens": 1000, "output_tokens": 100, "cost_usd": cost}
    (folder / "status.json").write_text(json.dumps(record))


def test_trials_give_pass_at_k_pass_hat_k_and_the_tasks_that_flip(tmp_path):
    for k, scores in enumerate(([1.0, 0.0, 1.0], [1.0, 0.0, 0.0]), start=1):
        for task_id, score in zip(("solid", "never", "flaky"), scores, strict=True):
            trial(tmp_path, task_id, k, score)
    (run,) = find_runs(tmp_path)
    overall = by_name(summarize_run(run))["Overall"]
    assert (overall.tasks, overall.trials, overall.k) == (3, 6, 2)
    assert overall.success_rate_errors_as_zero == (1 + 0 + 0.5) / 3
    assert (overall.pass_at_k, overall.pass_all_k, overall.flips) == (2 / 3, 1 / 3, 1 / 3)
    markdown = to_markdown([(run, summarize_run(run))])
    assert "| pass@2 | pass^2 | flips |" in markdown and "| 66.7% | 33.3% | 33.3% |" in markdown


def test_an_errored_trial_counts_as_zero_first_and_is_left_out_second(tmp_path):
    trial(tmp_path, "t1", 1, 1.0)
    trial(tmp_path, "t1", 2, None)
    trial(tmp_path, "t2", 1, None)
    (run,) = find_runs(tmp_path)
    overall = by_name(summarize_run(run))["Overall"]
    assert overall.success_rate_errors_as_zero == (0.5 + 0) / 2 and overall.errors == 2
    assert overall.success_rate == 1.0 and overall.score_without_errors.tasks == 1


def test_the_task_set_hash_changes_with_a_task_file_and_marks_tasks_without_one(tmp_path):
    def hash_of(root: Path) -> str:
        (run,) = find_runs(root)
        return str(by_name(summarize_run(run))["Overall"].task_set)

    for name, sha in (("same", "a" * 64), ("again", "a" * 64), ("edited", "b" * 64)):
        trial(tmp_path / name, "t1", 1, 1.0, sha=sha)
    assert hash_of(tmp_path / "same") == hash_of(tmp_path / "again") != hash_of(tmp_path / "edited")
    osworld_task = tmp_path / "same" / "pyautogui" / "screenshot" / "m" / "os" / "osworld-task"
    osworld_task.mkdir(parents=True)
    (osworld_task / "result.txt").write_text("1.0\n")  # OSWorld's folder: no task hash
    assert hash_of(tmp_path / "same").endswith("*")
    (run,) = find_runs(tmp_path / "same")
    assert "1 task(s) ran without a task hash recorded" in run_heading(run, summarize_run(run))


def test_the_step_budget_is_read_from_args_json(tmp_path):
    trial(tmp_path, "t1", 1, 1.0)
    model_dir = tmp_path / "pyautogui" / "screenshot" / "m"
    runs = [{"config": {"max_steps": 15}}, {"config": {"max_steps": 30}, "forced": []}]
    (model_dir / "args.json").write_text(json.dumps({"config": {"max_steps": 30}, "runs": runs}))
    (run,) = find_runs(tmp_path)
    assert run.step_budgets == [15, 30]
    assert "step budget 15, 30 (runs with different budgets mixed by --force)" in run_heading(run, summarize_run(run))
    (model_dir / "args.json").write_text(json.dumps({"max_steps": 50, "model": "m"}))  # OSWorld's own args.json
    assert find_runs(tmp_path)[0].step_budgets == [50]


def test_cost_per_task_and_per_success_when_every_trial_reported_its_cost(tmp_path):
    trial(tmp_path, "t1", 1, 1.0, cost=0.03)
    trial(tmp_path, "t2", 1, 0.0, cost=0.01)
    trial(tmp_path, "t3", 1, None, cost=0.02)  # an error costs too
    (run,) = find_runs(tmp_path)
    overall = by_name(summarize_run(run))["Overall"]
    assert overall.cost_usd == pytest.approx(0.06)
    assert overall.cost_per_task == pytest.approx(0.02) and overall.cost_per_success == pytest.approx(0.06)
    trial(tmp_path, "t4", 1, 1.0)  # no cost reported: the per-task figures would be a guess
    (run,) = find_runs(tmp_path)
    overall = by_name(summarize_run(run))["Overall"]
    assert overall.cost_usd == pytest.approx(0.06) and overall.cost_per_task is None


def test_a_replay_puts_the_score_where_it_was_recorded_beside_this_ones(tmp_path):
    for task_id, here, there in (("kept", 1.0, 1.0), ("lost", 0.0, 1.0), ("lenient", 1.0, 0.0), ("partial", 0.5, 0.9)):
        task(tmp_path, "os", task_id, here)
        status_file = tmp_path / "pyautogui" / "screenshot" / "gpt-4o" / "os" / task_id / "status.json"
        status_file.write_text(json.dumps({**json.loads(status_file.read_text()), "recorded_score": there}))
    task(tmp_path, "os", "broke", None, status="error")
    broke = tmp_path / "pyautogui" / "screenshot" / "gpt-4o" / "os" / "broke" / "status.json"
    broke.write_text(json.dumps({**json.loads(broke.read_text()), "recorded_score": 1.0}))
    (run,) = find_runs(tmp_path)
    overall = by_name(summarize_run(run))["Overall"]
    assert (overall.recorded, overall.recorded_trials, overall.recorded_disagree) == (0.78, 5, 3)
    header, body = table_rows(summarize_run(run))
    assert header[-2:] == ["score where recorded", "ended otherwise"] and body[-1][-2:] == ["78.0%", "3/5"]
    assert recorded_disagreement_lines(run) == [
        "3 replayed task(s) ended otherwise than where they were recorded:",
        "  os/broke: 1 where recorded, error here", "  os/lenient: 0 where recorded, 1 here",
        "  os/lost: 1 where recorded, 0 here"]
    assert "os/lost" in recorded_table(run) and "score where recorded" in recorded_table(run)


def test_runs_that_replayed_nothing_show_no_recorded_columns(tmp_path):
    build(tmp_path)
    (run,) = find_runs(tmp_path)
    header, _ = table_rows(summarize_run(run))
    assert "score where recorded" not in header and recorded_disagreement_lines(run) == []
