"""Task and meta files load as OSWorld writes them; broken ones get errors naming file, field and value."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_env.tasks import TaskFileError, load_task, load_task_set, validate_task

OSWORLD_EXAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "osworld_examples"


def write_task(folder: Path, task_id: str = "t1", **fields) -> Path:
    task = {"id": task_id, "instruction": "do it", "config": [], "evaluator": {"func": "exact_match"}, **fields}
    path = folder / "examples" / "os" / f"{task_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(task))
    return path


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON: line 1"),
    ("[]", "expected a JSON object"),
    ('{"id": "other", "instruction": "x", "evaluator": {"func": "exact_match"}}',
     "field 'id' is 'other' but the file is named 't1'"),
    ('{"id": "t1", "evaluator": {"func": "exact_match"}}', "field 'instruction' must be a string"),
    ('{"id": "t1", "instruction": "x", "config": {}, "evaluator": {"func": "exact_match"}}',
     "field 'config' must be a list"),
    ('{"id": "t1", "instruction": "x"}', "field 'evaluator' must be an object with 'func'"),
])
def test_broken_task_files_name_the_file_and_field(tmp_path, content, message):
    path = tmp_path / "t1.json"
    path.write_text(content)
    with pytest.raises(TaskFileError) as info:
        load_task(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_missing_config_means_no_setup(tmp_path):
    path = write_task(tmp_path)
    data = json.loads(path.read_text())
    del data["config"]
    path.write_text(json.dumps(data))
    assert load_task(path).config.get("config") is None
    assert validate_task(load_task(path)) == []


def test_unknown_names_are_reported_with_field_and_close_matches(tmp_path):
    path = write_task(tmp_path, config=[{"type": "downlaod", "parameters": {}}],
                      evaluator={"func": ["exact_match", "compare_tabel"],
                                 "result": [{"type": "vm_fille", "path": "x"},
                                            {"type": "vm_file", "path": "/home/user/x", "dest": "x"}],
                                 "expected": [{"type": "rule", "rules": {}}, {"type": "rule", "rules": {}}]})
    problems = {p.field: p for p in validate_task(load_task(path))}
    assert set(problems) == {"config[0].type", "evaluator.func[1]", "evaluator.result[0].type"}
    assert "download" in problems["config[0].type"].close
    assert "compare_table" in problems["evaluator.func[1]"].close
    assert "vm_file" in problems["evaluator.result[0].type"].close
    assert str(path) in str(problems["evaluator.func[1]"])


def test_account_steps_are_unsupported_not_unknown(tmp_path):
    path = write_task(tmp_path, config=[{"type": "googledrive", "parameters": {}}])
    (problem,) = validate_task(load_task(path))
    assert problem.unsupported and "account" in problem.reason


def test_meta_file_selects_domains_and_ids(tmp_path):
    write_task(tmp_path, "a")
    write_task(tmp_path, "b")
    (tmp_path / "test_all.json").write_text(json.dumps({"os": ["a", "b"]}))
    task_set = load_task_set(tmp_path / "test_all.json")
    assert task_set.select() == [("os", "a"), ("os", "b")]
    assert task_set.select(["os"], ["b"]) == [("os", "b")]
    assert [t.id for t in task_set] == ["a", "b"]
    with pytest.raises(TaskFileError, match="domain\\(s\\) gimp not in"):
        task_set.select(["gimp"])
    with pytest.raises(TaskFileError, match="task id\\(s\\) zzz not in"):
        task_set.select(None, ["zzz"])


def test_a_metric_without_an_expected_getter_in_a_list_that_has_them_is_refused_as_osworld_cannot_score_it(tmp_path):
    """OSWorld's evaluate() calls the expected getter of every metric of the list once `expected` is given, and
    raises TypeError on a null one: such a task is never scored with OSWorld's code."""
    path = write_task(tmp_path, evaluator={
        "func": ["is_first_line_centered", "compare_docx_files"],
        "result": [{"type": "vm_file", "path": "/home/user/a.docx", "dest": "a.docx"}] * 2,
        "expected": [None, {"type": "vm_file", "path": "/home/user/b.docx", "dest": "b.docx"}]})
    (problem,) = validate_task(load_task(path))
    assert problem.field == "evaluator.expected[0]" and "raises on a null one" in str(problem)


def test_builtin_suite_is_valid():
    task_set = load_task_set()
    tasks = list(task_set)
    assert len(tasks) == len(task_set) > 0
    assert {p.field: str(p) for t in tasks for p in validate_task(t)} == {}


@pytest.mark.skipif(not OSWORLD_EXAMPLES.is_dir(), reason="../shared/osworld_examples is not beside this checkout")
def test_every_osworld_task_file_loads_and_every_name_resolves_or_is_listed_unsupported():
    task_set = load_task_set(OSWORLD_EXAMPLES / "test_all.json")
    unknown = []
    for task in task_set:
        unknown += [str(p) for p in validate_task(task) if not p.unsupported]
    assert unknown == []
