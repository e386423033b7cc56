"""Stopping a run that cannot succeed: the same fatal error on consecutive tasks.

A wrong API key, a model name the server does not know, a server that does not answer, an agent
that cannot be built, a desktop package that is not installed: each fails every task the same way,
so a run would burn through the suite recording the same error. Such an exception says so itself:
its `fatal_cause` attribute is {kind, signature, message}, the signature saying what is "the same"
(mm_agents' LLMError and AgentLoadError, desktop_env's MissingDependency, the episode's
AgentOverBudget have one). The episode records it as the error's `fatal` (results/task_folder.py's
`fatal_cause`); the scheduler feeds every finished task to a FatalErrorBreaker, which trips once
`limit` tasks in a row carry the same signature.
"""
from __future__ import annotations

from .task_result import TaskResult


class FatalErrorBreaker:
    def __init__(self, limit: int):
        self.limit = limit          # tasks in a row; 0 never trips
        self.signature: str | None = None
        self.streak = 0

    def observe(self, result: TaskResult) -> str | None:
        """Books one finished task; the reason to stop the run, once tripped."""
        fatal = result.fatal if result.status == "error" else None
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
