"""`osworld run`'s options made from RunConfig's own description of its fields (osworld_harness/results/options.py): the
flag, the default and the help are the field's; the command adds only how click parses the value."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from osworld_harness.results.config import RunConfig, flag, run_default
from osworld_harness.results.options import described


def run_option(name: str, *aliases: str, negatable: bool = False, **parsing: Any) -> Callable[[Any], Any]:
    """The click option of RunConfig's field `name`; `aliases` are other spellings, `negatable` adds --no-...
    (a flag whose default is False is an on-switch)."""
    info = described(RunConfig)[name]
    default = run_default(name)
    spelled = flag(name)
    declared = [f"{spelled}/--no-{spelled[2:]}" if negatable else spelled, *aliases, name]
    if default is False and not negatable:
        parsing.setdefault("is_flag", True)
    elif not parsing.get("multiple"):
        parsing.setdefault("default", default)
        parsing.setdefault("show_default", default is not None)
    return click.option(*declared, help=info.help, **parsing)
