"""The plugin's agent: writes a note in the user's home, then says it is done."""
from __future__ import annotations

from typing import Any

NOTE = "/home/user/note.txt"
TEXT = "written by the example plugin"


class NoteWriterAgent:
    def __init__(self, **kwargs: Any):
        self.steps = 0

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[str, list[str]]:
        self.steps += 1
        if self.steps == 1:
            return "Writing the note.", [f"open({NOTE!r}, 'w').write({TEXT!r})"]
        return "The note is written.", ["DONE"]

    def reset(self, logger=None) -> None:
        self.steps = 0
