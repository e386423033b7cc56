"""OSWorld-Verified, as the leaderboard runs it: which task files of an OSWorld checkout it is.

The leaderboard scores the 361 tasks of `evaluation_examples/test_nogdrive.json`: OSWorld's 369
(`test_all.json`) less the 8 that need OSWorld's own Google Drive account. A checkout without
test_nogdrive.json (an older one, or a folder of task files in OSWorld's layout) gives its test_all.json
with the tasks that need Google Drive left out, which is the same selection.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_env.tasks import TaskFileError
from desktop_env.tasks.remote_files import task_steps

if TYPE_CHECKING:
    from desktop_env.tasks import Task, TaskSet

OFFICIAL_META = "test_nogdrive.json"
ALL_META = "test_all.json"
OFFICIAL_TASKS = 361
LEADERBOARD_STEPS = (15, 50, 100)
GOOGLE_DRIVE = frozenset({"googledrive", "googledrive_file"})  # a setup step and a getter of OSWorld's account


class NotACheckout(ValueError):
    """A path given as an OSWorld checkout that holds no task set; the message says what it holds."""


def evaluation_folder(checkout: str | os.PathLike[str]) -> Path:
    """The folder with the meta files and examples/: the checkout's evaluation_examples/, or the path itself."""
    root = Path(checkout).expanduser()
    for folder in (root / "evaluation_examples", root):
        if (folder / "examples").is_dir() and ((folder / OFFICIAL_META).is_file() or (folder / ALL_META).is_file()):
            return folder.resolve()
    if not root.exists():
        raise NotACheckout(f"{root} does not exist")
    raise NotACheckout(f"{root} is not an OSWorld checkout: neither it nor its evaluation_examples/ holds "
                       f"examples/ with {OFFICIAL_META} or {ALL_META} beside it")


def official_meta(checkout: str | os.PathLike[str]) -> Path:
    """The meta file of OSWorld-Verified in the checkout: test_nogdrive.json, else test_all.json (whose
    Google Drive tasks `left_out` then leaves out)."""
    folder = evaluation_folder(checkout)
    official = folder / OFFICIAL_META
    return official if official.is_file() else folder / ALL_META


def needs_google_drive(task: Task) -> bool:
    """Whether the task uses OSWorld's Google Drive account (a `googledrive` step or getter)."""

    if any(step.get("type") in GOOGLE_DRIVE for _, step in task_steps(task)):
        return True
    evaluator = task.evaluator
    specs = [evaluator.get(key) for key in ("result", "expected")]
    flat = [s for spec in specs for s in (spec if isinstance(spec, list) else [spec])]
    return any(isinstance(s, dict) and s.get("type") in GOOGLE_DRIVE for s in flat)


def left_out(task_set: TaskSet, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The selected tasks OSWorld-Verified leaves out, with why: those that need Google Drive (none when
    the meta file is test_nogdrive.json, which lists none). A task file that cannot be read stays in, for
    the plan to refuse with its reason."""

    out: dict[tuple[str, str], str] = {}
    for pair in pairs:
        try:
            task = task_set.load(*pair, check_paths=False)
        except TaskFileError:
            continue
        if needs_google_drive(task):
            out[pair] = "needs OSWorld's Google Drive account (OSWorld-Verified leaves it out)"
    return out
