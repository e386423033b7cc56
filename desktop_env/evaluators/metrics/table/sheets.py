"""The rules on a sheet's data as a whole: sheet_name (the books' sheet names), sheet_data (the sheets as pandas
reads them, numbers rounded), sheet_print (the csv export's lines) and sheet_fuzzy (cell texts over ranges, as
OSWorld reads each cell, matched exactly, by inclusion or fuzzily)."""
from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, Any

import numpy
from rapidfuzz import fuzz

from ...outcome import first_difference, show
from .osworld_cells import OSWorldReadRaises
from .rules import PAIR, RuleFields, _missing_sheets, table_rule
from .workbook import _Books

if TYPE_CHECKING:
    import pandas as pd


def _is_missing(value: Any) -> bool:
    import pandas as pd
    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, numpy.bool_))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, numpy.number)) and not _is_bool(value)


def _values_equal(a: Any, b: Any, precision: int) -> bool:
    import pandas as pd
    if _is_missing(a) or _is_missing(b):
        return _is_missing(a) and _is_missing(b)
    if _is_bool(a) or _is_bool(b):
        return _is_bool(a) and _is_bool(b) and bool(a) == bool(b)
    if _is_number(a) and _is_number(b):
        return round(float(a), precision) == round(float(b), precision)
    if isinstance(a, (datetime, date)) and isinstance(b, (datetime, date)):
        return pd.Timestamp(a) == pd.Timestamp(b)
    return type(a) is type(b) and a == b


def _frames_difference(a: pd.DataFrame, b: pd.DataFrame, precision: int) -> str | None:
    """None when the frames have the same shape, header and values, numbers compared after
    rounding to `precision` decimals (OSWorld: DataFrame.round + equals; unlike DataFrame.equals,
    an int column equals a float column holding the same numbers); else the first difference:
    the shape, a header, or the first differing cell (row by row) with both values."""
    from openpyxl.utils import get_column_letter
    if a.shape != b.shape:
        return f"{a.shape[0] + 1} rows x {a.shape[1]} columns vs expected {b.shape[0] + 1} x {b.shape[1]}"
    for column, (x, y) in enumerate(zip(a.columns, b.columns, strict=True)):
        if not _values_equal(x, y, precision):
            return f"header cell {get_column_letter(column + 1)}1 {show(x)} vs expected {show(y)}"
    left = [a.iloc[:, column].tolist() for column in range(a.shape[1])]
    right = [b.iloc[:, column].tolist() for column in range(b.shape[1])]
    for row in range(a.shape[0]):
        for column in range(a.shape[1]):
            x, y = left[column][row], right[column][row]
            if not _values_equal(x, y, precision):
                # pandas took row 1 as the header, so data row 0 is the sheet's row 2.
                return f"cell {get_column_letter(column + 1)}{row + 2} {show(_plain(x))} vs expected {show(_plain(y))}"
    return None


def _plain(value: Any) -> Any:
    """numpy scalars as Python values, so an explanation reads 3 rather than np.int64(3)."""
    return value.item() if isinstance(value, numpy.generic) else value


@table_rule("sheet_name", (), PAIR)
def _check_sheet_name(rule: dict, books: _Books) -> str | None:
    if books.expected is None:
        return "no expected workbook to compare sheet names with"
    got, want = books.result.sheet_names, books.expected.sheet_names
    return None if got == want else f"sheet names {got} vs expected {want}"


@table_rule("sheet_data", PAIR, ("precision",), ignored={
    "ignore_case": "OSWorld's sheet_data never reads it either: it compares cell values exactly "
                   "(sheet_print and sheet_fuzzy read ignore_case)"})
def _check_sheet_data(rule: dict, books: _Books) -> str | None:
    frames = []
    for ref in (rule["sheet_idx0"], rule["sheet_idx1"]):
        book, name = books.resolve(ref)
        frames.append(None if book is None else book.frame(name))
    if frames[0] is None or frames[1] is None:
        return _missing_sheets(rule, books) or "a sheet could not be read as a table"
    difference = _frames_difference(frames[0], frames[1], int(rule.get("precision", 4)))
    return None if difference is None else f"sheet {rule['sheet_idx0']!r} vs {rule['sheet_idx1']!r}: {difference}"


@table_rule("sheet_print", PAIR, ("ignore_case",))
def _check_sheet_print(rule: dict, books: _Books) -> str | None:
    printed = []
    for ref in (rule["sheet_idx0"], rule["sheet_idx1"]):
        book, name = books.resolve(ref)
        lines = None if book is None else book.printed_lines(name)
        if lines is None:
            return f"no csv export of sheet {ref!r} ({name}) beside its workbook"
        printed.append([line.lower() for line in lines] if rule.get("ignore_case") else lines)
    if printed[0] == printed[1]:
        return None
    return f"printed sheet {rule['sheet_idx0']!r} vs {rule['sheet_idx1']!r}: line {first_difference(*printed)}"


def _normalized_text(text: str, rule: dict) -> str:
    for old, new in rule.get("normalization", []):
        text = text.replace(old, new)
    if "trim_leadings" in rule:
        text = text.lstrip(rule["trim_leadings"])
    if "trim_trailings" in rule:
        text = text.rstrip(rule["trim_trailings"])
    if "ignore_chars" in rule:
        text = "".join(ch for ch in text if ch not in set(rule["ignore_chars"]))
    if rule.get("ignore_case"):
        text = text.lower()
    return text


FUZZY_MATCH_TYPES = ("exact_match", "includes", "included_by", "fuzzy_match")


def _texts_match(first: str, second: str, rule: dict) -> bool:
    kind = rule["type"]
    if kind == "exact_match":
        return first == second
    if kind == "includes":  # the first sheet's text contains the second's
        return second in first
    if kind == "included_by":
        return first in second
    if kind == "fuzzy_match":
        return fuzz.ratio(first, second) >= float(rule.get("threshold", 85))
    raise ValueError(f"compare_table: unknown sheet_fuzzy match type {kind!r}")


@table_rule("sheet_fuzzy", PAIR + ("rules",))
def _check_sheet_fuzzy(rule: dict, books: _Books) -> str | None:
    """Cell-by-cell text matching over ranges, on each cell's value as OSWorld reads it (_XmlCells) made
    text with str(): an empty cell, or any cell of a sheet that does not exist, is the text "None", a
    number "3.0", a boolean "None"; a cell OSWorld's reading raises on fails the rule."""
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.cell_range import MultiCellRange
    (book0, name0), (book1, name1) = books.resolve(rule["sheet_idx0"]), books.resolve(rule["sheet_idx1"])
    if book0 is None or book1 is None:
        return "no expected workbook (OSWorld's sheet_fuzzy raises)"
    for sub_rule in rule["rules"]:
        areas = sorted(MultiCellRange(sub_rule["range"]).ranges, key=lambda area: area.bounds)
        for area in areas:
            for row, col in area.cells:
                coordinate = f"{get_column_letter(col)}{row}"
                try:
                    values = str(book0.osworld_value(name0, coordinate)), str(book1.osworld_value(name1, coordinate))
                except OSWorldReadRaises as error:
                    return f"OSWorld's reading of the cell raises, so it records no score ({error})"
                first, second = (_normalized_text(value, sub_rule) for value in values)
                if not _texts_match(first, second, sub_rule):
                    return (f"{name0}!{coordinate} {show(first)} vs expected {show(second)} "
                            f"(no {sub_rule['type']})")
    return None


# The fields of sheet_fuzzy's inner rules, whose "type" is one of FUZZY_MATCH_TYPES.
FUZZY_FIELDS: RuleFields = (("range", "type"), ("normalization", "trim_leadings", "trim_trailings", "ignore_chars",
                                    "ignore_case", "threshold"))
