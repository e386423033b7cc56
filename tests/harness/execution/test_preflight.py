"""The dry run is a preflight: what would stop a real run (an agent that cannot be built, a reset() or
predict() the episode cannot call as it does, a provider's options that cannot work) makes it exit 2 naming
what is wrong, and a real run refuses the same before any desktop starts."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mm_agents.loader import load_agent_class
from osworld_cli.errors import CANNOT_START
from osworld_cli.main import cli
from osworld_harness.execution.episode import call_problems

AGENTS = '''
class NeedsKey:
    def __init__(self, model="m"):
        raise ValueError("set MY_API_KEY")

    def reset(self, logger=None):
        pass

    def predict(self, instruction, obs):
        return "", ["DONE"]


class ResetTakesNothing:
    def reset(self):
        pass

    def predict(self, instruction, obs):
        return "", ["DONE"]


class PredictWantsMore:
    def reset(self, logger=None):
        pass

    def predict(self, instruction, obs, extra):
        return "", ["DONE"]


class StartTaskWantsMore:
    def reset(self, logger=None):
        pass

    def start_task(self, task, seed):
        pass

    def predict(self, instruction, obs):
        return "", ["DONE"]


class AsOSWorldsRunnersCallIt:
    """reset(runtime_logger) as OSWorld's runners name it, an optional extra to predict, a trial to start_task."""

    def reset(self, runtime_logger=None, vm_ip=None):
        pass

    def predict(self, instruction, obs, extra=None, **more):
        return "", ["DONE"]

    def start_task(self, task, trial=1):
        pass


class StaticCalls:
    @staticmethod
    def reset(logger=None):
        pass

    @classmethod
    def predict(cls, instruction, obs):
        return "", ["DONE"]
'''


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    path = tmp_path / "agents.py"
    path.write_text(AGENTS)
    return path


def run(tmp_path: Path, *options: str) -> tuple[int, str]:
    done = CliRunner().invoke(cli, ["run", "--task-id", "os-find-copy-lease", "--result-dir", str(tmp_path / "r"),
                                    *options])
    return done.exit_code, done.output


def test_an_agent_that_cannot_be_built_fails_the_dry_run_as_the_real_run(agents, tmp_path):
    status, out = run(tmp_path, "--agent", f"{agents}:NeedsKey", "--dry-run")
    assert status == CANNOT_START, out
    assert "plan: 1 task(s)" in out  # the plan is still shown
    assert "Error: the agent cannot be built, so a real run would stop here: --agent: constructing" in out
    assert "ValueError: set MY_API_KEY" in out
    status, out = run(tmp_path, "--agent", f"{agents}:NeedsKey")
    assert status == CANNOT_START and "set MY_API_KEY" in out
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("agent", "expected"), [
    ("ResetTakesNothing", "ResetTakesNothing.reset(self) cannot be called as each task calls it, reset(logger): "
                          "too many positional arguments"),
    ("PredictWantsMore", "PredictWantsMore.predict(self, instruction, obs, extra) cannot be called as each task "
                         "calls it, predict(instruction, obs): missing a required argument: 'extra'"),
    ("StartTaskWantsMore", "StartTaskWantsMore.start_task(self, task, seed) cannot be called as each task calls it, "
                           "start_task(task): missing a required argument: 'seed'"),
])
def test_a_reset_or_predict_the_episode_cannot_call_is_refused_before_any_desktop(agents, tmp_path, agent, expected):
    for dry in (["--dry-run"], []):
        status, out = run(tmp_path, "--agent", f"{agents}:{agent}", *dry)
        assert status == CANNOT_START, out
        assert out.startswith("Error: --agent: ") and expected in " ".join(out.split())
        assert not (tmp_path / "r").exists()


def test_the_calls_fit_whatever_the_parameters_are_named_and_however_the_methods_are_bound(agents):
    assert call_problems(load_agent_class(f"{agents}:AsOSWorldsRunnersCallIt")) == []
    assert call_problems(load_agent_class(f"{agents}:StaticCalls")) == []
    assert len(call_problems(load_agent_class(f"{agents}:ResetTakesNothing"))) == 1


def test_a_fitting_agent_passes_the_dry_run(agents, tmp_path):
    status, out = run(tmp_path, "--agent", f"{agents}:AsOSWorldsRunnersCallIt", "--dry-run")
    assert status == 0, out
    assert "Error" not in out


@pytest.mark.parametrize(("provider", "name", "expected"), [
    ("vmware", "nope.vmx", "VMware VM {path} does not exist"),
    ("docker", "nope.qcow2", "VM disk image {path} does not exist"),
    ("virtualbox", "nope.vbox", "VirtualBox machine file {path} does not exist"),
])
def test_a_vm_file_that_is_not_there_is_an_error_of_the_dry_run_and_of_the_run(tmp_path, monkeypatch, provider, name,
                                                                               expected):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / name
    for dry in (["--dry-run"], []):  # OSWorld's run.py spelling of the options, as a researcher types them
        status, out = run(tmp_path, "--agent", "noop", "--provider_name", provider, "--path_to_vm", name, *dry)
        assert status == CANNOT_START, out
        assert out.startswith("Error: --path-to-vm: ") and expected.format(path=path) in " ".join(out.split())
        assert not (tmp_path / "r").exists()
    path.write_text("")  # there now: the dry run goes on (the VM itself is asked only when a desktop boots)
    status, out = run(tmp_path, "--agent", "noop", "--provider_name", provider, "--path_to_vm", name, "--dry-run")
    assert status == 0, out


def test_a_vmware_path_that_is_not_a_vmx_file_is_said(tmp_path):
    status, out = run(tmp_path, "--agent", "noop", "--provider", "vmware", "--path-to-vm", str(tmp_path), "--dry-run")
    assert status == CANNOT_START and "path_to_vm must be a VMware .vmx file" in out
    status, out = run(tmp_path, "--agent", "noop", "--provider", "vmware", "--dry-run")
    assert status == CANNOT_START and "the vmware provider needs path_to_vm" in out
