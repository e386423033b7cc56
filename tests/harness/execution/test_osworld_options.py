"""OSWorld's run.py option names work on `osworld run` as they are, each as the option it maps to in
docs/OSWORLD.md's table; `--domain all` is every domain."""
from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from desktop_env.tasks import load_task_set
from osworld_cli.main import cli
from osworld_cli.osworld_options import ALIASES, docs_table, translate
from osworld_cli.run_commands import config_of, run_command

DOCS = Path(__file__).resolve().parents[3] / "docs" / "OSWORLD.md"
BUILTIN = Path(__file__).resolve().parents[3] / "evaluation_examples"

# Each alias with a value and what `osworld run` makes of it: (param, expected value).
CASES = {
    "--path_to_vm": ("http://10.0.0.5:5000", "path_to_vm", "http://10.0.0.5:5000"),
    "--provider_name": ("remote", "provider", "remote"),
    "--headless": (None, None, None),
    "--action_space": ("computer_13", "action_space", "computer_13"),
    "--observation_type": ("screenshot", "observation_type", "screenshot"),
    "--screen_width": ("1280", "screen_size", (1280, 1080)),
    "--screen_height": ("720", "screen_size", (1920, 720)),
    "--sleep_after_execution": ("3", "sleep_after_execution", 3.0),
    "--max_steps": ("50", "max_steps", 50),
    "--max_trajectory_length": ("5", "max_trajectory_length", 5),
    "--test_config_base_dir": (str(BUILTIN), "tasks", str(BUILTIN / "test_all.json")),
    "--top_p": ("0.5", "top_p", 0.5),
    "--max_tokens": ("800", "max_tokens", 800),
    "--stop_token": ("</s>", None, None),
    "--test_all_meta_path": (str(BUILTIN / "test_small.json"), "tasks", str(BUILTIN / "test_small.json")),
    "--result_dir": ("./elsewhere", "result_dir", "./elsewhere"),
    "--num_envs": ("4", "num_envs", 4),
    "--log_level": ("DEBUG", "log_level", "DEBUG"),
    "--client_password": ("secret", "client_password", "secret"),
}


def params(*args: str) -> dict:
    return run_command.make_context("run", list(args)).params


def test_every_alias_has_a_case_here():
    assert sorted(CASES) == sorted(alias.osworld for alias in ALIASES)


@pytest.mark.parametrize("alias", [a.osworld for a in ALIASES])
def test_each_osworld_option_means_ours(alias):
    value, param, expected = CASES[alias]
    got = params(alias, *([value] if value is not None else []))
    assert got == params() if param is None else got[param] == expected
    if value is not None:  # --opt=value as well as --opt value
        assert params(f"{alias}={value}") == got


def test_a_run_py_command_line_runs_as_it_is():
    config = config_of(params("--headless", "--observation_type", "screenshot", "--model", "gpt-4o",
                              "--result_dir", "./results", "--max_steps", "50", "--domain", "all",
                              "--test_all_meta_path", str(BUILTIN / "test_all.json"), "--sleep_after_execution", "3",
                              "--screen_width", "1920", "--screen_height", "1080", "--num_envs", "2"))
    assert (config.observation_type, config.max_steps, config.num_envs) == ("screenshot", 50, 2)
    assert config.domains == ["all"]
    assert config.layout.model_dir == Path("results/pyautogui/screenshot/gpt-4o")


def test_domain_all_is_every_domain():
    task_set = load_task_set(BUILTIN / "test_all.json")
    assert task_set.select(["all"]) == task_set.select() and len(task_set.select(["all"])) == len(task_set)
    listed = CliRunner().invoke(cli, ["tasks", "list", "--domain", "all", "--format", "tsv"])
    assert listed.exit_code == 0 and len(listed.output.splitlines()) == len(task_set) + 1


def test_what_cannot_be_rewritten_is_a_usage_error():
    with pytest.raises(click.UsageError, match="not both"):
        translate(["--screen_width", "1280", "--screen-size", "800x600"])
    with pytest.raises(click.UsageError, match="give a meta file inside /somewhere/else"):
        translate(["--test_all_meta_path", str(BUILTIN / "test_all.json"), "--test_config_base_dir", "/somewhere/else"])
    assert translate(["--test_all_meta_path", str(BUILTIN / "test_all.json"), "--test_config_base_dir",
                      str(BUILTIN)]) == ["--tasks", str(BUILTIN / "test_all.json")]
    with pytest.raises(click.UsageError, match="requires an argument"):
        translate(["--max_steps"])


def test_the_docs_table_is_the_one_the_code_applies():
    assert docs_table() in DOCS.read_text()
