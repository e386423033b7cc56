"""PDF metrics on real PDFs: documents made with python-docx and exported by LibreOffice,
the way a PDF an agent saves from an office app reaches the evaluator."""
from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from docx import Document
from docx.enum.text import WD_BREAK
from docx.shared import Inches
from PIL import Image, ImageDraw
from pypdf import PdfWriter
from rapidfuzz import fuzz

from desktop_env.evaluators import registry
from desktop_env.evaluators.fixes import evaluator_fixes
from desktop_env.evaluators.metrics import pdf
from tests.evaluators.parity.document_cases import write_paged_docx

INVOICE = ["Invoice 243729", "Customer: Ada Lovelace", "Total due: 1,250.00 EUR", "Payment within 30 days."]


def photo(path: Path) -> Path:
    """A small photo-like picture: gradients and a few shapes."""
    y, x = np.mgrid[0:120, 0:160]
    pixels = np.stack([60 + 120 * x / 160, 40 + 100 * y / 120, 120 + 60 * np.sin(x / 9.0)], axis=2)
    image = Image.fromarray(pixels.astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)
    draw.ellipse((15, 20, 70, 75), fill=(200, 40, 40))
    draw.rectangle((95, 60, 150, 110), fill=(30, 160, 60))
    image.save(path)
    return path


def fractal(path: Path) -> Path:
    Image.effect_mandelbrot((160, 120), (-2, -1.5, 1, 1.5), 100).convert("RGB").save(path)
    return path


def write_docx(path: Path, paragraphs: list[str], pictures: Sequence[Path] = (), page_break: bool = False) -> Path:
    doc = Document()
    for i, text in enumerate(paragraphs):
        p = doc.add_paragraph(text)
        if page_break and i == 0:
            p.add_run().add_break(WD_BREAK.PAGE)
    for picture in pictures:
        doc.add_picture(str(picture), width=Inches(2))
    doc.save(str(path))  # python-docx takes a Path too; its annotation names only str and streams
    return path


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory, libreoffice):
    """PDFs exported by LibreOffice, by name."""
    src = tmp_path_factory.mktemp("docx")
    logo, other = photo(src / "logo.png"), fractal(src / "other.png")
    sources = [
        write_docx(src / "gold.docx", INVOICE, [logo]),
        write_docx(src / "same.docx", INVOICE, [logo]),
        write_docx(src / "wrong.docx", ["Receipt 99", "Customer: Charles Babbage", "Total: 3.00 GBP"], [logo]),
        write_docx(src / "blank.docx", []),
        write_docx(src / "two_pages.docx", INVOICE, page_break=True),
        write_docx(src / "other_picture.docx", INVOICE, [other]),
        write_docx(src / "two_pictures.docx", INVOICE, [logo, other]),
        write_docx(src / "text_only.docx", INVOICE),
    ]
    out = tmp_path_factory.mktemp("pdf")
    libreoffice.convert(sources, "pdf", out / "exported")
    return {p.stem: str(out / "exported" / f"{p.stem}.pdf") for p in sources}


@pytest.fixture
def bad_files(tmp_path):
    garbage = tmp_path / "garbage.pdf"
    garbage.write_bytes(b"%PDF-1.7\nthis is not really a pdf")
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    return [None, str(tmp_path / "missing.pdf"), str(garbage), str(empty)]


# ------------------------------------------------------------------------ compare_pdfs

def test_compare_pdfs_same_document_scores_one(pdfs):
    assert pdf.compare_pdfs(pdfs["same"], pdfs["gold"]).score == pytest.approx(1.0)


def test_compare_pdfs_scores_text_similarity(pdfs):
    assert pdf.compare_pdfs(pdfs["blank"], pdfs["gold"]).score == 0.0  # the agent exported an empty page
    assert pdf.compare_pdfs(pdfs["wrong"], pdfs["gold"]).score < 0.6


def test_compare_pdfs_with_lists_of_files(pdfs):
    assert pdf.compare_pdfs([pdfs["same"], pdfs["same"]], [pdfs["gold"], pdfs["gold"]]).score == pytest.approx(1.0)
    assert pdf.compare_pdfs([pdfs["same"], None], [pdfs["gold"], pdfs["gold"]]).score == pytest.approx(0.5)


def test_compare_pdfs_missing_or_broken_scores_zero(pdfs, bad_files):
    for bad in bad_files:
        assert pdf.compare_pdfs(bad, pdfs["gold"]).score == 0.0
        assert pdf.compare_pdfs(pdfs["gold"], bad).score == 0.0
    assert pdf.compare_pdfs([], []).score == 0.0


PAGES = [["Invoice 243729", "Customer: Ada Lovelace"], ["Total due: 1,250.00 EUR", "Payment within 30 days."],
         ["Thank you for your order."]]
CHANGED = [PAGES[0], ["Total due: 1,350.00 EUR", "Payment within 30 days."], PAGES[2]]


def paged_docx(path: Path, pages: list[list[str]], table: list[list[str]] | None = None) -> Path:
    """A .docx whose lists of paragraphs each start a page, and a table after them when given."""
    write_paged_docx(str(path), pages, table)
    return path


def pymupdf_text(pages: list[list[str]]) -> str:
    """The text OSWorld's compare_pdfs reads from such a PDF with PyMuPDF: each line ends with a newline, the
    pages one after another, stripped."""
    return "".join(line + "\n" for page in pages for line in page).strip()


@pytest.fixture(scope="module")
def paged_pdfs(tmp_path_factory, libreoffice):
    src = tmp_path_factory.mktemp("paged")
    table = [["Item", "Qty", "Price"], ["Pen", "2", "1.50"]]
    sources = [
        paged_docx(src / "gold.docx", PAGES),
        paged_docx(src / "changed.docx", CHANGED),
        paged_docx(src / "one_page.docx", [[text for page in PAGES for text in page]]),
        paged_docx(src / "table.docx", PAGES[:1], table),
        paged_docx(src / "table_changed.docx", PAGES[:1], [table[0], ["Pen", "3", "1.50"]]),
    ]
    out = tmp_path_factory.mktemp("paged_pdf")
    libreoffice.convert(sources, "pdf", out / "exported")
    return {p.stem: str(out / "exported" / f"{p.stem}.pdf") for p in sources}


def test_compare_pdfs_gives_osworlds_score_on_pages_with_either_reader(paged_pdfs, monkeypatch):
    # OSWorld's PyMuPDF ends each page's last line with a newline, so pages do not run together; pypdf's
    # text, once its pages end so too, is the same on paragraphs, and so is the score.
    expected = fuzz.ratio(pymupdf_text(CHANGED), pymupdf_text(PAGES)) / 100
    assert expected == pytest.approx(0.990990990990991)  # OSWorld's own compare_pdfs on these PDFs
    for engine in ["pypdf"] + (["pymupdf"] if pdf.pdf_text_engine() == "pymupdf" else []):
        monkeypatch.setattr(pdf, "pdf_text_engine", lambda engine=engine: engine)
        assert pdf.compared_text(paged_pdfs["gold"]) == pymupdf_text(PAGES)
        assert pdf.compare_pdfs(paged_pdfs["changed"], paged_pdfs["gold"]).score == pytest.approx(expected)
        assert pdf.compare_pdfs(paged_pdfs["one_page"], paged_pdfs["gold"]).score == 1.0


def test_compare_pdfs_reads_tables_as_osworld_with_pymupdf(paged_pdfs):
    pytest.importorskip("pymupdf")
    assert pdf.pdf_text_engine() == "pymupdf"
    # PyMuPDF puts each table cell on a line of its own (pypdf: one line per row, cells spaced).
    assert pdf.compared_text(paged_pdfs["table"]).endswith("Item\nQty\nPrice\nPen\n2\n1.50")
    assert pdf.compare_pdfs(paged_pdfs["table_changed"], paged_pdfs["table"]).score == pytest.approx(
        fuzz.ratio(pymupdf_text([PAGES[0], ["Item", "Qty", "Price", "Pen", "3", "1.50"]]),
                   pymupdf_text([PAGES[0], ["Item", "Qty", "Price", "Pen", "2", "1.50"]])) / 100)


def test_compare_pdfs_scores_no_result_against_a_textless_gold_as_osworld(tmp_path):
    blank = tmp_path / "blank.pdf"
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.write(blank)
    assert pdf.compare_pdfs(None, str(blank)).score == 1.0  # OSWorld opens None as an empty document
    assert pdf.compare_pdfs(str(tmp_path / "missing.pdf"), str(blank)).score == 0.0
    with evaluator_fixes():
        assert pdf.compare_pdfs(None, str(blank)).score == 0.0


def test_the_pdf_text_engine_is_pymupdf_exactly_when_installed():
    assert pdf.pdf_text_engine() == ("pymupdf" if importlib.util.find_spec("pymupdf") else "pypdf")


# ------------------------------------------------------------------ compare_pdf_images

def test_compare_pdf_images(pdfs):
    assert pdf.compare_pdf_images(pdfs["wrong"], pdfs["gold"]).score == 1.0  # same picture, other text
    assert pdf.compare_pdf_images(pdfs["other_picture"], pdfs["gold"]).score == 0.0
    assert pdf.compare_pdf_images(pdfs["two_pictures"], pdfs["gold"]).score == 0.0
    assert pdf.compare_pdf_images(pdfs["text_only"], pdfs["blank"]).score == 1.0  # no pictures on either side


def test_compare_pdf_images_missing_or_broken_scores_zero(pdfs, bad_files):
    for bad in bad_files:
        assert pdf.compare_pdf_images(bad, pdfs["gold"]).score == 0.0
        assert pdf.compare_pdf_images(pdfs["gold"], bad).score == 0.0


# --------------------------------------------------------------------- check_pdf_pages

def test_check_pdf_pages(pdfs, bad_files):
    assert pdf.check_pdf_pages(pdfs["gold"], {"relation": "eq", "ref_value": 1}).score == 1.0
    assert pdf.check_pdf_pages(pdfs["two_pages"], {"relation": "eq", "ref_value": 1}).score == 0.0
    assert pdf.check_pdf_pages(pdfs["two_pages"], {"relation": "ge", "ref_value": 2}).score == 1.0
    assert pdf.check_pdf_pages(pdfs["two_pages"], {"relation": "lt", "ref_value": 2}).score == 0.0
    assert pdf.check_pdf_pages(pdfs["gold"], {"relation": "about", "ref_value": 1}).score == 0.0
    assert pdf.check_pdf_pages(pdfs["gold"], None).score == 0.0
    for bad in bad_files:
        assert pdf.check_pdf_pages(bad, {"relation": "eq", "ref_value": 1}).score == 0.0


# -------------------------------------------------------------- is_gold_text_included_in_pdf

def test_is_gold_text_included_in_pdf(pdfs, tmp_path, bad_files):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"number": "243729", "customer": "Ada Lovelace", "total": "1,250.00 EUR"}))
    assert pdf.is_gold_text_included_in_pdf(pdfs["gold"], str(gold)).score == 1.0
    assert pdf.is_gold_text_included_in_pdf(pdfs["wrong"], str(gold)).score == 0.0
    for bad in bad_files:
        assert pdf.is_gold_text_included_in_pdf(bad, str(gold)).score == 0.0
    not_json = tmp_path / "gold.txt"
    not_json.write_text("Ada Lovelace")
    assert pdf.is_gold_text_included_in_pdf(pdfs["gold"], str(not_json)).score == 0.0
    assert pdf.is_gold_text_included_in_pdf(pdfs["gold"], None).score == 0.0


def test_a_gold_value_the_pdf_breaks_across_lines_is_not_found_unless_fixes_are_on(pdfs, tmp_path):
    """OSWorld looks for each value in the raw text (the reference run found a built-in task's "EUR 42,000"
    that its PDF had broken after EUR, scored 1 here and 0 by OSWorld's own code)."""
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"across": "Customer: Ada Lovelace Total due"}))
    assert pdf.is_gold_text_included_in_pdf(pdfs["gold"], str(gold)).score == 0.0
    with evaluator_fixes():
        assert pdf.is_gold_text_included_in_pdf(pdfs["gold"], str(gold)).score == 1.0


def test_pdf_metrics_are_registered_under_osworld_names():
    assert {"compare_pdfs", "compare_pdf_images", "check_pdf_pages",
            "is_gold_text_included_in_pdf"} <= set(registry.metric_names())
