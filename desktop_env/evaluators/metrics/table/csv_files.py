"""The compare_csv metric: a csv file's lines against one expected file's, or any of several."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ...outcome import MetricResult, failed, first_difference, passed, show
from ...registry import metric
from .workbook import _read_text_lines


@metric("compare_csv")
def compare_csv(result: Any, expected: Any, strict: bool = True, ignore_case: bool = False) -> MetricResult:
    """1.0 when the result csv has the same lines as the expected csv, or as any of them when
    `expected` is a list. Options: `strict` (default true; false strips each line),
    `ignore_case` (default false). A byte-order mark is ignored."""
    if not isinstance(result, (str, Path)):
        return failed(f"no result csv (got {show(result)})")
    result_lines = _read_text_lines(str(result))
    if result_lines is None:
        return failed(f"the result csv {result} cannot be read")
    candidates = expected if isinstance(expected, (list, tuple)) else [expected]

    def normalized(lines: list[str]) -> list[str]:
        if not strict:
            lines = [line.strip() for line in lines]
        if ignore_case:
            lines = [line.lower() for line in lines]
        return lines

    wanted = normalized(result_lines)
    differences = []
    for candidate in candidates:
        lines = _read_text_lines(str(candidate)) if isinstance(candidate, (str, Path)) else None
        if lines is None:
            differences.append(f"expected csv {show(candidate)} cannot be read")
        elif normalized(lines) == wanted:
            return passed(f"the csv has the same {len(lines)} lines as {Path(str(candidate)).name}")
        else:
            differences.append(f"line {first_difference(wanted, normalized(lines))}")
    return failed(f"the csv matches none of {len(candidates)} expected: " + "; ".join(differences))
