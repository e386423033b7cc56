"""Getters that run something in the desktop and return what it printed (or, replay, nothing)."""
from __future__ import annotations

from typing import Any

from ..context import CommandResult, EvalContext
from ..registry import getter, requires


def _run(ctx: EvalContext, config: dict) -> CommandResult:
    return ctx.run_command(config["command"], shell=bool(config.get("shell", False)))


@getter("vm_command_line")
@requires("command")
def vm_command_line(ctx: EvalContext, config: dict) -> str:
    return _run(ctx, config).output


@getter("vm_command_error")
@requires("command")
def vm_command_error(ctx: EvalContext, config: dict) -> str:
    return _run(ctx, config).error


@getter("vm_terminal_output")
def vm_terminal_output(ctx: EvalContext, config: dict) -> str | None:
    return ctx.terminal_output()


def _replay_code(index: int, action: Any) -> str:
    kind = action.get("type") if isinstance(action, dict) else None
    param = action.get("param") if isinstance(action, dict) else None
    if kind == "hotkey" and isinstance(param, list) and param and all(isinstance(k, str) for k in param):
        return f"pyautogui.hotkey(*{param!r})"
    if kind in ("typewrite", "press") and isinstance(param, str):
        return f"pyautogui.{kind}({param!r})"
    raise ValueError(f"replay: action {index} must be {{'type': 'hotkey', 'param': [keys]}} or "
                     f"{{'type': 'typewrite'|'press', 'param': text}}, got {action!r:.200}")


@getter("replay")
def replay(ctx: EvalContext, config: Any) -> None:
    """Plays recorded key actions in the desktop, in order, and returns None.

    The actions are config["trajectory"] (OSWorld's getter takes the list itself, which is
    accepted too): hotkey (`param` a list of keys), typewrite (text) and press (a key). Every
    action is checked before the first one runs.
    """
    actions = config.get("trajectory", []) if isinstance(config, dict) else config
    if not isinstance(actions, list):
        raise ValueError(f"replay: trajectory must be a list of actions, got {actions!r:.200}")
    for code in [_replay_code(i, action) for i, action in enumerate(actions)]:
        ctx.run_python(code)
