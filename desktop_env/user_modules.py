"""Importing code users point us at: a dotted module name or a path to a .py file."""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def is_file_spec(spec: str) -> bool:
    return spec.endswith(".py") or "/" in spec


def import_user_module(spec: str, name_prefix: str, what: str) -> ModuleType:
    """Imports `spec`; a file is imported as module `<name_prefix>_<stem>`.

    A missing file raises FileNotFoundError naming `what` and the path; errors raised
    while importing propagate unchanged.
    """
    if not is_file_spec(spec):
        return importlib.import_module(spec)
    path = Path(spec).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"{what} file not found: {path}")
    module_name = f"{name_prefix}_{path.stem}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:  # a name without a suffix Python imports from
        raise ImportError(f"{what} file {path} is not a Python source file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    module_spec.loader.exec_module(module)
    return module
