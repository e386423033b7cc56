"""A user's mistakes on the command line: one or two lines naming the option, exit status 2, no traceback,
and nothing started."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mm_agents.loader import build_agent
from osworld_cli.errors import CANNOT_START, OK, TASK_ERRORS
from osworld_cli.main import cli
from osworld_cli.run_commands import run_exit_status
from osworld_harness.execution.plan import RunSummary
from osworld_harness.execution.run import check_agent
from osworld_harness.results.config import RunConfig, RunOptionError

AGENT_FILE = '''
class Agent:
    def __init__(self, model="m"):
        self.model = model
    def predict(self, instruction, obs):
        return "", ["DONE"]
    def reset(self, logger=None):
        pass
'''


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def assert_mistake(result, *expected: str) -> None:
    assert result.exit_code == CANNOT_START, result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert 1 <= len(lines) <= 2, result.output
    assert lines[0].startswith("Error: "), result.output
    for text in expected:
        assert text in result.output, result.output


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_agent.py"
    path.write_text(AGENT_FILE)
    return path


def test_an_unknown_agent_names_the_built_ins(tmp_path):
    result = invoke("run", "--agent", "nosuch", "--result-dir", str(tmp_path))
    assert_mistake(result, "--agent", "'nosuch'", "oracle", "package.module:Class")
    assert not (tmp_path / "pyautogui").exists()


def test_a_missing_class_in_an_agent_file_names_the_classes_there(agent_file, tmp_path):
    result = invoke("run", "--agent", f"{agent_file}:Missing", "--result-dir", str(tmp_path))
    assert_mistake(result, "--agent", "'Missing'", "agent classes there: Agent")


def test_an_agent_file_that_does_not_exist(tmp_path):
    assert_mistake(invoke("run", "--agent", f"{tmp_path}/nope.py:Agent"), "--agent", "agent file not found")


def test_a_missing_tasks_file(tmp_path, agent_file):
    result = invoke("run", "--agent", f"{agent_file}:Agent", "--tasks", str(tmp_path / "missing.json"))
    assert_mistake(result, "--tasks", "meta file not found", "missing.json")


def test_a_folder_as_tasks_file_names_the_meta_files_in_it(tmp_path, agent_file):
    (tmp_path / "test_all.json").write_text("{}")
    result = invoke("run", "--agent", f"{agent_file}:Agent", "--tasks", str(tmp_path))
    assert_mistake(result, "--tasks", "is a folder", "test_all.json")


def test_a_meta_file_that_is_not_json(tmp_path, agent_file):
    (tmp_path / "test_all.json").write_text("{not json")
    result = invoke("run", "--agent", f"{agent_file}:Agent", "--tasks", str(tmp_path / "test_all.json"))
    assert_mistake(result, "--tasks", "not valid JSON", "line 1")


def test_an_unknown_domain_lists_the_known_ones(agent_file):
    result = invoke("run", "--agent", f"{agent_file}:Agent", "--domain", "nosuch")
    assert_mistake(result, "--domain", "nosuch", "known: chrome")


def test_an_unknown_task_id_suggests_a_close_one(agent_file):
    result = invoke("run", "--agent", f"{agent_file}:Agent", "--task-id", "os-organize-invoice")
    assert_mistake(result, "--task-id", "os-organize-invoice", "did you mean os-organize-invoices?")


@pytest.mark.parametrize("option, value", [("--num-envs", "0"), ("--max-steps", "-1"), ("--max-steps", "0"),
                                           ("--max-tokens", "0"), ("--top-p", "0"), ("--temperature", "-1"),
                                           ("--max-trajectory-length", "-1"), ("--sleep-after-execution", "-1")])
def test_numbers_out_of_range(option, value, agent_file):
    result = invoke("run", "--agent", f"{agent_file}:Agent", option, value)
    assert_mistake(result, option, value)
    assert "run --help' for help" in result.output


def test_numbers_are_checked_by_the_library_too():
    for field, value, option in (("max_steps", -1, "--max-steps"), ("num_envs", 0, "--num-envs"),
                                 ("max_steps", 1.5, "--max-steps"), ("top_p", 2, "--top-p")):
        with pytest.raises(RunOptionError) as info:
            RunConfig(**{field: value})
        assert info.value.option == option and repr(value) in str(info.value)


def test_a_provider_is_checked_before_any_task_runs(agent_file):
    assert_mistake(invoke("run", "--agent", f"{agent_file}:Agent", "--provider", "nosuch"), "--provider", "nosuch")
    assert_mistake(invoke("run", "--agent", f"{agent_file}:Agent", "--provider", "remote"), "--path-to-vm",
                   "http://VM_IP:5000")
    with pytest.raises(RunOptionError, match="--provider: must be one of local, remote"):
        RunConfig(provider="qemu")


def test_a_result_dir_that_cannot_be_written(tmp_path, agent_file):
    (tmp_path / "a_file").write_text("")
    result = invoke("run", "--agent", f"{agent_file}:Agent", "--task-id", "os-organize-invoices",
                    "--result-dir", str(tmp_path / "a_file" / "results"))
    assert_mistake(result, "--result-dir", "cannot write results", "a_file is in the way")


def test_a_screenshot_scale_the_agent_cannot_take(tmp_path, agent_file):
    result = invoke("run", "--agent", f"{agent_file}:Agent", "--screenshot-scale", "0.5", "--result-dir", str(tmp_path))
    assert_mistake(result, "--screenshot-scale", "does not take screenshot_scale")


def test_a_missing_api_key_is_one_line_before_any_desktop(tmp_path, monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    result = invoke("run", "--agent", "prompt", "--model", "gpt-4o", "--result-dir", str(tmp_path))
    assert_mistake(result, "--model: openai model 'gpt-4o': no API key; set OPENAI_API_KEY")
    assert list(tmp_path.iterdir()) == []  # no args.json, no task folder: nothing ran
    with pytest.raises(RunOptionError, match="--model: anthropic model .* no API key; set ANTHROPIC_API_KEY"):
        check_agent(RunConfig(agent="claude-computer-use", model="claude-sonnet-4-6", observation_type="screenshot"))


def test_a_run_with_nothing_left_to_run_needs_no_api_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    finished = tmp_path / "pyautogui" / "screenshot_a11y_tree" / "gpt-4o" / "os" / "os-organize-invoices"
    finished.mkdir(parents=True)
    (finished / "result.txt").write_text("1.0\n")  # as OSWorld's harness leaves a finished task
    result = invoke("run", "--agent", "prompt", "--model", "gpt-4o", "--task-id", "os-organize-invoices",
                    "--result-dir", str(tmp_path))
    assert result.exit_code == OK, result.output
    assert "Error" not in result.output


def test_an_agent_that_refuses_its_arguments_is_one_line_before_any_desktop(tmp_path):
    result = invoke("run", "--agent", "oracle", "--action-space", "computer_13", "--result-dir", str(tmp_path))
    assert_mistake(result, "--agent: constructing oracle failed: ValueError:", "plays pyautogui solutions")
    assert list(tmp_path.iterdir()) == []


def test_a_plugin_that_cannot_be_imported(tmp_path):
    assert_mistake(invoke("run", "--plugin", "no_such_plugin_module"), "--plugin", "no_such_plugin_module")
    broken = tmp_path / "plugin.py"
    broken.write_text("raise RuntimeError('half-written plugin')\n")
    assert_mistake(invoke("tasks", "validate", str(tmp_path), "--plugin", str(broken)), "--plugin",
                   "RuntimeError: half-written plugin")


def test_tasks_list_shows_a_broken_task_file_and_lists_the_rest(tmp_path):
    examples = tmp_path / "examples" / "os"
    examples.mkdir(parents=True)
    (examples / "good.json").write_text(json.dumps({"id": "good", "instruction": "Do it.",
                                                    "evaluator": {"func": "infeasible"}}))
    (examples / "bad.json").write_text("{broken")
    (tmp_path / "test_all.json").write_text(json.dumps({"os": ["bad", "good", "gone"]}))
    result = CliRunner().invoke(cli, ["tasks", "list", "--tasks", str(tmp_path / "test_all.json")],
                                terminal_width=300)
    assert result.exit_code == TASK_ERRORS, result.output
    assert "Traceback" not in result.output
    assert "Do it." in result.output and "not valid JSON" in result.output and "not found" in result.output
    assert "2 task file(s) cannot be used" in result.output


def test_tasks_commands_name_a_missing_meta_file(tmp_path):
    for command in (["tasks", "list"], ["tasks", "show", "x"], ["verify"]):
        assert_mistake(invoke(*command, "--tasks", str(tmp_path / "nope.json")), "--tasks", "not found")


def test_an_agent_without_a_constructor_is_built_without_arguments(tmp_path):
    path = tmp_path / "plain.py"
    path.write_text("class Plain:\n    def predict(self, i, o):\n        return '', []\n"
                    "    def reset(self, logger=None):\n        pass\n")
    assert build_agent(f"{path}:Plain", model="gpt-4o", max_tokens=10) is not None


def test_exit_status_of_a_finished_run():
    assert run_exit_status(RunSummary(planned=2, skipped_done=0, skipped_errors=0, ran=2, ok=2)) == OK
    assert run_exit_status(RunSummary(planned=2, skipped_done=0, skipped_errors=0, ran=2, ok=1,
                                      errors=1)) == TASK_ERRORS
    kept = RunSummary(planned=0, skipped_done=1, skipped_errors=1)  # an error kept from an earlier run
    assert run_exit_status(kept) == TASK_ERRORS
