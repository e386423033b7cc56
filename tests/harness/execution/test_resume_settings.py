"""A resumed run with options that change results refuses to mix them; args.json keeps every run's options."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from osworld_cli.errors import CANNOT_START, TASK_ERRORS
from osworld_cli.main import cli
from osworld_harness.execution.run import run_benchmark
from osworld_harness.results.config import ResumeMismatch, RunConfig


@pytest.fixture
def meta(tmp_path: Path) -> Path:
    """One task that cannot run (an unknown metric): a run records it without starting a desktop."""
    examples = tmp_path / "tasks" / "examples" / "os"
    examples.mkdir(parents=True)
    (examples / "t.json").write_text(json.dumps({"id": "t", "instruction": "Do it.", "evaluator": {"func": "nope"}}))
    (tmp_path / "tasks" / "test_all.json").write_text(json.dumps({"os": ["t"]}))
    return tmp_path / "tasks" / "test_all.json"


def config(meta: Path, tmp_path: Path, **more) -> RunConfig:
    return RunConfig(agent="noop", model="m", observation_type="screenshot", tasks=str(meta),
                     result_dir=str(tmp_path / "results"), **more)


def args_of(run: RunConfig) -> dict:
    return json.loads((run.layout.model_dir / "args.json").read_text())


def test_other_settings_are_refused_naming_each_difference(meta, tmp_path):
    run_benchmark(config(meta, tmp_path, max_steps=15, agent_args={"coordinates": "grid"}))
    with pytest.raises(ResumeMismatch) as info:
        run_benchmark(config(meta, tmp_path, max_steps=1, agent_args={"coordinates": "image"}))
    assert info.value.option == "--agent-arg, --max-steps"
    assert "--max-steps was 15, now 1" in str(info.value) and "--force" in str(info.value)
    assert "{'coordinates': 'grid'}, now {'coordinates': 'image'}" in str(info.value)
    assert len(args_of(config(meta, tmp_path))["runs"]) == 1  # the refused run recorded nothing


def test_where_and_how_fast_a_run_goes_are_no_settings(meta, tmp_path):
    run_benchmark(config(meta, tmp_path, agent_args={"base_url": "http://a/v1"}, num_envs=1))
    run_benchmark(config(meta, tmp_path, agent_args={"base_url": "http://b/v1", "timeout": 30}, num_envs=2,
                         agent_time_budget=60, cache_dir=str(tmp_path / "other-cache")))
    runs = args_of(config(meta, tmp_path))["runs"]
    assert [r["config"]["agent_args"]["base_url"] for r in runs] == ["http://a/v1", "http://b/v1"]


def test_force_mixes_them_and_args_json_keeps_every_run(meta, tmp_path):
    run_benchmark(config(meta, tmp_path, max_steps=15))
    run_benchmark(config(meta, tmp_path, max_steps=1, force=True))
    recorded = args_of(config(meta, tmp_path))
    assert recorded["config"]["max_steps"] == 1  # the latest run on top, as readers expect
    assert [r["config"]["max_steps"] for r in recorded["runs"]] == [15, 1]
    assert recorded["runs"][1]["forced"] == [{"setting": "max_steps", "recorded": 15, "requested": 1}]
    run_benchmark(config(meta, tmp_path, max_steps=1))  # the folder now says 1
    assert len(args_of(config(meta, tmp_path))["runs"]) == 3


def test_an_older_args_json_is_one_run(meta, tmp_path):
    old = config(meta, tmp_path, max_steps=15)
    old.layout.model_dir.mkdir(parents=True)
    recorded = {"config": asdict(old.resolved()), "written": "earlier"}  # as a run records it
    (old.layout.model_dir / "args.json").write_text(json.dumps(recorded))
    run_benchmark(old)
    runs = args_of(old)["runs"]
    assert [r.get("written") for r in runs][0] == "earlier" and len(runs) == 2


def test_the_command_says_which_options_differ_and_exits_2(meta, tmp_path):
    base = ["run", "--agent", "noop", "--model", "m", "--obs", "screenshot", "--tasks", str(meta),
            "--result-dir", str(tmp_path / "results")]
    assert CliRunner().invoke(cli, base + ["--max-steps", "15"]).exit_code == TASK_ERRORS  # its one task cannot run
    refused = CliRunner().invoke(cli, base + ["--max-steps", "1"], terminal_width=300)
    assert refused.exit_code == CANNOT_START, refused.output
    assert refused.output.startswith("Error: --max-steps: the results in ") and "was 15, now 1" in refused.output
    forced = CliRunner().invoke(cli, base + ["--max-steps", "1", "--force"])
    assert forced.exit_code == TASK_ERRORS, forced.output
