"""Each option of a run is described once, beside its field: what changes results is read from there by the
folder's settings (settings.py), by the reproducing command (reproduce.py) and by `osworld run`'s help."""
from __future__ import annotations

import dataclasses

from click.testing import CliRunner

from desktop_env import extensions
from desktop_env.providers import create_provider, provider_class, provider_names
from desktop_env.providers.local import LocalProvider
from osworld_cli.main import cli
from osworld_harness.results.config import AgentOptions, DesktopRunOptions, GenerationOptions, RunConfig, flag
from osworld_harness.results.options import Affects, default_of, described
from osworld_harness.results.reproduce import reproduce_command
from osworld_harness.results.settings import setting_differences, settings_of

# A value other than the default for each option that changes results.
CHANGED = {"agent": "noop", "agent_args": {"seed": 7}, "model": "other-model", "observation_type": "screenshot",
           "action_space": "computer_13", "max_steps": 50, "max_trajectory_length": 5, "temperature": 0.0,
           "top_p": 0.5, "max_tokens": 99, "screen_size": (1280, 720), "screenshot_scale": 0.5, "perturb": "layout",
           "perturb_seed": 3, "evaluator_fixes": True, "trials": 3, "provider": "remote",
           "path_to_vm": "http://10.0.0.5:5000", "sleep_after_execution": 2.0, "network": True,
           "wait_after_reset": 5.0, "agent_time_budget": 60.0, "plugins": ["my_metrics"],
           "agent_python": "/opt/osworld-venv/bin/python"}


def affecting(*kinds: Affects) -> list[str]:
    return [name for name, info in described(RunConfig).items() if info.affects in kinds]


def recorded(**changes):
    """RunConfig's fields as args.json records them, with `changes`."""
    return json_ready({**dataclasses.asdict(RunConfig()), **changes})


def json_ready(values):
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


def test_every_field_of_a_run_is_described():
    assert set(described(RunConfig)) == {f.name for f in dataclasses.fields(RunConfig)}
    assert all(info.help for name, info in described(RunConfig).items() if info.flag is not None)


def test_every_setting_is_recorded_and_compared():
    perturbed = {"perturb": "clutter"}  # a seed changes nothing without a perturbation
    for name in affecting(Affects.SETTING):
        assert name in settings_of(RunConfig()), name
        assert setting_differences(recorded(**perturbed), recorded(**{**perturbed, name: CHANGED[name]})) == [name]


def test_every_option_that_changes_results_is_on_the_reproducing_command():
    for name in affecting(Affects.SETTING, Affects.CONDITION):
        command = reproduce_command(recorded(**{name: CHANGED[name]}))
        assert flag(name) in command.split() or f"{flag(name)}" in command, (name, command)
        assert command != reproduce_command(recorded()), name


def test_what_changes_nothing_is_left_off_the_command_and_out_of_the_settings():
    for name in affecting(Affects.NOTHING):
        assert name not in settings_of(RunConfig())
        assert flag(name) not in reproduce_command(recorded()).split()


def test_the_run_command_offers_each_described_flag_with_its_help():
    shown = CliRunner().invoke(cli, ["run", "--help"], terminal_width=10_000).output
    for name, info in described(RunConfig).items():
        if info.flag is not None:
            assert flag(name) in shown, name
            assert " ".join(info.help.split()[:6]) in " ".join(shown.split()), name


def test_a_providers_own_options_are_run_options_with_the_same_defaults():
    for name in provider_names():
        own = (provider_class(name) or object).__dict__.get("Options")
        for spec in dataclasses.fields(own) if own is not None else ():
            assert default_of(RunConfig, spec.name) == default_of(own, spec.name), (name, spec.name)


def test_the_desktop_a_run_asks_for_reaches_the_local_provider_and_one_made_from_it():
    class LoggedLocal(LocalProvider):  # as a plugin's provider built on the local one (docs/EXTENDING.md)
        pass

    config = RunConfig(screen_size=(1280, 720), client_password="s3cret", desktop_memory="2G")
    made = [create_provider("local", config.desktop())]
    with extensions.replaced("provider", "local", LoggedLocal):
        made.append(create_provider("local", config.desktop()))
    assert [type(provider) for provider in made] == [LocalProvider, LoggedLocal]
    for provider in made:
        assert provider.config.screen_size == (1280, 720) and provider.config.client_password == "s3cret"
        assert provider.config.limits.memory_bytes == 2 << 30 and provider.config.warm_spare == "lazy"


def test_the_groups_of_options_share_out_every_field_once():
    groups = [base for base in RunConfig.__mro__[1:] if dataclasses.is_dataclass(base)]
    names = [f.name for group in groups for f in dataclasses.fields(group)]
    assert sorted(names) == sorted(f.name for f in dataclasses.fields(RunConfig))
    assert {AgentOptions, GenerationOptions, DesktopRunOptions} <= set(groups)


def test_a_run_is_made_from_whole_groups_and_gives_each_back_typed():
    config = RunConfig.of(GenerationOptions(temperature=0.0, top_p=0.5), DesktopRunOptions(screen_size=(1280, 720)),
                          model="other-model")
    assert config.group(GenerationOptions) == GenerationOptions(temperature=0.0, top_p=0.5, max_tokens=None)
    assert config.temperature == 0.0 and config.model == "other-model"
    assert config.desktop().screen_size == (1280, 720)
    assert config.agent_kwargs()["top_p"] == 0.5
