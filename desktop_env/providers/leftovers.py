"""What killed runs leave behind, as each provider's `prune()` reports it: leftovers judged stale (removed),
in use or unknown (kept), and what else it cleaned up."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

STALE, IN_USE, UNKNOWN = "stale", "in use", "unknown"


@dataclass
class Leftover:
    kind: str                   # "container" or "vm"
    ident: str                  # container ID, VM path or UUID
    name: str
    state: str                  # docker's status, or "running"
    verdict: str                # stale / in use / unknown
    reason: str
    owner_pid: int | None = None
    env_id: str | None = None
    host: str | None = None


@dataclass
class PruneResult:
    removed: list[Leftover] = field(default_factory=list)
    kept: list[Leftover] = field(default_factory=list)
    failed: list[tuple[Leftover, str]] = field(default_factory=list)
    ports_reclaimed: list[int] = field(default_factory=list)
    env_dirs_removed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, other: PruneResult) -> None:
        """Takes in another provider's result, after this one's."""
        self.removed += other.removed
        self.kept += other.kept
        self.failed += other.failed
        self.ports_reclaimed += other.ports_reclaimed
        self.env_dirs_removed += other.env_dirs_removed
        self.notes += other.notes

    def to_dict(self) -> dict:
        return {"removed": [asdict(x) for x in self.removed], "kept": [asdict(x) for x in self.kept],
                "failed": [{**asdict(x), "error": err} for x, err in self.failed],
                "ports_reclaimed": self.ports_reclaimed, "env_dirs_removed": self.env_dirs_removed,
                "notes": self.notes}
