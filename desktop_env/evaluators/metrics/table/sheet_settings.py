"""The rules on what a sheet sets besides its cells: freeze (frozen panes), zoom, data_validation, row_props and
col_props (row and column properties such as height, width, hidden), filter (the autofilter and its sort)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...outcome import show
from .rules import PAIR, RuleCheck, _compare_sheets, _matches, _missing_sheets, _sheet_pair, table_rule
from .workbook import _Books

if TYPE_CHECKING:
    from openpyxl.worksheet.worksheet import Worksheet


def _filters(ws: Worksheet) -> dict[str, Any]:
    auto = ws.auto_filter
    columns = []
    for column in auto.filterColumn:
        entry: dict[str, Any] = {"col_id": column.colId, "hidden_button": column.hiddenButton,
                                 "show_button": column.showButton}
        if column.filters is not None:
            entry["filters_blank"] = column.filters.blank
            entry["filters"] = set(column.filters.filter)
        if column.customFilters is not None:
            entry["custom_filters_op"] = column.customFilters._and
            entry["custom_filters"] = {(f.operator, f.val)
                                       for f in column.customFilters.customFilter}
        columns.append(entry)
    described: dict[str, Any] = {"ref": auto.ref,
                                 "filter_column": sorted(columns, key=lambda e: e["col_id"])}
    sort = auto.sortState
    if sort is not None:
        described["sort_state"] = {
            "sort": sort.columnSort, "case": sort.caseSensitive, "method": sort.sortMethod,
            "ref": sort.ref,
            "condition": [{"descending": c.descending, "key": c.sortBy, "ref": c.ref,
                           "custom_list": c.customList, "dxf_id": c.dxfId,
                           "icon": c.iconSet, "iconid": c.iconId}
                          for c in sort.sortCondition]}
    return described


def _dimensions(ws: Worksheet, kind: str, props: list[str]) -> dict[Any, dict[str, Any]]:
    """Row (by number) or column (by letter) properties. A column entry LibreOffice or Excel
    stores for a span of columns (min..max) counts for each column in it."""
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.dimensions import ColumnDimension
    holder = ws.row_dimensions if kind == "row" else ws.column_dimensions
    described: dict[Any, dict[str, Any]] = {}
    for key, dimension in list(holder.items()):
        values = {prop: getattr(dimension, prop, None) for prop in props}
        if (isinstance(dimension, ColumnDimension) and not {"min", "max"} & set(props)
                and dimension.min and dimension.max):
            for index in range(dimension.min, dimension.max + 1):
                described[get_column_letter(index)] = values
        else:
            described[key] = values
    return described


def _default_dimension(ws: Worksheet, kind: str, key: Any, props: list[str]) -> dict[str, Any]:
    from openpyxl.worksheet.dimensions import ColumnDimension, RowDimension
    dimension = RowDimension(ws, index=key) if kind == "row" else ColumnDimension(ws, index=key)
    return {prop: getattr(dimension, prop, None) for prop in props}


def _freeze_key(ws: Worksheet) -> tuple:
    """Where a sheet is frozen: the count of frozen columns and rows. openpyxl's freeze_panes
    reports the pane's top-left visible cell, which moves when the user scrolls."""
    pane = ws.sheet_view.pane
    if pane is None:
        return ("none",)
    columns, rows = int(pane.xSplit or 0), int(pane.ySplit or 0)
    if (pane.state or "").lower() in ("frozen", "frozensplit"):
        return ("frozen", columns, rows)
    return ("split", columns, rows, pane.topLeftCell)


@table_rule("freeze", PAIR)
def _check_freeze(rule: dict, books: _Books) -> str | None:
    return _compare_sheets(rule, books, _freeze_key, "frozen panes")


@table_rule("zoom", ("sheet_idx", "method", "ref"))
def _check_zoom(rule: dict, books: _Books) -> str | None:
    ws = books.worksheet(rule["sheet_idx"])
    if ws is None:
        return _missing_sheets(rule, books, "sheet_idx")
    zoom = ws.sheet_view.zoomScale or 100.0
    return None if _matches(zoom, rule) else f"zoom {zoom:g} is not {rule['method']} {show(rule.get('ref'))}"


@table_rule("data_validation", ("sheet_idx", "dv_props"))
def _check_data_validation(rule: dict, books: _Books) -> str | None:
    """Each validation on the sheet must fit one of `dv_props`, and there must be at least as
    many validations as `dv_props` entries (OSWorld's reading of the rule)."""
    ws = books.worksheet(rule["sheet_idx"])
    if ws is None:
        return _missing_sheets(rule, books, "sheet_idx")
    validations = ws.data_validations.dataValidation
    wanted = rule["dv_props"]
    if len(validations) < len(wanted):
        return f"{len(validations)} data validations on the sheet, expected at least {len(wanted)}"
    for validation in validations:
        if not any(all(_matches(getattr(validation, attribute, None), match_rule)
                       for attribute, match_rule in spec.items())
                   for spec in wanted):
            return f"data validation on {validation.sqref} ({validation.type}) fits none of dv_props"
    return None


def _dimension_checker(kind: str) -> RuleCheck:
    def check(rule: dict, books: _Books) -> str | None:
        first, second = _sheet_pair(rule, books)
        if first is None or second is None:
            return _missing_sheets(rule, books)
        props = list(rule.get("props", []))
        dims0, dims1 = _dimensions(first, kind, props), _dimensions(second, kind, props)
        for key in sorted(dims0.keys() | dims1.keys(), key=str):
            a = dims0.get(key) or _default_dimension(first, kind, key, props)
            b = dims1.get(key) or _default_dimension(second, kind, key, props)
            if a != b:
                return f"{kind} {key}: {show(a)} vs expected {show(b)}"
        return None
    return check


_check_row_props = table_rule("row_props", PAIR, ("props",))(_dimension_checker("row"))
_check_col_props = table_rule("col_props", PAIR, ("props",))(_dimension_checker("column"))


@table_rule("filter", PAIR)
def _check_filter(rule: dict, books: _Books) -> str | None:
    return _compare_sheets(rule, books, _filters, "autofilter")
