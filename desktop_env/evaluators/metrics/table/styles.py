"""The rules on cells and their styles: check_cell (one cell's value, as OSWorld reads it, and style properties
against {"method", "ref"}) and style (the style properties of every cell of two sheets, conditional formats
included)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...outcome import show
from .colors import _color, _fill_color
from .conditional_formats import _ConditionalFormats
from .osworld_cells import OSWorldReadRaises
from .rules import PAIR, _matches, _missing_sheets, table_rule
from .workbook import _Book, _Books, _column_row

if TYPE_CHECKING:
    from openpyxl.worksheet.worksheet import Worksheet


_FONT_STYLES = {"font_name": "name", "font_family": "family", "font_bold": "b",
                "font_italic": "i", "font_underline": "u", "font_size": "sz"}
STYLE_PROPS = (*_FONT_STYLES, "font_color", "number_format", "fill_type", "bgcolor", "fgcolor",
               "hyperlink", "merge")


def _read_style(prop: str, cell, dxf=None, palette: list[str] | None = None) -> Any:
    """One style property of a cell, as OSWorld names them; `dxf` is an active conditional
    format, whose settings override the cell's own. Font properties and number_format are
    None on empty cells, as upstream."""
    from openpyxl.cell.cell import MergedCell
    has_value = cell.value is not None
    if prop in _FONT_STYLES or prop == "font_color":
        if not has_value:
            return None
        # A conditional format's font sets some attributes; the rest stay the cell's.
        fonts = [f for f in (getattr(dxf, "font", None), cell.font) if f is not None]
        if prop == "font_color":
            color = next((f.color for f in fonts if f.color is not None), None)
            return _color(color, palette)
        attribute = _FONT_STYLES[prop]
        return next((getattr(f, attribute) for f in fonts if getattr(f, attribute) is not None), None)
    if prop == "number_format":
        if not has_value or cell.data_type not in ("n", "d"):
            return None
        if dxf is not None and dxf.numFmt is not None:
            return dxf.numFmt.formatCode
        return cell.number_format
    if prop == "fill_type":
        fill = dxf.fill if dxf is not None and dxf.fill is not None else cell.fill
        return getattr(fill, "tagname", None)
    if prop in ("bgcolor", "fgcolor"):
        if dxf is not None and dxf.fill is not None:
            return _fill_color(dxf.fill, True, palette)
        return _fill_color(cell.fill, False, palette)
    if prop == "hyperlink":
        if not has_value:
            return None
        link = cell.hyperlink
        return "" if link is None else (link.target or link.location or "")
    if prop == "merge":
        # True for the covered cells of a merged range, not for its top-left cell.
        return isinstance(cell, MergedCell)
    raise ValueError(f"compare_table: unknown cell property {prop!r} (known: value, "
                     f"{', '.join(STYLE_PROPS)})")


def _sheet_styles(book: _Book, ws: Worksheet, props: list[str]) -> dict[str, tuple]:
    styles = {cell.coordinate: tuple(_read_style(p, cell, None, book.palette) for p in props)
              for row in ws.iter_rows() for cell in row}
    for coordinate, dxf in _ConditionalFormats(book, ws).active_styles().items():
        styles[coordinate] = tuple(_read_style(p, ws[coordinate], dxf, book.palette)
                                   for p in props)
    return styles


@table_rule("check_cell", ("sheet_idx", "coordinate", "props"))
def _check_cell(rule: dict, books: _Books) -> str | None:
    book, name = books.resolve(rule["sheet_idx"])
    ws = None if book is None else book.worksheet(name)
    if book is None or ws is None:
        return _missing_sheets(rule, books, "sheet_idx")
    coordinate = rule["coordinate"]
    for prop, match_rule in rule["props"].items():
        if prop == "value":
            try:
                actual = book.osworld_value(name, coordinate)
            except OSWorldReadRaises:  # OSWorld's check_cell catches it and compares None
                actual = None
        else:
            actual = _read_style(prop, ws[coordinate], None, book.palette)
        if not _matches(actual, match_rule):
            return (f"{name}!{coordinate} {prop} is {show(actual)}, expected {match_rule.get('method')} "
                    f"{show(match_rule.get('ref'))}")
    return None


@table_rule("style", PAIR, ("props",))
def _check_style(rule: dict, books: _Books) -> str | None:
    props = list(rule.get("props", []))
    sides = []
    for ref in (rule["sheet_idx0"], rule["sheet_idx1"]):
        book, name = books.resolve(ref)
        ws = None if book is None else book.worksheet(name)
        if book is None or ws is None:
            return _missing_sheets(rule, books)
        sides.append((book, ws, _sheet_styles(book, ws, props)))

    def style_at(side, coordinate: str) -> tuple:
        book, ws, styles = side
        if coordinate in styles:
            return styles[coordinate]
        return tuple(_read_style(p, ws[coordinate], None, book.palette) for p in props)

    # A cell only one file stores (say a formatted empty cell) is compared with the other
    # file's plain cell there; upstream fails whenever the two used ranges differ.
    for coordinate in sorted(sides[0][2].keys() | sides[1][2].keys(), key=_coordinate_order):
        first, second = style_at(sides[0], coordinate), style_at(sides[1], coordinate)
        if first != second:
            return f"style {props} of cell {coordinate}: {show(first)} vs expected {show(second)}"
    return None


def _coordinate_order(coordinate: str) -> tuple[int, int]:
    col, row = _column_row(coordinate)
    return row, col
