"""Conditional formatting: which cells of a sheet a conditional-format rule is active on, and its style there
(the style rule compares what the cells show)."""
from __future__ import annotations

import logging
import operator
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy

from .workbook import _Book, _existing_cell, _stored_value

if TYPE_CHECKING:
    from openpyxl.worksheet.cell_range import MultiCellRange
    from openpyxl.worksheet.worksheet import Worksheet

log = logging.getLogger(__name__)


_STRING_LITERAL = re.compile(r'"(?:[^"]|"")*"')
_REFERENCE = re.compile(
    r"(?<![\w.$!:])(?:(?P<sheet>'(?:[^']|'')+'|[A-Za-z_][\w.]*)!)?"
    r"(?P<c1>\$?[A-Za-z]{1,3})(?P<r1>\$?\d+)(?::(?P<c2>\$?[A-Za-z]{1,3})(?P<r2>\$?\d+))?(?![\w(])")
# A whole column ("$A:$A") or whole row ("2:3"), as duplicate-highlighting formulas use.
_LINE_REFERENCE = re.compile(
    r"(?<![\w.$!:])(?:(?P<sheet>'(?:[^']|'')+'|[A-Za-z_][\w.]*)!)?"
    r"(?P<first>\$?(?:[A-Za-z]{1,3}|\d+)):(?P<second>\$?(?:[A-Za-z]{1,3}|\d+))(?![\w(:])")
_CELL_IS = {"lessThan": operator.lt, "lessThanOrEqual": operator.le, "equal": operator.eq,
            "notEqual": operator.ne, "greaterThanOrEqual": operator.ge,
            "greaterThan": operator.gt}


def _reference_key(match: re.Match) -> str:
    sheet = match["sheet"]
    corners = [match["c1"] + match["r1"]] + ([match["c2"] + match["r2"]] if match["c2"] else [])
    return _sheet_key(sheet, ":".join(corner.replace("$", "").upper() for corner in corners))


def _line_reference_fixed(match: re.Match) -> tuple[str, frozenset[str]]:
    """A whole column or row reference's key and the parts its $ signs fix, named as for a range
    (c1/c2 of a column, r1/r2 of a row)."""
    first, second = match["first"], match["second"]
    parts = ("c1", "c2") if first.lstrip("$").isalpha() else ("r1", "r2")
    fixed = frozenset(part for part, side in zip(parts, (first, second), strict=True) if side.startswith("$"))
    return _sheet_key(match["sheet"], f"{first}:{second}".replace("$", "").upper()), fixed


def _sheet_key(sheet: str | None, key: str) -> str:
    return f"{sheet.strip(chr(39)).upper()}!{key}" if sheet else key


class _ConditionalFormats:
    """Finds the cells of a sheet on which conditional-format rules are active.

    Rule formulas are evaluated with the `formulas` package, each relative reference moved
    to the cell being tested (upstream passes the cell's own value instead, which only works
    for formulas that look at that one cell). Like upstream, empty cells are never styled,
    and rules of other types (colour scales, data bars, icon sets) are not evaluated.
    """

    def __init__(self, book: _Book, ws: Worksheet):
        self.book = book
        self.ws = ws

    def active_styles(self) -> dict[str, Any]:
        """coordinate -> the dxf of the winning rule (lowest priority number) on that cell."""
        from openpyxl.utils import get_column_letter
        winners: dict[str, tuple[int, Any]] = {}
        for formatting in self.ws.conditional_formatting:
            cells = self._used_cells(formatting.sqref)
            if not cells:
                continue
            # Relative references in a rule's formula are written for the range's top-left cell.
            anchor = (min(part.min_row for part in formatting.sqref),
                      min(part.min_col for part in formatting.sqref))
            for rule in formatting.rules:
                if rule.dxf is None:
                    continue
                for row, col in self._active_cells(rule, cells, anchor):
                    coordinate = f"{get_column_letter(col)}{row}"
                    priority = rule.priority if rule.priority is not None else 0
                    if coordinate not in winners or priority < winners[coordinate][0]:
                        winners[coordinate] = (priority, rule.dxf)
        return {coordinate: dxf for coordinate, (_, dxf) in winners.items()}

    def _used_cells(self, ranges: MultiCellRange) -> list[tuple[int, int]]:
        """The (row, col) cells of the ranges, clipped to the used range: cells past it are
        empty, and empty cells are never styled (so a whole-column range stays cheap)."""
        last_row, last_col = self.ws.max_row, self.ws.max_column
        return [(row, col) for part in ranges
                for row in range(part.min_row, min(part.max_row, last_row) + 1)
                for col in range(part.min_col, min(part.max_col, last_col) + 1)]

    def _value(self, row: int, col: int, sheet: Worksheet | None = None) -> Any:
        if row < 1 or col < 1:
            return None
        cell = _existing_cell(sheet or self.ws, row, col)
        return _stored_value(cell, self.book.workbook.epoch)

    def _active_cells(self, rule, cells, anchor) -> list[tuple[int, int]]:
        filled = [(row, col, self._value(row, col)) for row, col in cells]
        filled = [(row, col, value) for row, col, value in filled if value is not None]
        if rule.type in ("duplicateValues", "uniqueValues"):
            counts: dict[Any, int] = {}
            for _, _, value in filled:
                key = value.lower() if isinstance(value, str) else value
                counts[key] = counts.get(key, 0) + 1
            want_duplicates = rule.type == "duplicateValues"
            return [(r, c) for r, c, v in filled
                    if (counts[v.lower() if isinstance(v, str) else v] > 1) == want_duplicates]
        if rule.type in ("top10", "aboveAverage"):
            return self._ranked_cells(rule, filled)
        if rule.type == "cellIs" or rule.formula:
            test = self._formula_test(rule)
            if test is None:
                return []
            return [(r, c) for r, c, v in filled if test(v, r - anchor[0], c - anchor[1])]
        log.debug("conditional format of type %r is not evaluated", rule.type)
        return []

    @staticmethod
    def _ranked_cells(rule, filled) -> list[tuple[int, int]]:
        numbers = [(r, c, v) for r, c, v in filled
                   if isinstance(v, float) and not isinstance(v, bool)]
        if not numbers:
            return []
        values = sorted((v for _, _, v in numbers), reverse=not rule.bottom)
        if rule.type == "top10":
            count = rule.rank or 10
            if rule.percent:
                count = max(1, int(len(values) * count / 100))
            threshold = values[min(count, len(values)) - 1]
            beyond = operator.le if rule.bottom else operator.ge
            return [(r, c) for r, c, v in numbers if beyond(v, threshold)]
        mean = sum(values) / len(values)
        above = rule.aboveAverage is not False
        if rule.equalAverage:
            compare = operator.ge if above else operator.le
        else:
            compare = operator.gt if above else operator.lt
        return [(r, c) for r, c, v in numbers if compare(v, mean)]

    def _formula_test(self, rule) -> Callable[[Any, int, int], bool] | None:
        import formulas  # only conditional formats need a formula engine

        try:
            compiled = [self._compile(formulas, text) for text in rule.formula]
        except Exception as error:  # the formula engine raises many kinds on formulas it lacks
            log.warning("conditional format formula %r not evaluated: %s", rule.formula, error)
            return None

        def evaluate(index: int, d_row: int, d_col: int) -> Any:
            function, absolutes = compiled[index]
            arguments = [self._input(name, absolutes.get(name, frozenset()), d_row, d_col)
                         for name in function.inputs]
            out = numpy.asarray(function(*arguments), dtype=object).ravel()
            return out[0] if out.size else None

        def test(value: Any, d_row: int, d_col: int) -> bool:
            try:
                if rule.type == "cellIs":
                    limits = [evaluate(i, d_row, d_col) for i in range(len(compiled))]
                    return _cell_is(rule.operator, value, limits)
                outcome = evaluate(0, d_row, d_col)
            except Exception as error:  # noqa: BLE001 - a formula error means "not active"
                log.debug("conditional format formula failed on %r: %s", value, error)
                return False
            if isinstance(outcome, (bool, int, float, numpy.bool_, numpy.number)):
                return bool(outcome)
            return False

        return test

    @staticmethod
    def _compile(formulas, text: str):
        function = formulas.Parser().ast("=" + text)[1].compile()
        bare = _STRING_LITERAL.sub('""', text)
        absolutes: dict[str, frozenset[str]] = {}
        for match in _REFERENCE.finditer(bare):
            # Which parts of the reference a $ fixes: c1/r1 (first corner), c2/r2 (second).
            fixed = frozenset(part for part in ("c1", "r1", "c2", "r2")
                              if (match[part] or "").startswith("$"))
            absolutes.setdefault(_reference_key(match), fixed)
        for match in _LINE_REFERENCE.finditer(bare):
            key, fixed = _line_reference_fixed(match)
            absolutes.setdefault(key, fixed)
        return function, absolutes

    def _input(self, name: str, fixed: frozenset[str], d_row: int, d_col: int) -> Any:
        import schedula
        from openpyxl.utils.cell import range_boundaries

        sheet_name, _, area = name.rpartition("!")
        sheet: Worksheet | None = self.ws
        if sheet_name:
            titles = {title.upper(): title for title in self.book.sheet_names}
            sheet = self.book.worksheet(titles.get(sheet_name.strip("'").upper()))
        min_col, min_row, max_col, max_row = range_boundaries(area)
        # A whole column has no rows to move (a whole row no columns): it spans what the sheet holds.
        if min_row is None or max_row is None:
            min_row, max_row, fixed = 1, sheet.max_row if sheet is not None else 1, fixed | {"r1", "r2"}
        if min_col is None or max_col is None:
            min_col, max_col, fixed = 1, sheet.max_column if sheet is not None else 1, fixed | {"c1", "c2"}

        def moved(value: int, part: str, delta: int) -> int:
            return value if part in fixed else value + delta

        top, left = moved(min_row, "r1", d_row), moved(min_col, "c1", d_col)
        bottom, right = moved(max_row, "r2", d_row), moved(max_col, "c2", d_col)
        if ":" not in area:
            bottom, right = top, left

        def read(row: int, col: int) -> Any:
            value = None if sheet is None else self._value(row, col, sheet)
            return schedula.EMPTY if value is None else value

        if (top, left) == (bottom, right) and ":" not in area:
            return read(top, left)
        return numpy.array([[read(r, c) for c in range(left, right + 1)]
                            for r in range(top, bottom + 1)], dtype=object)


def _cell_is(operator_name: str | None, value: Any, limits: list[Any]) -> bool:
    try:
        if operator_name in ("between", "notBetween"):
            low, high = min(limits[:2]), max(limits[:2])
            inside = low <= value <= high
            return inside if operator_name == "between" else not inside
        compare = _CELL_IS.get(operator_name or "")
        return compare is not None and bool(compare(value, limits[0]))
    except (TypeError, IndexError, ValueError):
        return False
