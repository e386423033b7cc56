"""Getters and metrics by name: the evaluator's face of desktop_env.extensions.

A task file names its evaluator parts as strings (`"func": "compare_table"`,
`"result": {"type": "vm_file", ...}`); the registry maps those names to plain
functions. Built-in ones register themselves with the decorators when their
module is imported; users add their own the same way from a module of theirs,
installed with an `osworld.getters`/`osworld.metrics` entry point or named by
`--plugin` (`desktop_env.extensions.load_plugin("my_pkg.my_metrics")` or a file path), without
touching the core.

Calling conventions (OSWorld's):
  getter(ctx, config: dict) -> value           (ctx: evaluators/context.py; often a fetched file's path)
  metric(result, expected, **declared options) -> MetricResult (outcome.py; a bare float is still accepted)
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, TypeVar

from .. import extensions
from ..extensions import UnknownName, UnsupportedName  # noqa: F401  (part of this module's API)
from .outcome import MetricResult

Getter = Callable[[Any, dict], Any]
Metric = Callable[..., MetricResult | float]
# The decorators hand back the function they were given, with its own signature, so a metric that
# calls another (or a test) sees what it really returns.
G = TypeVar("G", bound=Getter)
M = TypeVar("M", bound=Metric)

# Known OSWorld names that need a live account or the live web: listed, not faked (name -> reason).
UNSUPPORTED_GETTERS = extensions.UnsupportedView("getter")
UNSUPPORTED_METRICS = extensions.UnsupportedView("metric")


class OptionIssue(NamedTuple):
    """What a metric's `check_options(options)` finds in a task's options (validation reads it): the field
    under `options`, the value, why, and close known names. `ignored`: a name OSWorld's task files use but
    OSWorld's own metric never reads, so the task runs as it does there and validation only warns."""
    field: str
    value: str
    reason: str
    close: tuple = ()
    ignored: bool = False


def ignored_options(fn: Metric) -> dict[str, str]:
    """Options a metric declares as read by no metric, OSWorld's included (`fn.ignored_options`, name ->
    why): validation warns about them and the scorer leaves them out of the call."""
    return getattr(fn, "ignored_options", {})


def _declare(fn: Callable[..., Any], attribute: str, value: Any) -> None:
    """Sets a function attribute that task validation reads (with getattr). Written through the
    function's __dict__ because a Callable's type has no room for attributes of one's own."""
    vars(fn)[attribute] = value


def getter(name: str) -> Callable[[G], G]:
    return extensions.decorator("getter", name)


def requires(*fields: str) -> Callable[[G], G]:
    """Declares the config fields a getter cannot do without (under @getter): task validation
    reports a getter config that lacks one, naming the field, before any desktop starts."""
    def mark(fn: G) -> G:
        _declare(fn, "required_fields", fields)
        return fn
    return mark


def metric(name: str) -> Callable[[M], M]:
    return extensions.decorator("metric", name)


def declare_option_check(fn: Metric, check: Callable[[dict], Iterable[OptionIssue]]) -> None:
    """`check(options)` is what task validation calls (as `fn.check_options`) to find the options of a
    task that this metric would reject, before any desktop starts."""
    _declare(fn, "check_options", check)


def declare_ignored_options(fn: Metric, ignored: dict[str, str]) -> None:
    """Options (name -> why) that no metric reads, OSWorld's included: see ignored_options."""
    _declare(fn, "ignored_options", ignored)


def unsupported_getter(name: str, reason: str) -> None:
    extensions.unsupported("getter", name, reason)


def unsupported_metric(name: str, reason: str) -> None:
    extensions.unsupported("metric", name, reason)


def load_builtins() -> None:
    """Imports the built-in getter and metric modules (they register on import) and the installed
    plugins' entry points."""
    extensions.ensure_loaded("getter")
    extensions.ensure_loaded("metric")


def get_getter(name: str) -> Getter:
    return extensions.get("getter", name)


def get_metric(name: str) -> Metric:
    return extensions.get("metric", name)


def getter_names() -> list[str]:
    return extensions.names("getter")


def metric_names() -> list[str]:
    return extensions.names("metric")


def replaced_getter(name: str, fn: Getter):
    """A block in which `fn` stands in for getter `name` (see extensions.replaced)."""
    return extensions.replaced("getter", name, fn)
