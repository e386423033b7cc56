"""Cases for the spreadsheet metrics: compare_table's rules as task files pass them, on workbooks written by
openpyxl and by LibreOffice itself (.xlsx and .ods), a pivot table LibreOffice made, and compare_csv."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openpyxl
from openpyxl.chart import BarChart, Reference
from openpyxl.styles import Font
from openpyxl.worksheet.datavalidation import DataValidation

from .cases import Case, Files, libreoffice_convert

ROWS: list[list[Any]] = [["Name", "Qty", "Price"], ["apple", 3, 1.5], ["pear", 4, 2.25], ["plum", 5, 0.75]]


def workbook(files: Files, rows: list[list[Any]], edit: Any = None, sheet: str = "Sheet1") -> str:
    book = openpyxl.Workbook()
    ws = book.active
    assert ws is not None
    ws.title = sheet
    for row in rows:
        ws.append(row)
    if edit is not None:
        edit(book, ws)
    path = files.path(".xlsx")
    book.save(path)
    return path


def data_rules(**extra: Any) -> dict[str, Any]:
    return {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0", **extra}]}


def openpyxl_cases(files: Files) -> list[Case]:
    gold = workbook(files, ROWS)
    cases = [
        Case("compare_table", (workbook(files, ROWS), gold), "sheet_data: the same data", data_rules()),
        Case(
            "compare_table",
            (workbook(files, [*ROWS[:3], ["plum", 5, 0.7501]]), gold),
            "sheet_data: a value off by 1e-4",
            data_rules(),
        ),
        Case(
            "compare_table",
            (workbook(files, [*ROWS[:3], ["plum", 5, 0.75001]]), gold),
            "sheet_data: a value off by 1e-5 (rounded to 4 digits)",
            data_rules(),
        ),
        Case(
            "compare_table",
            (workbook(files, [*ROWS[:3], ["Plum", 5, 0.75]]), gold),
            "sheet_data: a letter's case",
            data_rules(),
        ),
        Case(
            "compare_table",
            (workbook(files, [*ROWS[:3], ["Plum", 5, 0.75]]), gold),
            "sheet_data ignore_case: a letter's case",
            data_rules(ignore_case=True),
        ),
        Case(
            "compare_table", (workbook(files, [*ROWS, ["fig", 1, 1.0]]), gold), "sheet_data: an extra row", data_rules()
        ),
        Case(
            "compare_table",
            (workbook(files, [[c if not isinstance(c, int) else float(c) for c in r] for r in ROWS]), gold),
            "sheet_data: an int column written as floats",
            data_rules(),
        ),
        Case(
            "compare_table",
            (workbook(files, ROWS, sheet="Data"), gold),
            "sheet_name: another name",
            {"rules": [{"type": "sheet_name"}]},
        ),
        Case(
            "compare_table", (workbook(files, ROWS), gold), "sheet_name: the same", {"rules": [{"type": "sheet_name"}]}
        ),
        Case("compare_table", (files.path(".xlsx"), gold), "a missing result", data_rules()),
        Case("compare_table", (files.text("not a workbook", ".xlsx"), gold), "a broken result", data_rules()),
    ]
    for label, props in [
        ("eq holds", {"value": {"method": "eq", "ref": "pear"}}),
        ("eq fails", {"value": {"method": "eq", "ref": "Pear"}}),
        ("a number approx", {"value": {"method": "approx:0.01", "ref": 2.249}}),
    ]:
        coordinate = "B3" if "number" in label else "A3"
        if "number" in label:
            coordinate = "C3"
        cases.append(
            Case(
                "compare_table",
                (workbook(files, ROWS),),
                f"check_cell: {label}",
                {"rules": [{"type": "check_cell", "sheet_idx": 0, "coordinate": coordinate, "props": props}]},
            )
        )

    def red_header(book: Any, ws: Any) -> None:
        ws["A1"].font = Font(color="FFFF0000")

    def frozen(book: Any, ws: Any) -> None:
        ws.freeze_panes = "B2"

    def zoomed(book: Any, ws: Any) -> None:
        ws.sheet_view.zoomScale = 150

    def hidden_row(book: Any, ws: Any) -> None:
        ws.row_dimensions[3].hidden = True

    def validated(book: Any, ws: Any) -> None:
        rule = DataValidation(type="list", formula1='"Pass,Fail,Held"', allow_blank=True)
        rule.add("D2:D29")
        ws.add_data_validation(rule)

    def charted(book: Any, ws: Any) -> None:
        chart = BarChart()
        chart.title = "Qty"
        chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=4), titles_from_data=True)
        ws.add_chart(chart, "E2")

    styled_gold = workbook(files, ROWS, red_header)
    style_rule = {"rules": [{"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["font_color"]}]}
    cases.append(
        Case(
            "compare_table", (workbook(files, ROWS, red_header), styled_gold), "style: the same font color", style_rule
        )
    )
    cases.append(Case("compare_table", (workbook(files, ROWS), styled_gold), "style: no font color", style_rule))
    freeze_rule = {"rules": [{"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"}]}
    frozen_gold = workbook(files, ROWS, frozen)
    cases.append(Case("compare_table", (workbook(files, ROWS, frozen), frozen_gold), "freeze: the same", freeze_rule))
    cases.append(Case("compare_table", (workbook(files, ROWS), frozen_gold), "freeze: none", freeze_rule))
    for ref, label in [(260, "lt 260 holds"), (100, "lt 100 fails")]:
        cases.append(
            Case(
                "compare_table",
                (workbook(files, ROWS, zoomed),),
                f"zoom: {label}",
                {"rules": [{"type": "zoom", "sheet_idx": 0, "method": "lt", "ref": ref}]},
            )
        )
    row_rule = {"rules": [{"type": "row_props", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["hidden"]}]}
    hidden_gold = workbook(files, ROWS, hidden_row)
    cases.append(Case("compare_table", (workbook(files, ROWS, hidden_row), hidden_gold), "row_props: hidden", row_rule))
    cases.append(Case("compare_table", (workbook(files, ROWS), hidden_gold), "row_props: not hidden", row_rule))
    dv_rule = {
        "rules": [
            {
                "type": "data_validation",
                "sheet_idx": 0,
                "dv_props": [
                    {
                        "ranges": {"method": "spreadsheet_range", "ref": ["D2:D29", "D1:D1048576"]},
                        "type": {"method": "eq", "ref": "list"},
                        "formula1": {"method": "str_set_eq", "ref": ["Pass", "Fail", "Held"]},
                    }
                ],
            }
        ]
    }
    cases.append(Case("compare_table", (workbook(files, ROWS, validated),), "data_validation: a list", dv_rule))
    cases.append(Case("compare_table", (workbook(files, ROWS),), "data_validation: none", dv_rule))
    chart_rule = {"rules": [{"type": "chart", "sheet_idx0": 0, "sheet_idx1": "EI0", "chart_props": ["type", "title"]}]}
    chart_gold = workbook(files, ROWS, charted)
    cases.append(Case("compare_table", (workbook(files, ROWS, charted), chart_gold), "chart: the same", chart_rule))
    cases.append(Case("compare_table", (workbook(files, ROWS), chart_gold), "chart: none", chart_rule))
    fuzzy = {
        "rules": [
            {
                "type": "sheet_fuzzy",
                "sheet_idx0": "RNSheet1",
                "sheet_idx1": "ENSheet1",
                "rules": [{"range": ["A1:A4", "B1:B4"], "type": "exact_match"}],
            }
        ]
    }
    cases.append(Case("compare_table", (workbook(files, ROWS), gold), "sheet_fuzzy: exact", fuzzy))
    cases.append(
        Case(
            "compare_table",
            (workbook(files, [*ROWS[:3], ["plum ", 5, 0.75]]), gold),
            "sheet_fuzzy: a trailing space",
            fuzzy,
        )
    )
    fuzzy_ci = {
        "rules": [
            {
                "type": "sheet_fuzzy",
                "sheet_idx0": "RNSheet1",
                "sheet_idx1": "ENSheet1",
                "rules": [{"range": ["A1:A4"], "type": "fuzzy_match", "threshold": 85, "ignore_case": True}],
            }
        ]
    }
    cases.append(
        Case(
            "compare_table",
            (workbook(files, [*ROWS[:3], ["Plums", 5, 0.75]]), gold),
            "sheet_fuzzy: fuzzy_match ignore_case",
            fuzzy_ci,
        )
    )
    return cases


def fuzzy_rules(*rules: dict[str, Any], sheets: tuple[str, str] = ("RNSheet1", "ENSheet1")) -> dict[str, Any]:
    return {"rules": [{"type": "sheet_fuzzy", "sheet_idx0": sheets[0], "sheet_idx1": sheets[1], "rules": list(rules)}]}


def sheet_fuzzy_cases(files: Files) -> list[Case]:
    """sheet_fuzzy compares str() of each cell as OSWorld's xml reading gives it, on workbooks openpyxl wrote
    and the same saved by LibreOffice: empty cells ("None"), numbers ("3.0"), booleans, padded strings,
    dates, formulas without a saved value, sheets that do not exist, and the option sets of its tasks."""
    def with_formula(book: Any, ws: Any) -> None:
        ws["D2"] = "=B2*C2"

    header = ["Name", "Phone", "Qty", "Done"]
    rows: dict[str, list[list[Any]]] = {
        "gold": [header, ["apple", "+1 (555) 1234", "3", None], ["pear", "555-0100", 4, True]],
        "numbers": [header, ["apple", 15551234, 3, None], ["pear", "5550100", 4, False]],
        "none text": [[*header[:3], "None"], ["Apple ", "+1 (555) 1234", "3", "None of these"],
                      ["pears", "555-0100", 4, True]],
        "padded": [[" Name ", *header[1:]], ["apple", "+1 (555) 1234", "3", None], ["pear", "555-0100", 4, True]],
    }
    books = {label: workbook(files, r) for label, r in rows.items()}
    books["formula"] = workbook(files, rows["gold"], with_formula)
    saved = dict(zip(books, libreoffice_convert(list(books.values()), "xlsx", files.folder / "lo-fuzzy"), strict=False))
    option_sets = {
        "exact_match": fuzzy_rules({"range": ["A1:D3"], "type": "exact_match"}),
        "exact_match ignore_case, one range string of two areas":
            fuzzy_rules({"range": "A1:A3 C1:C3", "type": "exact_match", "ignore_case": True}),
        "includes, phone options (multi_apps/d1acdb87)":
            fuzzy_rules({"range": ["B1:B3"], "type": "includes", "trim_leadings": "+ ", "ignore_chars": " ()-"}),
        "includes on empty cells": fuzzy_rules({"range": ["D1:D3"], "type": "includes"}),
        "included_by": fuzzy_rules({"range": ["A1:D3"], "type": "included_by", "ignore_case": True}),
        "fuzzy_match 90 ignore_case (multi_apps/deec51c9)":
            fuzzy_rules({"range": ["A2:A3"], "type": "fuzzy_match", "threshold": 90, "ignore_case": True}),
        "fuzzy_match with normalization":
            fuzzy_rules({"range": ["A1:D3"], "type": "fuzzy_match", "threshold": 85,
                         "normalization": [["None", ""], ["pear", "pears"]], "ignore_case": True}),
        "trim both sides (multi_apps/b5062e3e)":
            fuzzy_rules({"range": ["A1:D1"], "type": "exact_match", "trim_leadings": " ", "trim_trailings": " "}),
        "booleans": fuzzy_rules({"range": ["D3"], "type": "exact_match"}),
        "a sheet neither book has":
            fuzzy_rules({"range": ["A1:B2"], "type": "exact_match"}, sheets=("RNNone", "ENNone")),
        "a sheet index past the end":
            fuzzy_rules({"range": ["A1:B2"], "type": "exact_match"}, sheets=("RI5", "EI0")),
    }
    cases = []
    for gold_source, gold in [("openpyxl", books["gold"]), ("LibreOffice", saved.get("gold"))]:
        if gold is None:
            continue
        for label in ("numbers", "none text", "padded", "formula"):
            for result_source, result in [("openpyxl", books[label]), ("LibreOffice", saved.get(label))]:
                if result is None:
                    continue
                for options_label, options in option_sets.items():
                    cases.append(Case("compare_table", (result, gold), f"sheet_fuzzy {options_label}: {label} "
                                      f"({result_source}) against the gold ({gold_source})", options))
        cases.append(Case("compare_table", (gold, gold), f"sheet_fuzzy: the gold ({gold_source}) against itself",
                          option_sets["exact_match"]))
    cases.append(Case("compare_table", (books["numbers"],), "sheet_fuzzy: no expected workbook",
                      option_sets["exact_match"]))
    # check_cell reads a cell's value the same way (a failing read is None there).
    for coordinate, props in [
        ("D3", {"value": {"method": "eq", "ref": True}}),
        ("D3", {"value": {"method": "eq", "ref": None}}),
        ("A1", {"value": {"method": "eq", "ref": " Name "}}),
        ("A1", {"value": {"method": "re", "ref": "Name"}}),
        ("C3", {"value": {"method": "eq", "ref": 4}}),
        ("D2", {"value": {"method": "eq", "ref": None}}),
        ("D2", {"value": {"method": "approx:0.1", "ref": 0}}),
    ]:
        for label in ("gold", "padded", "formula"):
            for source, book in [("openpyxl", books[label]), ("LibreOffice", saved.get(label))]:
                if book is None:
                    continue
                rules = {"rules": [{"type": "check_cell", "sheet_idx": 0, "coordinate": coordinate, "props": props}]}
                cases.append(Case("compare_table", (book,), f"check_cell {coordinate} {props}: {label} ({source})",
                                  rules))
    return cases


def libreoffice_cases(files: Files) -> list[Case]:
    """Workbooks LibreOffice wrote from CSV: whole numbers as ints, and the same numbers written as 1.0."""
    sources = [
        files.text("Name,Qty\napple,3\npear,4\n", ".csv"),
        files.text("Name,Qty\napple,3.0\npear,4.0\n", ".csv"),
        files.text("Name,Qty\napple,3.5\npear,4\n", ".csv"),
    ]
    xlsx = libreoffice_convert(sources, "xlsx", files.folder / "lo-xlsx")
    ods = libreoffice_convert(sources, "ods", files.folder / "lo-ods")
    if not xlsx:
        return []
    ints, floats_written, halves = xlsx
    openpyxl_floats = workbook(files, [["Name", "Qty"], ["apple", 3.0], ["pear", 4.0]])
    return [
        Case("compare_table", (ints, floats_written), "LibreOffice xlsx: 3 against 3.0 from CSV", data_rules()),
        Case("compare_table", (ints, openpyxl_floats), "LibreOffice xlsx ints against openpyxl floats", data_rules()),
        Case("compare_table", (halves, ints), "LibreOffice xlsx: 3.5 against 3", data_rules()),
        Case("compare_table", (ints, ints), "LibreOffice xlsx: itself", data_rules()),
        Case("compare_table", (ods[0], ints), "an .ods result against an .xlsx gold", data_rules()),
        Case("compare_table", (ods[0], ods[0]), "an .ods result against itself", data_rules()),
        Case(
            "compare_table",
            (ods[0],),
            "check_cell on an .ods",
            {
                "rules": [
                    {
                        "type": "check_cell",
                        "sheet_idx": 0,
                        "coordinate": "A2",
                        "props": {"value": {"method": "eq", "ref": "apple"}},
                    }
                ]
            },
        ),
    ]


PIVOT_FODS = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
 <office:body><office:spreadsheet>
  <table:table table:name="Sheet1">
   <table:table-row><table:table-cell office:value-type="string"><text:p>Region</text:p></table:table-cell>
    <table:table-cell office:value-type="string"><text:p>Item</text:p></table:table-cell>
    <table:table-cell office:value-type="string"><text:p>Sales</text:p></table:table-cell></table:table-row>
   {rows}
  </table:table>
  <table:table table:name="Sheet2"><table:table-row><table:table-cell/></table:table-row></table:table>
  <table:data-pilot-tables>
   <table:data-pilot-table table:name="DataPilot1" table:target-range-address="Sheet2.A1:Sheet2.D6">
    <table:source-cell-range table:cell-range-address="Sheet1.A1:Sheet1.C{last}"/>
    <table:data-pilot-field table:source-field-name="Region" table:orientation="{region}"/>
    <table:data-pilot-field table:source-field-name="Item" table:orientation="{item}"/>
    <table:data-pilot-field table:source-field-name="Sales" table:orientation="data" table:function="{function}"/>
   </table:data-pilot-table>
  </table:data-pilot-tables>
 </office:spreadsheet></office:body>
</office:document>
"""


def pivot_cases(files: Files) -> list[Case]:
    data = [("North", "apple", 3), ("North", "pear", 4), ("South", "apple", 5), ("South", "plum", 2)]
    rows = "".join(
        f'<table:table-row><table:table-cell office:value-type="string"><text:p>{r}</text:p></table:table-cell>'
        f'<table:table-cell office:value-type="string"><text:p>{i}</text:p></table:table-cell>'
        f'<table:table-cell office:value-type="float" office:value="{v}"><text:p>{v}</text:p></table:table-cell>'
        f"</table:table-row>"
        for r, i, v in data
    )
    variants = [
        ("row", "column", "sum"),
        ("row", "column", "sum"),
        ("column", "row", "sum"),
        ("row", "column", "count"),
    ]
    sources = []
    for n, (region, item, function) in enumerate(variants):
        path = Path(files.path(".fods", stem=f"pivot{n}-"))
        path.write_text(PIVOT_FODS.format(rows=rows, last=len(data) + 1, region=region, item=item, function=function))
        sources.append(str(path))
    books = libreoffice_convert(sources, "xlsx", files.folder / "lo-pivot")
    if not books:
        return []
    props = {
        "rules": [
            {
                "type": "pivot_table",
                "sheet_idx0": "RNSheet2",
                "sheet_idx1": "ENSheet2",
                "pivot_props": ["col_fields", "filter", "row_fields", "data_fields"],
            }
        ]
    }
    gold, same, swapped, counted = books
    plain = workbook(files, [["Region", "Item", "Sales"], *[list(r) for r in data]])
    return [
        Case("compare_table", (same, gold), "pivot_table: the same layout", props),
        Case("compare_table", (swapped, gold), "pivot_table: rows and columns swapped", props),
        Case("compare_table", (counted, gold), "pivot_table: count instead of sum", props),
        Case("compare_table", (plain, gold), "pivot_table: no pivot in the result", props),
    ]


def csv_cases(files: Files) -> list[Case]:
    gold = files.text("a,b\n1,2\n", ".csv")
    return [
        Case("compare_csv", (files.text("a,b\n1,2\n", ".csv"), gold), "the same lines"),
        Case("compare_csv", (files.text("a,b\n1,2", ".csv"), gold), "no final newline"),
        Case("compare_csv", (files.text("a, b\n1,2\n", ".csv"), gold), "a space, strict"),
        Case(
            "compare_csv", (files.text("a,b \n1,2\n", ".csv"), gold), "a trailing space, not strict", {"strict": False}
        ),
        Case("compare_csv", (files.text("A,B\n1,2\n", ".csv"), gold), "case, ignore_case", {"ignore_case": True}),
        Case(
            "compare_csv",
            (files.text("a,b\n1,3\n", ".csv"), [files.text("x\n", ".csv"), gold]),
            "one of two golds, neither",
        ),
        Case(
            "compare_csv",
            (files.text("a,b\n1,2\n", ".csv"), [files.text("x\n", ".csv"), gold]),
            "one of two golds, the second",
        ),
        Case("compare_csv", (None, gold), "no result"),
    ]


def cases(files: Files) -> list[Case]:
    return (openpyxl_cases(files) + sheet_fuzzy_cases(files) + libreoffice_cases(files) + pivot_cases(files)
            + csv_cases(files))
