"""The compare_conference_city_in_order metric: the cities in column C of a sheet, in order."""
from __future__ import annotations

import re
import unicodedata
from typing import Any

from ...outcome import MetricResult, failed, passed, show
from ...registry import metric
from .workbook import _open_book


def _plain_city(value: Any) -> str:
    """Lower case, accents and punctuation dropped: 'São Paulo, BR' -> 'sao paulo br'."""
    text = unicodedata.normalize("NFKD", "" if value is None else str(value))
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


@metric("compare_conference_city_in_order")
def compare_conference_city_in_order(result: Any, expected: Any) -> MetricResult:
    """The cities in column C of the active sheet, from C2 down, must contain the expected
    ones in order. `expected` is the rule dict {"expected": [city or [alternatives], ...]}.
    Upstream always reads C2:C22 and fails when the list is shorter; here the list's length
    decides how many rows are checked."""
    from openpyxl.worksheet.worksheet import Worksheet
    if not isinstance(expected, dict) or not isinstance(expected.get("expected"), list):
        raise ValueError("compare_conference_city_in_order: expected must be "
                         "{'expected': [city, ...]}")
    book = _open_book(result)
    if book is None:
        return failed(f"the result workbook {show(result)} is missing or cannot be read")
    ws = book.workbook.active
    if not isinstance(ws, Worksheet):
        return failed(f"the result workbook {show(result)} has no active worksheet (a chart sheet is active)")
    for row, wanted in enumerate(expected["expected"], start=2):
        actual = _plain_city(ws.cell(row=row, column=3).value)
        alternatives = [wanted] if isinstance(wanted, str) else list(wanted)
        if not any(_plain_city(city) and _plain_city(city) in actual for city in alternatives):
            return failed(f"cell C{row} is {show(actual)}, expected {show(wanted)}")
    return passed(f"cells C2:C{len(expected['expected']) + 1} hold the {len(expected['expected'])} cities in order")
