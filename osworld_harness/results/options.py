"""What each option of a run is, written once beside its field (`option(...)`): whether it changes what the
run measures, how the command line spells it (its flag, other spellings, how its text becomes the value and
back), its help, and which values it takes (its choices, its range, any other check). settings.py (what makes
two runs comparable), reproduce.py (the command that makes a run again) and `osworld run` (whose options are
made from it, osworld_cli/run_options.py) read it from here, and `problem()` is the one check of a value, run
by RunConfig as it is made and by the command line as it parses each option.

Two kinds of option change results: a SETTING changes what a task's score means (runs with other settings
are not mixed in one result folder, settings.py), a CONDITION changes how the run went (where its desktops
came from, how long the agent may think) and is part of the command that reproduces it, not of the folder's
settings.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Affects(Enum):
    NOTHING = "nothing"      # where results go, how fast and how many at once
    CONDITION = "condition"  # how the run went: on the reproducing command line
    SETTING = "setting"      # what a score means: recorded as the folder's settings, and on the command line


@dataclass(frozen=True)
class Bounds:
    """The numbers an option takes: at least `least` (more than it when `open`), at most `most` when given;
    whole numbers only when `whole`. `unit` and `note` are said in the message: "a number of seconds >= 0
    (0: no limit)"."""
    least: float
    most: float | None = None
    whole: bool = False
    open: bool = False
    unit: str = ""
    note: str = ""

    def problem(self, value: Any) -> str | None:
        what = ("a whole number" if self.whole else "a number") + (f" {self.unit}" if self.unit else "")
        kinds = (int,) if self.whole else (int, float)
        right = not isinstance(value, bool) and isinstance(value, kinds)
        if right and (value > self.least if self.open else value >= self.least) and (
                self.most is None or value <= self.most):
            return None
        low = f"{'>' if self.open else '>='} {self.least:g}"
        span = f"in ({self.least:g}, {self.most:g}]" if self.most is not None and self.open else \
            f"in [{self.least:g}, {self.most:g}]" if self.most is not None else low
        return f"must be {what} {span}{f' {self.note}' if self.note else ''}, got {value!r}"


@dataclass(frozen=True)
class OptionInfo:
    flag: str | None        # how `osworld run` spells it; None: no flag of its own
    help: str
    affects: Affects
    always: bool            # on the reproducing command line even at its default (what the run is)
    aliases: tuple[str, ...] = ()   # other spellings the command line takes
    metavar: str | None = None      # what --help calls its value (default: its type's name)
    choices: tuple[str, ...] | None = None
    bounds: Bounds | None = None
    # the command line's text (a repeatable option's: all of them) as the value; ValueError says what is wrong
    parse: Callable[[Any], Any] | None = None
    # the value as the command line writes it (its default in --help, the reproducing command)
    spell: Callable[[Any], str] | None = None
    check: Callable[[Any], str | None] | None = None   # what else is wrong with a value, None when nothing


_KEY = "osworld.option"


def option(default: Any = dataclasses.MISSING, *, factory: Any = dataclasses.MISSING, flag: str | None = "",
           help: str = "", affects: Affects = Affects.NOTHING, always: bool = False, aliases: tuple[str, ...] = (),
           metavar: str | None = None, choices: tuple[str, ...] | None = None, bounds: Bounds | None = None,
           parse: Callable[[Any], Any] | None = None, spell: Callable[[Any], str] | None = None,
           check: Callable[[Any], str | None] | None = None) -> Any:
    """A dataclass field with its option's description; `flag` "" is --the-field-name."""
    return dataclasses.field(default=default, default_factory=factory, metadata={_KEY: OptionInfo(
        flag, help, affects, always, aliases, metavar, choices, bounds, parse, spell, check)})


def problem(info: OptionInfo, value: Any, default: Any = dataclasses.MISSING) -> str | None:
    """What is wrong with `value` for the option `info` describes, None when nothing: not one of its choices,
    out of its range, or refused by its own check. None is right for an option whose default is None (left to
    the agent or the run to decide)."""
    if value is None and default is None:
        return None
    if info.choices is not None and value not in info.choices:
        return f"must be one of {', '.join(info.choices)}, got {value!r}"
    if info.bounds is not None:
        found = info.bounds.problem(value)
        if found:
            return found
    return info.check(value) if info.check is not None else None


def described(cls: type) -> dict[str, OptionInfo]:
    """{field name: its OptionInfo} of a dataclass, in the order of its fields (fields without one are left out)."""
    return {f.name: f.metadata[_KEY] for f in dataclasses.fields(cls) if _KEY in f.metadata}


def default_of(cls: type, name: str) -> Any:
    """The default of field `name` of dataclass `cls` (its factory's value for a mutable one)."""
    found = {f.name: f for f in dataclasses.fields(cls)}[name]
    return found.default_factory() if found.default_factory is not dataclasses.MISSING else found.default


def flag_of(info: OptionInfo | None, name: str) -> str:
    return info.flag if info is not None and info.flag else "--" + name.replace("_", "-")
