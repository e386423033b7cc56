"""An agent's own defaults win: every option of the run its constructor declares (the model and observation
type, which name the results folder, the action space, the sampling settings, the history, the screenshot
scale) is its own unless the user gives it; an --agent-arg its constructor does not take is refused unless it
takes **kwargs."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from osworld_cli.errors import CANNOT_START
from osworld_cli.main import cli
from osworld_harness.execution import run
from osworld_harness.execution.run import check_agent_class, run_benchmark
from osworld_harness.execution.worker_pool import ThreadBackend
from osworld_harness.results.config import RunConfig, RunOptionError
from tests.harness.execution.test_lib_run_single import Desktop

AGENT = '''
class MyAgent:
    """Declares its own model and what it observes; says which it was built with."""

    def __init__(self, model="my-model-v2", observation_type="screenshot", temperature=0.0):
        self.built_with = {"model": model, "observation_type": observation_type}

    def reset(self, logger=None):
        pass

    def predict(self, instruction, obs):
        return self.built_with, ["DONE"]


class Sampler:
    """Declares its own sampling, as a paper's agent pins it; says what it was built with."""

    def __init__(self, model="sampler-1", temperature=0.0, top_p=0.95, max_tokens=4096, max_trajectory_length=None,
                 screen_size=(1920, 1080)):
        self.built_with = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens,
                           "max_trajectory_length": max_trajectory_length}

    def reset(self, logger=None):
        pass

    def predict(self, instruction, obs):
        return self.built_with, ["DONE"]


class Plain:
    """Declares no model at all."""
    def __init__(self, max_steps=15):
        pass

    def reset(self, logger=None):
        pass

    def predict(self, instruction, obs):
        return "done", ["DONE"]


class Open:
    def __init__(self, **options):
        self.options = options

    def reset(self, logger=None):
        pass

    def predict(self, instruction, obs):
        return "done", ["DONE"]
'''


@pytest.fixture
def agents(tmp_path):
    path = tmp_path / "my_agents.py"
    path.write_text(AGENT)
    return path


def test_the_agents_declared_model_and_observation_name_the_folder_and_are_not_overridden(agents, tmp_path):
    config = RunConfig(agent=f"{agents}:MyAgent", task_ids=["os-find-copy-lease"], result_dir=str(tmp_path / "r"),
                       record=False)
    resolved = config.resolved()
    assert (resolved.model, resolved.observation_type) == ("my-model-v2", "screenshot")
    assert resolved.agent_defaults == ["model", "observation_type", "temperature"]
    assert config.layout.model_dir == tmp_path / "r" / "pyautogui" / "screenshot" / "my-model-v2"
    assert "model" not in resolved.agent_kwargs() and "observation_type" not in resolved.agent_kwargs()
    run_benchmark(config, backend=ThreadBackend.with_env_factory(config, Desktop))
    task_dir = config.layout.model_dir / "os" / "os-find-copy-lease"
    (step,) = [json.loads(line) for line in (task_dir / "traj.jsonl").read_text().splitlines()]
    assert step["response"] == {"model": "my-model-v2", "observation_type": "screenshot"}
    args = json.loads((config.layout.model_dir / "args.json").read_text())
    assert args["config"]["model"] == "my-model-v2"
    assert args["config"]["agent_defaults"] == ["model", "observation_type", "temperature"]


def run_sampler(tmp_path, *options: str) -> tuple[dict, dict]:
    """`osworld run` of the Sampler on one task: what the agent was built with, and args.json's options."""
    result_dir = tmp_path / "r"
    done = CliRunner().invoke(cli, ["run", "--agent", f"{tmp_path / 'my_agents.py'}:Sampler", "--task-id",
                                    "os-find-copy-lease", "--result-dir", str(result_dir), "--no-record", *options])
    assert done.exit_code == 0, done.output
    (folder,) = result_dir.glob("pyautogui/*/sampler-1")
    traj = folder / "os" / "os-find-copy-lease" / "traj.jsonl"
    (step,) = [json.loads(line) for line in traj.read_text().splitlines()]
    return step["response"], json.loads((folder / "args.json").read_text())["config"]


@pytest.fixture
def thread_desktops(monkeypatch):
    """`osworld run` on the test desktop, in threads (the command's own backend would start real desktops)."""
    monkeypatch.setattr(run, "make_backend", lambda config: ThreadBackend.with_env_factory(config, Desktop))


def test_the_sampling_an_agent_declares_is_what_it_gets_and_what_args_json_records(agents, tmp_path, thread_desktops):
    built, recorded = run_sampler(tmp_path)
    assert built == {"temperature": 0.0, "top_p": 0.95, "max_tokens": 4096, "max_trajectory_length": None}
    assert (recorded["temperature"], recorded["top_p"], recorded["max_tokens"]) == (0.0, 0.95, 4096)
    assert recorded["max_trajectory_length"] is None
    assert {"temperature", "top_p", "max_tokens", "max_trajectory_length"} <= set(recorded["agent_defaults"])


def test_an_option_given_on_the_command_line_wins_even_at_the_old_default(agents, tmp_path, thread_desktops):
    built, recorded = run_sampler(tmp_path, "--temperature", "1.0", "--max_tokens", "1500")
    assert built == {"temperature": 1.0, "top_p": 0.95, "max_tokens": 1500, "max_trajectory_length": None}
    assert "temperature" not in recorded["agent_defaults"] and recorded["temperature"] == 1.0


def test_what_the_agent_does_not_declare_gets_the_runs_defaults(agents):
    config = RunConfig(agent=f"{agents}:Open").resolved()
    assert (config.temperature, config.top_p, config.max_tokens, config.max_trajectory_length) == (1.0, 0.9, 1500, 3)
    assert config.agent_kwargs()["temperature"] == 1.0 and config.agent_defaults == ["model", "observation_type"]


def test_the_dry_run_shows_what_the_agent_is_built_with(agents, tmp_path):
    done = CliRunner().invoke(cli, ["run", "--agent", f"{agents}:Sampler", "--task-id", "os-find-copy-lease",
                                    "--result-dir", str(tmp_path), "--top-p", "0.5", "--dry-run"])
    assert done.exit_code == 0, done.output
    assert ("agent built with: temperature 0 (its own default), top_p 0.5 (given; its own: 0.95), max_tokens 4096 "
            "(its own default), "
            "max_trajectory_length none (its own default)") in done.output


def test_a_model_the_user_gives_is_passed_and_names_the_folder(agents, tmp_path):
    config = RunConfig(agent=f"{agents}:MyAgent", model="other", result_dir=str(tmp_path)).resolved()
    assert config.agent_kwargs()["model"] == "other" and config.layout.model == "other"
    assert config.agent_defaults == ["observation_type", "temperature"]


def test_an_agent_that_declares_no_model_is_named_by_its_class(agents):
    config = RunConfig(agent=f"{agents}:Plain").resolved()
    assert (config.model, config.observation_type) == ("Plain", "screenshot_a11y_tree")
    assert RunConfig(agent="noop").resolved().model == "noop"


def test_the_computer_use_agents_observe_screenshots_without_being_told():
    config = RunConfig(agent="claude-computer-use", model="claude-sonnet-4-6").resolved()
    assert config.observation_type == "screenshot" and config.layout.observation_type == "screenshot"
    assert RunConfig().resolved().model == "gpt-4o"  # the prompt agent's own default, as before


def test_a_mistyped_agent_argument_is_refused_unless_the_agent_takes_any(agents):
    with pytest.raises(RunOptionError, match=r"takes no argument 'temprature' \(its constructor takes: model, "
                                             r"observation_type, temperature\)"):
        check_agent_class(RunConfig(agent=f"{agents}:MyAgent", agent_args={"temprature": 0.5}))
    check_agent_class(RunConfig(agent=f"{agents}:MyAgent", agent_args={"temperature": 0.5}))
    check_agent_class(RunConfig(agent=f"{agents}:Open", agent_args={"anything": 1}))


def test_the_command_line_refuses_it_before_anything_runs(agents, tmp_path):
    done = CliRunner().invoke(cli, ["run", "--agent", f"{agents}:Plain", "--agent-arg", "max_step=3",
                                    "--result-dir", str(tmp_path)])
    assert done.exit_code == CANNOT_START
    assert "--agent-arg" in done.output and "'max_step'" in done.output and "max_steps" in done.output
    assert not (tmp_path / "pyautogui").exists()
