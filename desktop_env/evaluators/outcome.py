"""What a metric and a whole evaluation give back: a score and why.

A researcher's first question about a 0 is "why?". Metrics therefore return a
`MetricResult` (a score with a one-line explanation of what was compared and what
differed); a metric that still returns a bare number (an older plugin) is accepted
and explained as "returned <n>" so nothing breaks. The evaluation of a task combines
its metrics into an `Evaluation`, which the harness stores in status.json beside the
score and `summarize --failures` / the report show.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

# An explanation is for people; keep status.json small even when a metric quotes a file.
MAX_EXPLANATION_CHARS = 2000


def clip(text: str, limit: int = MAX_EXPLANATION_CHARS) -> str:
    text = " ".join(str(text).split()) if "\n" not in str(text) else str(text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class MetricResult:
    """A metric's score in [0, 1] and a sentence saying what was compared and what differed
    (the first differing cell, the missing file, the expected and the actual value)."""
    score: float
    explanation: str = ""

    def __post_init__(self) -> None:
        try:
            value = float(self.score)
        except (TypeError, ValueError):
            raise TypeError(f"a metric score must be a number, got {self.score!r}") from None
        if math.isnan(value):
            raise ValueError("a metric score must not be NaN")
        object.__setattr__(self, "score", value)
        object.__setattr__(self, "explanation", clip(self.explanation))

    def __float__(self) -> float:  # old call sites that did float(metric(...)) keep working
        return self.score


def passed(explanation: str = "", score: float = 1.0) -> MetricResult:
    return MetricResult(score, explanation)


def failed(explanation: str, score: float = 0.0) -> MetricResult:
    return MetricResult(score, explanation)


def verdict(ok: bool, explanation: str) -> MetricResult:
    """All or nothing: 1 when `ok`, else 0, with the sentence that says what was checked."""
    return MetricResult(1.0 if ok else 0.0, explanation)


def show(value: Any, limit: int = 120) -> str:
    """A value quoted for an explanation, clipped so a whole file never lands in status.json."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_difference(got: Any, want: Any) -> str:
    """Where two sequences (lines, paragraphs, items) first differ, as 'item 3: 'a' vs 'b''."""
    try:
        got_items, want_items = list(got), list(want)
    except TypeError:
        return f"{show(got)} vs {show(want)}"
    # Up to the shorter one's end; a difference in length is said after.
    for i, (a, b) in enumerate(zip(got_items, want_items, strict=False)):
        if a != b:
            return f"item {i}: {show(a)} vs expected {show(b)}"
    if len(got_items) != len(want_items):
        return f"{len(got_items)} items vs {len(want_items)} expected"
    return "no difference"


def as_metric_result(value: Any, metric_name: str) -> MetricResult:
    """A metric's return value as a MetricResult; a bare number gets a generic explanation."""
    if isinstance(value, MetricResult):
        return value
    if isinstance(value, bool):
        value = float(value)
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"metric {metric_name!r} returned {value!r:.200}, not a number or MetricResult") from None
    return MetricResult(score, f"{metric_name} returned {score:g} (it gives no explanation)")


@dataclass(frozen=True)
class MetricPart:
    """One metric of a task's evaluator as it ran: its name, score and explanation, and what its getters gave
    (`values`: {"result": ..., "expected": ...}, each a fingerprint.fingerprint). `skipped` says it never ran (an
    earlier metric decided the "and"/"or")."""
    func: str
    score: float | None
    explanation: str
    skipped: bool = False
    values: dict[str, Any] | None = None


@dataclass(frozen=True)
class Evaluation:
    """A task's score, its one-paragraph explanation and the metrics behind it."""
    score: float
    explanation: str
    parts: tuple[MetricPart, ...] = field(default_factory=tuple)

    def to_json(self) -> dict:
        return {"score": self.score, "explanation": self.explanation,
                "metrics": [{k: v for k, v in asdict(p).items() if k != "values" or v is not None}
                            for p in self.parts]}

    @classmethod
    def from_json(cls, data: dict) -> Evaluation:
        parts = tuple(MetricPart(**p) for p in data.get("metrics", []))
        return cls(float(data["score"]), str(data.get("explanation", "")), parts)


def summarize_parts(score: float, conj: str, parts: list[MetricPart]) -> str:
    """One paragraph for the whole task: a single metric speaks for itself; several are
    listed with their scores, the deciding one first when a conj stopped early."""
    ran = [p for p in parts if not p.skipped]
    if len(parts) == 1:
        return parts[0].explanation
    lines = [f"{p.func}: {p.score:g}: {p.explanation}" for p in ran]
    skipped = [p.func for p in parts if p.skipped]
    head = f"{len(ran)} of {len(parts)} metrics ran (conj {conj!r}), score {score:g}"
    if skipped:
        head += f"; not run: {', '.join(skipped)}"
    return head + "\n" + "\n".join(lines)
