"""How a task ended, as its worker tells the scheduler: one small record, picklable across processes and Ray."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskResult:
    """A finished task as its worker tells the scheduler, the run's tally and the fatal-error breaker. Its
    folder holds the full record; this crosses process and Ray boundaries, so it stays plain and picklable."""
    status: str                            # "ok" (scored) or "error"
    score: float | None = None             # None for an error
    steps: int = 0
    error: str | None = None               # the error's message
    fatal: dict[str, str] | None = None    # an error that fails every task alike: {kind, signature, message}

    @classmethod
    def failed(cls, error: str, fatal: dict[str, str] | None = None, steps: int = 0) -> TaskResult:
        return cls("error", None, steps, error, fatal)
