"""Spreadsheet metrics (OSWorld's table area): compare_table, compare_csv,
compare_conference_city_in_order.

`compare_table(result, expected=None, rules=[...])` opens the agent's xlsx (`result`) and,
when given, a gold xlsx (`expected`), then runs the rules in order; the score is 1.0 when
every rule holds and 0.0 at the first that does not. Rules name sheets like OSWorld does:

    0, 1, ...   the result's sheet at that index     "RI0"        same, spelled out
    "RNSheet1"  the result's sheet named Sheet1      "EI0"/"ENSheet1"  the expected book's

Rule types: sheet_name, sheet_data, sheet_print, sheet_fuzzy, check_cell, style, freeze, zoom,
data_validation, row_props, col_props, filter, sparkline, chart, pivot_table.

Cell values are the values saved in the file (openpyxl cannot compute formulas; the xlsx an
app such as LibreOffice saves carries each formula's last result). A rule naming a sheet that
does not exist fails; a rule type or match method that does not exist raises ValueError,
since that is a mistake in the task file rather than in the agent's work.
"""
from __future__ import annotations

import colorsys
import difflib
import logging
import operator
import re
import unicodedata
import warnings
import zipfile
from collections.abc import Callable, Iterable
from datetime import date, datetime, time, timedelta
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

import numpy
from rapidfuzz import fuzz

from ... import extensions
from ...errors import DesktopEnvError
from ..archives import check_zip, check_zip_file
from ..outcome import MetricResult, failed, first_difference, passed, show
from ..registry import OptionIssue, declare_option_check, metric
from .general import match_value_to_rule

# pandas and openpyxl are imported by the functions that use them: together 0.3 s at import, paid by every
# process that loads the metrics (each run's main process validates its tasks' evaluators, each worker scores),
# most of which never open a spreadsheet.
if TYPE_CHECKING:
    import pandas as pd
    from openpyxl.worksheet.cell_range import MultiCellRange
    from openpyxl.worksheet.worksheet import Worksheet

log = logging.getLogger(__name__)


def _unreadable() -> tuple[type[BaseException], ...]:
    """What a damaged or foreign file makes openpyxl / pandas raise while reading it."""
    from openpyxl.utils.exceptions import InvalidFileException
    return (OSError, zipfile.BadZipFile, InvalidFileException, KeyError, ValueError,
            TypeError, IndexError, ElementTree.ParseError)


# --------------------------------------------------------------------------------------------
# Workbooks and sheet references
# --------------------------------------------------------------------------------------------

class _Book:
    """One xlsx file, read once with openpyxl (saved values) and lazily with pandas."""

    def __init__(self, path: str, companion_paths: Iterable[str] = ()):
        import openpyxl
        self.path = path
        check_zip_file(path)
        with warnings.catch_warnings():
            # openpyxl warns about each extension it drops (sparklines, slicers...); the
            # rules that need one read the xml themselves.
            warnings.simplefilter("ignore", UserWarning)
            self.workbook = openpyxl.load_workbook(path, data_only=True)
        # pandas' sheet_names (OSWorld's source of sheet indices) skip chart-only sheets.
        self.sheet_names = [ws.title for ws in self.workbook.worksheets]
        self._companions = [p for p in companion_paths if p]
        self._excel: pd.ExcelFile | None = None
        self.palette = _theme_palette(self.workbook)
        self._xml_cells: _XmlCells | None = None

    def worksheet(self, name: str | None) -> Worksheet | None:
        if name is None or name not in self.sheet_names:
            return None
        return self.workbook[name]

    def frame(self, name: str | None) -> pd.DataFrame | None:
        """The sheet as pandas reads it by default: first row as header, trailing blanks cut."""
        import pandas as pd
        if name is None or name not in self.sheet_names:
            return None
        try:
            if self._excel is None:
                self._excel = pd.ExcelFile(self.path, engine="openpyxl")
            return pd.read_excel(self._excel, sheet_name=name)
        except _unreadable() as error:
            log.info("pandas could not read sheet %r of %s: %s", name, self.path, error)
            return None

    def osworld_value(self, name: str | None, coordinate: str) -> Any:
        """A cell's value as OSWorld's read_cell_value reads it from the xml (see _XmlCells)."""
        if self._xml_cells is None:
            self._xml_cells = _XmlCells(self.path)
        return self._xml_cells.value(name, coordinate)

    def printed_lines(self, name: str | None) -> list[str] | None:
        """The sheet as printed text: the csv `<book>-<sheet>.csv` exported beside the book
        (LibreOffice's `--convert-to csv:...` names one file per sheet that way)."""
        if name is None:
            return None
        csv_name = f"{Path(self.path).stem}-{name}.csv"
        candidates = [p for p in self._companions if Path(p).name == csv_name]
        candidates.append(str(Path(self.path).with_name(csv_name)))
        for candidate in candidates:
            lines = _read_text_lines(candidate)
            if lines is not None:
                stripped = [line.strip() for line in lines]
                while stripped and not stripped[-1]:
                    stripped.pop()
                return stripped
        return None


class OSWorldReadRaises(DesktopEnvError):
    """OSWorld's read_cell_value raises on this cell (its compare_table then records no score)."""


_MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
# The names xmltodict gives the elements and attributes of a namespace as OSWorld parses a cell: the main
# namespace's by their local name, these with a prefix, any other (xml:space among them) with its URI.
_XMLTODICT_PREFIXES: dict[str, str | None] = {
    _MAIN_NS: None,
    "http://schemas.microsoft.com/office/spreadsheetml/2009/9/main": "x14",
    "http://schemas.microsoft.com/office/excel/2006/main": "xm",
}


def _xmltodict_name(name: str) -> str:
    if not name.startswith("{"):
        return name
    uri, local = name[1:].split("}", 1)
    prefix = _XMLTODICT_PREFIXES.get(uri, uri)
    return local if prefix is None else f"{prefix}:{local}"


def _xmltodict_value(element: ElementTree.Element) -> Any:
    """The element as xmltodict.parse gives it: its text, stripped (None when blank), when it has neither
    attributes nor children; else a dict of its "@"-attributes, its children by name (a list for a
    repeated one) and its text as "#text"."""
    item: dict[str, Any] = {f"@{_xmltodict_name(k)}": v for k, v in element.attrib.items()}
    texts = [element.text or ""]
    for child in element:
        key, value = _xmltodict_name(child.tag), _xmltodict_value(child)
        if key not in item:
            item[key] = value
        elif isinstance(item[key], list):
            item[key].append(value)
        else:
            item[key] = [item[key], value]
        texts.append(child.tail or "")
    text = "".join(texts).strip() or None
    if not item:
        return text
    if text:
        item["#text"] = text
    return item


class _XmlCells:
    """Cell values the way OSWorld's read_cell_value reads them, which sheet_fuzzy compares as text: from
    the xml, the sheet `name` found as xl/worksheets/sheet<its sheetId>.xml; a number (a date too) as a
    float; a shared string as the text of all its <t> (no string at all when one <t> is empty); a
    formula's text result and an error as written, stripped; an inline string as its <t> (a dict when
    the <t> has attributes, as openpyxl writes a padded string); a boolean, a cell that is not in the
    file, a sheet that does not exist or an unreadable file as None. Where OSWorld's reading raises (a
    number cell with an empty <v>, a formula openpyxl wrote without a value among them), OSWorldReadRaises."""

    def __init__(self, path: str):
        self.path = path
        self._shared: list[str] | None = None
        self._sheets: dict[str, dict[str, ElementTree.Element] | None] = {}

    def _read(self, archive: zipfile.ZipFile, name: str) -> ElementTree.Element:
        return ElementTree.fromstring(archive.read(name))

    def _shared_strings(self, archive: zipfile.ZipFile) -> list[str]:
        try:
            root = self._read(archive, "xl/sharedStrings.xml")
            strings = []
            for item in root.findall(f"{{{_MAIN_NS}}}si"):
                texts = [t.text for t in item.iter(f"{{{_MAIN_NS}}}t")]
                if any(text is None for text in texts):
                    return []  # OSWorld's join fails on an empty <t>, and it then reads no string at all
                strings.append("".join(text or "" for text in texts))
            return strings
        except (KeyError, ElementTree.ParseError, OSError, zipfile.BadZipFile):
            return []

    def _cells(self, name: str) -> dict[str, ElementTree.Element] | None:
        if name not in self._sheets:
            self._sheets[name] = self._load(name)
        return self._sheets[name]

    def _load(self, name: str) -> dict[str, ElementTree.Element] | None:
        try:
            with zipfile.ZipFile(self.path) as archive:
                if self._shared is None:
                    self._shared = self._shared_strings(archive)
                workbook = self._read(archive, "xl/workbook.xml")
                ids = {sheet.get("name"): sheet.get("sheetId")
                       for sheets in workbook.findall(f"{{{_MAIN_NS}}}sheets")
                       for sheet in sheets.findall(f"{{{_MAIN_NS}}}sheet")}
                sheet = self._read(archive, f"xl/worksheets/sheet{ids[name]}.xml")
        except (KeyError, ElementTree.ParseError, OSError, zipfile.BadZipFile, ValueError) as error:
            log.info("OSWorld's reading finds no sheet %r in %s: %s", name, self.path, error)
            return None
        cells: dict[str, ElementTree.Element] = {}
        for row in sheet.iter(f"{{{_MAIN_NS}}}row"):
            for cell in row.findall(f"{{{_MAIN_NS}}}c"):
                cells.setdefault(cell.get("r", ""), cell)
        return cells

    def value(self, name: str | None, coordinate: str) -> Any:
        cells = None if name is None else self._cells(name)
        element = None if cells is None else cells.get(coordinate)
        if element is None:
            return None
        cell = _xmltodict_value(element)
        if not isinstance(cell, dict):  # a <c> without attributes is found by none of its coordinates
            return None
        kind = cell.get("@t")
        try:
            if kind is None or kind == "n":
                return float(cell["v"])
            if kind == "s":
                return (self._shared or [])[int(cell["v"])]
            if kind in ("str", "e"):
                return cell["v"]
            if kind == "inlineStr":
                return cell["is"]["t"]
            return None
        except (KeyError, ValueError):
            return None
        except (TypeError, IndexError) as error:
            raise OSWorldReadRaises(f"{name}!{coordinate}: {type(error).__name__}: {error}") from None


def _open_book(source: Any) -> _Book | None:
    """A getter's value (a path, or a list whose first entry is the book) as a _Book, or None."""
    companions: list[str] = []
    if isinstance(source, (list, tuple)):
        if not source or not source[0]:
            return None
        source, companions = source[0], [str(p) for p in source[1:] if p]
    if not isinstance(source, (str, Path)) or not Path(source).is_file():
        return None
    try:
        return _Book(str(source), companions)
    except _unreadable() as error:
        log.info("cannot read workbook %s: %s", source, error)
        return None


class _Books:
    def __init__(self, result: _Book, expected: _Book | None):
        self.result = result
        self.expected = expected

    def resolve(self, ref: Any) -> tuple[_Book | None, str | None]:
        """A rule's sheet reference as (book, sheet name); the name is None if it does not exist."""
        book: _Book | None
        if isinstance(ref, int) and not isinstance(ref, bool):
            book, index = self.result, ref
        elif isinstance(ref, str) and len(ref) > 2 and ref[0] in "RE" and ref[1] in "IN":
            book = self.result if ref[0] == "R" else self.expected
            if ref[1] == "N":
                return book, ref[2:]
            try:
                index = int(ref[2:])
            except ValueError:
                raise ValueError(f"compare_table: bad sheet reference {ref!r}") from None
        else:
            raise ValueError(f"compare_table: bad sheet reference {ref!r} "
                             "(use an index, RI<n>, RN<name>, EI<n> or EN<name>)")
        if book is None:
            return None, None
        try:
            return book, book.sheet_names[index]
        except IndexError:
            return book, None

    def worksheet(self, ref: Any) -> Worksheet | None:
        book, name = self.resolve(ref)
        return None if book is None else book.worksheet(name)


# --------------------------------------------------------------------------------------------
# Cell values
# --------------------------------------------------------------------------------------------

def _column_row(coordinate: str) -> tuple[int, int]:
    """(column, row) of a cell's coordinate; ValueError for a whole column or row ("A", "3")."""
    position = _cell_position(coordinate)
    if position is None:
        raise ValueError(f"{coordinate!r} is a whole column or row, not a cell")
    return position


def _cell_position(coordinate: str) -> tuple[int, int] | None:
    """(column, row) of a cell's coordinate; None for a whole column or row ("A", "3")."""
    from openpyxl.utils.cell import range_boundaries
    min_col, min_row, _, _ = range_boundaries(f"{coordinate}:{coordinate}")
    return None if min_col is None or min_row is None else (min_col, min_row)


def _existing_cell(ws: Worksheet, row: int, col: int):
    """The cell if the file stores it, else None; unlike ws.cell() this adds no cell."""
    return ws._cells.get((row, col))


def _stored_value(cell, epoch) -> Any:
    from openpyxl.utils.datetime import to_excel
    if cell is None:
        return None
    value = cell.value
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (datetime, date, time, timedelta)):
        return float(to_excel(value, epoch))
    return value


def _read_text_lines(path: str) -> list[str] | None:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")  # maps every byte, so any exported file can be read
    return text.splitlines()


# --------------------------------------------------------------------------------------------
# Matching a value against {"method": ..., "ref": ...}
# --------------------------------------------------------------------------------------------

def _ranges_within(inner: MultiCellRange, outer: MultiCellRange) -> bool:
    return all(part in outer for part in inner)


def _as_ranges(value: Any) -> MultiCellRange:
    from openpyxl.worksheet.cell_range import MultiCellRange
    return value if isinstance(value, MultiCellRange) else MultiCellRange(str(value))


def _matches(value: Any, rule: dict) -> bool:
    """OSWorld's `{"method", "ref"}` matching (see general.match_value_to_rule) plus the
    spreadsheet method `spreadsheet_range`: ref = [inner, outer], the value's ranges must
    cover `inner` and lie within `outer`."""
    from openpyxl.worksheet.cell_range import MultiCellRange
    if rule["method"] != "spreadsheet_range":
        return match_value_to_rule(value, rule)
    if value is None:
        return False
    inner, outer = rule["ref"]
    ranges = _as_ranges(value)
    return _ranges_within(MultiCellRange(inner), ranges) and \
        _ranges_within(ranges, MultiCellRange(outer))


# --------------------------------------------------------------------------------------------
# Cell styles (check_cell props and the style rule)
# --------------------------------------------------------------------------------------------

_DRAWING_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
# The colour scheme of Office's default theme, in the file's order (dk1, lt1, dk2, lt2,
# accent1..6, hlink, folHlink): what a workbook without a theme part shows.
_DEFAULT_SCHEME = ("000000", "FFFFFF", "1F497D", "EEECE1", "4F81BD", "C0504D", "9BBB59",
                   "8064A2", "4BACC6", "F79646", "0000FF", "800080")


def _theme_palette(workbook) -> list[str]:
    """RGB of theme colours 0, 1, 2, ... as cells number them (light 1 before dark 1)."""
    scheme = list(_DEFAULT_SCHEME)
    if workbook.loaded_theme:
        try:
            theme = ElementTree.fromstring(workbook.loaded_theme)
        except ElementTree.ParseError:
            theme = None
        colors = theme.find(f".//{{{_DRAWING_NS}}}clrScheme") if theme is not None else None
        for i, entry in enumerate(list(colors)[:12] if colors is not None else []):
            for child in entry:
                value = child.get("lastClr") or child.get("val")
                if value and re.fullmatch(r"[0-9A-Fa-f]{6}", value):
                    scheme[i] = value.upper()
    scheme[0], scheme[1], scheme[2], scheme[3] = scheme[1], scheme[0], scheme[3], scheme[2]
    return scheme


def _tinted(rgb: str, tint: float) -> str:
    red, green, blue = (int(rgb[i:i + 2], 16) / 255 for i in (0, 2, 4))
    hue, lightness, saturation = colorsys.rgb_to_hls(red, green, blue)
    lightness = lightness * (1 + tint) if tint < 0 else lightness * (1 - tint) + tint
    channels = colorsys.hls_to_rgb(hue, lightness, saturation)
    return "".join(f"{round(channel * 255):02X}" for channel in channels)


def _color(color, palette: list[str] | None = None) -> str | None:
    """aRGB text, e.g. FFFF0000 for red. Indexed and theme colours are resolved (the theme
    through the book's palette), so an Excel file's theme colour equals LibreOffice's rgb."""
    from openpyxl.styles.colors import COLOR_INDEX
    if color is None:
        return None
    if color.type == "rgb":
        return color.rgb
    if color.type == "indexed":
        index = color.indexed
        return f"FF{COLOR_INDEX[index][2:]}" if 0 <= index < 64 else f"indexed:{index}"
    if color.type == "theme" and palette and 0 <= color.theme < len(palette):
        return "FF" + _tinted(palette[color.theme], color.tint or 0.0)
    return f"{color.type}:{color.value}"


def _fill_color(fill, differential: bool, palette: list[str] | None) -> str | None:
    # A solid cell fill shows its fgColor; a conditional format's fill (dxf) shows bgColor.
    if fill is None:
        return None
    fg = _color(getattr(fill, "fgColor", None), palette)
    bg = _color(getattr(fill, "bgColor", None), palette)
    if differential:
        return bg if bg not in (None, "00000000") or fg in (None, "00000000") else fg
    return fg


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


# --------------------------------------------------------------------------------------------
# Conditional formatting: which cells a rule is active on
# --------------------------------------------------------------------------------------------

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


def _sheet_styles(book: _Book, ws: Worksheet, props: list[str]) -> dict[str, tuple]:
    styles = {cell.coordinate: tuple(_read_style(p, cell, None, book.palette) for p in props)
              for row in ws.iter_rows() for cell in row}
    for coordinate, dxf in _ConditionalFormats(book, ws).active_styles().items():
        styles[coordinate] = tuple(_read_style(p, ws[coordinate], dxf, book.palette)
                                   for p in props)
    return styles


# --------------------------------------------------------------------------------------------
# Sheet data
# --------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------
# Charts, pivot tables, filters, sparklines, row/column properties, panes
# --------------------------------------------------------------------------------------------

_QUOTED_SHEET = re.compile(r"'((?:[^']|'')+)'!")


def _data_reference(source) -> str:
    """A series' data reference, with the optional quotes of a sheet name dropped
    (openpyxl writes 'Sheet1'!$B$2, LibreOffice Sheet1!$B$2)."""
    for kind in ("numRef", "strRef"):
        formula = getattr(getattr(source, kind, None), "f", None)
        if formula:
            return _QUOTED_SHEET.sub(lambda m: m.group(1).replace("''", "'") + "!", formula)
    return ""


def _rich_text(title) -> str | None:
    """A chart or axis title: its text runs joined, or the cell reference it shows."""
    text = getattr(title, "tx", None)
    if text is None:
        return None
    if text.rich is not None:
        paragraphs = ["".join(run.t or "" for run in (paragraph.r or []))
                      for paragraph in text.rich.p]
        return "\n".join(paragraphs)
    return _data_reference(text)


def _chart_info(chart, props: set[str]) -> dict[str, Any]:
    info: dict[str, Any] = {}
    if "title" in props:
        info["title"] = _rich_text(chart.title)
    if "legend" in props:
        info["legend"] = chart.legend.position if chart.legend is not None else None
    if "anchor" in props:
        anchor = chart.anchor
        start, end = getattr(anchor, "_from", None), getattr(anchor, "to", None)
        info["anchor"] = [getattr(anchor, "editAs", None),
                          getattr(start, "col", None), getattr(start, "row", None),
                          getattr(end, "col", None), getattr(end, "row", None)]
    if "width" in props:
        info["width"] = chart.width
    if "height" in props:
        info["height"] = chart.height
    if "type" in props:
        info["type"] = chart.tagname
    if "direction" in props:
        info["direction"] = getattr(chart, "barDir", None)
    for axis_prop, axis_name in (("xtitle", "x_axis"), ("ytitle", "y_axis"), ("ztitle", "z_axis")):
        if axis_prop in props:
            axis = getattr(chart, axis_name, None)
            info[axis_prop] = _rich_text(getattr(axis, "title", None))
    return info


def _charts(ws: Worksheet, props: Iterable[str]) -> dict[str, dict]:
    """Charts keyed by their data ("values,categories;..." per series), as OSWorld keys them;
    scatter series use their y and x references."""
    wanted = set(props)
    charts = {}
    for chart in ws._charts:  # type: ignore[attr-defined]  # set by openpyxl's reader; its stubs omit it
        key = ";".join(
            f"{_data_reference(s.val if s.val is not None else s.yVal)},"
            f"{_data_reference(s.cat if s.cat is not None else s.xVal)}"
            for s in chart.series)
        charts[key] = _chart_info(chart, wanted)
    return charts


def _pivot_tables(ws: Worksheet, props: Iterable[str]) -> dict[str, dict] | None:
    """Pivot tables keyed by their source. Source columns no field uses are cut from both
    ends, and field numbers counted from the first used one, so a pivot over A:F and one over
    B:E that use the same columns compare equal (as in OSWorld)."""
    from openpyxl.utils.cell import range_boundaries
    wanted = set(props)
    pivots: dict[str, dict] = {}
    for pivot in ws._pivots:  # type: ignore[attr-defined]  # set by openpyxl's reader; its stubs omit it
        items = [[(item.h, item.x) for item in (field.items or []) if item.x is not None]
                 for field in pivot.pivotFields]
        used = [i for i, field_items in enumerate(items) if field_items]
        left = used[0] if used else 0
        right = len(items) - 1 - used[-1] if used else 0
        selection = items[left:len(items) - right]
        source = pivot.cache.cacheSource
        worksheet_source = source.worksheetSource
        area = worksheet_source.ref if worksheet_source is not None else None
        if area and ":" in area:
            first, last = area.split(":")
            min_col, min_row, _, _ = range_boundaries(first + ":" + first)
            max_col, max_row, _, _ = range_boundaries(last + ":" + last)
            if min_col is not None and max_col is not None:  # whole rows have no columns to cut
                area = f"{(min_row, min_col + left)}:{(max_row, max_col - right)}"
        elif worksheet_source is not None:
            area = area or worksheet_source.name
        sheet = worksheet_source.sheet if worksheet_source is not None else None

        def field_number(x: int, first_used: int = left) -> int:
            return x if x < 0 else x - first_used  # negative numbers name special fields (Values)

        info: dict[str, Any] = {}
        if "name" in wanted:
            info["name"] = pivot.name
        if "show_total" in wanted:
            info["show_total"] = pivot.visualTotals
        if "show_empty_row" in wanted:
            info["show_empty_row"] = pivot.showEmptyRow
        if "show_empty_col" in wanted:
            info["show_empty_col"] = pivot.showEmptyCol
        if "show_headers" in wanted:
            info["show_headers"] = pivot.showHeaders
        if "location" in wanted:
            location = pivot.location
            info["location"] = (location.ref, location.firstHeaderRow, location.firstDataRow,
                                location.firstDataCol, location.rowPageCount,
                                location.colPageCount)
        if "filter" in wanted or "selection" in wanted:
            info["selection"] = selection if "ordered" in wanted else [set(s) for s in selection]
        if "filter" in wanted:
            info["filter_fields"] = {field_number(f.fld) for f in pivot.pageFields}
        for prop, fields in (("col_fields", pivot.colFields), ("row_fields", pivot.rowFields)):
            if prop in wanted:
                numbers = [field_number(f.x) for f in fields]
                if "ignore_special_fields" in wanted:
                    numbers = [n for n in numbers if n >= 0]
                info[prop] = numbers
        if "data_fields" in wanted:
            info["data_fields"] = [
                f"{field_number(f.fld)};{f.name if 'data_fields_name' in wanted else ''};"
                f"{f.subtotal};{f.showDataAs}" for f in pivot.dataFields]
        pivots[f"{source.type};{area};{sheet}"] = info
    return pivots


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


_MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PACKAGE_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
_X14_NS = "http://schemas.microsoft.com/office/spreadsheetml/2009/9/main"
_XM_NS = "http://schemas.microsoft.com/office/excel/2006/main"


def _sparklines(path: str, sheet_name: str) -> dict[str | None, str | None] | None:
    """Sparklines of a sheet, {"F3": "Sheet1!C3:E3"}; openpyxl drops them, so read the xml."""
    try:
        with zipfile.ZipFile(path) as archive:
            check_zip(path, archive)
            workbook = ElementTree.fromstring(archive.read("xl/workbook.xml"))
            rels = ElementTree.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
            rel_id = next((s.get(f"{{{_REL_NS}}}id")
                           for s in workbook.iter(f"{{{_MAIN_NS}}}sheet")
                           if s.get("name") == sheet_name), None)
            target = next((r.get("Target") for r in rels.iter(f"{{{_PACKAGE_REL_NS}}}Relationship")
                           if r.get("Id") == rel_id), None)
            if target is None:
                return None
            member = target.lstrip("/") if target.startswith("/") else str(PurePosixPath("xl") / target)
            sheet = ElementTree.fromstring(archive.read(member))
    except _unreadable() as error:
        log.info("cannot read sparklines of %s/%s: %s", path, sheet_name, error)
        return None
    found: dict[str | None, str | None] = {}
    for sparkline in sheet.iter(f"{{{_X14_NS}}}sparkline"):
        formula, where = sparkline.find(f"{{{_XM_NS}}}f"), sparkline.find(f"{{{_XM_NS}}}sqref")
        if where is not None:
            found[where.text] = formula.text if formula is not None else None
    return found


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


# --------------------------------------------------------------------------------------------
# The rules of compare_table
# --------------------------------------------------------------------------------------------

def _sheet_pair(rule: dict, books: _Books) -> tuple[Worksheet | None, Worksheet | None]:
    return books.worksheet(rule["sheet_idx0"]), books.worksheet(rule["sheet_idx1"])


def _missing_sheets(rule: dict, books: _Books, *keys: str) -> str | None:
    """Which of the rule's sheets does not exist (None when all do)."""
    for key in keys or ("sheet_idx0", "sheet_idx1"):
        if books.worksheet(rule[key]) is None:
            side = "expected" if isinstance(rule[key], str) and rule[key].startswith("E") else "result"
            return f"sheet {rule[key]!r} ({key}) does not exist in the {side} workbook"
    return None


# Each check gives None when its rule holds, else why not (the sheet, the cell, both values).
RuleCheck = Callable[[dict, _Books], "str | None"]


def _check_sheet_name(rule: dict, books: _Books) -> str | None:
    if books.expected is None:
        return "no expected workbook to compare sheet names with"
    got, want = books.result.sheet_names, books.expected.sheet_names
    return None if got == want else f"sheet names {got} vs expected {want}"


def _check_sheet_data(rule: dict, books: _Books) -> str | None:
    frames = []
    for ref in (rule["sheet_idx0"], rule["sheet_idx1"]):
        book, name = books.resolve(ref)
        frames.append(None if book is None else book.frame(name))
    if frames[0] is None or frames[1] is None:
        return _missing_sheets(rule, books) or "a sheet could not be read as a table"
    difference = _frames_difference(frames[0], frames[1], int(rule.get("precision", 4)))
    return None if difference is None else f"sheet {rule['sheet_idx0']!r} vs {rule['sheet_idx1']!r}: {difference}"


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


def _check_freeze(rule: dict, books: _Books) -> str | None:
    first, second = _sheet_pair(rule, books)
    if first is None or second is None:
        return _missing_sheets(rule, books)
    got, want = _freeze_key(first), _freeze_key(second)
    return None if got == want else f"frozen panes {show(got)} vs expected {show(want)}"


def _check_zoom(rule: dict, books: _Books) -> str | None:
    ws = books.worksheet(rule["sheet_idx"])
    if ws is None:
        return _missing_sheets(rule, books, "sheet_idx")
    zoom = ws.sheet_view.zoomScale or 100.0
    return None if _matches(zoom, rule) else f"zoom {zoom:g} is not {rule['method']} {show(rule.get('ref'))}"


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


def _check_filter(rule: dict, books: _Books) -> str | None:
    first, second = _sheet_pair(rule, books)
    if first is None or second is None:
        return _missing_sheets(rule, books)
    got, want = _filters(first), _filters(second)
    return None if got == want else f"autofilter {show(got)} vs expected {show(want)}"


def _check_sparkline(rule: dict, books: _Books) -> str | None:
    found = []
    for ref in (rule["sheet_idx0"], rule["sheet_idx1"]):
        book, name = books.resolve(ref)
        sparklines = None if book is None or name is None else _sparklines(book.path, name)
        if sparklines is None:
            return f"sparklines of sheet {ref!r} cannot be read"
        found.append(sparklines)
    return None if found[0] == found[1] else f"sparklines {show(found[0])} vs expected {show(found[1])}"


def _check_chart(rule: dict, books: _Books) -> str | None:
    first, second = _sheet_pair(rule, books)
    if first is None or second is None:
        return _missing_sheets(rule, books)
    props = rule.get("chart_props", [])
    charts0, charts1 = _charts(first, props), _charts(second, props)
    if charts0 == charts1:
        return None
    return f"charts ({', '.join(props) or 'data'}) {show(charts0, 300)} vs expected {show(charts1, 300)}"


def _check_pivot_table(rule: dict, books: _Books) -> str | None:
    first, second = _sheet_pair(rule, books)
    if first is None or second is None:
        return _missing_sheets(rule, books)
    props = rule.get("pivot_props", [])
    pivots0, pivots1 = _pivot_tables(first, props), _pivot_tables(second, props)
    if pivots0 == pivots1:
        return None
    return f"pivot tables {show(pivots0, 300)} vs expected {show(pivots1, 300)}"


_BUILTIN_RULES: dict[str, RuleCheck] = {
    "sheet_name": _check_sheet_name,
    "sheet_data": _check_sheet_data,
    "sheet_print": _check_sheet_print,
    "sheet_fuzzy": _check_sheet_fuzzy,
    "check_cell": _check_cell,
    "style": _check_style,
    "freeze": _check_freeze,
    "zoom": _check_zoom,
    "data_validation": _check_data_validation,
    "row_props": _dimension_checker("row"),
    "col_props": _dimension_checker("column"),
    "filter": _check_filter,
    "sparkline": _check_sparkline,
    "chart": _check_chart,
    "pivot_table": _check_pivot_table,
}
for _type, _check in _BUILTIN_RULES.items():
    extensions.register("table_rule", _type, _check)
# The rule types compare_table knows: these and any a plugin registers (kind "table_rule").
_RULE_CHECKS = extensions.KindView("table_rule")
RULE_TYPES = tuple(_BUILTIN_RULES)

# The fields each rule type reads (besides "type"): required, then optional. Task validation
# checks rules against these, so a misspelled field is an error before any desktop starts.
_PAIR = ("sheet_idx0", "sheet_idx1")
RuleFields = tuple[tuple[str, ...], tuple[str, ...]]  # (required, optional) field names
RULE_FIELDS: dict[str, RuleFields] = {
    "sheet_name": ((), _PAIR),
    "sheet_data": (_PAIR, ("precision",)),
    "sheet_print": (_PAIR, ("ignore_case",)),
    "sheet_fuzzy": (_PAIR + ("rules",), ()),
    "check_cell": (("sheet_idx", "coordinate", "props"), ()),
    "style": (_PAIR, ("props",)),
    "freeze": (_PAIR, ()),
    "zoom": (("sheet_idx", "method", "ref"), ()),
    "data_validation": (("sheet_idx", "dv_props"), ()),
    "row_props": (_PAIR, ("props",)),
    "col_props": (_PAIR, ("props",)),
    "filter": (_PAIR, ()),
    "sparkline": (_PAIR, ()),
    "chart": (_PAIR, ("chart_props",)),
    "pivot_table": (_PAIR, ("pivot_props",)),
}
# Fields OSWorld's task files give a rule type whose check (OSWorld's too) never reads them: accepted,
# with a warning from validation, so such a task runs and scores as it does there.
IGNORED_RULE_FIELDS: dict[str, dict[str, str]] = {
    "sheet_data": {"ignore_case": "OSWorld's sheet_data never reads it either: it compares cell values exactly "
                                  "(sheet_print and sheet_fuzzy read ignore_case)"},
}
FUZZY_FIELDS: RuleFields = (("range", "type"), ("normalization", "trim_leadings", "trim_trailings", "ignore_chars",
                                    "ignore_case", "threshold"))
assert set(RULE_FIELDS) == set(RULE_TYPES)


def _fields_problems(where: str, item: Any, known_types: tuple[str, ...],
                     fields: dict[str, RuleFields] | RuleFields) -> list[OptionIssue]:
    """What is wrong with one rule: its type, missing and unknown fields; and, as ignored issues, the
    fields OSWorld's task files give it that no check reads."""
    if not isinstance(item, dict):
        return [OptionIssue(where, repr(item)[:200], "a rule must be an object")]
    kind = item.get("type")
    if kind not in known_types:
        close = difflib.get_close_matches(str(kind), known_types, n=3, cutoff=0.6)
        return [OptionIssue(f"{where}.type", str(kind), f"unknown rule type (known: {', '.join(known_types)})",
                            tuple(close))]
    per_type = isinstance(fields, dict)  # else (required, optional) shared by every type
    if isinstance(fields, dict) and kind not in fields:
        return []  # a plugin's rule type: it declares no fields, so there is nothing to check
    required, optional = fields[kind] if isinstance(fields, dict) else fields
    problems = [OptionIssue(where, kind, f"a {kind} rule needs {name!r}") for name in required if name not in item]
    allowed = ("type",) + required + optional
    ignored = IGNORED_RULE_FIELDS.get(kind, {}) if per_type else {}
    for name in item:
        if name in ignored:
            problems.append(OptionIssue(f"{where}.{name}", str(name), f"a {kind} rule ignores it: {ignored[name]}",
                                        ignored=True))
        elif name not in allowed:
            close = difflib.get_close_matches(str(name), allowed, n=3, cutoff=0.6)
            problems.append(OptionIssue(f"{where}.{name}", str(name),
                                        f"a {kind} rule has no field {name!r} (it reads: {', '.join(allowed)})",
                                        tuple(close)))
    return problems


def rules_problems(options: dict) -> list[OptionIssue]:
    """compare_table's rules as validation sees them: an issue for a
    missing or non-list `rules`, an unknown rule type, a missing or unknown field, and the same
    for sheet_fuzzy's inner rules; an ignored field (IGNORED_RULE_FIELDS) as a warning."""
    rules = options.get("rules")
    if not isinstance(rules, list):
        return [OptionIssue("rules", repr(rules)[:200], "compare_table needs 'rules', a list of rules")]
    problems = []
    for i, rule in enumerate(rules):
        found = _fields_problems(f"rules[{i}]", rule, tuple(_RULE_CHECKS), RULE_FIELDS)
        problems += found
        if not found and rule["type"] == "sheet_fuzzy":
            inner = rule["rules"] if isinstance(rule["rules"], list) else [rule["rules"]]
            for j, sub_rule in enumerate(inner):
                problems += _fields_problems(f"rules[{i}].rules[{j}]", sub_rule, FUZZY_MATCH_TYPES, FUZZY_FIELDS)
    return problems


# --------------------------------------------------------------------------------------------
# Metrics
# --------------------------------------------------------------------------------------------

def rule_failure(answer: Any) -> str | None:
    """A rule check's answer as "why it does not hold" (None: it holds). Built-in checks give a
    sentence or None; a plugin's may give a bool, as table rules did before they explained."""
    if answer is True:
        return None
    if answer is False:
        return "the rule's check says it does not hold (it gives no reason)"
    return answer


@metric("compare_table")
def compare_table(result: Any, expected: Any = None, rules: list | None = None) -> MetricResult:
    """1.0 when every rule in `rules` holds for the result workbook (see the module
    docstring); 0.0 at the first failing rule or when the result is missing or unreadable.

    `result`/`expected` are xlsx paths, or lists whose first entry is the xlsx and the others
    companion files such as the csv export that `sheet_print` reads."""
    if not isinstance(rules, list):
        raise ValueError("compare_table: options.rules must be a list of rules")
    for rule in rules:
        if rule.get("type") not in _RULE_CHECKS:
            raise ValueError(f"compare_table: unknown rule type {rule.get('type')!r} "
                             f"(known: {', '.join(_RULE_CHECKS)})")
    result_book = _open_book(result)
    if result_book is None:
        return failed(f"the result workbook {show(result)} is missing or cannot be read")
    expected_book = None
    if expected is not None:
        expected_book = _open_book(expected)
        if expected_book is None:
            log.warning("compare_table: expected workbook %r cannot be read", expected)
    books = _Books(result_book, expected_book)
    for number, rule in enumerate(rules):
        why = rule_failure(_RULE_CHECKS[rule["type"]](rule, books))
        if why is not None:
            return failed(f"rule {number} ({rule['type']}) does not hold: {why}")
    return passed(f"all {len(rules)} rules hold ({', '.join(r['type'] for r in rules)})")


declare_option_check(compare_table, rules_problems)  # task validation checks the rules (tasks/validation.py)


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
