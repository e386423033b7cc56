"""What the `osworld` commands print, sized for where it goes: a terminal gets tables that fit it, and a
pipe or a file gets every line whole.

A table never cuts a value with "…": an identifier (a task id, a group, a class name) stays on one line,
and the other cells wrap inside their column. When even that does not fit the terminal, the rows are
printed one after another as `column: value` pairs instead. Piped (stdout not a terminal), a table is
plain lines: its title, then its header and rows tab-separated, never padded to the widest row, never wrapped
or cut, so an id can be copied and a line grepped or cut -f'd.

FORMATS is the one vocabulary of `--format` for every command that prints a table (format_option).
"""
from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import click
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

PIPED_WIDTH = 10_000  # wide enough that no table or line of ours is ever wrapped in a pipe
LONGEST_WORD = 60     # a longer word (a path, an explanation's value) may be folded inside its cell


class PipeConsole(Console):
    """stdout when it is a pipe or a file: lines are never wrapped, and tables are printed as plain lines."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(width=PIPED_WIDTH, soft_wrap=True, **kwargs)


def make_console(terminal: bool | None = None) -> Console:
    """The console for stdout: the terminal's width on a terminal, plain lines in a pipe or a file."""
    terminal = sys.stdout.isatty() if terminal is None else terminal
    return Console() if terminal else PipeConsole()


console = make_console()


@dataclass(frozen=True)
class Column:
    name: str
    key: bool = False          # an identifier: never wrapped, never cut
    justify: str = "left"


Cell = str | Text


def _narrowest(column: Column, cells: Sequence[Cell]) -> int:
    """The fewest columns a column can take: a key's longest value, else its longest word (up to
    LONGEST_WORD), its header included."""
    texts = [column.name, *(cell.plain if isinstance(cell, Text) else str(cell) for cell in cells)]
    if column.key:
        return max(cell_len(line) for text in texts for line in text.splitlines() or [""])
    return min(max((cell_len(word) for text in texts for word in text.split()), default=1), LONGEST_WORD)


def table_of(columns: Sequence[Column], rows: Sequence[Sequence[Cell]], title: str | None = None,
             caption: str | None = None, styles: Sequence[str | None] | None = None, lines: bool = False,
             sections: Sequence[int] = ()) -> Table:
    """A rich table whose key columns stay whole and whose other cells wrap between words, never narrower
    than their longest word (so a table that cannot fit is one `fits` says so of, rather than one folded
    a letter a line); `sections`: rows after which a line is drawn (before a total)."""
    table = Table(title=title, caption=caption, show_lines=lines)
    for i, column in enumerate(columns):
        table.add_column(column.name, no_wrap=column.key, overflow="fold", justify=column.justify,  # type: ignore[arg-type]
                         min_width=_narrowest(column, [row[i] for row in rows]))
    for i, row in enumerate(rows):
        table.add_row(*row, style=styles[i] if styles else None, end_section=i in sections)
    return table


def fits(out: Console, columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> bool:
    """Whether the table fits the console with every column at its narrowest (rich's own measure of a table
    is already squeezed to the width it is given, so it cannot say)."""
    narrowest = sum(_narrowest(column, [row[i] for row in rows]) for i, column in enumerate(columns))
    return narrowest + 3 * len(columns) + 1 <= out.width  # a space either side of each cell and the rules


def show_table(columns: Sequence[Column], rows: Sequence[Sequence[Cell]], title: str | None = None,
               caption: str | None = None, styles: Sequence[str | None] | None = None, lines: bool = False,
               sections: Sequence[int] = (), out: Console | None = None) -> None:
    """Prints the rows as a table, or, on a terminal too narrow for its identifiers, as one block per row."""
    out = out or console
    if isinstance(out, PipeConsole):
        print_plain([c.name for c in columns], rows, title, caption, out)
        return
    if fits(out, columns, rows):
        out.print(table_of(columns, rows, title, caption, styles, lines, sections))
        return
    if title:
        out.print(Text(title, style="italic"))
    for i, row in enumerate(rows):
        block = Text(style=(styles[i] if styles else None) or "")
        for j, (column, cell) in enumerate(zip(columns, row, strict=True)):
            block.append("  " if j else "- ")
            block.append(f"{column.name}: ", style="dim")
            block.append(cell if isinstance(cell, Text) else Text(str(cell)))
        out.print(block)
    if caption:
        out.print(Text(caption, style="dim"))


def tsv(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Tab-separated lines, the header first: what `--format tsv` prints (tabs and newlines in a value
    become spaces, so each row stays one line)."""
    def clean(value: str) -> str:
        return " ".join(str(value).replace("\t", " ").splitlines())
    return "".join("\t".join(clean(v) for v in row) + "\n" for row in [header, *rows])


def _plain(cell: Any) -> str:
    if isinstance(cell, Text):
        return cell.plain
    return Text.from_markup(cell).plain if isinstance(cell, str) else str(cell)


def print_plain(header: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None,
                caption: str | None = None, out: Console | None = None) -> None:
    """A table as plain lines, for a pipe: the title, the header and rows tab-separated, the caption."""
    out = out or console
    text = (f"{title}\n" if title else "") + tsv(list(header), [[_plain(c) for c in row] for row in rows]) \
        + (f"{caption}\n" if caption else "")
    out.file.write(text)
    out.file.flush()


def print_table(table: Table, out: Console | None = None) -> None:
    """A rich table built by a command: as it is on a terminal, as plain lines in a pipe."""
    out = out or console
    if not isinstance(out, PipeConsole):
        out.print(table)
        return
    header = [_plain(column.header) for column in table.columns]
    cells = [list(column.cells) for column in table.columns]
    rows = [[column[i] for column in cells] for i in range(table.row_count)]
    title = _plain(table.title) if table.title else None
    print_plain(header, rows, title, _plain(table.caption) if table.caption else None, out)


FORMATS = ("table", "markdown", "json", "csv", "tsv")


def format_option(default: str = "table", help: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--format table|markdown|json|csv|tsv`, the same on every command that prints a table."""
    return click.option("--format", "fmt", default=default, show_default=True, type=click.Choice(FORMATS),
                        help=help or "table: for reading (plain tab-separated lines when piped); markdown; json; "
                                     "csv; tsv: one tab-separated line per row, the header first.")


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def cell(value: str) -> str:
        return " ".join(str(value).splitlines()).replace("|", "\\|")
    lines = ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(map(cell, row)) + " |" for row in rows]) + "\n"


def csv_text(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows([list(header), *rows])
    return buffer.getvalue()


def rows_text(fmt: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """The rows in one of the text formats (markdown, json as a list of objects, csv, tsv)."""
    plain = [[_plain(c) for c in row] for row in rows]
    if fmt == "json":
        return json.dumps([dict(zip(header, row, strict=True)) for row in plain], indent=2, ensure_ascii=False) + "\n"
    return {"markdown": markdown, "csv": csv_text, "tsv": tsv}[fmt](header, plain)


def deprecated(old: str, new: str) -> str:
    """The help of an old flag kept as an alias."""
    return f"Deprecated: use {new} (kept working as an alias of it; {old} will go)."
