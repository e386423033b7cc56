"""Each option of a run is described once, beside its field: what changes results is read from there by the
folder's settings (settings.py), by the reproducing command (reproduce.py) and by `osworld run`'s help."""
from __future__ import annotations

import dataclasses

import click
import pytest
from click.testing import CliRunner

from desktop_env import extensions
from desktop_env.providers import create_provider, provider_class, provider_names
from desktop_env.providers.local import LocalProvider
from osworld_cli.main import cli
from osworld_cli.run_commands import run_command
from osworld_cli.run_options import run_options
from osworld_harness.results.config import (
    AgentOptions,
    DesktopRunOptions,
    GenerationOptions,
    RunConfig,
    RunOptionError,
    flag,
)
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


# (field, as the command line gives it, as Python gives it): each refused by the option's one check
WRONG = [("num_envs", "0", 0), ("max_steps", "0", 0), ("top_p", "0", 0.0), ("temperature", "-1", -1.0),
         ("agent_time_budget", "-5", -5.0), ("stop_after_fatal", "-1", -1), ("ray_task_retries", "-1", -1),
         ("observation_type", "som2", "som2"), ("backend", "slurm", "slurm"), ("perturb", "shake", "shake"),
         ("screen_size", "100x100", (100, 100)), ("desktop_memory", "lots", "lots"), ("limit", "0", 0)]


@pytest.mark.parametrize("name, text, value", WRONG, ids=[w[0] for w in WRONG])
def test_the_command_line_and_the_library_refuse_a_value_with_the_same_sentence(name, text, value):
    with pytest.raises(RunOptionError) as refused:
        RunConfig(**{name: value})
    assert refused.value.option == flag(name)
    done = CliRunner().invoke(cli, ["run", "--agent", "noop", flag(name), text, "--dry-run"], terminal_width=500)
    assert done.exit_code == 2
    assert done.output.splitlines()[0] == f"Error: Invalid value for '{flag(name)}'" \
        f"{' / ' + repr(described(RunConfig)[name].aliases[0]) if described(RunConfig)[name].aliases else ''}: " \
        f"{refused.value.detail}"


def test_every_option_of_run_is_made_from_its_field_its_range_and_choices_shown_as_click_shows_them():
    params = {param.name: param for param in run_command.params}
    for name, info in described(RunConfig).items():
        if info.flag is None:
            continue
        param = params[name]
        assert param.opts[0] == flag(name) and param.help == info.help, name
        if info.bounds is not None:
            assert isinstance(param.type, (click.IntRange, click.FloatRange)), name
            assert (param.type.min, param.type.max, param.type.min_open) == (
                info.bounds.least, info.bounds.most, info.bounds.open), name
        if info.choices is not None:
            assert isinstance(param.type, click.Choice) and tuple(param.type.choices) == info.choices, name
    shown = " ".join(CliRunner().invoke(cli, ["run", "--help"], terminal_width=200).output.split())
    assert "--max-steps INTEGER RANGE Agent predict calls per task. [default: 15; x>=1]" in shown
    assert "--top-p FLOAT RANGE" in shown and "[0<x<=1]" in shown
    assert "--screen-size TEXT Screen size of the desktop, WIDTHxHEIGHT. [default: 1920x1080]" in shown
    assert "--resume / --no-resume" in shown and "--network / --no-network" in shown


def test_a_field_the_layout_does_not_name_is_an_option_all_the_same():
    # what `osworld run` does for a field added to RunConfig: an empty layout still offers every flagged field
    bare = click.command("bare")(run_options()(lambda **options: None))
    flagged = [name for name, info in described(RunConfig).items() if info.flag is not None]
    assert [param.name for param in bare.params if param.name != "help"] == flagged
    assert {param.name for param in run_command.params} >= set(flagged)


def test_the_command_lines_text_becomes_the_python_values_a_config_takes():
    seen = {}
    command = click.command("seen")(run_options()(lambda **options: seen.update(options)))
    done = CliRunner().invoke(command, ["--agent-arg", "seed=7", "--agent-arg", "name=x", "--screen-size", "1280x720",
                                        "--shard", "2/4", "--domain", "os", "--no-record", "--max-steps", "50"])
    assert done.exit_code == 0, done.output
    assert (seen["agent_args"], seen["screen_size"], seen["shard"], seen["domains"], seen["record"],
            seen["max_steps"]) == ({"seed": 7, "name": "x"}, (1280, 720), (2, 4), ("os",), False, 50)
    done = CliRunner().invoke(command, ["--agent-arg", "novalue"])
    assert done.exit_code == 2 and "Invalid value for '--agent-arg': expected KEY=VALUE, got 'novalue'" in done.output
