"""Spreadsheet metrics on real xlsx/csv files: built with openpyxl, and saved by LibreOffice
(the way an agent's Calc saves them, with each formula's result cached in the file)."""
from __future__ import annotations

import datetime
import itertools
import json
import shutil
import zipfile
from pathlib import Path
from typing import Literal

import openpyxl
import pytest
from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.formatting.rule import FormulaRule
from openpyxl.pivot.cache import CacheDefinition, CacheField, CacheSource, SharedItems, WorksheetSource
from openpyxl.pivot.fields import Index, Number, Text
from openpyxl.pivot.record import Record, RecordList
from openpyxl.pivot.table import DataField, FieldItem, Location, PivotField, RowColField, TableDefinition
from openpyxl.styles import Font, PatternFill
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.worksheet import Worksheet

from desktop_env.evaluators.metrics.table import (
    compare_conference_city_in_order,
    compare_csv,
    compare_table,
)
from desktop_env.evaluators.registry import get_metric

EXAMPLES = Path(__file__).resolve().parents[3] / "shared" / "osworld_examples" / "examples"
# The csv export OSWorld's tasks run after saving (formatted text, one file per sheet).
CSV_EXPORT = "csv:Text - txt - csv (StarCalc):44,34,UTF-8,,,,false,true,true,false,false,1"

SALES = [("ann", 1, 2), ("bob", 3.5, 4), ("cy", 5, 6)]
REGIONS, PRODUCTS = ["East", "West"], ["Pen", "Ink"]
ORDERS = [("East", "Pen", 10), ("West", "Pen", 20), ("East", "Ink", 5), ("West", "Ink", 7)]


def rule(kind: str, first="RI0", second="EI0", **fields) -> dict:
    return {"type": kind, "sheet_idx0": first, "sheet_idx1": second, **fields}


def score(result, expected, *rules: dict) -> float:
    return compare_table(result, expected, rules=list(rules)).score


# -- workbooks the tests build ---------------------------------------------------------------

def worksheet(wb: openpyxl.Workbook, name: str | None = None) -> Worksheet:
    """The active sheet, or sheet `name`, of a workbook these tests built: a worksheet, not a chartsheet."""
    sheet = wb.active if name is None else wb[name]
    assert isinstance(sheet, Worksheet)
    return sheet


def sales_book(totals: str = "formulas") -> openpyxl.Workbook:
    """Name/Q1/Q2/Total; totals as formulas (no saved results) or as the numbers themselves."""
    wb = openpyxl.Workbook()
    ws = worksheet(wb)
    ws.title = "Sheet1"
    ws.append(["Name", "Q1", "Q2", "Total"])
    for row, (name, q1, q2) in enumerate(SALES, start=2):
        ws.append([name, q1, q2, f"=B{row}+C{row}" if totals == "formulas" else q1 + q2])
    wb.create_sheet("Notes")["A1"] = "kept"
    return wb


def report_book(totals: str = "formulas", chart=BarChart, highlight="conditional") -> openpyxl.Workbook:
    """The sales sheet with what Calc users add: a styled merged header row, a chart,
    a Pass/Fail drop-down, and Q values over 3 in red (by conditional format or direct fill)."""
    wb = sales_book(totals)
    ws = worksheet(wb, "Sheet1")
    ws["A1"].font = Font(bold=True, color="FFFFFFFF")
    ws["A1"].fill = PatternFill("solid", fgColor="FF0000FF")
    ws.merge_cells("F1:G1")
    drawn = chart()
    drawn.title = "Sales"
    drawn.add_data(Reference(ws, min_col=2, min_row=1, max_row=4), titles_from_data=True)
    drawn.set_categories(Reference(ws, min_col=1, min_row=2, max_row=4))
    ws.add_chart(drawn, "I2")
    validation = DataValidation(type="list", formula1='"Pass,Fail,Held"', allow_blank=True)
    validation.add("E2:E20")
    ws.add_data_validation(validation)
    if highlight == "conditional":
        ws.conditional_formatting.add("B2:C4", FormulaRule(formula=["B2>3"], fill=PatternFill(bgColor="FFFF0000")))
    else:
        for coordinate in highlight:
            ws[coordinate].fill = PatternFill("solid", fgColor="FFFF0000")
    return wb


def pivot_book(rows=0, cols=1) -> openpyxl.Workbook:
    """Orders by Region/Product with a pivot table of summed Amount on sheet Pivot."""
    wb = openpyxl.Workbook()
    data = worksheet(wb)
    data.title = "Data"
    data.append(["Region", "Product", "Amount"])
    for order in ORDERS:
        data.append(list(order))
    cache = CacheDefinition(
        cacheSource=CacheSource(type="worksheet", worksheetSource=WorksheetSource(ref="A1:C5", sheet="Data")),
        cacheFields=[
            CacheField(name="Region", sharedItems=SharedItems(_fields=[Text(v=v) for v in REGIONS], count=2)),
            CacheField(name="Product", sharedItems=SharedItems(_fields=[Text(v=v) for v in PRODUCTS], count=2)),
            CacheField(name="Amount", sharedItems=SharedItems(containsSemiMixedTypes=False, containsString=False,
                                                              containsNumber=True, minValue=5, maxValue=20)),
        ],
        recordCount=len(ORDERS), refreshOnLoad=True)
    cache.records = RecordList(r=[Record(_fields=[Index(v=REGIONS.index(r)), Index(v=PRODUCTS.index(p)), Number(v=a)])
                                  for r, p, a in ORDERS])
    axes: dict[int, Literal["axisRow", "axisCol"]] = {rows: "axisRow", cols: "axisCol"}
    fields = [PivotField(axis=axes[i], showAll=False, items=[FieldItem(x=0), FieldItem(x=1), FieldItem(t="default")])
              for i in (0, 1)] + [PivotField(dataField=True, showAll=False)]
    pivot = TableDefinition(
        name="PivotTable1", cacheId=1, dataCaption="Values", pivotFields=fields,
        location=Location(ref="A3:D6", firstHeaderRow=1, firstDataRow=2, firstDataCol=1),
        rowFields=[RowColField(x=rows)], colFields=[RowColField(x=cols)],
        dataFields=[DataField(name="Sum of Amount", fld=2, subtotal="sum")])
    pivot.cache = cache
    wb.create_sheet("Pivot")._pivots.append(pivot)
    return wb


def save(wb: openpyxl.Workbook, path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)
    return str(path)


@pytest.fixture(scope="module")
def calc(tmp_path_factory, libreoffice):
    """Files saved by LibreOffice Calc: csv and openpyxl workbooks opened and saved as xlsx,
    and the saved report exported to csv as OSWorld's tasks do."""
    root = tmp_path_factory.mktemp("calc")
    sources = root / "sources"
    sources.mkdir()
    (sources / "grades.csv").write_text("Student,Score,Grade\nann,91.5,A\nbob,78,C\n", encoding="utf-8")
    save(report_book(), sources / "report.xlsx")
    save(pivot_book(), sources / "orders.xlsx")
    saved = root / "saved"
    libreoffice.convert([sources / "grades.csv", sources / "report.xlsx", sources / "orders.xlsx"], "xlsx", saved)
    libreoffice.convert([saved / "report.xlsx"], CSV_EXPORT, saved)
    return saved


# -- inputs that are not a workbook --------------------------------------------------------------

def test_a_missing_or_broken_result_scores_zero(tmp_path):
    gold = save(sales_book("numbers"), tmp_path / "gold.xlsx")
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    text = tmp_path / "notes.xlsx"
    text.write_text("just text", encoding="utf-8")
    data = rule("sheet_data")
    assert score(None, gold, data) == 0.0
    assert score(str(tmp_path / "absent.xlsx"), gold, data) == 0.0
    assert score(str(broken), gold, data) == 0.0
    assert score(str(text), gold, data) == 0.0
    assert score([], gold, data) == 0.0


def test_an_unreadable_gold_fails_the_rules_that_need_it(tmp_path):
    result = save(sales_book("numbers"), tmp_path / "result.xlsx")
    assert score(result, str(tmp_path / "absent_gold.xlsx"), rule("sheet_data")) == 0.0


def test_a_rule_type_or_sheet_reference_the_task_misspells_is_an_error(tmp_path):
    result = save(sales_book("numbers"), tmp_path / "result.xlsx")
    with pytest.raises(ValueError, match="unknown rule type 'sheet_datas'"):
        score(result, result, rule("sheet_datas"))
    with pytest.raises(ValueError, match="bad sheet reference"):
        score(result, result, rule("sheet_data", first="Sheet1"))
    with pytest.raises(ValueError, match="options.rules"):
        compare_table(result, result)


def test_metrics_are_registered_under_osworld_names():
    assert get_metric("compare_table") is compare_table
    assert get_metric("compare_csv") is compare_csv
    assert get_metric("compare_conference_city_in_order") is compare_conference_city_in_order


# -- sheet_name, sheet_data ------------------------------------------------------------------

def test_sheet_name_compares_the_ordered_sheet_names(tmp_path):
    gold = save(sales_book("numbers"), tmp_path / "gold.xlsx")
    same = save(sales_book("numbers"), tmp_path / "same.xlsx")
    renamed_book = sales_book("numbers")
    renamed_book["Notes"].title = "Remarks"
    renamed = save(renamed_book, tmp_path / "renamed.xlsx")
    assert score(same, gold, {"type": "sheet_name"}) == 1.0
    assert score(renamed, gold, {"type": "sheet_name"}) == 0.0
    assert score(same, None, {"type": "sheet_name"}) == 0.0


def test_sheet_data_reads_the_results_calc_saved_for_formulas(calc, tmp_path):
    gold = save(sales_book("numbers"), tmp_path / "gold.xlsx")
    assert score(str(calc / "report.xlsx"), gold, rule("sheet_data", 0, "EI0")) == 1.0
    # openpyxl writes formulas without results: nothing to compare until an app saves the file.
    unsaved = save(sales_book("formulas"), tmp_path / "unsaved.xlsx")
    assert score(unsaved, gold, rule("sheet_data", 0, "EI0")) == 0.0


def test_sheet_data_fails_on_a_wrong_value(calc, tmp_path):
    wrong = sales_book("numbers")
    wrong["Sheet1"]["D3"] = 8
    gold = save(wrong, tmp_path / "gold.xlsx")
    assert score(str(calc / "report.xlsx"), gold, rule("sheet_data", 0, "EI0")) == 0.0


def test_sheet_data_on_a_csv_calc_saved_as_xlsx(calc, tmp_path):
    wb = openpyxl.Workbook()
    ws = worksheet(wb)
    for row in (["Student", "Score", "Grade"], ["ann", 91.5, "A"], ["bob", 78, "C"]):
        ws.append(row)
    gold = save(wb, tmp_path / "gold.xlsx")
    assert score(str(calc / "grades.xlsx"), gold, rule("sheet_data")) == 1.0
    ws["C3"] = "B"
    assert score(str(calc / "grades.xlsx"), save(wb, tmp_path / "other.xlsx"), rule("sheet_data")) == 0.0


def test_sheet_data_rounds_numbers_to_the_rule_precision(tmp_path):
    def book(value):
        wb = openpyxl.Workbook()
        worksheet(wb).append(["rate"])
        worksheet(wb).append([value])
        return wb
    result = save(book(0.123441), tmp_path / "result.xlsx")
    gold = save(book(0.123439), tmp_path / "gold.xlsx")
    assert score(result, gold, rule("sheet_data")) == 1.0
    assert score(result, gold, rule("sheet_data", precision=6)) == 0.0


def test_sheet_data_finds_sheets_by_name_and_fails_on_a_missing_one(tmp_path):
    gold = save(sales_book("numbers"), tmp_path / "gold.xlsx")
    result = save(sales_book("numbers"), tmp_path / "result.xlsx")
    assert score(result, gold, rule("sheet_data", "RNNotes", "ENNotes")) == 1.0
    assert score(result, gold, rule("sheet_data", "RI1", "EI1")) == 1.0
    assert score(result, gold, rule("sheet_data", "RNSummary", "ENNotes")) == 0.0
    assert score(result, gold, rule("sheet_data", "RI5", "EI0")) == 0.0


# -- sheet_print -----------------------------------------------------------------------------

def printed_gold(tmp_path, text: str) -> str:
    gold = save(sales_book("numbers"), tmp_path / "gold.xlsx")
    (tmp_path / "gold-Sheet1.csv").write_text(text, encoding="utf-8")
    return gold


def test_sheet_print_compares_the_csv_export_beside_each_book(calc, tmp_path):
    gold = printed_gold(tmp_path, "Name,Q1,Q2,Total\nann,1,2,3\nbob,3.5,4,7.5\ncy,5,6,11\n\n")
    assert score(str(calc / "report.xlsx"), gold, rule("sheet_print", "RNSheet1", "ENSheet1")) == 1.0


def test_sheet_print_fails_on_other_printed_text(calc, tmp_path):
    gold = printed_gold(tmp_path, "Name,Q1,Q2,Total\nann,1.00,2.00,3.00\nbob,3.50,4.00,7.50\ncy,5.00,6.00,11.00\n")
    assert score(str(calc / "report.xlsx"), gold, rule("sheet_print", "RNSheet1", "ENSheet1")) == 0.0


def test_sheet_print_ignore_case(calc, tmp_path):
    gold = printed_gold(tmp_path, "NAME,Q1,Q2,TOTAL\nANN,1,2,3\nBOB,3.5,4,7.5\nCY,5,6,11\n")
    printed = rule("sheet_print", "RNSheet1", "ENSheet1")
    assert score(str(calc / "report.xlsx"), gold, printed) == 0.0
    assert score(str(calc / "report.xlsx"), gold, {**printed, "ignore_case": True}) == 1.0


def test_sheet_print_without_an_export_scores_zero(calc, tmp_path):
    result = save(sales_book("numbers"), tmp_path / "result.xlsx")
    gold = printed_gold(tmp_path / "gold", "Name,Q1,Q2,Total\n")
    assert score(result, gold, rule("sheet_print", "RNSheet1", "ENSheet1")) == 0.0


def test_sheet_print_takes_the_export_from_a_list_of_files(calc, tmp_path):
    elsewhere = tmp_path / "fetched"
    elsewhere.mkdir()
    book = shutil.copy(calc / "report.xlsx", elsewhere / "report.xlsx")
    csv = shutil.copy(calc / "report-Sheet1.csv", tmp_path / "report-Sheet1.csv")
    gold = printed_gold(tmp_path / "gold", "Name,Q1,Q2,Total\nann,1,2,3\nbob,3.5,4,7.5\ncy,5,6,11\n")
    assert score([str(book), str(csv)], gold, rule("sheet_print", "RNSheet1", "ENSheet1")) == 1.0


# -- sheet_fuzzy -----------------------------------------------------------------------------

def places_book(rows) -> openpyxl.Workbook:
    wb = openpyxl.Workbook()
    worksheet(wb).append(["Name", "Address", "Phone"])
    for row in rows:
        worksheet(wb).append(list(row))
    return wb


FUZZY = rule("sheet_fuzzy", "RNSheet", "ENSheet", rules=[
    {"range": ["A1:A3"], "type": "exact_match"},
    {"range": ["B1:B3"], "type": "fuzzy_match", "threshold": 85,
     "normalization": [["Rd", "Road"], ["St", "Street"]], "ignore_case": True},
    {"range": ["C1:C3"], "type": "includes", "trim_leadings": "+ ", "ignore_chars": " ()-"},
])


def test_sheet_fuzzy_matches_cells_after_normalising_them(tmp_path):
    gold = save(places_book([("Cafe", "12 Main Street", "555 1234"), ("Deli", "3 Oak Road", "+1 555 0000")]),
                tmp_path / "gold.xlsx")
    result = save(places_book([("Cafe", "12 Main St", "Tel (555) 1234"), ("Deli", "3 Oak Rd.", "1-555-0000")]),
                  tmp_path / "result.xlsx")
    assert score(result, gold, FUZZY) == 1.0


def test_sheet_fuzzy_compares_a_number_as_osworld_writes_it(tmp_path):
    # OSWorld reads a number cell as a float and compares str() of it: 5551234 is "5551234.0", which the
    # result's "Tel (555) 1234" does not include; the same number saved on both sides matches.
    gold = save(places_book([("Cafe", "12 Main Street", 5551234)]), tmp_path / "gold.xlsx")
    as_text = save(places_book([("Cafe", "12 Main St", "Tel (555) 1234")]), tmp_path / "text.xlsx")
    as_number = save(places_book([("Cafe", "12 Main St", 5551234)]), tmp_path / "number.xlsx")
    assert score(as_text, gold, FUZZY) == 0.0
    assert score(as_number, gold, FUZZY) == 1.0


def test_sheet_fuzzy_fails_on_a_cell_that_does_not_match(tmp_path):
    gold = save(places_book([("Cafe", "12 Main Street", 5551234)]), tmp_path / "gold.xlsx")
    for wrong in [("Café", "12 Main Street", 5551234), ("Cafe", "98 Elm Avenue", 5551234),
                  ("Cafe", "12 Main Street", 5559999), ("Cafe", "12 Main Street", None)]:
        result = save(places_book([wrong]), tmp_path / "result.xlsx")
        assert score(result, gold, FUZZY) == 0.0, wrong


def test_sheet_fuzzy_on_a_missing_sheet_scores_zero(tmp_path):
    gold = save(places_book([("Cafe", "12 Main Street", 5551234)]), tmp_path / "gold.xlsx")
    assert score(gold, gold, {**FUZZY, "sheet_idx0": "RNSheet9"}) == 0.0


# -- check_cell ------------------------------------------------------------------------------

def check(sheet, coordinate: str, **props) -> dict:
    return {"type": "check_cell", "sheet_idx": sheet, "coordinate": coordinate, "props": props}


def test_check_cell_values_calc_saved(calc):
    report = str(calc / "report.xlsx")
    assert score(report, None,
                 check("RNSheet1", "A1", value={"method": "eq", "ref": "Name"}),
                 check(0, "D3", value={"method": "approx:0.001", "ref": 7.5}),
                 check(0, "D4", value={"method": "eq", "ref": 11}),
                 check(0, "A2", value={"method": "re.I", "ref": "^AN"})) == 1.0
    assert score(str(calc / "grades.xlsx"), None, check(0, "B2", value={"method": "eq", "ref": 91.5})) == 1.0


def test_check_cell_fails_on_a_wrong_or_empty_value(calc):
    report = str(calc / "report.xlsx")
    assert score(report, None, check(0, "D3", value={"method": "approx:0.001", "ref": 7.6})) == 0.0
    assert score(report, None, check(0, "Z99", value={"method": "eq", "ref": 0})) == 0.0
    assert score(report, None, check(0, "Z99", value={"method": "lt", "ref": 5})) == 0.0
    assert score(report, None, check("RNMissing", "A1", value={"method": "eq", "ref": "Name"})) == 0.0


def test_check_cell_styles_and_merges_calc_saved(calc):
    report = str(calc / "report.xlsx")
    header = check("RNSheet1", "A1", bgcolor={"method": "eq", "ref": "FF0000FF"},
                   font_color={"method": "eq", "ref": "FFFFFFFF"}, font_bold={"method": "eq", "ref": True})
    assert score(report, None, header,
                 check(0, "G1", merge={"method": "eq", "ref": True}),
                 check(0, "F1", merge={"method": "eq", "ref": False})) == 1.0
    assert score(report, None, check(0, "A2", font_bold={"method": "eq", "ref": True})) == 0.0
    assert score(report, None, check(0, "H1", merge={"method": "eq", "ref": True})) == 0.0


def test_check_cell_resolves_theme_colours(tmp_path):
    wb = openpyxl.Workbook()
    worksheet(wb)["A1"] = "text"  # the default font's colour is theme colour 1 (dark 1: black)
    path = save(wb, tmp_path / "theme.xlsx")
    assert score(path, None, check(0, "A1", font_color={"method": "eq", "ref": "FF000000"})) == 1.0


def test_check_cell_with_an_unknown_property_is_an_error(calc):
    with pytest.raises(ValueError, match="unknown cell property 'font_colour'"):
        score(str(calc / "report.xlsx"), None, check(0, "A1", font_colour={"method": "eq", "ref": "x"}))


# -- style (with conditional formatting) ------------------------------------------------------

def test_style_sees_conditional_formats_as_the_colours_they_show(calc, tmp_path):
    # Calc saved the conditional format; the gold fills the same cells directly.
    gold = save(report_book("numbers", highlight=["B3", "C3", "B4", "C4"]), tmp_path / "gold.xlsx")
    bgcolor = rule("style", 0, "EI0", props=["bgcolor"])
    assert score(str(calc / "report.xlsx"), gold, bgcolor) == 1.0
    assert score(gold, str(calc / "report.xlsx"), bgcolor) == 1.0


def test_style_fails_when_a_cell_is_coloured_differently(calc, tmp_path):
    gold = save(report_book("numbers", highlight=["B3", "C3", "B4"]), tmp_path / "gold.xlsx")
    assert score(str(calc / "report.xlsx"), gold, rule("style", 0, "EI0", props=["bgcolor"])) == 0.0


def test_style_evaluates_conditional_formulas_with_functions(tmp_path):
    def calendar(name: str, highlight) -> str:
        wb = openpyxl.Workbook()
        ws = worksheet(wb)
        for day in range(1, 15):  # 2024-01-01 is a Monday
            ws.cell(row=day, column=1, value=datetime.date(2024, 1, day))
        if highlight == "conditional":
            ws.conditional_formatting.add("A1:A14", FormulaRule(formula=["WEEKDAY(A1,2)>5"],
                                                                 fill=PatternFill(bgColor="FFFFFF00")))
        else:
            for row in highlight:
                ws.cell(row=row, column=1).fill = PatternFill("solid", fgColor="FFFFFF00")
        return save(wb, tmp_path / f"{name}.xlsx")

    weekends = calendar("conditional", "conditional")
    bgcolor = rule("style", 0, "EI0", props=["bgcolor"])
    assert score(weekends, calendar("filled", [6, 7, 13, 14]), bgcolor) == 1.0
    assert score(weekends, calendar("one_missing", [6, 7, 13]), bgcolor) == 0.0


def test_style_evaluates_whole_column_references_in_conditional_formulas(tmp_path):
    """The usual duplicate highlighter, COUNTIF($A:$A,A1)>1, names a whole column."""
    def names(name: str, highlight) -> str:
        wb = openpyxl.Workbook()
        ws = worksheet(wb)
        for row, value in enumerate(["ann", "bob", "ann", "cy", "bob", "dee"], start=1):
            ws.cell(row=row, column=1, value=value)
        if highlight == "conditional":
            ws.conditional_formatting.add("A1:A6", FormulaRule(formula=["COUNTIF($A:$A,A1)>1"],
                                                               fill=PatternFill(bgColor="FFFF0000")))
        else:
            for row in highlight:
                ws.cell(row=row, column=1).fill = PatternFill("solid", fgColor="FFFF0000")
        return save(wb, tmp_path / f"{name}.xlsx")

    duplicates = names("conditional", "conditional")
    bgcolor = rule("style", 0, "EI0", props=["bgcolor"])
    assert score(duplicates, names("filled", [1, 2, 3, 5]), bgcolor) == 1.0
    assert score(duplicates, names("none", []), bgcolor) == 0.0


def test_style_compares_fonts_and_number_formats(tmp_path):
    def book(bold: bool, number_format: str) -> openpyxl.Workbook:
        wb = sales_book("numbers")
        worksheet(wb)["B2"].font = Font(bold=bold)
        worksheet(wb)["B2"].number_format = number_format
        return wb
    gold = save(book(True, "0.00"), tmp_path / "gold.xlsx")
    styles = rule("style", 0, "EI0", props=["font_bold", "number_format"])
    assert score(save(book(True, "0.00"), tmp_path / "same.xlsx"), gold, styles) == 1.0
    assert score(save(book(False, "0.00"), tmp_path / "plain.xlsx"), gold, styles) == 0.0
    assert score(save(book(True, "0.0"), tmp_path / "format.xlsx"), gold, styles) == 0.0


# -- freeze, zoom ----------------------------------------------------------------------------

def view_book(path: Path, freeze: str | None = None, zoom: int | None = None, scrolled_to: str | None = None) -> str:
    wb = sales_book("numbers")
    ws = worksheet(wb)
    ws.freeze_panes = freeze
    if zoom is not None:
        ws.sheet_view.zoomScale = zoom
    if scrolled_to is not None:
        assert ws.sheet_view.pane is not None, "scrolling a pane needs freeze"
        ws.sheet_view.pane.topLeftCell = scrolled_to
    return save(wb, path)


def test_freeze_compares_the_frozen_rows_and_columns(tmp_path):
    gold = view_book(tmp_path / "gold.xlsx", freeze="B2")
    assert score(view_book(tmp_path / "same.xlsx", freeze="B2"), gold, rule("freeze", 0, "EI0")) == 1.0
    # Scrolling moves the pane's first visible cell, not the freeze.
    assert score(view_book(tmp_path / "scrolled.xlsx", freeze="B2", scrolled_to="B40"), gold,
                 rule("freeze", 0, "EI0")) == 1.0


def test_freeze_fails_on_other_or_no_frozen_panes(tmp_path):
    gold = view_book(tmp_path / "gold.xlsx", freeze="B2")
    assert score(view_book(tmp_path / "rows.xlsx", freeze="A3"), gold, rule("freeze", 0, "EI0")) == 0.0
    assert score(view_book(tmp_path / "none.xlsx"), gold, rule("freeze", 0, "EI0")) == 0.0


def test_zoom_compares_the_zoom_with_a_reference(tmp_path):
    zoom_below_260 = {"type": "zoom", "sheet_idx": 0, "method": "lt", "ref": 260}
    assert score(view_book(tmp_path / "150.xlsx", zoom=150), None, zoom_below_260) == 1.0
    assert score(view_book(tmp_path / "default.xlsx"), None, zoom_below_260) == 1.0  # 100 %
    assert score(view_book(tmp_path / "300.xlsx", zoom=300), None, zoom_below_260) == 0.0


# -- data_validation -------------------------------------------------------------------------

PASS_FAIL = {"type": "data_validation", "sheet_idx": 0, "dv_props": [{
    "ranges": {"method": "spreadsheet_range", "ref": ["E2:E20", "E1:E1048576"]},
    "type": {"method": "eq", "ref": "list"},
    "formula1": {"method": "str_set_eq", "ref": ["Pass", "Fail", "Held"]}}]}


def test_data_validation_calc_saved_matches_the_rule(calc):
    assert score(str(calc / "report.xlsx"), None, PASS_FAIL) == 1.0


def test_data_validation_fails_on_other_choices_ranges_or_none(tmp_path):
    names = itertools.count()

    def book(formula: str | None, cells: str = "E2:E20") -> str:
        wb = sales_book("numbers")
        if formula is not None:
            validation = DataValidation(type="list", formula1=formula)
            validation.add(cells)
            worksheet(wb).add_data_validation(validation)
        return save(wb, tmp_path / f"validation{next(names)}.xlsx")

    assert score(book('"Pass,Fail,Held"'), None, PASS_FAIL) == 1.0
    assert score(book('"Pass,Fail"'), None, PASS_FAIL) == 0.0
    assert score(book('"Pass,Fail,Held"', "E2:E10"), None, PASS_FAIL) == 0.0
    assert score(book('"Pass,Fail,Held"', "D2:E20"), None, PASS_FAIL) == 0.0
    assert score(book(None), None, PASS_FAIL) == 0.0


# -- row_props, col_props, filter ------------------------------------------------------------

def layout_book(path: Path, hidden_row: int | None = None, hidden_col: str | None = None,
                width: float | None = None, filtered: str | None = None) -> str:
    wb = sales_book("numbers")
    ws = worksheet(wb)
    if hidden_row:
        ws.row_dimensions[hidden_row].hidden = True
    if hidden_col:
        ws.column_dimensions[hidden_col].hidden = True
    if width:
        ws.column_dimensions["A"].width = width
    if filtered:
        ws.auto_filter.ref = filtered
    return save(wb, path)


def test_row_props_compare_hidden_rows(tmp_path):
    gold = layout_book(tmp_path / "gold.xlsx", hidden_row=3)
    hidden = rule("row_props", 0, "EI0", props=["hidden"])
    assert score(layout_book(tmp_path / "same.xlsx", hidden_row=3), gold, hidden) == 1.0
    assert score(layout_book(tmp_path / "other.xlsx", hidden_row=4), gold, hidden) == 0.0
    assert score(layout_book(tmp_path / "none.xlsx"), gold, hidden) == 0.0


def test_col_props_compare_hidden_columns_and_widths(tmp_path):
    gold = layout_book(tmp_path / "gold.xlsx", hidden_col="C", width=30)
    props = rule("col_props", 0, "EI0", props=["hidden", "width"])
    assert score(layout_book(tmp_path / "same.xlsx", hidden_col="C", width=30), gold, props) == 1.0
    assert score(layout_book(tmp_path / "narrow.xlsx", hidden_col="C", width=10), gold, props) == 0.0
    assert score(layout_book(tmp_path / "shown.xlsx", width=30), gold, props) == 0.0


def test_filter_compares_the_autofilter(tmp_path):
    gold = layout_book(tmp_path / "gold.xlsx", filtered="A1:D4")
    assert score(layout_book(tmp_path / "same.xlsx", filtered="A1:D4"), gold, rule("filter", 0, "EI0")) == 1.0
    assert score(layout_book(tmp_path / "other.xlsx", filtered="A1:B4"), gold, rule("filter", 0, "EI0")) == 0.0


# -- sparkline -------------------------------------------------------------------------------

def with_sparklines(source: str, path: Path, sparklines: dict[str, str]) -> str:
    """openpyxl cannot write sparklines: add Excel's x14 extension to the sheet's xml."""
    groups = "".join(f"<x14:sparkline><xm:f>{data}</xm:f><xm:sqref>{cell}</xm:sqref></x14:sparkline>"
                     for cell, data in sparklines.items())
    extension = ('<extLst><ext uri="{05C60535-1F16-4fd2-B633-F4F36F0B64E0}" '
                 'xmlns:x14="http://schemas.microsoft.com/office/spreadsheetml/2009/9/main">'
                 '<x14:sparklineGroups xmlns:xm="http://schemas.microsoft.com/office/excel/2006/main">'
                 f'<x14:sparklineGroup><x14:sparklines>{groups}</x14:sparklines></x14:sparklineGroup>'
                 '</x14:sparklineGroups></ext></extLst>')
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(path, "w") as copy:
        for item in original.infolist():
            data = original.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b"</worksheet>", extension.encode() + b"</worksheet>")
            copy.writestr(item, data)
    return str(path)


def test_sparkline_compares_cells_and_their_data(tmp_path):
    plain = save(sales_book("numbers"), tmp_path / "plain.xlsx")
    gold = with_sparklines(plain, tmp_path / "gold.xlsx", {"E2": "Sheet1!B2:C2", "E3": "Sheet1!B3:C3"})
    same = with_sparklines(plain, tmp_path / "same.xlsx", {"E2": "Sheet1!B2:C2", "E3": "Sheet1!B3:C3"})
    other = with_sparklines(plain, tmp_path / "other.xlsx", {"E2": "Sheet1!B2:D2", "E3": "Sheet1!B3:C3"})
    assert score(same, gold, rule("sparkline", 0, "EI0")) == 1.0
    assert score(other, gold, rule("sparkline", 0, "EI0")) == 0.0
    assert score(plain, gold, rule("sparkline", 0, "EI0")) == 0.0


# -- chart -----------------------------------------------------------------------------------

def test_chart_calc_saved_matches_the_gold_chart(calc, tmp_path):
    gold = save(report_book("numbers"), tmp_path / "gold.xlsx")
    props = rule("chart", 0, "EI0", chart_props=["type", "title", "direction", "legend"])
    assert score(str(calc / "report.xlsx"), gold, props) == 1.0


def test_chart_fails_on_another_chart_type_or_title_or_no_chart(calc, tmp_path):
    line = save(report_book("numbers", chart=LineChart), tmp_path / "line.xlsx")
    retitled_book = report_book("numbers")
    retitled_book.active._charts[0].title = "Revenue"
    retitled = save(retitled_book, tmp_path / "retitled.xlsx")
    chartless = save(sales_book("numbers"), tmp_path / "chartless.xlsx")
    props = rule("chart", 0, "EI0", chart_props=["type", "title"])
    report = str(calc / "report.xlsx")
    assert score(report, line, props) == 0.0
    assert score(report, retitled, props) == 0.0
    assert score(chartless, report, props) == 0.0


# -- pivot_table -----------------------------------------------------------------------------

PIVOT = rule("pivot_table", "RNPivot", "ENPivot", pivot_props=["col_fields", "filter", "row_fields", "data_fields"])


def test_pivot_table_calc_saved_matches_the_gold_pivot(calc, tmp_path):
    gold = save(pivot_book(), tmp_path / "gold.xlsx")
    assert score(str(calc / "orders.xlsx"), gold, PIVOT) == 1.0


def test_pivot_table_fails_on_swapped_fields_or_no_pivot(calc, tmp_path):
    swapped = save(pivot_book(rows=1, cols=0), tmp_path / "swapped.xlsx")
    assert score(str(calc / "orders.xlsx"), swapped, PIVOT) == 0.0
    no_pivot = openpyxl.load_workbook(swapped)
    no_pivot["Pivot"]._pivots.clear()
    assert score(save(no_pivot, tmp_path / "none.xlsx"), swapped, PIVOT) == 0.0


# -- the rules of the real task files ----------------------------------------------------------

def osworld_table_rules() -> list[tuple[str, dict]]:
    if not EXAMPLES.is_dir():
        pytest.skip("../shared/osworld_examples is not here")
    found = []
    for path in sorted(EXAMPLES.glob("*/*.json")):
        evaluator = json.loads(path.read_text(encoding="utf-8"))["evaluator"]
        funcs = evaluator["func"] if isinstance(evaluator["func"], list) else [evaluator["func"]]
        options = evaluator.get("options") or {}
        options = options if isinstance(options, list) else [options] * len(funcs)
        for func, option in zip(funcs, options, strict=True):
            if func == "compare_table":
                found += [(path.name, table_rule) for table_rule in (option or {}).get("rules", [])]
    return found


def test_every_rule_of_the_osworld_tasks_runs(tmp_path):
    """Each rule of the real task files (types, sheet references, match methods, cell
    properties) runs on a workbook with the sheets they name, without raising."""
    rules = osworld_table_rules()
    assert {"sheet_data", "check_cell", "chart", "pivot_table"} <= {r["type"] for _, r in rules}
    names = {ref[2:] for _, r in rules for key in ("sheet_idx", "sheet_idx0", "sheet_idx1")
             if isinstance(ref := r.get(key), str) and ref[:2] in ("RN", "EN")}
    wb = openpyxl.Workbook()
    worksheet(wb).title = "Sheet1"
    for name in sorted(names | {f"Sheet{i}" for i in range(2, 9)}):
        if name not in wb.sheetnames:
            wb.create_sheet(name)["A1"] = 1
    book = save(wb, tmp_path / "sheets.xlsx")
    distinct = {json.dumps(table_rule, sort_keys=True): task for task, table_rule in rules}
    for table_rule, task in distinct.items():
        assert score(book, book, json.loads(table_rule)) in (0.0, 1.0), task


# -- compare_csv -----------------------------------------------------------------------------

def write(path: Path, text: str, encoding: str = "utf-8") -> str:
    path.write_text(text, encoding=encoding)
    return str(path)


def test_compare_csv_matches_identical_lines(tmp_path):
    gold = write(tmp_path / "gold.csv", "name,phone\nann,555\n")
    assert compare_csv(write(tmp_path / "same.csv", "name,phone\nann,555\n"), gold).score == 1.0
    assert compare_csv(write(tmp_path / "bom.csv", "name,phone\nann,555\n", "utf-8-sig"), gold).score == 1.0
    assert compare_csv(write(tmp_path / "other.csv", "name,phone\nann,556\n"), gold).score == 0.0


def test_compare_csv_accepts_any_of_several_expected_files(tmp_path):
    golds = [write(tmp_path / "gold1.csv", "a,b\n"), write(tmp_path / "gold2.csv", "b,a\n")]
    assert compare_csv(write(tmp_path / "result.csv", "b,a\n"), golds).score == 1.0
    assert compare_csv(write(tmp_path / "wrong.csv", "a;b\n"), golds).score == 0.0


def test_compare_csv_options(tmp_path):
    gold = write(tmp_path / "gold.csv", "Name,City\nAnn,Rome\n")
    spaced = write(tmp_path / "spaced.csv", "Name,City  \nAnn,Rome\n")
    shouting = write(tmp_path / "shouting.csv", "NAME,CITY\nANN,ROME\n")
    assert compare_csv(spaced, gold).score == 0.0
    assert compare_csv(spaced, gold, strict=False).score == 1.0
    assert compare_csv(shouting, gold).score == 0.0
    assert compare_csv(shouting, gold, ignore_case=True).score == 1.0


def test_compare_csv_without_a_result_scores_zero(tmp_path):
    gold = write(tmp_path / "gold.csv", "a\n")
    assert compare_csv(None, gold).score == 0.0
    assert compare_csv(str(tmp_path / "absent.csv"), gold).score == 0.0
    assert compare_csv(write(tmp_path / "result.csv", "a\n"), None).score == 0.0


# -- compare_conference_city_in_order --------------------------------------------------------

def cities_book(tmp_path, cities) -> str:
    wb = openpyxl.Workbook()
    worksheet(wb).append(["Conference", "Year", "City"])
    for city in cities:
        worksheet(wb).append(["X", 2024, city])
    return save(wb, tmp_path / "cities.xlsx")


def test_conference_cities_in_order_tolerate_accents_punctuation_and_alternatives(tmp_path):
    expected = {"expected": ["Sao Paulo", ["New York", "NYC"], "Montreal"]}
    result = cities_book(tmp_path, ["São Paulo, Brazil", "NYC", "Montréal (QC)"])
    assert compare_conference_city_in_order(result, expected).score == 1.0


def test_conference_cities_out_of_order_or_missing_score_zero(tmp_path):
    expected = {"expected": ["Vienna", "Seattle"]}
    assert compare_conference_city_in_order(cities_book(tmp_path, ["Seattle", "Vienna"]), expected).score == 0.0
    assert compare_conference_city_in_order(cities_book(tmp_path, ["Vienna"]), expected).score == 0.0
    assert compare_conference_city_in_order(None, expected).score == 0.0
    assert compare_conference_city_in_order(str(tmp_path / "absent.xlsx"), expected).score == 0.0
