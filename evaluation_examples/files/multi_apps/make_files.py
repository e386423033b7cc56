#!/usr/bin/env python3
"""Builds the input and expected files of the multi_apps tasks (deterministic data).

Spreadsheets are written with openpyxl, Word documents with python-docx, pictures with
Pillow; every zip-based file gets fixed timestamps so a rerun gives the same bytes.

    python3 make_files.py          # needs openpyxl, python-docx and Pillow
"""
from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

from docx import Document
from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.worksheet.worksheet import Worksheet
from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent
BOLD = Font(bold=True)
ZIP_TIME = (2026, 1, 5, 9, 0, 0)


def task_dir(task_id: str) -> Path:
    path = HERE / task_id
    path.mkdir(parents=True, exist_ok=True)
    return path


def pin_zip(path: Path) -> None:
    """openpyxl and python-docx stamp the current time into docProps and zip entries: pin them."""
    with zipfile.ZipFile(path) as archive:
        members = [(info.filename, archive.read(info.filename)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members:
            if name == "docProps/core.xml":
                content = re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"2026-01-05T09:00:00Z", content)
            archive.writestr(zipfile.ZipInfo(name, ZIP_TIME), content, zipfile.ZIP_DEFLATED)


def new_workbook() -> tuple[Workbook, Worksheet]:
    wb = Workbook()
    ws = wb.active
    assert isinstance(ws, Worksheet)  # a new workbook's one sheet
    return wb, ws


def save_book(header: list[str], rows: list[list], path: Path, title: str = "Sheet1",
              widths: dict[str, float] | None = None, number_format: dict[str, str] | None = None) -> None:
    wb, ws = new_workbook()
    ws.title = title
    ws.append(header)
    for cell in ws[1]:
        cell.font = BOLD
    for row in rows:
        ws.append(row)
    for column, width in (widths or {}).items():
        ws.column_dimensions[column].width = width
    for column, fmt in (number_format or {}).items():
        for cell in ws[column][1:]:
            cell.number_format = fmt
    wb.save(path)
    pin_zip(path)


def save_expected_book(header: list[str], rows: list[list], path: Path) -> None:
    """A plain gold workbook: only its values matter (compare_table's sheet_data)."""
    wb, ws = new_workbook()
    ws.append(header)
    for row in rows:
        ws.append(row)
    wb.save(path)
    pin_zip(path)


def save_docx(path: Path, blocks: list[tuple]) -> None:
    """blocks: ("h", text) heading, ("p", text) paragraph, ("t", rows) table with a header row."""
    doc = Document()
    for kind, content in blocks:
        if kind == "h":
            doc.add_heading(content, level=1)
        elif kind == "p":
            doc.add_paragraph(content)
        elif kind == "t":
            table = doc.add_table(rows=len(content), cols=len(content[0]))
            table.style = "Table Grid"
            for r, row in enumerate(content):
                for c, value in enumerate(row):
                    table.cell(r, c).text = str(value)
    doc.core_properties.author = "osworld"
    doc.save(str(path))  # python-docx takes a Path too; its annotation names only str and streams
    pin_zip(path)


# -- multi-steps-note-to-calc ------------------------------------------------------------------
STEPS = [("Monday", 8432), ("Tuesday", 10217), ("Wednesday", 6120), ("Thursday", 12045),
         ("Friday", 9388), ("Saturday", 15760), ("Sunday", 4903)]


def steps_note_to_calc() -> None:
    d = task_dir("multi-steps-note-to-calc")
    lines = ["Step counts, week of 2 March 2026 (copied from my watch app)", ""]
    lines += [f"{day:<11}{steps}" for day, steps in STEPS]
    lines += ["", "Goal for next week: 10000 a day on average."]
    (d / "step-log.txt").write_text("\n".join(lines) + "\n")
    save_expected_book(["Day", "Steps"], [list(s) for s in STEPS], d / "expected.xlsx")


# -- multi-quote-table-to-calc -----------------------------------------------------------------
QUOTE = [("A4 copy paper (box of 5 reams)", 12, 24.90), ("Whiteboard markers (pack of 8)", 6, 7.45),
         ("Heavy-duty stapler", 2, 18.00), ("Desk organiser", 4, 11.20), ("Laminating pouches (100)", 3, 9.75)]
QUOTE_HEADER = ["Item", "Quantity", "Unit price (EUR)"]


def quote_table_to_calc() -> None:
    d = task_dir("multi-quote-table-to-calc")
    rows = [QUOTE_HEADER] + [[item, str(qty), f"{price:.2f}"] for item, qty, price in QUOTE]
    save_docx(d / "supplier-quote.docx", [
        ("h", "Quote Q-2026-118, Brightline Office Supplies"),
        ("p", "Thank you for your enquiry. Here are our prices for the items you asked about:"),
        ("t", rows),
        ("p", "Prices are valid until 30 April 2026. Delivery is free for orders above 150 EUR."),
    ])
    save_expected_book(QUOTE_HEADER, [list(q) for q in QUOTE], d / "expected.xlsx")


# -- multi-budget-sheet-to-pdf -----------------------------------------------------------------
BUDGET = [("Flights", 412.0), ("Hotel (4 nights)", 536.0), ("Rail pass", 89.5),
          ("Museum tickets", 64.0), ("Food and drinks", 85.0)]


def budget_sheet_to_pdf() -> None:
    d = task_dir("multi-budget-sheet-to-pdf")
    wb, ws = new_workbook()
    ws.title = "Budget"
    ws.append(["Lisbon trip, May 2026", None])
    ws["A1"].font = Font(bold=True, size=14)
    ws.append([])
    ws.append(["Item", "Cost (EUR)"])
    for cell in ws[3]:
        cell.font = BOLD
    for item, cost in BUDGET:
        ws.append([item, cost])
    ws.append(["Total", f"=SUM(B4:B{3 + len(BUDGET)})"])
    ws[f"A{4 + len(BUDGET)}"].font = BOLD
    for row in ws.iter_rows(min_row=4, min_col=2, max_col=2):
        row[0].number_format = "0.00"
    ws.column_dimensions["A"].width = 24
    ws.column_dimensions["B"].width = 14
    path = d / "trip-budget.xlsx"
    wb.save(path)
    pin_zip(path)
    total = sum(cost for _, cost in BUDGET)
    gold = {"title": "Lisbon trip, May 2026", "hotel": "Hotel (4 nights)", "hotel_cost": "536.00",
            "rail": "Rail pass 89.50", "total": f"Total {total:.2f}"}
    (d / "gold-text.json").write_text(json.dumps(gold, indent=2) + "\n")


# -- multi-rename-scans-from-sheet -------------------------------------------------------------
SCANS = [("scan_0003.png", "insurance-card.png"), ("scan_0001.png", "passport.png"),
         ("scan_0004.png", "vaccination-record.png"), ("scan_0002.png", "birth-certificate.png")]
SCAN_COLOURS = {"scan_0001.png": (200, 215, 235), "scan_0002.png": (235, 225, 200),
                "scan_0003.png": (210, 235, 210), "scan_0004.png": (240, 210, 215)}


def rename_scans_from_sheet() -> None:
    d = task_dir("multi-rename-scans-from-sheet")
    for name, colour in SCAN_COLOURS.items():
        image = Image.new("RGB", (320, 200), colour)
        draw = ImageDraw.Draw(image)
        draw.rectangle((20, 20, 300, 180), outline=(60, 60, 60), width=3)
        draw.text((40, 40), name.removesuffix(".png").replace("_", " ").upper(), fill=(30, 30, 30))
        image.save(d / name, optimize=False)
    save_book(["Current name", "New name"], [list(s) for s in SCANS], d / "scan-names.xlsx",
              title="Scans", widths={"A": 20, "B": 26})


# -- multi-expense-total-to-text ---------------------------------------------------------------
EXPENSES = [("2026-03-02", "Groceries", 86.40), ("2026-03-04", "Electricity bill", 74.15),
            ("2026-03-07", "Train tickets", 39.80), ("2026-03-11", "Pharmacy", 18.25),
            ("2026-03-14", "Groceries", 92.60), ("2026-03-19", "Internet", 35.00),
            ("2026-03-23", "Birthday present", 45.90), ("2026-03-28", "Groceries", 71.35)]


def expense_total_to_text() -> None:
    d = task_dir("multi-expense-total-to-text")
    save_book(["Date", "Description", "Amount"], [list(e) for e in EXPENSES], d / "march-expenses.xlsx",
              title="March", widths={"A": 12, "B": 22, "C": 10}, number_format={"C": "0.00"})


# -- multi-web-article-to-writer ---------------------------------------------------------------
ARTICLE_TITLE = "Riverside Community Garden: Spring Update"
ARTICLE = [
    "The garden reopens for the season on Saturday 4 April. Plot holders can collect their new "
    "gate keys from the shed between 9 and 12 that morning.",
    "This year we are adding six raised beds near the north fence, built with wood donated by "
    "Kerr Timber. They are reserved for members who find bending difficult; ask Maria if you "
    "would like one.",
    "The compost bays have been emptied and rebuilt. Please put only plant material in them: no "
    "cooked food, no meat and no plastic bags, even the ones labelled compostable.",
    "Our first work morning is on 18 April at 10 o'clock. Bring gloves; tea and cake are provided.",
]


def web_article_to_writer() -> None:
    d = task_dir("multi-web-article-to-writer")
    body = "\n".join(f"    <p>{p}</p>" for p in ARTICLE)
    html = f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{ARTICLE_TITLE}</title>
  <style>
    body {{ font-family: sans-serif; max-width: 46em; margin: 3em auto; line-height: 1.5; color: #223; }}
    h1 {{ color: #2d6a4f; }}
  </style>
</head>
<body>
  <article>
    <h1>{ARTICLE_TITLE}</h1>
{body}
  </article>
</body>
</html>
"""
    (d / "garden-update.html").write_text(html)
    save_docx(d / "expected.docx", [("p", ARTICLE_TITLE)] + [("p", p) for p in ARTICLE])


# -- multi-stats-table-into-report -------------------------------------------------------------
TICKETS = [("Amira Haddad", 42, 3.2), ("Jonas Berg", 37, 4.5), ("Chen Wei", 51, 2.8), ("Lucia Romero", 29, 6.1)]
TICKET_HEADER = ["Name", "Tickets closed", "Avg. hours to close"]
REPORT = [("h", "Support Team Report, March 2026"),
          ("p", "March was our busiest month so far, mostly because of the new billing system."),
          ("p", "Tickets closed per team member:"),
          ("p", ""),
          ("p", "Next review meeting: 7 April 2026.")]


def stats_table_into_report() -> None:
    d = task_dir("multi-stats-table-into-report")
    save_book(TICKET_HEADER, [list(t) for t in TICKETS], d / "ticket-stats.xlsx", title="March",
              widths={"A": 18, "B": 15, "C": 20})
    save_docx(d / "team-report.docx", REPORT)
    rows = [TICKET_HEADER] + [[name, str(n), str(h)] for name, n, h in TICKETS]
    save_docx(d / "expected.docx", REPORT[:3] + [("t", rows)] + REPORT[3:])


# -- multi-letter-to-apple-pages (infeasible) --------------------------------------------------
def letter_to_apple_pages() -> None:
    d = task_dir("multi-letter-to-apple-pages")
    save_docx(d / "cover-letter.docx", [
        ("p", "Dear hiring team,"),
        ("p", "I am writing to apply for the position of library assistant advertised on your website."),
        ("p", "I have three years of experience at the university library, where I catalogued new "
              "acquisitions and helped students find sources for their projects."),
        ("p", "Kind regards,"),
        ("p", "Noor Jansen"),
    ])


if __name__ == "__main__":
    steps_note_to_calc()
    quote_table_to_calc()
    budget_sheet_to_pdf()
    rename_scans_from_sheet()
    expense_total_to_text()
    web_article_to_writer()
    stats_table_into_report()
    letter_to_apple_pages()
