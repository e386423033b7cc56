"""Cell values the way OSWorld's read_cell_value reads them: from the sheet's xml, as xmltodict parses it
(sheet_fuzzy compares them as text, check_cell's "value" matches them)."""
from __future__ import annotations

import logging
import zipfile
from typing import Any
from xml.etree import ElementTree

from ....errors import DesktopEnvError

log = logging.getLogger(__name__)


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
