"""VS Code's getter: a command of the task's evaluation extension, run from VS Code's command palette."""
from __future__ import annotations

from ...waiting import poll_until
from ..context import EvalContext
from ..registry import getter
from .files import cache_target, getter_field, save_in_cache

PALETTE_KEYS = ("ctrl", "shift", "p")
# How long the command may take to write its file: the extension activates on its first command.
WRITE_WAIT_S = 10.0
POLL_S = 0.25


@getter("vscode_config")
def vscode_config(ctx: EvalContext, config: dict) -> str | None:
    """Runs `vscode_extension_command` in the focused VS Code window and fetches the file it writes.

    As OSWorld's getter: Ctrl+Shift+P opens the command palette, the command's name is typed
    and Enter runs it; OSWorld's tasks install an evaluation extension whose commands write
    what they report to a file (e.g. "OpenProject" writes the open folder's name to
    ~/OpenProject.txt), which is then fetched from `path` into the task's cache as `dest`.
    The task's postconfig focuses VS Code first (`activate_window`), as OSWorld's do.

    OSWorld sleeps 1 s and reads the file once; this getter waits up to WRITE_WAIT_S for the
    file to appear or change, so an extension that activates slowly is not a 0 (nor a
    file the agent left there, unchanged by the command, a 1 after a lucky read). Returns
    None when the command wrote nothing (no such file), as OSWorld's does.
    """
    command, path, dest = config["vscode_extension_command"], config["path"], config["dest"]
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"{getter_field(ctx, config)}.vscode_extension_command must be a command name, "
                         f"got {command!r}")
    cache_target(ctx, config, dest)  # refused before the desktop is touched
    before = ctx.read_file(path)
    ctx.run_python(f"pyautogui.hotkey(*{list(PALETTE_KEYS)!r})")
    ctx.run_python(f"pyautogui.typewrite({command!r})")
    ctx.run_python("pyautogui.press('enter')")
    data = _wait_for_change(ctx, path, before)
    return None if data is None else save_in_cache(ctx, config, dest, data)


def _wait_for_change(ctx: EvalContext, path: str, before: bytes | None) -> bytes | None:
    """The file as last read: changed, or as it is after WRITE_WAIT_S."""
    data: bytes | None = None

    def changed() -> bool:
        nonlocal data
        data = ctx.read_file(path)
        return data is not None and data != before

    poll_until(changed, WRITE_WAIT_S, POLL_S)
    return data
