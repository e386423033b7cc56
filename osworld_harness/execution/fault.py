"""Whose doing a failed episode is: the agent's, which scores 0, or not, which is an error.

What breaks inside the desktop because of the agent's own actions is the agent's failure, as a
task it did not solve is: a resource limit hit (a refused fork, an OOM kill, a full home folder),
an env server that died or was stopped, a desktop that stopped answering or lost a part of its
session (Xvfb, the window manager). Counting these as
errors would leave them out of a rate, so an agent could raise its score by wrecking the
desktop of each task it is about to fail. An error stays an error only for what is outside the
agent's control: the harness, the model API, a setup step, the host, and anything that broke
before the agent's first action reached the desktop.
"""
from __future__ import annotations

from collections.abc import Callable

from desktop_env.errors import DesktopEnvError, DesktopUnavailable, EnvServerGone, ResourceLimitExceeded
from osworld_harness.results.task_folder import AgentFault


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions that caused it (a getter's error wraps the desktop's)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not e for e in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def agent_fault(exc: BaseException, step: int, limit_hit: str = "",
                dead_parts: Callable[[], list[str]] = list) -> AgentFault | None:
    """The agent's fault in `exc`, raised after the agent's answer `step` reached the desktop, or
    None when it is an error. `limit_hit` is the desktop's own sentence on the limits it hit
    during the task ("" for none): a desktop that failed while a limit was hit failed from it.
    `dead_parts` names the parts of the desktop's session that died (Xvfb, the window manager...),
    asked only for a desktop that answered with an error."""
    chain = _chain(exc)
    limit = next((e for e in chain if isinstance(e, ResourceLimitExceeded)), None)
    if limit is not None:
        return AgentFault("resource_limit", str(limit), step)
    from_desktop = any(isinstance(e, DesktopEnvError) for e in chain)
    if limit_hit and from_desktop:
        return AgentFault("resource_limit", f"{limit_hit}; then: {type(exc).__name__}: {exc}", step)
    gone = next((e for e in chain if isinstance(e, EnvServerGone)), None)
    if gone is not None:
        return AgentFault("server_gone", str(gone), step)
    unreachable = next((e for e in chain if isinstance(e, DesktopUnavailable)), None)
    if unreachable is not None:
        return AgentFault("unresponsive", str(unreachable), step)
    parts = dead_parts() if from_desktop else []
    if parts:
        return AgentFault("unresponsive", f"the desktop's {', '.join(parts)} died; then: {type(exc).__name__}: {exc}",
                          step)
    return None
