"""Apps an OSWorld task may need that the local desktop may lack: whether each is here, and why not.

`missing_apps()` is the one place `osworld tasks coverage` (and the fidelity suite) ask; an app's
check says why it is missing, or None once the desktop has it.
"""
from __future__ import annotations

from collections.abc import Callable


def vscode_missing() -> str | None:
    """Why the desktop has no VS Code (None when it has)."""
    return "the desktop has no VS Code (Debian does not package it; see VM_DIFFERENCES.md)"


APP_CHECKS: dict[str, Callable[[], str | None]] = {"VS Code": vscode_missing}


def missing_apps() -> dict[str, str]:
    """{app: why it is missing} for the apps this desktop lacks."""
    return {app: why for app, check in APP_CHECKS.items() if (why := check()) is not None}
