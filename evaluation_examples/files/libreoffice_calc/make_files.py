#!/usr/bin/env python3
"""Builds the input and expected files of the libreoffice_calc tasks (deterministic data).

Inputs are written with openpyxl. Expected workbooks are written with openpyxl and then
round-tripped through `soffice --headless --convert-to xlsx`, so they look the way
LibreOffice saves them (formulas carry cached values). Expected csv files are LibreOffice's
own csv export of the expected workbook.

    python3 make_files.py          # needs openpyxl and soffice
"""
from __future__ import annotations

import csv
import datetime as dt
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import Literal

from openpyxl import Workbook
from openpyxl.chart import BarChart, Reference
from openpyxl.styles import Font
from openpyxl.worksheet.worksheet import Worksheet

HERE = Path(__file__).resolve().parent
BOLD = Font(bold=True)


def task_dir(task_id: str) -> Path:
    path = HERE / task_id
    path.mkdir(parents=True, exist_ok=True)
    return path


def new_sheet(title: str, header: list[str], rows: list[list], widths: dict[str, float] | None = None):
    wb = Workbook()
    ws = wb.active
    assert isinstance(ws, Worksheet)  # a new workbook's one sheet
    ws.title = title
    ws.append(header)
    for cell in ws[1]:
        cell.font = BOLD
    for row in rows:
        ws.append(row)
    for column, width in (widths or {}).items():
        ws.column_dimensions[column].width = width
    return wb, ws


def pin_volatile_parts(path: Path) -> None:
    """openpyxl and soffice stamp the current time into docProps and zip entries (and soffice
    numbers chart axes at random): pin them so the files are reproducible."""
    data = {}
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            data[info.filename] = archive.read(info.filename)
    stamp = b"2026-01-05T09:00:00Z"
    if "docProps/core.xml" in data:
        data["docProps/core.xml"] = re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp, data["docProps/core.xml"])
    for name in data:
        if name.startswith("xl/charts/chart"):
            data[name] = renumber_chart_axes(data[name])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in data.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 5, 9, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)


def renumber_chart_axes(chart: bytes) -> bytes:
    """LibreOffice numbers chart axes at random: renumber them in order of appearance."""
    ids: dict[bytes, bytes] = {}
    return re.sub(rb'(<c:(?:axId|crossAx) val=")(\d+)(")',
                  lambda m: m[1] + ids.setdefault(m[2], b"%d" % (100001 + len(ids))) + m[3], chart)


def save_input(wb, path: Path) -> None:
    wb.save(path)
    pin_volatile_parts(path)


def soffice_convert(source: Path, target: Path, filter_name: str) -> None:
    """LibreOffice's conversion of `source` into `target` (format given by filter_name)."""
    with tempfile.TemporaryDirectory() as tmp:
        profile = Path(tmp) / "profile"
        out = Path(tmp) / "out"
        subprocess.run(["soffice", f"-env:UserInstallation=file://{profile}", "--headless",
                        "--convert-to", filter_name, "--outdir", str(out), str(source)],
                       check=True, capture_output=True, timeout=180)
        produced = list(out.iterdir())
        if len(produced) != 1:
            raise RuntimeError(f"soffice produced {produced} for {source}")
        shutil.move(str(produced[0]), target)


def write_csv(path: Path, rows: list[list], quoting: Literal[0, 1, 2, 3]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, quoting=quoting, lineterminator="\n").writerows(rows)


def save_expected(wb, path: Path) -> None:
    """Saves through LibreOffice: openpyxl -> tmp xlsx -> soffice -> path."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / path.name
        wb.save(raw)
        soffice_convert(raw, path, "xlsx")
    pin_volatile_parts(path)


# ---------------------------------------------------------------------------------------------

def expenses():
    d = task_dir("calc-household-expenses-totals")
    header = ["Category", "Jan", "Feb", "Mar", "Apr", "May", "Jun"]
    rows = [
        ["Rent", 1250, 1250, 1250, 1250, 1295, 1295],
        ["Groceries", 412.35, 388.9, 430.1, 401.75, 455.2, 419.6],
        ["Utilities", 148.2, 162.45, 131.8, 112.3, 98.65, 104.9],
        ["Transport", 96, 110.5, 87.25, 120, 134.4, 99.8],
        ["Internet", 45, 45, 45, 45, 49.99, 49.99],
        ["Insurance", 86.4, 86.4, 86.4, 86.4, 86.4, 86.4],
        ["Entertainment", 60.15, 42, 118.7, 75.3, 33.9, 88.25],
    ]
    wb, _ = new_sheet("Expenses", header, rows, {"A": 16})
    save_input(wb, d / "household_expenses.xlsx")
    wb, ws = new_sheet("Expenses", header, rows, {"A": 16})
    total = len(rows) + 2
    ws.cell(total, 1, "Total")
    for col in "BCDEFG":
        ws[f"{col}{total}"] = f"=SUM({col}2:{col}{total - 1})"
    save_expected(wb, d / "expected.xlsx")


def employees():
    d = task_dir("calc-sort-staff-by-salary")
    header = ["Name", "Department", "Start Date", "Salary"]
    rows = [
        ["Maria Lopez", "Finance", dt.date(2019, 3, 4), 61500],
        ["Tom Becker", "Sales", dt.date(2021, 7, 19), 48200],
        ["Aisha Khan", "Engineering", dt.date(2017, 11, 1), 83900],
        ["Jonas Weber", "Support", dt.date(2022, 2, 14), 39750],
        ["Chloe Martin", "Engineering", dt.date(2020, 5, 25), 76400],
        ["Ravi Patel", "Marketing", dt.date(2018, 9, 10), 57300],
        ["Elena Rossi", "Sales", dt.date(2016, 1, 11), 66800],
        ["Sam O'Neill", "Support", dt.date(2023, 6, 5), 37100],
        ["Yuki Tanaka", "Finance", dt.date(2015, 4, 20), 71250],
        ["Peter Novak", "Marketing", dt.date(2024, 1, 8), 44600],
    ]

    def build(data):
        wb, ws = new_sheet("Staff", header, data, {"A": 16, "B": 14, "C": 12, "D": 10})
        for row in ws.iter_rows(min_row=2, min_col=3, max_col=3):
            row[0].number_format = "YYYY-MM-DD"
        return wb

    save_input(build(rows), d / "staff.xlsx")
    save_expected(build(sorted(rows, key=lambda r: -r[3])), d / "expected.xlsx")


def orders():
    d = task_dir("calc-order-line-totals")
    header = ["Item", "Unit Price", "Quantity"]
    rows = [
        ["A4 copy paper (500 sheets)", 5.49, 20],
        ["Ballpoint pens, blue (10)", 3.2, 12],
        ["Stapler", 11.95, 3],
        ["Sticky notes 76x76", 1.85, 40],
        ["Whiteboard markers (4)", 6.7, 8],
        ["Lever arch file", 2.99, 25],
        ["Desk organizer", 14.5, 2],
        ["Printer toner black", 58.9, 4],
    ]
    wb, _ = new_sheet("Order", header, rows, {"A": 28, "B": 11, "C": 10})
    save_input(wb, d / "office_order.xlsx")
    wb, ws = new_sheet("Order", header, rows, {"A": 28, "B": 11, "C": 10})
    ws["D1"] = "Line Total"
    ws["D1"].font = BOLD
    for r in range(2, len(rows) + 2):
        ws[f"D{r}"] = f"=B{r}*C{r}"
    save_expected(wb, d / "expected.xlsx")


def growth():
    d = task_dir("calc-growth-as-percent")
    header = ["Region", "Sales 2024", "Sales 2025", "Growth"]
    sales = [("North", 182400, 196350), ("South", 143900, 139120), ("East", 210750, 233480),
             ("West", 98600, 104515), ("Central", 125300, 131820), ("Online", 301200, 352404)]
    rows = []
    for region, before, after in sales:
        rows.append([region, before, after, round(after / before - 1, 4)])
    wb, _ = new_sheet("Regions", header, rows, {"A": 12, "B": 12, "C": 12, "D": 10})
    save_input(wb, d / "regional_sales.xlsx")


def inventory():
    d = task_dir("calc-freeze-header-row")
    header = ["SKU", "Product", "Category", "In Stock", "Reorder Level", "Supplier"]
    categories = ["Hardware", "Garden", "Electrical", "Plumbing", "Paint"]
    products = ["Hammer", "Hose 25m", "LED bulb E27", "Pipe wrench", "Wall paint 5L", "Screwdriver set",
                "Rake", "Extension cord", "Sink trap", "Paint roller", "Tape measure", "Pruning shears",
                "Light switch", "Ball valve", "Masking tape", "Cordless drill", "Watering can",
                "Cable ties (100)", "Plumber's tape", "Brush set", "Utility knife", "Garden gloves",
                "Socket tester", "Faucet cartridge", "Primer 2.5L", "Level 60cm", "Plant pots (5)",
                "Fuse 13A (4)", "Drain snake", "Wood stain 1L", "Allen keys", "Leaf blower",
                "Junction box", "PVC elbow", "Sandpaper pack", "Clamp 150mm", "Hedge trimmer",
                "Wire stripper", "Shower head", "Varnish 750ml"]
    suppliers = ["Toolco", "GreenGrow", "Voltline", "AquaFit", "ColorWorks"]
    rows = []
    for i, name in enumerate(products):
        k = i % 5
        rows.append([f"SKU-{1001 + i}", name, categories[k], (i * 37 + 11) % 90, 10 + (i * 7) % 25, suppliers[k]])
    wb, _ = new_sheet("Inventory", header, rows, {"A": 11, "B": 20, "C": 12, "D": 10, "E": 14, "F": 12})
    save_input(wb, d / "inventory.xlsx")
    wb, ws = new_sheet("Inventory", header, rows, {"A": 11, "B": 20, "C": 12, "D": 10, "E": 14, "F": 12})
    ws.freeze_panes = "A2"
    # Not through soffice: a headless conversion has no view and drops the frozen pane.
    save_input(wb, d / "expected.xlsx")


def contacts():
    d = task_dir("calc-export-contacts-csv")
    header = ["First Name", "Last Name", "Email", "Phone", "City"]
    rows = [
        ["Anna", "Schmidt", "anna.schmidt@example.com", "+49 30 5550142", "Berlin"],
        ["Luca", "Bianchi", "luca.bianchi@example.org", "+39 02 5550178", "Milan"],
        ["Sofia", "Garcia", "sofia.garcia@example.net", "+34 91 5550113", "Madrid"],
        ["James", "Walker", "j.walker@example.com", "+44 20 5550199", "London"],
        ["Emma", "Dubois", "emma.dubois@example.fr", "+33 1 55500127", "Paris"],
        ["Noah", "Jensen", "noah.jensen@example.dk", "+45 33 555061", "Copenhagen"],
    ]
    wb, _ = new_sheet("Contacts", header, rows, {"A": 12, "B": 12, "C": 28, "D": 18, "E": 12})
    save_input(wb, d / "contacts.xlsx")
    # LibreOffice's Text CSV export with its default options quotes only the fields that need
    # it; with "Quote all text cells" every field is quoted. Both are a correct export.
    write_csv(d / "expected.csv", [header] + rows, csv.QUOTE_MINIMAL)
    write_csv(d / "expected_quoted.csv", [header] + rows, csv.QUOTE_ALL)


def chart():
    d = task_dir("calc-column-chart-visitors")
    header = ["Month", "Visitors"]
    rows = [["Jan", 1840], ["Feb", 2125], ["Mar", 2610], ["Apr", 3045], ["May", 3380], ["Jun", 4120]]
    wb, _ = new_sheet("Visitors", header, rows, {"A": 10, "B": 10})
    save_input(wb, d / "site_visitors.xlsx")
    wb, ws = new_sheet("Visitors", header, rows, {"A": 10, "B": 10})
    bar = BarChart()
    bar.type = "col"
    bar.add_data(Reference(ws, min_col=2, min_row=1, max_row=len(rows) + 1), titles_from_data=True)
    bar.set_categories(Reference(ws, min_col=1, min_row=2, max_row=len(rows) + 1))
    ws.add_chart(bar, "D2")
    save_expected(wb, d / "expected.xlsx")


def infeasible():
    d = task_dir("calc-3d-maps-globe-tour")
    header = ["City", "Country", "Sales"]
    rows = [["Chicago", "USA", 48200], ["Toronto", "Canada", 31900], ["Lyon", "France", 22750],
            ["Osaka", "Japan", 40300], ["Melbourne", "Australia", 27600]]
    wb, _ = new_sheet("Sales", header, rows, {"A": 12, "B": 12, "C": 10})
    save_input(wb, d / "city_sales.xlsx")


if __name__ == "__main__":
    for make in (expenses, employees, orders, growth, inventory, contacts, chart, infeasible):
        make()
    print("done")
