"""An example metric: do two text files hold the same words, in the same order?

Load it with `--plugin docs/examples/metric/same_words.py` and name it in a task:
    "evaluator": {"func": "example_same_words", "options": {"ignore_case": true},
                  "result": {"type": "vm_file", ...}, "expected": {"type": "cloud_file", ...}}
"""
from __future__ import annotations

from pathlib import Path

from desktop_env.evaluators.outcome import MetricResult, failed, passed
from desktop_env.evaluators.registry import metric


def _words(path: str, ignore_case: bool) -> list[str]:
    text = Path(path).read_text(encoding="utf-8")
    return (text.lower() if ignore_case else text).split()


@metric("example_same_words")
def same_words(result: str | None, expected: str, ignore_case: bool = False) -> MetricResult:
    """1 when the result file has the expected file's words (whitespace does not matter), else 0,
    saying which word differs first."""
    # The scorer gives 0 itself when the result getter found nothing; a direct caller may not.
    if result is None:
        return failed("there is no result file to compare")
    produced, wanted = _words(result, ignore_case), _words(expected, ignore_case)
    # The words both have first; a longer file's extra words are told below.
    for position, (got, want) in enumerate(zip(produced, wanted, strict=False), start=1):
        if got != want:
            return failed(f"word {position} differs: expected {want!r}, got {got!r}")
    if len(produced) != len(wanted):
        extra, which = (produced, "result") if len(produced) > len(wanted) else (wanted, "expected file")
        return failed(f"the {which} has {abs(len(produced) - len(wanted))} more word(s), "
                      f"from word {min(len(produced), len(wanted)) + 1}: {extra[min(len(produced), len(wanted))]!r}")
    return passed(f"both files hold the same {len(wanted)} words")
