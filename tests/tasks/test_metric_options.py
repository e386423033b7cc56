"""A metric's options are its keyword parameters: a misspelled option or a bad compare_table rule is a
problem naming the file, the field and the close names, found before any desktop starts."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

from click.testing import CliRunner

from desktop_env import extensions
from desktop_env.evaluators import registry
from desktop_env.evaluators.outcome import MetricResult
from desktop_env.tasks import load_task, validate_task
from osworld_cli.errors import TASK_ERRORS
from osworld_cli.main import cli
from osworld_harness.execution.plan import plan_tasks
from osworld_harness.results.config import RunConfig

XLSX_RESULT = {"type": "vm_file", "path": "/home/user/a.xlsx", "dest": "a.xlsx"}
XLSX_GOLD = {"type": "cloud_file", "path": "gold.xlsx", "dest": "gold.xlsx"}


def write_task(folder: Path, evaluator: dict, task_id: str = "t1") -> Path:
    path = folder / "examples" / "libreoffice_calc" / f"{task_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": task_id, "instruction": "Fix the sheet.", "config": [], "evaluator": evaluator}))
    (folder / "examples" / "libreoffice_calc" / "gold.xlsx").write_bytes(b"")
    return path


def problems_by_field(path: Path) -> dict:
    return {p.field: p for p in validate_task(load_task(path, check_paths=False)) if p.kind.startswith("option")}


def test_a_misspelled_option_names_the_file_field_and_close_names(tmp_path):
    path = write_task(tmp_path, {
        "func": ["exact_match", "compare_docx_files"],
        "result": [{"type": "vm_command_line", "command": "true"}, {"type": "vm_file", "path": "/home/user/a.docx",
                                                                   "dest": "a.docx"}],
        "expected": [{"type": "rule", "rules": {"expected": ""}}, XLSX_GOLD],
        "options": [{}, {"ignore_blank": True, "ignore_case": True}]})
    problems = problems_by_field(path)
    assert list(problems) == ["evaluator.options[1].ignore_blank"]
    problem = problems["evaluator.options[1].ignore_blank"]
    assert problem.close[0] == "ignore_blanks"
    message = str(problem)
    assert str(path) in message and "compare_docx_files" in message and "did you mean ignore_blanks" in message


def test_the_parameters_that_take_result_and_expected_are_not_options(tmp_path):
    # compare_table(result, expected=None, rules=...): with an expected getter, "expected" is no option.
    path = write_task(tmp_path, {"func": "compare_table", "result": XLSX_RESULT, "expected": XLSX_GOLD,
                                 "options": {"expected": "x", "rules": [{"type": "sheet_name"}]}})
    assert list(problems_by_field(path)) == ["evaluator.options.expected"]


def test_bad_table_rules_are_errors_with_the_rule_and_field(tmp_path):
    path = write_task(tmp_path, {"func": "compare_table", "result": XLSX_RESULT, "expected": XLSX_GOLD, "options": {
        "rules": [{"type": "sheet_dat", "sheet_idx0": 0, "sheet_idx1": "EI0"},
                  {"type": "sheet_data", "sheet_idx0": 0, "sheet_ids1": "EI0"},
                  {"type": "sheet_fuzzy", "sheet_idx0": 0, "sheet_idx1": "EI0",
                   "rules": [{"range": ["A1:A3"], "type": "exact_match", "ignore_cas": True},
                             {"range": ["B1:B3"], "type": "fuzzy"}]},
                  {"type": "check_cell", "sheet_idx": 0, "coordinate": "A1", "props": {}}]}})
    problems = problems_by_field(path)
    assert set(problems) == {"evaluator.options.rules[0].type", "evaluator.options.rules[1]",
                             "evaluator.options.rules[1].sheet_ids1", "evaluator.options.rules[2].rules[0].ignore_cas",
                             "evaluator.options.rules[2].rules[1].type"}
    assert problems["evaluator.options.rules[0].type"].close[0] == "sheet_data"
    assert "rules[1] = 'sheet_data': a sheet_data rule needs 'sheet_idx1'" in \
        str(problems["evaluator.options.rules[1]"])
    assert "sheet_idx1" in problems["evaluator.options.rules[1].sheet_ids1"].close
    assert problems["evaluator.options.rules[2].rules[0].ignore_cas"].close[0] == "ignore_case"
    assert "fuzzy_match" in problems["evaluator.options.rules[2].rules[1].type"].close


def test_compare_archive_checks_the_options_it_passes_to_its_member_metric(tmp_path):
    path = write_task(tmp_path, {"func": "compare_archive", "result": XLSX_RESULT, "expected": XLSX_GOLD,
                                 "options": {"file_type": "text", "ignore_blank": True}})
    problems = problems_by_field(path)
    assert list(problems) == ["evaluator.options.ignore_blank"]
    assert "compare_text_file" in str(problems["evaluator.options.ignore_blank"])
    assert problems["evaluator.options.ignore_blank"].close[0] == "ignore_blanks"


def test_a_note_option_and_a_plugin_metric_with_a_catch_all_are_accepted(tmp_path):
    plugin = tmp_path / "open_metric.py"
    plugin.write_text("from desktop_env.evaluators.registry import metric\n\n"
                      "@metric('test_open_ended_metric')\n"
                      "def open_ended(result, expected=None, **options):\n"
                      "    return 1.0\n")
    extensions.load_plugin(str(plugin))
    path = write_task(tmp_path, {"func": ["test_open_ended_metric", "compare_table"],
                                 "result": [XLSX_RESULT, XLSX_RESULT], "expected": [XLSX_GOLD, XLSX_GOLD],
                                 "options": [{"anything": 1}, {"_note": "why", "rules": [{"type": "sheet_name"}]}]})
    assert problems_by_field(path) == {}


def test_every_builtin_metric_declares_its_options_and_returns_an_explained_result():
    open_ended = []
    for name in registry.metric_names():
        fn = registry.get_metric(name)
        if not (fn.__module__ or "").startswith("desktop_env.evaluators.metrics."):
            continue  # a plugin's (another test loads one; one loaded from a file may have no module name)
        signature = inspect.signature(fn)
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
            open_ended.append(name)
        if name != "infeasible":  # decided before any metric runs (metrics/infeasible.py)
            assert signature.return_annotation in (MetricResult, "MetricResult"), name
    # compare_archive passes the rest to its member metric, and validation checks them there.
    assert open_ended == ["compare_archive"]


def plan_of_t1(folder: Path):
    """The plan of a run of write_task's task, listed in a meta file beside examples/."""
    meta = folder / "test_all.json"
    meta.write_text(json.dumps({"libreoffice_calc": ["t1"]}))
    return plan_tasks(RunConfig(agent="noop", model="m", observation_type="screenshot", tasks=str(meta),
                                result_dir=str(folder / "results")))


def test_osworld_validate_and_the_run_plan_refuse_a_misspelled_option_before_any_desktop(tmp_path):
    path = write_task(tmp_path, {"func": "compare_table", "result": XLSX_RESULT, "expected": XLSX_GOLD,
                                 "options": {"rule": [{"type": "sheet_name"}]}})
    outcome = CliRunner().invoke(cli, ["tasks", "validate", str(path)])
    assert outcome.exit_code == TASK_ERRORS
    assert "evaluator.options.rule" in outcome.output and "rules" in outcome.output
    plan = plan_of_t1(tmp_path)
    assert plan.to_run == [] and [p.task_id for p in plan.invalid] == ["t1"]
    # The misspelling, and the rules compare_table then lacks.
    assert [p.field for p in plan.invalid[0].problems] == ["evaluator.options.rule", "evaluator.options.rules"]


PPTX_RESULT = {"type": "vm_file", "path": "/home/user/a.pptx", "dest": "a.pptx"}


def test_options_osworld_ignores_too_are_warnings_and_a_misspelling_of_them_is_still_refused(tmp_path):
    path = write_task(tmp_path, {
        "func": ["compare_pptx_files", "compare_table"], "result": [PPTX_RESULT, XLSX_RESULT],
        "expected": [XLSX_GOLD, XLSX_GOLD],
        "options": [{"examine_run_count": False, "examine_shape_lenient_height": True,
                     "examine_shape_lenient_heigth": True},
                    {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0", "ignore_case": True},
                               {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0", "ignore_cases": True}]}]})
    problems = {p.field: p for p in validate_task(load_task(path, check_paths=False))}
    assert {field: p.warning for field, p in problems.items()} == {
        "evaluator.options[0].examine_shape_lenient_height": True,
        "evaluator.options[0].examine_shape_lenient_heigth": False,
        "evaluator.options[1].rules[0].ignore_case": True,
        "evaluator.options[1].rules[1].ignore_cases": False}
    assert "compare_pptx_files never reads it" in str(problems["evaluator.options[0].examine_shape_lenient_height"])
    assert "sheet_data never reads it" in str(problems["evaluator.options[1].rules[0].ignore_case"])
    assert "examine_shape_lenient_height" in problems["evaluator.options[0].examine_shape_lenient_heigth"].close


def test_validate_and_the_run_plan_warn_about_an_ignored_option_and_run_the_task(tmp_path):
    path = write_task(tmp_path, {"func": "compare_table", "result": XLSX_RESULT, "expected": XLSX_GOLD, "options": {
        "rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0", "ignore_case": True}]}})
    outcome = CliRunner().invoke(cli, ["tasks", "validate", str(path)])
    assert outcome.exit_code == 0, outcome.output
    assert "warning:" in outcome.output and "evaluator.options.rules[0].ignore_case" in outcome.output
    plan = plan_of_t1(tmp_path)
    assert plan.invalid == [] and [p.task_id for p in plan.to_run] == ["t1"]
    assert [w.field for w in plan.to_run[0].warnings] == ["evaluator.options.rules[0].ignore_case"]
