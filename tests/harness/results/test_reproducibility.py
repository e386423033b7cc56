"""What a published score needs to be reproduced: args.json's command, price date and task-set hash, what the
trials were observed to run with, and `summarize`'s one-line "reproduce with" command."""
from __future__ import annotations

import json
import shlex
from dataclasses import asdict
from pathlib import Path

from click.testing import CliRunner

from desktop_env.tasks import load_task_set
from osworld_cli.main import cli
from osworld_cli.run_commands import config_of, run_command
from osworld_harness.execution.run import run_benchmark
from osworld_harness.execution.task_result import TaskResult
from osworld_harness.execution.worker_pool import ThreadBackend
from osworld_harness.results.config import RunConfig
from osworld_harness.results.reproduce import reproduce_command
from osworld_harness.results.settings import settings_of
from osworld_harness.results.summary import find_runs, summarize_run
from osworld_harness.results.task_folder import TaskStatus, write_score, write_status

TASKS = ["os-find-copy-lease", "os-make-script-executable"]


def parsed(command: str) -> RunConfig:
    """The RunConfig `osworld run` makes of the command line."""
    words = shlex.split(command)
    assert words[:2] == ["osworld", "run"]
    return config_of(run_command.make_context("run", words[2:]).params)


def test_the_command_makes_the_same_settings_again_and_leaves_secrets_out():
    config = RunConfig(agent="tool", model="org/model-7b", observation_type="screenshot", task_ids=TASKS, trials=3,
                       max_steps=30, temperature=0.0, top_p=0.5, screen_size=(1280, 720), network=True,
                       agent_args={"api_key": "sk-secret", "base_url": "http://gpu:8000/v1", "history": 2,
                                   "grounder_api_key": "gk-secret", "auth_token": "t-secret"},
                       result_dir="/somewhere/results", num_envs=4).resolved()  # as args.json records it
    command = reproduce_command(asdict(config))
    assert "secret" not in command and "gpu:8000" not in command and "/somewhere" not in command
    again = parsed(command)
    assert again.agent_args == {"history": 2}  # what names a key, token, password or secret is yours to give
    config.agent_args.pop("auth_token")
    assert settings_of(again) == settings_of(config) and again.trials == 3 and again.task_ids == TASKS
    assert again.network


def test_a_default_run_says_only_what_it_is():
    assert reproduce_command(asdict(RunConfig().resolved())) == ("osworld run --agent prompt --model gpt-4o --obs "
                                                      "screenshot_a11y_tree --action-space pyautogui --max-steps 15 "
                                                      "--trials 1")


class ObservedRunner:
    """Writes each trial as the episode does, with the agent's model calls and the screen it saw."""

    def run_task(self, domain, task_id, task_dir: Path, previous_errors, on_step=lambda n: None, trial=1,
                 more_to_come=True):
        calls = {"calls": 2, "sent": [{"max_tokens": 1500, "temperature": 1.0, "top_p": 0.9}],
                 "served": ["gpt-4o-2024-08-06"]}
        write_score(task_dir, 1.0)
        write_status(task_dir, TaskStatus("ok", task_id=task_id, trial=trial, steps=1, model_calls=calls,
                                          screen_size=[1920, 1080], task_sha256="c" * 64))
        return TaskResult("ok", 1.0, steps=1)

    def close(self):
        pass


def test_args_json_records_the_command_the_price_date_the_task_set_and_what_was_observed(tmp_path):
    config = RunConfig(agent="noop", model="gpt-4o", observation_type="screenshot", task_ids=TASKS, trials=2,
                       result_dir=str(tmp_path))
    run_benchmark(config, backend=ThreadBackend(ObservedRunner))
    args = json.loads((config.layout.model_dir / "args.json").read_text())
    assert parsed(args["reproduce"]).trials == 2
    assert args["pricing"]["as_of"] == "2025-08" and args["pricing"]["input_usd_per_1m"] == 2.5
    assert args["task_set"]["tasks"] == 2 and len(args["task_set"]["hash"]) == 8
    assert args["observed"] == args["runs"][-1]["observed"] == {
        "model_calls": 8, "sampling_sent": [{"max_tokens": 1500, "temperature": 1.0, "top_p": 0.9}],
        "models_served": ["gpt-4o-2024-08-06"], "screen_sizes": [[1920, 1080]]}


def test_the_hash_args_json_records_is_the_one_summaries_compute_from_the_trials(tmp_path):
    """The real task files' hashes, from the plan and from an episode's records, agree."""
    task_set = load_task_set(None)

    class Runner(ObservedRunner):
        def run_task(self, domain, task_id, task_dir, previous_errors, on_step=lambda n: None, trial=1,
                     more_to_come=True):
            write_score(task_dir, 0.0)
            write_status(task_dir, TaskStatus("ok", task_id=task_id, trial=trial, steps=1,
                                              task_sha256=task_set.load(domain, task_id).sha256))
            return TaskResult("ok", 0.0, steps=1)

    config = RunConfig(agent="noop", model="m", observation_type="screenshot", task_ids=TASKS,
                       result_dir=str(tmp_path))
    run_benchmark(config, backend=ThreadBackend(Runner))
    args = json.loads((config.layout.model_dir / "args.json").read_text())
    (run,) = find_runs(tmp_path)
    assert summarize_run(run)[-1].task_set.digest == args["task_set"]["hash"]


def test_summarize_prints_how_to_reproduce_the_run(tmp_path):
    config = RunConfig(agent="noop", model="gpt-4o", observation_type="screenshot", task_ids=TASKS,
                       result_dir=str(tmp_path), max_steps=5)
    run_benchmark(config, backend=ThreadBackend(ObservedRunner))
    done = CliRunner().invoke(cli, ["summarize", str(tmp_path)])
    assert done.exit_code == 0, done.output
    (line,) = [line for line in done.output.splitlines() if line.startswith("reproduce with: ")]
    assert parsed(line.removeprefix("reproduce with: ")).max_steps == 5
    data = json.loads(CliRunner().invoke(cli, ["summarize", str(tmp_path), "--format", "json"]).output)
    record = data["runs"][0]["reproducibility"]
    assert record["observed"]["models_served"] == ["gpt-4o-2024-08-06"] and record["command"] == line[16:]


def test_an_api_key_given_as_an_agent_argument_is_not_written(tmp_path):
    config = RunConfig(agent="noop", model="gpt-4o", observation_type="screenshot", task_ids=TASKS[:1],
                       result_dir=str(tmp_path), agent_args={"api_key": "sk-secret", "history": 2})
    run_benchmark(config, backend=ThreadBackend(ObservedRunner))
    text = (config.layout.model_dir / "args.json").read_text()
    assert "sk-secret" not in text and json.loads(text)["config"]["agent_args"]["history"] == 2
    run_benchmark(config, backend=ThreadBackend(ObservedRunner))  # the same options resume: not a mismatch
