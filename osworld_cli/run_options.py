"""`osworld run`'s options made from RunConfig's own description of its fields (osworld_harness/results/options.py):
each option's flag and other spellings, default, help, metavar, its type (a number, a choice, a flag, --x/--no-x,
repeatable) read from the field's annotation, and how its text becomes the value. Each value is checked as it is
parsed by the same check RunConfig runs as it is made (options.problem), so a mistake is the same sentence from
the command line and from the Python API; a number's range and a choice's values show in --help as click shows
them.

`run_options(...)` lays the options out in the order --help lists them; every field with a flag that the layout
does not name comes after them, so a field added to RunConfig is an option of `osworld run` at once."""
from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import click

from osworld_harness.results.config import RunConfig, RunOptionError, flag, run_default
from osworld_harness.results.options import OptionInfo, described, problem

Command = TypeVar("Command", bound=Callable[..., Any])
Decorator = Callable[[Any], Any]


class _ShownChoice(click.Choice):  # type: ignore[type-arg]
    """Shown as click shows a choice ([a|b|c]); the option's check (RunConfig's) says what is wrong."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return value


class _ShownIntRange(click.IntRange):
    """Shown as click shows a range (INTEGER RANGE, x>=1); only the number is read here, its range is checked
    by the option's check."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return typing.cast(Any, click.types.IntParamType.convert)(self, value, param, ctx)


class _ShownFloatRange(click.FloatRange):
    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return typing.cast(Any, click.types.FloatParamType.convert)(self, value, param, ctx)


@functools.cache
def _hints() -> dict[str, Any]:
    return typing.get_type_hints(RunConfig)


def _annotation(name: str) -> Any:
    """The field's type without None: `int | None` is int."""
    hint = _hints()[name]
    args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    return args[0] if typing.get_origin(hint) in (typing.Union, type(int | None)) and len(args) == 1 else hint


def _type(info: OptionInfo, hint: Any) -> click.ParamType[Any, Any] | None:
    if info.choices is not None:
        return _ShownChoice(info.choices)
    bounds = info.bounds
    if bounds is not None and bounds.whole:
        most = None if bounds.most is None else int(bounds.most)
        return _ShownIntRange(int(bounds.least), most, min_open=bounds.open)
    if bounds is not None:
        return _ShownFloatRange(bounds.least, bounds.most, min_open=bounds.open)
    if info.parse is not None or hint is str:
        return click.STRING  # a parse reads the text
    return click.INT if hint is int else click.FLOAT if hint is float else None


def _checked(name: str, info: OptionInfo) -> Callable[[click.Context, click.Parameter, Any], Any]:
    default = {f.name: f.default for f in dataclasses.fields(RunConfig)}[name]

    def check(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if info.parse is not None and value is not None:
            try:
                value = info.parse(value)
            except ValueError as e:
                raise click.BadParameter(e.detail if isinstance(e, RunOptionError) else str(e)) from None
        found = None if isinstance(value, tuple) and typing.get_origin(_annotation(name)) is list \
            else problem(info, value, default)
        if found:
            raise click.BadParameter(found)
        return value
    return check


def run_option(name: str, **overrides: Any) -> Decorator:
    """The click option of RunConfig's field `name`, made from its description; `overrides` are click's own
    keyword arguments where a command needs its own."""
    info = described(RunConfig)[name]
    hint = _annotation(name)
    default = run_default(name)
    spelled = flag(name)
    negatable = hint is bool and default is not False  # an on-switch when it is off by default
    declared = [f"{spelled}/--no-{spelled[2:]}" if negatable else spelled, *info.aliases, name]
    parsing: dict[str, Any] = {"help": info.help, "callback": _checked(name, info)}
    if info.metavar:
        parsing["metavar"] = info.metavar
    if hint is bool and not negatable:
        parsing["is_flag"] = True
    elif typing.get_origin(hint) in (list, dict):
        parsing["multiple"] = True
    else:
        parsing["default"] = info.spell(default) if info.spell is not None and default is not None else default
        parsing["show_default"] = default is not None
    shown = _type(info, hint) if hint is not bool else None
    if shown is not None:
        parsing["type"] = shown
    return click.option(*declared, **{**parsing, **overrides})


def run_options(*layout: str | Decorator) -> Callable[[Command], Command]:
    """`osworld run`'s options in the order --help lists them: RunConfig's fields by name, and the command's own
    click options where they go; then every other field with a flag, in the order RunConfig declares them."""
    named = {item for item in layout if isinstance(item, str)}
    rest = [name for name, info in described(RunConfig).items() if info.flag is not None and name not in named]

    def decorate(command: Command) -> Command:
        for item in reversed([*layout, *rest]):
            command = (run_option(item) if isinstance(item, str) else item)(command)
        return command
    return decorate


def config_values(options: dict[str, Any]) -> dict[str, Any]:
    """RunConfig's keyword arguments from the values click gives its options: a repeatable option's tuple as
    the field's list."""
    lists = {name for name in described(RunConfig) if typing.get_origin(_annotation(name)) is list}
    return {name: list(value) if name in lists and isinstance(value, tuple) else value
            for name, value in options.items()}
