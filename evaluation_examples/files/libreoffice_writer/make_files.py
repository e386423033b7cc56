#!/usr/bin/env python3
"""Builds the input and expected files of the libreoffice_writer tasks (deterministic content).

Documents are written with python-docx and then round-tripped through
`soffice --headless --convert-to docx`, so inputs look like files LibreOffice saved. An
expected file is the round-tripped input, changed the way the task asks (python-docx),
round-tripped once more -- the same path an agent's result takes (LibreOffice opens the
input, the agent edits, LibreOffice saves). Zip entry times and document dates are pinned
so that re-running the script gives the same bytes for the python-docx steps.

    python3 make_files.py          # needs python-docx and soffice
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from docx import Document
from docx.document import Document as WordDocument
from docx.shared import Pt

HERE = Path(__file__).resolve().parent
STAMP = (2026, 1, 5, 9, 0, 0)


def task_dir(task_id: str) -> Path:
    path = HERE / task_id
    path.mkdir(parents=True, exist_ok=True)
    return path


def pin_times(path: Path) -> None:
    """Office writers stamp the current time into docProps and zip entries: pin them."""
    with zipfile.ZipFile(path) as archive:
        data = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    for name in ("docProps/core.xml", "meta.xml"):
        if name in data:
            data[name] = re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?", b"2026-01-05T09:00:00Z", data[name])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in data.items():
            info = zipfile.ZipInfo(name, date_time=STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)


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


def save_through_libreoffice(doc, path: Path) -> None:
    """python-docx Document -> tmp .docx -> soffice -> path."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / path.name
        doc.save(raw)
        soffice_convert(raw, path, "docx")
    if path.suffix == ".docx":
        pin_times(path)


def new_document(title: str, paragraphs: list[str], title_size: int = 16) -> WordDocument:
    """A document whose first line is a bold, left-aligned title in direct formatting."""
    doc = Document()
    run = doc.add_paragraph().add_run(title)
    run.bold = True
    run.font.size = Pt(title_size)
    for text in paragraphs:
        doc.add_paragraph(text)
    return doc


# ---------------------------------------------------------------------------------------------

def centre_title():
    d = task_dir("writer-center-report-title")
    doc = new_document("Quarterly Operations Report - Q3 2025", [
        "Prepared by the Operations Team for the management meeting on 14 October 2025.",
        "Summary",
        "Order volume grew by 8% compared with the second quarter, while the average delivery time "
        "fell from 3.4 to 2.9 days. Returns stayed below 2% of all orders for the third quarter in a row.",
        "Warehouse",
        "The new picking layout in Hall B went live on 1 August. Picking errors dropped by a third "
        "in the first six weeks, and overtime hours were reduced accordingly.",
        "Next steps",
        "We propose to extend the layout to Hall C before the holiday season and to review the "
        "carrier contracts that expire at the end of the year.",
    ])
    save_through_libreoffice(doc, d / "quarterly_report.docx")


COMPANY_WRONG = "Bellamy & Crane Logisitcs"
COMPANY_RIGHT = "Bellamy & Crane Logistics"


def letter_paragraphs(company: str) -> list[str]:
    return [
        "Dear Ms Okafor,",
        f"Thank you for choosing {company} for your upcoming relocation. This letter confirms "
        "the details we discussed on the phone last Tuesday.",
        f"Our team will arrive at 8:00 on Monday, 2 March, with two vans. {company} provides "
        "all packing materials, and our staff will wrap fragile items on site.",
        "The quoted price of EUR 1,480 includes insurance up to EUR 25,000 and the disassembly "
        "and reassembly of furniture. Parking permits for both addresses are your responsibility.",
        f"If anything changes, please call {company} at least 48 hours before the move so that "
        "we can adjust the schedule without extra charges.",
        "Kind regards,",
        "Daniel Brooks",
        f"Customer Service, {company}",
    ]


def fix_company_name():
    d = task_dir("writer-fix-company-name")
    doc = new_document("Moving Confirmation", letter_paragraphs(COMPANY_WRONG), title_size=14)
    save_through_libreoffice(doc, d / "moving_letter.docx")
    doc = Document(d / "moving_letter.docx")
    for paragraph in doc.paragraphs:
        for run in paragraph.runs:
            run.text = run.text.replace("Logisitcs", "Logistics")
    assert COMPANY_WRONG not in "\n".join(p.text for p in doc.paragraphs)
    save_through_libreoffice(doc, d / "expected.docx")


TABLE_ROWS = [["Plan", "Monthly", "Yearly"], ["Basic", "9", "90"], ["Pro", "19", "190"]]


def price_table():
    d = task_dir("writer-insert-price-table")
    doc = new_document("Subscription Plans", [
        "We offer two subscription plans for small teams. Both include unlimited projects, "
        "daily backups and e-mail support.",
        "The Pro plan adds single sign-on, audit logs and priority support with a response "
        "time of four hours on working days.",
        "Prices are in euros per user, excluding VAT:",
    ])
    save_through_libreoffice(doc, d / "subscription_plans.docx")
    doc = Document(d / "subscription_plans.docx")
    table = doc.add_table(rows=3, cols=3)
    for i, row in enumerate(TABLE_ROWS):
        for j, text in enumerate(row):
            table.cell(i, j).text = text
    save_through_libreoffice(doc, d / "expected.docx")


ESSAY = [
    "Urban gardens are more than a pleasant use of empty land. In many cities they have become "
    "places where neighbours meet, children learn where food comes from, and older residents "
    "share skills that would otherwise be forgotten.",
    "The environmental benefits are easy to list: less paved surface, better drainage after heavy "
    "rain, and habitats for bees and birds. The social benefits are harder to measure but no less "
    "real, as surveys of participants repeatedly show.",
    "Critics point out that gardens rarely produce a meaningful share of a city's food. That is "
    "true, yet it misses the point. Their value lies in the connections they create between "
    "people and the place they live in.",
    "City councils should therefore treat community gardens as part of their infrastructure, "
    "with secure leases, access to water and a small budget for tools and training.",
]


def double_spacing():
    d = task_dir("writer-double-line-spacing")
    doc = new_document("Why Cities Need Community Gardens", ESSAY, title_size=14)
    save_through_libreoffice(doc, d / "garden_essay.docx")
    doc = Document(d / "garden_essay.docx")
    for paragraph in doc.paragraphs:
        paragraph.paragraph_format.line_spacing = 2.0
    save_through_libreoffice(doc, d / "expected.docx")


HANDBOOK_SECTIONS = [
    ("Working hours", [
        "Core hours are 10:00 to 15:00. Outside core hours you may arrange your day freely, as long "
        "as your team knows when you can be reached.",
        "Record your time in the attendance system by the end of each week. Overtime must be agreed "
        "with your manager in advance and is compensated with time off within three months.",
        "Breaks of at least 30 minutes are required on days longer than six hours.",
    ]),
    ("Holidays", [
        "Full-time employees have 28 days of paid holiday per year; part-time employees receive a "
        "proportional share.",
        "Submit requests at least two weeks in advance. Requests for more than ten consecutive days "
        "need the approval of your department head.",
        "Up to five unused days can be carried over into the first quarter of the following year.",
    ]),
    ("Sick leave", [
        "If you are ill, tell your manager before 9:00 on the first day of absence, by phone or "
        "by message.",
        "From the fourth day of absence a doctor's certificate is required. Send it to HR, not to "
        "your manager, so that medical details stay confidential.",
    ]),
    ("Expenses", [
        "Keep every receipt. Travel, meals on business trips and training materials are reimbursed "
        "within 30 days when submitted through the expenses portal.",
        "Train journeys are booked in second class; flights need prior approval unless the journey "
        "by train would take longer than six hours.",
        "Hotel costs are covered up to EUR 130 per night, breakfast included.",
    ]),
    ("Equipment", [
        "Laptops and phones remain company property. Report loss or theft to the IT desk "
        "immediately so that the device can be locked remotely.",
        "Do not install software that has not been approved by IT, and keep your operating system "
        "up to date.",
        "When you leave the company, return all equipment on your last working day.",
    ]),
    ("Remote work", [
        "You may work from home up to three days a week, subject to the needs of your team.",
        "Make sure your home office meets the safety checklist and that confidential papers are "
        "stored securely.",
        "Use the company VPN for all work on internal systems, including from public Wi-Fi networks.",
    ]),
    ("Code of conduct", [
        "We treat colleagues, customers and partners with respect. Harassment and discrimination of "
        "any kind are not tolerated.",
        "Concerns can be raised with your manager, with HR or anonymously through the whistleblowing "
        "hotline. Reports are investigated promptly and without reprisal.",
    ]),
]


def page_numbers():
    d = task_dir("writer-footer-page-numbers")
    paragraphs = []
    for heading, texts in HANDBOOK_SECTIONS:
        paragraphs.append(heading)
        paragraphs.extend(texts)
    doc = new_document("Employee Handbook", paragraphs, title_size=18)
    # A little more space between paragraphs; the handbook then runs to two pages.
    for paragraph in doc.paragraphs[1:]:
        paragraph.paragraph_format.space_after = Pt(10)
    save_through_libreoffice(doc, d / "employee_handbook.docx")


MINUTES = [
    "Date: 21 January 2026, 14:00-15:10, meeting room 2",
    "Present: Hannah Vogel (chair), Marco Ricci, Priya Nair, Oliver Grant",
    "1. Office move: the lease for the new office on Kestrel Street was signed. The move is "
    "planned for the weekend of 14 March.",
    "2. Budget: the marketing budget for the first half-year is approved at EUR 42,000.",
    "3. Hiring: two junior developer positions will be advertised in February.",
    "Action items: Marco books the removal company; Priya prepares the job adverts; Oliver "
    "updates the seating plan.",
    "Next meeting: 4 February 2026.",
]


def export_pdf():
    d = task_dir("writer-export-minutes-pdf")
    doc = new_document("Team Meeting Minutes", MINUTES)
    save_through_libreoffice(doc, d / "meeting_minutes.docx")
    # Each value on one line of the exported PDF: OSWorld's is_gold_text_included_in_pdf looks for it in the
    # raw text, and the line breaks after "EUR" ("... approved at EUR\n42,000.").
    gold = {"title": "Team Meeting Minutes", "budget": "42,000",
            "move": "weekend of 14 March", "next": "Next meeting: 4 February 2026."}
    (d / "expected_text.json").write_text(json.dumps(gold, indent=2) + "\n")


def read_aloud():
    d = task_dir("writer-read-aloud-mp3")
    doc = new_document("Bedtime Story: The Lighthouse Cat", [
        "Every evening, when the lamp at the top of the lighthouse began to turn, a small grey cat "
        "climbed the spiral stairs to watch the ships go by.",
        "The keeper called her Pebble, because she was round and smooth and always underfoot.",
        "One stormy night, Pebble heard a faint bell out in the fog, and she ran down the stairs "
        "to wake the keeper.",
    ])
    save_through_libreoffice(doc, d / "lighthouse_story.docx")


if __name__ == "__main__":
    for make in (centre_title, fix_company_name, price_table, double_spacing, page_numbers, export_pdf,
                 read_aloud):
        make()
    print("done")
