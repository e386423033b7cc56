"""The pivot_table rule: a sheet's pivot tables keyed by their source, with the properties a rule asks for."""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from .rules import PAIR, _compare_sheets, table_rule
from .workbook import _Books

if TYPE_CHECKING:
    from openpyxl.worksheet.worksheet import Worksheet

# The pivot's own settings a rule can ask for: its property -> the attribute of openpyxl's TableDefinition.
_PIVOT_SETTINGS = {"name": "name", "show_total": "visualTotals", "show_empty_row": "showEmptyRow",
                   "show_empty_col": "showEmptyCol", "show_headers": "showHeaders"}


class _UsedFields(NamedTuple):
    """A pivot's fields cut to those from the first to the last that selects items: `left` and `right` fields
    (source columns) cut from its two ends, and each field kept as its items' (hidden, index) pairs."""
    left: int
    right: int
    selection: list[list[tuple[Any, int]]]

    def number(self, x: int) -> int:
        """A field's number counted from the first used field; negative numbers name special fields (Values)."""
        return x if x < 0 else x - self.left


def _pivot_tables(ws: Worksheet, props: Iterable[str]) -> dict[str, dict]:
    """Pivot tables keyed by their source. Source columns no field uses are cut from both
    ends, and field numbers counted from the first used one, so a pivot over A:F and one over
    B:E that use the same columns compare equal (as in OSWorld)."""
    wanted = set(props)
    pivots: dict[str, dict] = {}
    for pivot in ws._pivots:  # type: ignore[attr-defined]  # set by openpyxl's reader; its stubs omit it
        fields = _used_fields(pivot)
        pivots[_source_key(pivot.cache.cacheSource, fields)] = _pivot_info(pivot, wanted, fields)
    return pivots


def _used_fields(pivot) -> _UsedFields:
    items = [[(item.h, item.x) for item in (field.items or []) if item.x is not None]
             for field in pivot.pivotFields]
    used = [i for i, field_items in enumerate(items) if field_items]
    left = used[0] if used else 0
    right = len(items) - 1 - used[-1] if used else 0
    return _UsedFields(left, right, items[left:len(items) - right])


def _source_key(source, fields: _UsedFields) -> str:
    """The key of a pivot's cache source, "type;area;sheet", its area's columns cut as its fields are."""
    worksheet_source = source.worksheetSource
    sheet = worksheet_source.sheet if worksheet_source is not None else None
    return f"{source.type};{_source_area(worksheet_source, fields)};{sheet}"


def _source_area(worksheet_source, fields: _UsedFields) -> str | None:
    if worksheet_source is None:
        return None
    area = worksheet_source.ref
    if area and ":" in area:
        return _cut_columns(area, fields)
    return area or worksheet_source.name


def _cut_columns(area: str, fields: _UsedFields) -> str:
    """A source range without the columns its pivot's fields do not use, as "(row, col):(row, col)"."""
    from openpyxl.utils.cell import range_boundaries
    first, last = area.split(":")
    min_col, min_row, _, _ = range_boundaries(first + ":" + first)
    max_col, max_row, _, _ = range_boundaries(last + ":" + last)
    if min_col is None or max_col is None:  # whole rows have no columns to cut
        return area
    return f"{(min_row, min_col + fields.left)}:{(max_row, max_col - fields.right)}"


def _pivot_info(pivot, wanted: set[str], fields: _UsedFields) -> dict[str, Any]:
    """The properties of a pivot a rule asks for (`wanted`, with the flags that say how to read them)."""
    info: dict[str, Any] = {prop: getattr(pivot, attribute)
                            for prop, attribute in _PIVOT_SETTINGS.items() if prop in wanted}
    if "location" in wanted:
        location = pivot.location
        info["location"] = (location.ref, location.firstHeaderRow, location.firstDataRow,
                            location.firstDataCol, location.rowPageCount, location.colPageCount)
    info.update(_field_layout(pivot, wanted, fields))
    return info


def _field_layout(pivot, wanted: set[str], fields: _UsedFields) -> dict[str, Any]:
    """Where the pivot puts its fields: the items selected of each (as sets unless "ordered"), the filter
    (page) fields, the column and row fields, the data fields."""
    layout: dict[str, Any] = {}
    if "filter" in wanted or "selection" in wanted:
        layout["selection"] = fields.selection if "ordered" in wanted else [set(s) for s in fields.selection]
    if "filter" in wanted:
        layout["filter_fields"] = {fields.number(f.fld) for f in pivot.pageFields}
    for prop, axis in (("col_fields", pivot.colFields), ("row_fields", pivot.rowFields)):
        if prop in wanted:
            layout[prop] = _axis_field_numbers(axis, wanted, fields)
    if "data_fields" in wanted:
        layout["data_fields"] = [_data_field_key(f, wanted, fields) for f in pivot.dataFields]
    return layout


def _axis_field_numbers(axis, wanted: set[str], fields: _UsedFields) -> list[int]:
    numbers = [fields.number(f.x) for f in axis]
    if "ignore_special_fields" in wanted:
        numbers = [n for n in numbers if n >= 0]
    return numbers


def _data_field_key(field, wanted: set[str], fields: _UsedFields) -> str:
    """A data field as "field;name;subtotal;showDataAs", the name only when the rule asks for data_fields_name."""
    name = field.name if "data_fields_name" in wanted else ""
    return f"{fields.number(field.fld)};{name};{field.subtotal};{field.showDataAs}"


@table_rule("pivot_table", PAIR, ("pivot_props",))
def _check_pivot_table(rule: dict, books: _Books) -> str | None:
    props = rule.get("pivot_props", [])
    return _compare_sheets(rule, books, lambda ws: _pivot_tables(ws, props), "pivot tables", 300)
