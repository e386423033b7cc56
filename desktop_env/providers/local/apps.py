"""Apps an OSWorld task may need that the local desktop may lack: whether each can be had, and why not.

`app_states()` is the one place that decides: `osworld tasks coverage`, the run's plan (and so its dry run),
`osworld env doctor` and the fidelity suite all ask it. An app that is not installed but whose build's
prerequisites are here counts as runnable, with the note BUILT_FIRST (a run builds it before its first
desktop starts); one that cannot be built counts as missing, and its tasks cannot run here.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .build import vscode

BUILT_FIRST = "built before the first desktop starts"


@dataclass(frozen=True)
class AppState:
    installed: Path | None   # where it is installed, None when it is not
    blocker: str | None      # why it cannot be built, None when it can (or is installed)

    @property
    def runnable(self) -> bool:
        return self.installed is not None or self.blocker is None

    def note(self) -> str:
        """What a user is told: installed where, to be built first, or why its tasks cannot run."""
        if self.installed is not None:
            return f"installed in {self.installed}"
        if self.blocker is None:
            return f"not installed: {BUILT_FIRST} (a few minutes)"
        return f"not installed, and {self.blocker}"


def vscode_state() -> AppState:
    found = vscode.installed_vscode()
    return AppState(found, None if found is not None else vscode.build_blocker())


APP_CHECKS: dict[str, Callable[[], AppState]] = {"VS Code": vscode_state}


def app_states() -> dict[str, AppState]:
    return {app: check() for app, check in APP_CHECKS.items()}


def missing_apps() -> dict[str, str]:
    """{app: why it cannot run here} for the apps this desktop lacks and cannot build."""
    return {app: f"{app} is {state.note()}" for app, state in app_states().items() if not state.runnable}


def apps_to_build() -> dict[str, str]:
    """{app: note} for the apps a run builds before its first desktop starts."""
    return {app: state.note() for app, state in app_states().items() if state.runnable and state.installed is None}
