"""What an agent's model calls for one task were sent with and answered by: the reproducibility
record an agent offers as `model_calls` (mm_agents/base.py), which the harness keeps in status.json."""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ModelCalls:
    """The calls made since the agent's last reset: how many, each distinct set of sampling settings
    the requests carried and each model id the servers said answered, in the order first seen."""
    calls: int = 0
    sent: list[dict[str, Any]] = field(default_factory=list)
    served: list[str] = field(default_factory=list)

    def add(self, sent: Mapping[str, Any], served: str | None) -> None:
        self.calls += 1
        settings = json.loads(json.dumps(dict(sent), default=str))  # as status.json will hold it
        if settings and settings not in self.sent:
            self.sent.append(settings)
        if served and served not in self.served:
            self.served.append(served)

    def to_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "sent": list(self.sent), "served": list(self.served)}
