"""The rules on charts: chart (a sheet's charts keyed by their data, with the properties a rule asks for) and
sparkline (the sparklines of a sheet, read from its xml since openpyxl drops them)."""
from __future__ import annotations

import logging
import re
import zipfile
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

from ...archives import check_zip
from ...outcome import show
from .osworld_cells import _MAIN_NS
from .rules import PAIR, _missing_sheets, _sheet_pair, table_rule
from .workbook import _Books, _unreadable

if TYPE_CHECKING:
    from openpyxl.worksheet.worksheet import Worksheet

log = logging.getLogger(__name__)


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


@table_rule("sparkline", PAIR)
def _check_sparkline(rule: dict, books: _Books) -> str | None:
    found = []
    for ref in (rule["sheet_idx0"], rule["sheet_idx1"]):
        book, name = books.resolve(ref)
        sparklines = None if book is None or name is None else _sparklines(book.path, name)
        if sparklines is None:
            return f"sparklines of sheet {ref!r} cannot be read"
        found.append(sparklines)
    return None if found[0] == found[1] else f"sparklines {show(found[0])} vs expected {show(found[1])}"


@table_rule("chart", PAIR, ("chart_props",))
def _check_chart(rule: dict, books: _Books) -> str | None:
    first, second = _sheet_pair(rule, books)
    if first is None or second is None:
        return _missing_sheets(rule, books)
    props = rule.get("chart_props", [])
    charts0, charts1 = _charts(first, props), _charts(second, props)
    if charts0 == charts1:
        return None
    return f"charts ({', '.join(props) or 'data'}) {show(charts0, 300)} vs expected {show(charts1, 300)}"
