"""Getters and metrics by name.

A task file names its evaluator parts as strings (`"func": "compare_table"`,
`"result": {"type": "vm_file", ...}`); this registry maps those names to plain
functions. Built-in ones register themselves with the decorators when their
module is imported; users add their own the same way from a module of theirs
(`load_plugin("my_pkg.my_metrics")` or a file path), without touching the core.

Calling conventions (OSWorld's):
  getter(env, config: dict) -> value           (often the local path of a fetched file)
  metric(result, expected, **options) -> float  or  metric(result, **options) -> float
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable

Getter = Callable[[Any, dict], Any]
Metric = Callable[..., float]


class UnknownName(KeyError):
    """A getter or metric name that no module registered; the message lists close names."""

    def __init__(self, kind: str, name: str, known: list[str]):
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        super().__init__(f"unknown {kind} {name!r}{hint}")
        self.kind = kind
        self.name = name
        self.close = close

    def __str__(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class Unsupported:
    """A name from OSWorld's set that we know but cannot run here, and why."""
    name: str
    reason: str


_GETTERS: dict[str, Getter] = {}
_METRICS: dict[str, Metric] = {}
# Known OSWorld names that need a live account or the live web: listed, not faked.
UNSUPPORTED_GETTERS: dict[str, str] = {}
UNSUPPORTED_METRICS: dict[str, str] = {}
_BUILTINS_LOADED = False


def getter(name: str) -> Callable[[Getter], Getter]:
    def register(fn: Getter) -> Getter:
        _GETTERS[name] = fn
        return fn
    return register


def metric(name: str) -> Callable[[Metric], Metric]:
    def register(fn: Metric) -> Metric:
        _METRICS[name] = fn
        return fn
    return register


def unsupported_getter(name: str, reason: str) -> None:
    UNSUPPORTED_GETTERS[name] = reason


def unsupported_metric(name: str, reason: str) -> None:
    UNSUPPORTED_METRICS[name] = reason


def load_builtins() -> None:
    """Imports the built-in getter and metric modules (they register on import)."""
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    from . import getters, metrics  # noqa: F401  (packages import their modules)
    _BUILTINS_LOADED = True


def get_getter(name: str) -> Getter:
    load_builtins()
    try:
        return _GETTERS[name]
    except KeyError:
        raise UnknownName("getter type", name, sorted(_GETTERS)) from None


def get_metric(name: str) -> Metric:
    load_builtins()
    try:
        return _METRICS[name]
    except KeyError:
        raise UnknownName("metric func", name, sorted(_METRICS)) from None


def getter_names() -> list[str]:
    load_builtins()
    return sorted(_GETTERS)


def metric_names() -> list[str]:
    load_builtins()
    return sorted(_METRICS)


class PluginError(ValueError):
    """A plugin module that cannot be imported; the message names it and why."""


def load_plugin(spec: str) -> None:
    """Imports a user module that registers getters/metrics: a dotted name or a .py path."""
    from ..user_modules import import_user_module
    try:
        import_user_module(spec, "osworld_plugin", "evaluator plugin")
    except FileNotFoundError as e:
        raise PluginError(str(e)) from None
    except ImportError as e:
        raise PluginError(f"cannot import {spec!r}: {e}") from e
    except Exception as e:  # the plugin's own code failed while it was imported
        raise PluginError(f"importing {spec!r} failed: {type(e).__name__}: {e}") from e
