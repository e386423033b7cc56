"""A getter config without a field its getter cannot do without is refused by validation, naming
the file and the field, instead of failing at scoring time with a KeyError."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from desktop_env.evaluators import registry
from desktop_env.tasks import load_task, validate_task
from osworld_cli.main import cli


def write_task(folder: Path, evaluator: dict) -> Path:
    path = folder / "examples" / "os" / "t1.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": "t1", "instruction": "Save the file.", "config": [], "evaluator": evaluator}))
    return path


def test_a_vm_file_without_dest_is_refused_naming_the_field(tmp_path):
    path = write_task(tmp_path, {"func": "compare_text_file",
                                 "result": {"type": "vm_file", "path": "/home/user/a.txt"},
                                 "expected": {"type": "cloud_file", "path": "gold.txt", "dest": "gold.txt"}})
    problems = [p for p in validate_task(load_task(path, check_paths=False)) if p.kind == "missing field"]
    assert [(p.field, p.name) for p in problems] == [("evaluator.result.dest", "dest")]
    assert str(problems[0]) == (f"{path}: evaluator.result.dest is missing: getter 'vm_file' needs it "
                                "(it needs: path, dest)")
    result = CliRunner().invoke(cli, ["tasks", "validate", str(path)])
    assert result.exit_code != 0 and "evaluator.result.dest is missing" in result.output


def test_a_missing_field_in_a_list_of_getters_is_named_by_its_index(tmp_path):
    path = write_task(tmp_path, {"func": ["exact_match", "exact_match"],
                                 "result": [{"type": "vm_command_line", "command": "true"},
                                            {"type": "vm_command_line", "shell": True}],
                                 "expected": [{"type": "rule", "rules": {"expected": ""}}, {"type": "rule"}]})
    fields = [p.field for p in validate_task(load_task(path, check_paths=False)) if p.kind == "missing field"]
    assert fields == ["evaluator.result[1].command", "evaluator.expected[1].rules"]


def test_the_builtin_file_getters_declare_what_they_need():
    registry.load_builtins()
    for name in ("vm_file", "cloud_file"):
        assert registry.get_getter(name).required_fields == ("path", "dest")
