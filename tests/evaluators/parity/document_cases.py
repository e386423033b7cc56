"""Cases for documents, slides, PDFs, images and sound: compare_docx_files with the option sets task
files pass (on .docx and on .odt written by LibreOffice), compare_pptx_files, compare_pdfs on PDFs
LibreOffice exported, compare_images and the GIMP image checks, compare_audios on WAV files."""

from __future__ import annotations

import importlib.util
import math
import struct
import wave
from typing import Any

import docx
import openpyxl
from docx.enum.text import WD_BREAK
from PIL import Image, ImageDraw
from pptx import Presentation
from pptx.util import Inches, Pt

from .cases import Case, Files, libreoffice_convert

DOCX_OPTIONS: list[dict[str, Any]] = [
    {},
    {"ignore_blanks": True},
    {"ignore_blanks": False},
    {"fuzzy_match": True},
    {"content_only": True},
    {"ignore_blanks": True, "ignore_case": True},
    {"ignore_blanks": True, "ignore_case": True, "ignore_order": True},
    {"content_only": True, "delete_empty_lines": True, "ignore_blanks": True, "ignore_order": True},
]
GOLD_PARAGRAPHS = ["The quick brown fox", "jumps over the lazy dog.", "", "Second section here."]
VARIANTS = {
    "the same text": GOLD_PARAGRAPHS,
    "extra blanks": ["The quick  brown fox ", "jumps over the lazy dog.", "", "Second section here."],
    "other case": ["the quick brown fox", "JUMPS over the lazy dog.", "", "Second section here."],
    "paragraphs reordered": ["Second section here.", "", "The quick brown fox", "jumps over the lazy dog."],
    "no empty paragraph": ["The quick brown fox", "jumps over the lazy dog.", "Second section here."],
    "one word changed": ["The quick brown cat", "jumps over the lazy dog.", "", "Second section here."],
}


def document(files: Files, paragraphs: list[str], bold_first: bool = False) -> str:
    doc = docx.Document()
    for n, text in enumerate(paragraphs):
        run = doc.add_paragraph().add_run(text)
        run.bold = bold_first and n == 0
    path = files.path(".docx")
    doc.save(path)
    return path


def docx_cases(files: Files) -> list[Case]:
    gold = document(files, GOLD_PARAGRAPHS)
    variants = {label: document(files, paragraphs) for label, paragraphs in VARIANTS.items()}
    cases = [
        Case("compare_docx_files", (path, gold), f"{label}, options {options}", options)
        for label, path in variants.items()
        for options in DOCX_OPTIONS
    ]
    cases.append(
        Case("compare_docx_files", (document(files, GOLD_PARAGRAPHS, bold_first=True), gold), "a bold run, options {}")
    )
    cases.append(Case("compare_docx_files", (None, gold), "no result"))
    odt = libreoffice_convert(
        [gold, variants["one word changed"], variants["extra blanks"]], "odt", files.folder / "lo-odt"
    )
    if odt:
        odt_gold, odt_changed, odt_blanks = odt
        for options in ({}, {"ignore_blanks": False}, {"content_only": True}):
            cases += [
                Case("compare_docx_files", (odt_gold, odt_gold), f"odt: itself, options {options}", options),
                Case("compare_docx_files", (odt_changed, odt_gold), f"odt: one word, options {options}", options),
                Case("compare_docx_files", (odt_blanks, odt_gold), f"odt: blanks, options {options}", options),
                Case("compare_docx_files", (odt_gold, gold), f"odt against docx, options {options}", options),
            ]
        pdfs = libreoffice_convert(
            [gold, variants["one word changed"], variants["paragraphs reordered"]], "pdf", files.folder / "lo-pdf"
        )
        pdf_gold, pdf_word, pdf_order = pdfs
        cases += [
            Case("compare_pdfs", (pdf_gold, pdf_gold), "the same PDF"),
            Case("compare_pdfs", (pdf_word, pdf_gold), "one word changed"),
            Case("compare_pdfs", (pdf_order, pdf_gold), "paragraphs reordered"),
            Case("compare_pdfs", ([pdf_word, pdf_gold], [pdf_gold, pdf_gold]), "two pairs, one changed"),
            Case("compare_pdfs", (files.path(".pdf"), pdf_gold), "a missing result"),
        ]
        cases += pdf_cases(files)
    return cases


def paged_document(files: Files, pages: list[list[str]], table: list[list[str]] | None = None) -> str:
    """A .docx whose lists of paragraphs each start a new page, and a table after them when given."""
    path = files.path(".docx")
    write_paged_docx(path, pages, table)
    return path


def write_paged_docx(path: str, pages: list[list[str]], table: list[list[str]] | None = None) -> None:
    """Writes at `path` a .docx whose lists of paragraphs each start a new page, and a table after them."""
    doc = docx.Document()
    for number, paragraphs in enumerate(pages):
        for n, text in enumerate(paragraphs):
            paragraph = doc.add_paragraph(text)
            if n == len(paragraphs) - 1 and number < len(pages) - 1:
                paragraph.add_run().add_break(WD_BREAK.PAGE)
    if table is not None:
        grid = doc.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, text in enumerate(row):
                grid.cell(r, c).text = text
    doc.save(path)


PAGES = [["Invoice 243729", "Customer: Ada Lovelace"], ["Total due: 1,250.00 EUR", "Payment within 30 days."],
         ["Thank you for your order."]]


def pdf_cases(files: Files) -> list[Case]:
    """compare_pdfs on PDFs LibreOffice exported: several pages (PyMuPDF ends each page with a newline), and,
    when PyMuPDF is installed on our side (the `pdf` extra), a table, tab stops and a spreadsheet, where
    PyMuPDF breaks the line at each jump along it and pypdf does not."""
    sources = {
        "gold": paged_document(files, PAGES),
        "a word changed": paged_document(files, [PAGES[0], ["Total due: 1,350.00 EUR", "Payment within 30 days."],
                                                 PAGES[2]]),
        "one page": paged_document(files, [[text for page in PAGES for text in page]]),
        "pages reordered": paged_document(files, [PAGES[2], PAGES[0], PAGES[1]]),
        "no text": paged_document(files, []),
    }
    if importlib.util.find_spec("pymupdf") is not None:
        sources["a table"] = paged_document(files, PAGES[:1], [["Item", "Qty", "Price"], ["Pen", "2", "1.50"]])
        sources["a table, one cell changed"] = paged_document(files, PAGES[:1], [["Item", "Qty", "Price"],
                                                                               ["Pen", "3", "1.50"]])
        sources["tab stops"] = paged_document(files, [["Item\tQty\tPrice", "Pen\t2\t1.50"]])
    pdfs = dict(zip(sources, libreoffice_convert(list(sources.values()), "pdf", files.folder / "lo-pages"),
                    strict=True))
    gold = pdfs["gold"]
    cases = [Case("compare_pdfs", (pdfs[label], gold), f"pages: {label}")
             for label in ("gold", "a word changed", "one page", "pages reordered", "no text")]
    cases += [
        Case("compare_pdfs", (None, gold), "no result (None)"),
        Case("compare_pdfs", (None, pdfs["no text"]), "no result (None) against a PDF without text"),
        Case("compare_pdfs", (pdfs["one page"], [gold, gold]), "one path against a list of gold PDFs"),
        Case("compare_pdfs", ([pdfs["a word changed"]], [gold, gold]), "one result for two gold PDFs"),
    ]
    if "a table" in pdfs:
        sheet = libreoffice_convert([workbook_for_pdf(files)], "pdf", files.folder / "lo-sheet-pdf")[0]
        cases += [
            Case("compare_pdfs", (pdfs["a table, one cell changed"], pdfs["a table"]), "pymupdf: a table cell changed"),
            Case("compare_pdfs", (pdfs["a table"], pdfs["tab stops"]), "pymupdf: a table against tab stops"),
            Case("compare_pdfs", (pdfs["tab stops"], gold), "pymupdf: tab stops against paragraphs"),
            Case("compare_pdfs", (sheet, pdfs["a table"]), "pymupdf: a spreadsheet against a table"),
        ]
    return cases


def workbook_for_pdf(files: Files) -> str:
    book = openpyxl.Workbook()
    ws = book.active
    assert ws is not None
    rows: list[list[Any]] = [["Item", "Qty", "Price"], ["Pen", 2, 1.5], ["Ink", 10, 12.25]]
    for row in rows:
        ws.append(row)
    path = files.path(".xlsx")
    book.save(path)
    return path


def deck(files: Files, title: str, body: str, size: int = 18, left: float = 1.0, bold: bool = False) -> str:
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    slide.shapes.title.text = title
    box = slide.shapes.add_textbox(Inches(left), Inches(2), Inches(4), Inches(1))
    run = box.text_frame.paragraphs[0].add_run()
    run.text = body
    run.font.size = Pt(size)
    run.font.bold = bold
    path = files.path(".pptx")
    prs.save(path)
    return path


def pptx_cases(files: Files) -> list[Case]:
    gold = deck(files, "Title", "Body text")
    variants = {
        "the same": deck(files, "Title", "Body text"),
        "other text": deck(files, "Title", "Other text"),
        "a bigger font": deck(files, "Title", "Body text", size=24),
        "a moved box": deck(files, "Title", "Body text", left=1.5),
        "bold": deck(files, "Title", "Body text", bold=True),
    }
    option_sets: list[dict[str, Any]] = [
        {},
        {"examine_shape": False},
        {"examine_font_size": False, "examine_shape": False},
        {
            "examine_alignment": False,
            "examine_font_name": False,
            "examine_font_size": False,
            "examine_run_count": False,
            "examine_shape": False,
        },
    ]
    return [
        Case("compare_pptx_files", (path, gold), f"{label}, options {options}", options)
        for label, path in variants.items()
        for options in option_sets
    ]


def picture(
    files: Files,
    size: tuple[int, int] = (64, 48),
    shift: int = 0,
    color: str = "red",
    mirror: bool = False,
    fmt: str = ".png",
) -> str:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([8 + shift, 8, 30 + shift, 30], fill=color)
    draw.ellipse([36, 10, 56, 40], fill="blue")
    if mirror:
        image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    path = files.path(fmt)
    image.save(path)
    return path


def image_cases(files: Files) -> list[Case]:
    gold = picture(files)
    others = {
        "the same": picture(files),
        "shifted": picture(files, shift=6),
        "green": picture(files, color="green"),
        "mirrored": picture(files, mirror=True),
        "bigger": picture(files, size=(128, 96)),
    }
    cases = []
    for label, path in others.items():
        cases.append(Case("compare_images", (path, gold), label))
        cases.append(
            Case("compare_images", (path, gold), f"{label}, reference_base_result 0.5", {"reference_base_result": 0.5})
        )
        cases.append(Case("check_structure_sim", (path, gold), label))
        cases.append(Case("check_image_mirror", (path, gold), label))
    cases.append(Case("check_image_size", (others["bigger"], {"width": 128, "height": 96}), "the size"))
    cases.append(Case("check_image_size", (others["bigger"], {"width": 100}), "a width"))
    cases.append(Case("compare_images", (None, gold), "no result"))
    return cases


def tone(files: Files, frequency: float, seconds: float = 0.5, rate: int = 22050) -> str:
    path = files.path(".wav")
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(
            b"".join(
                struct.pack("<h", int(8000 * math.sin(2 * math.pi * frequency * n / rate)))
                for n in range(int(seconds * rate))
            )
        )
    return path


def audio_cases(files: Files) -> list[Case]:
    gold = tone(files, 440)
    return [
        Case("compare_audios", (tone(files, 440), gold), "the same tone"),
        Case("compare_audios", (tone(files, 880), gold), "an octave up"),
        Case("compare_audios", (tone(files, 440, seconds=1.0), gold), "twice as long"),
        Case("compare_audios", (files.data(b"", ".wav"), gold), "an empty file"),
        Case("compare_audios", (None, gold), "no result"),
    ]


def cases(files: Files) -> list[Case]:
    return docx_cases(files) + pptx_cases(files) + image_cases(files) + audio_cases(files)
