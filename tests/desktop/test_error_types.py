"""Every error desktop_env raises is a DesktopEnvError, so a caller can catch the package's errors in
one clause; an error keeps its other base (ValueError, KeyError, OSError) for callers that catch that."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import desktop_env
from desktop_env.actions import InvalidAction, validate_action
from desktop_env.errors import DesktopEnvError, TaskFileError, UnsafeTaskPath
from desktop_env.extensions import PluginError, UnknownName, get


def test_every_error_class_of_the_package_derives_from_its_root():
    outside = []
    for info in pkgutil.walk_packages(desktop_env.__path__, "desktop_env."):
        if info.name.startswith("desktop_env.server"):  # the env server runs in the desktop, on its own
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == info.name
                    and not name.startswith("_") and not issubclass(value, DesktopEnvError)):
                outside.append(f"{info.name}.{name}")
    assert outside == []


def test_errors_keep_the_builtin_base_their_callers_catch():
    with pytest.raises(ValueError) as invalid:
        validate_action({"action_type": "CLICK", "parameters": {"x": -1}})
    assert isinstance(invalid.value, InvalidAction) and isinstance(invalid.value, DesktopEnvError)
    with pytest.raises(KeyError) as unknown:
        get("metric", "no_such_metric")
    assert isinstance(unknown.value, UnknownName) and str(unknown.value).startswith("unknown metric func 'no_such_me")
    assert issubclass(PluginError, ValueError)
    assert issubclass(UnsafeTaskPath, TaskFileError)
