"""Reading a workbook as compare_table's rules read it: the agent's and the gold xlsx, opened once with openpyxl
(saved values) and lazily with pandas; a rule's sheet reference (0, "RI0", "RNSheet1", "EI0", "ENSheet1") as a book
and a sheet; a cell's stored value; text files such as the csv export beside a book."""
from __future__ import annotations

import logging
import warnings
import zipfile
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

from ...archives import check_zip_file
from .colors import _theme_palette
from .osworld_cells import _XmlCells

# pandas and openpyxl are imported by the functions that use them: together 0.3 s at import, paid by every
# process that loads the metrics (each run's main process validates its tasks' evaluators, each worker scores),
# most of which never open a spreadsheet.
if TYPE_CHECKING:
    import pandas as pd
    from openpyxl.worksheet.worksheet import Worksheet

log = logging.getLogger(__name__)


def _unreadable() -> tuple[type[BaseException], ...]:
    """What a damaged or foreign file makes openpyxl / pandas raise while reading it."""
    from openpyxl.utils.exceptions import InvalidFileException
    return (OSError, zipfile.BadZipFile, InvalidFileException, KeyError, ValueError,
            TypeError, IndexError, ElementTree.ParseError)


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
