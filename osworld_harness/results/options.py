"""What each option of a run is, written once beside its field (`option(...)`): whether it changes what the
run measures, how the command line spells it, and its help. settings.py (what makes two runs comparable),
reproduce.py (the command that makes a run again) and `osworld run` read it from here.

Two kinds of option change results: a SETTING changes what a task's score means (runs with other settings
are not mixed in one result folder, settings.py), a CONDITION changes how the run went (where its desktops
came from, how long the agent may think) and is part of the command that reproduces it, not of the folder's
settings.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Affects(Enum):
    NOTHING = "nothing"      # where results go, how fast and how many at once
    CONDITION = "condition"  # how the run went: on the reproducing command line
    SETTING = "setting"      # what a score means: recorded as the folder's settings, and on the command line


@dataclass(frozen=True)
class OptionInfo:
    flag: str | None        # how `osworld run` spells it; None: no flag of its own
    help: str
    affects: Affects
    always: bool            # on the reproducing command line even at its default (what the run is)


_KEY = "osworld.option"


def option(default: Any = dataclasses.MISSING, *, factory: Any = dataclasses.MISSING, flag: str | None = "",
           help: str = "", affects: Affects = Affects.NOTHING, always: bool = False) -> Any:
    """A dataclass field with its option's description; `flag` "" is --the-field-name."""
    return dataclasses.field(default=default, default_factory=factory,
                             metadata={_KEY: OptionInfo(flag, help, affects, always)})


def described(cls: type) -> dict[str, OptionInfo]:
    """{field name: its OptionInfo} of a dataclass, in the order of its fields (fields without one are left out)."""
    return {f.name: f.metadata[_KEY] for f in dataclasses.fields(cls) if _KEY in f.metadata}


def default_of(cls: type, name: str) -> Any:
    """The default of field `name` of dataclass `cls` (its factory's value for a mutable one)."""
    found = {f.name: f for f in dataclasses.fields(cls)}[name]
    return found.default_factory() if found.default_factory is not dataclasses.MISSING else found.default


def flag_of(info: OptionInfo | None, name: str) -> str:
    return info.flag if info is not None and info.flag else "--" + name.replace("_", "-")
