"""Apps an OSWorld task may need that the local desktop may lack: whether each is here, and why not.

`missing_apps()` is the one place `osworld tasks coverage` (and the fidelity suite) ask; an app's
check says why it is missing, or None once the desktop has it.
"""
from __future__ import annotations

from collections.abc import Callable

from .build.vscode import build_blocker, installed_vscode


def vscode_missing() -> str | None:
    """Why the desktop cannot have VS Code: None when it is installed, or when a run can build it on
    first need (its build's Debian packages are here; vscode.ensure_vscode_for)."""
    if installed_vscode() is not None:
        return None
    blocker = build_blocker()
    return f"VS Code is not installed, and {blocker}" if blocker else None


APP_CHECKS: dict[str, Callable[[], str | None]] = {"VS Code": vscode_missing}


def missing_apps() -> dict[str, str]:
    """{app: why it is missing} for the apps this desktop lacks."""
    return {app: why for app, check in APP_CHECKS.items() if (why := check()) is not None}
