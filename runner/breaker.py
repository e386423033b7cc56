"""Stopping a run that cannot succeed: the same fatal error on consecutive tasks.

A wrong API key, a model name the server does not know, a server that does not answer, an agent
that cannot be built, a desktop package that is not installed: each fails every task the same way, so a run would burn through the suite
recording the same error. The episode marks such an error `fatal` (with a signature that says
what is "the same"); the scheduler feeds every finished task to a FatalErrorBreaker, which trips
once `limit` tasks in a row carry the same signature.
"""
from __future__ import annotations

from typing import Any


def fatal_cause(exc: BaseException | None) -> dict[str, str] | None:
    """{kind, signature, message} when `exc`, or an exception that caused it, will fail every task alike."""
    from desktop_env.errors import MissingDependency
    from mm_agents.llm.base import LLMError
    from mm_agents.loader import AgentLoadError

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        carried = getattr(exc, "fatal_cause", None)
        if isinstance(carried, dict):
            return carried
        if isinstance(exc, LLMError) and exc.fatal:
            return llm_fatal(exc.kind, exc.provider, exc.model, exc.url, str(exc))
        if isinstance(exc, AgentLoadError):
            return {"kind": "agent", "signature": f"agent: {exc}", "message": f"the agent cannot be built: {exc}"}
        if isinstance(exc, MissingDependency):
            return {"kind": "desktop", "signature": f"desktop: {exc}", "message": f"no desktop can start: {exc}"}
        exc = exc.__cause__ or exc.__context__
    return None


def llm_fatal(kind: str | None, provider: str | None, model: str | None, url: str | None, message: str) -> dict:
    server = "server" if kind in ("unreachable", "timeout") else kind  # not answering is not answering
    return {"kind": str(kind), "signature": f"{server} {provider} {model} {url}", "message": message}


class FatalErrorBreaker:
    def __init__(self, limit: int):
        self.limit = limit          # tasks in a row; 0 never trips
        self.signature: str | None = None
        self.streak = 0

    def observe(self, result: dict[str, Any]) -> str | None:
        """Books one finished task ({status, error, fatal?, ...}); the reason to stop the run, once tripped."""
        fatal = result.get("fatal") if result.get("status") == "error" else None
        if not fatal:
            self.signature, self.streak = None, 0
            return None
        if fatal["signature"] == self.signature:
            self.streak += 1
        else:
            self.signature, self.streak = fatal["signature"], 1
        if self.limit and self.streak >= self.limit:
            return (f"{self.streak} tasks in a row failed the same way: {fatal['message']}. "
                    "Fix it, then run the same command again: finished tasks are kept")
        return None
