"""The experiment tables from hand-made results trees: exact figures, errors apart, missing shown as missing."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from osworld_harness.experiments import paper_tables
from osworld_harness.experiments.paper_tables import (
    HISTORY,
    MAIN,
    PERTURBATION,
    analysis_cells,
    check_settings,
    collect,
    history_settings,
    main_cells,
    perturbation_settings,
    to_csv,
    to_markdown,
)
from osworld_harness.results.settings import SettingsMismatch

SELECTION = {"os": ["os-a", "os-b"], "libreoffice_calc": ["calc-c", "calc-d"], "chrome": ["chrome-e"],
             "multi_apps": ["multi-f"]}


@pytest.fixture
def meta(tmp_path) -> str:
    path = tmp_path / "tasks" / "test_mini.json"
    path.parent.mkdir()
    path.write_text(json.dumps(SELECTION))
    return str(path)


def finished(task_dir: Path, score: float | None, status: str = "ok") -> None:
    task_dir.mkdir(parents=True)
    record = {"status": status, "steps": 2}
    if status == "error":
        record["error"] = {"type": "LLMError", "message": "HTTP 500 from the model API"}
    if score is not None:
        (task_dir / "result.txt").write_text(f"{score}\n")
    (task_dir / "status.json").write_text(json.dumps(record))


def record_settings(config, **changes) -> Path:
    """args.json as a run made with `config` changed by `changes` writes it."""
    path = config.layout.model_dir / "args.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"config": asdict(replace(config, **changes).resolved())}))
    return path


def counts(row: dict[str, str], group: str) -> list[str]:
    return [row[f"{group} {column}"] for column in ("rate %", "scored", "errors", "missing", "tasks")]


def rows_of(markdown: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in markdown.splitlines()
            if line.startswith("| ") and not line.startswith("| Model")]


def test_main_table_counts_errors_apart_and_shows_missing_tasks_and_runs(tmp_path, meta):
    cells = main_cells(["gpt-4o"], ["screenshot", "a11y_tree"], tmp_path / "results", {"tasks": meta})
    run = cells[1].config.layout  # the paper's order puts a11y_tree first whatever order they were given in
    finished(run.task_dir("os", "os-a"), 1.0)
    finished(run.task_dir("os", "os-b"), 0.0)
    finished(run.task_dir("libreoffice_calc", "calc-c"), None, status="error")
    finished(run.task_dir("libreoffice_calc", "calc-d"), 0.5)
    finished(run.task_dir("chrome", "chrome-e"), None, status="running")  # cut off: not finished
    finished(run.model_dir / "os" / "os-not-selected", 1.0)  # from an earlier, larger run: not in this table

    selection = paper_tables.selected_tasks(cells[0].config)
    results = [collect(cell, selection) for cell in cells]
    markdown = to_markdown(MAIN, results)

    assert [c.observation_type for c in cells] == ["a11y_tree", "screenshot"]
    assert rows_of(markdown) == [
        ["gpt-4o", "A11y tree", "- (0) · 2 missing", "- (0) · 2 missing", "- (0) · 1 missing", "n/a",
         "- (0) · 1 missing", "- (0) · 6 missing"],
        ["gpt-4o", "Screenshot", "50.0% (2)", "50.0% (1) · 1 err", "- (0) · 1 missing", "n/a",
         "- (0) · 1 missing", "50.0% (3) · 1 err · 2 missing"],
    ]
    assert markdown.splitlines()[2] == ("| Model | Observation | OS | Office | Daily | Professional | Workflow "
                                        "| Overall |")


def test_main_table_csv_has_every_count_of_every_cell(tmp_path, meta):
    cells = main_cells(["gpt-4o"], ["screenshot"], tmp_path, {"tasks": meta, "domains": ["os", "libreoffice_calc"]})
    layout = cells[0].config.layout
    finished(layout.task_dir("os", "os-a"), 1.0)
    finished(layout.task_dir("libreoffice_calc", "calc-c"), None, status="error")
    finished(layout.task_dir("libreoffice_calc", "calc-d"), 0.0)

    results = [collect(cells[0], paper_tables.selected_tasks(cells[0].config))]
    (row,) = csv.DictReader(io.StringIO(to_csv(MAIN, results)))

    assert (row["model"], row["observation_type"]) == ("gpt-4o", "screenshot")
    assert counts(row, "OS") == ["100.0", "1", "0", "1", "2"]
    assert counts(row, "Office") == ["0.0", "1", "1", "0", "2"]
    assert counts(row, "Daily") == ["", "0", "0", "0", "0"]
    assert counts(row, "Overall") == ["50.0", "2", "1", "1", "4"]


def test_perturbation_drop_is_measured_on_the_tasks_scored_in_both_runs(tmp_path, meta):
    options = {"tasks": meta, "domains": ["os", "libreoffice_calc"]}
    cells = analysis_cells(PERTURBATION, perturbation_settings(["layout"]), ["gpt-4o"], ["screenshot"], tmp_path,
                           options)
    baseline, layout = cells
    assert (baseline.setting, baseline.reuses_main, layout.setting) == ("none", True, "layout")
    assert Path(baseline.config.result_dir) == tmp_path / "main"
    assert Path(layout.config.result_dir) == tmp_path / "perturb" / "layout" and layout.config.perturb == "layout"
    for task_id, score in (("os-a", 1.0), ("os-b", 1.0), ("calc-c", 0.0)):
        domain = "os" if task_id.startswith("os") else "libreoffice_calc"
        finished(baseline.config.layout.task_dir(domain, task_id), score)
    finished(layout.config.layout.task_dir("os", "os-a"), 1.0)
    finished(layout.config.layout.task_dir("os", "os-b"), 0.0)
    finished(layout.config.layout.task_dir("libreoffice_calc", "calc-c"), None, status="error")

    results = [collect(cell, paper_tables.selected_tasks(cell.config)) for cell in cells]
    markdown = to_markdown(PERTURBATION, results)
    (_, layout_row) = list(csv.DictReader(io.StringIO(to_csv(PERTURBATION, results))))

    # os-a and os-b were scored in both: 100% before, 50% after; calc-c errored, so it is not compared
    assert [row[-1] for row in rows_of(markdown)] == ["baseline", "+50.0 pp (2)"]
    assert (layout_row["drop vs none pp"], layout_row["paired tasks"]) == ("50.0", "2")
    assert rows_of(markdown)[1][2:4] == ["layout", "50.0% (2)"]


def test_the_baseline_reuses_the_main_runs_only_when_they_were_made_with_the_same_settings(tmp_path, meta):
    (main,) = main_cells(["gpt-4o"], ["screenshot"], tmp_path, {"tasks": meta, "max_steps": 15})
    record_settings(main.config, agent_args={"base_url": "http://elsewhere/v1"})  # where it ran is no setting

    same = analysis_cells(HISTORY, history_settings(["3"], 15), ["gpt-4o"], ["screenshot"], tmp_path,
                          {"tasks": meta, "max_steps": 15})
    other = analysis_cells(HISTORY, history_settings(["3"], 30), ["gpt-4o"], ["screenshot"], tmp_path,
                           {"tasks": meta, "max_steps": 30})

    assert same[0].reuses_main and Path(same[0].config.result_dir) == tmp_path / "main"
    assert not other[0].reuses_main and Path(other[0].config.result_dir) == tmp_path / "history" / "3"


def test_a_folder_holding_runs_of_other_settings_is_refused(tmp_path, meta):
    (cell,) = main_cells(["gpt-4o"], ["screenshot"], tmp_path, {"tasks": meta, "max_steps": 15, "temperature": 0.0})
    args = record_settings(cell.config, max_steps=30)

    with pytest.raises(SettingsMismatch) as error:
        check_settings(cell)
    assert str(args) in str(error.value) and "max_steps recorded 30, requested 15" in str(error.value)


def test_a_perturbation_seed_does_not_separate_unperturbed_runs(tmp_path, meta):
    (main,) = main_cells(["gpt-4o"], ["screenshot"], tmp_path, {"tasks": meta})
    record_settings(main.config, perturb_seed=0)

    cells = analysis_cells(PERTURBATION, perturbation_settings(["clutter"]), ["gpt-4o"], ["screenshot"], tmp_path,
                           {"tasks": meta, "perturb_seed": 7})

    assert [(c.setting, c.reuses_main) for c in cells] == [("none", True), ("clutter", False)]
    assert cells[1].config.perturb_seed == 7


def test_history_all_keeps_as_many_past_steps_as_an_episode_can_have():
    assert history_settings(["0", "2", "all"], max_steps=15) == {
        "0": {"max_trajectory_length": 0}, "2": {"max_trajectory_length": 2}, "all": {"max_trajectory_length": 15}}
    with pytest.raises(ValueError, match="'-1'"):
        history_settings(["-1"], 15)


def test_scales_name_their_folders(tmp_path, meta):
    cells = analysis_cells(paper_tables.SCREENSHOT_SCALE, paper_tables.scale_settings([0.4, 1]), ["gpt-4o"],
                           ["screenshot"], tmp_path, {"tasks": meta})
    assert [(c.setting, c.config.screenshot_scale, Path(c.config.result_dir)) for c in cells] == [
        ("0.4", 0.4, tmp_path / "screenshot_scale" / "0.4"), ("1.0", 1.0, tmp_path / "main")]
