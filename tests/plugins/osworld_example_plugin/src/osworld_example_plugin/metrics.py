"""The plugin's metric, registered with the harness's own decorator when this module is imported."""
from __future__ import annotations

from pathlib import Path

from desktop_env.evaluators.outcome import MetricResult
from desktop_env.evaluators.registry import metric


@metric("example_note_matches")
def note_matches(result: str | None, expected: dict) -> MetricResult:
    """1.0 when the fetched note file holds exactly `expected["text"]` (surrounding blanks aside)."""
    if result is None:
        return MetricResult(0.0, "no note file")
    text = Path(result).read_text(encoding="utf-8").strip()
    if text == expected["text"]:
        return MetricResult(1.0, f"the note says {text!r}")
    return MetricResult(0.0, f"the note says {text!r}, expected {expected['text']!r}")
