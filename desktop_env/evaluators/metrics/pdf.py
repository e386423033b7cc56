"""PDF metrics (OSWorld's compare_pdfs, compare_pdf_images, check_pdf_pages and
is_gold_text_included_in_pdf), read with pypdf; compare_pdfs reads text with PyMuPDF, as OSWorld does,
when it is installed (the `pdf` extra, AGPL-licensed, so not a dependency).

Every metric returns a MetricResult (a score in [0, 1] and why); a None path, a missing file or a file that does not
parse as a PDF scores 0.0, and nothing here raises on such input.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import operator
import os
import re
from typing import Any

from rapidfuzz import fuzz

from ..fixes import fixes_enabled
from ..outcome import MetricResult, failed, passed, show, verdict
from ..registry import metric

logger = logging.getLogger("desktopenv.metrics.pdf")

RELATIONS = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
             "le": operator.le, "gt": operator.gt, "ge": operator.ge}
# Perceptual hashes at most this many bits apart show the same picture (OSWorld's threshold).
PHASH_MAX_DISTANCE = 5


def _read_errors() -> tuple[type[BaseException], ...]:
    from pypdf.errors import PyPdfError
    return (PyPdfError, OSError, ValueError, KeyError, TypeError, AttributeError)


def open_pdf(path: Any):
    """A pypdf PdfReader for `path`, or None when there is no readable PDF there."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    from pypdf import PdfReader
    try:
        reader = PdfReader(os.fspath(path))
        len(reader.pages)  # the page tree is read lazily; a broken one fails here
        return reader
    except _read_errors() as e:
        logger.info("not a readable PDF: %s (%s: %s)", path, type(e).__name__, e)
        return None


def pdf_text(path: Any) -> str | None:
    """The text of all pages, stripped, or None when the PDF cannot be read."""
    reader = open_pdf(path)
    if reader is None:
        return None
    try:
        return "".join(page.extract_text() or "" for page in reader.pages).strip()
    except _read_errors() as e:
        logger.info("cannot extract text from %s (%s: %s)", path, type(e).__name__, e)
        return None


def pdf_text_engine() -> str:
    """What compare_pdfs reads text with: "pymupdf" when PyMuPDF is installed (OSWorld's reader, so
    OSWorld's scores), else "pypdf" (OSWorld's scores on plain paragraphs, not on tables: see compare_pdfs)."""
    return "pymupdf" if importlib.util.find_spec("pymupdf") is not None else "pypdf"


def _pymupdf_page_texts(path: str) -> list[str] | None:
    pymupdf = importlib.import_module("pymupdf")  # the optional `pdf` extra: only here, and only if installed
    try:
        with pymupdf.open(path) as document:
            return [page.get_text() for page in document]
    except (RuntimeError, ValueError, OSError) as e:  # pymupdf's FileDataError and FileNotFoundError among them
        logger.info("PyMuPDF cannot read %s (%s: %s)", path, type(e).__name__, e)
        return None


def _pypdf_page_texts(path: str) -> list[str] | None:
    reader = open_pdf(path)
    if reader is None:
        return None
    try:
        texts = [page.extract_text() or "" for page in reader.pages]
    except _read_errors() as e:
        logger.info("cannot extract text from %s (%s: %s)", path, type(e).__name__, e)
        return None
    # PyMuPDF ends every line, the page's last one too, with a newline; pypdf ends a page's last line
    # without one, which would glue the pages together.
    return [text if not text or text.endswith("\n") else text + "\n" for text in texts]


def compared_text(path: Any) -> str | None:
    """A PDF's text as compare_pdfs compares it (its pages' texts, one after another, stripped), read
    by pdf_text_engine(); None when the PDF cannot be read."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    read = _pymupdf_page_texts if pdf_text_engine() == "pymupdf" else _pypdf_page_texts
    texts = read(os.fspath(path))
    return None if texts is None else "".join(texts).strip()


def _text_to_compare(path: Any) -> str | None:
    # OSWorld's PyMuPDF opens None (a getter that found no file) as a new empty document, whose text
    # equals that of a gold PDF without text; the evaluator fixes count no file as unreadable.
    if path is None and not fixes_enabled():
        return ""
    return compared_text(path)


def _unreadable(path: Any, role: str = "result") -> str:
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return f"the {role} PDF {show(path)} does not exist"
    return f"the {role} file {os.path.basename(path)} is not a readable PDF"


@metric("compare_pdfs")
def compare_pdfs(result: Any, expected: Any = None) -> MetricResult:
    """Fuzzy similarity (0..1) of the text of two PDFs (rapidfuzz's ratio, as OSWorld's).

    Either argument may be a list of paths (the files of a multi-file task): the pairs are
    compared in order and the score is the sum of their similarities over the number of gold
    files, a missing or unreadable file adding 0 (a result that is no list against a list of gold
    files adds 0 for each: OSWorld pairs the characters of its path with them).

    OSWorld extracts text with PyMuPDF, which this uses when installed (pdf_text_engine()). Without
    it pypdf reads the text, the same as PyMuPDF's for plain paragraphs (LibreOffice's exports of
    them: lines, pages), but where text jumps along a line (table cells, a tab stop, right-aligned
    fields, a spreadsheet's columns) PyMuPDF starts a new line and pypdf writes a space or nothing,
    so scores on such files differ a little from OSWorld's (docs/EVALUATORS.md).
    """
    if not isinstance(expected, list):
        results, golds = [result], [expected]
    else:
        results = list(result) if isinstance(result, (list, tuple)) else []
        golds = list(expected)
    if not golds:
        return failed("no gold PDF given")
    total = 0.0
    notes = []
    if not isinstance(result, (list, tuple)) and isinstance(expected, list):
        notes.append(f"the result {show(result)} is not a list of PDFs like the gold ones")
    # Fewer result files than gold ones: the missing ones add 0 (said below); extra ones are not scored.
    for result_path, gold_path in zip(results, golds, strict=False):
        text1, text2 = _text_to_compare(result_path), _text_to_compare(gold_path)
        if text1 is None or text2 is None:
            path, role = (result_path, "result") if text1 is None else (gold_path, "gold")
            notes.append(f"the {role} PDF {show(path)} is missing or unreadable")
            continue
        similarity = fuzz.ratio(text1, text2) / 100.0
        total += similarity
        if similarity < 1:
            notes.append(f"{os.path.basename(str(result_path))}: text similarity {similarity:.3f}")
    if results and len(results) < len(golds):
        notes.append(f"{len(results)} result PDFs for {len(golds)} gold ones")
    score = total / len(golds)
    return MetricResult(score, "; ".join(notes) if notes else f"the text of the {len(golds)} PDFs matches")


def _embedded_images(reader) -> list:
    """The pictures embedded in the pages, in page order, as Pillow images."""
    images = []
    for page in reader.pages:
        for embedded in page.images:
            images.append(embedded.image)
    return images


@metric("compare_pdf_images")
def compare_pdf_images(result: Any, expected: Any = None) -> MetricResult:
    """The PDFs embed the same pictures: the share of pictures whose perceptual hashes match.

    The numbers of embedded pictures must be equal (else 0); two PDFs without pictures score 1.
    Pictures pair up in page order and match when their pHashes differ by at most 5 bits.
    """
    import imagehash
    reader1, reader2 = open_pdf(result), open_pdf(expected)
    if reader1 is None or reader2 is None:
        return failed(_unreadable(result) if reader1 is None else _unreadable(expected, "expected"))
    try:
        images1, images2 = _embedded_images(reader1), _embedded_images(reader2)
    except _read_errors() as e:
        return failed(f"cannot extract the pictures ({type(e).__name__}: {e})")
    if len(images1) != len(images2):
        return failed(f"{len(images1)} embedded pictures, expected {len(images2)}")
    if not images1:
        return passed("neither PDF embeds a picture")
    matching = sum(1 for image1, image2 in zip(images1, images2, strict=True)
                   if imagehash.phash(image1) - imagehash.phash(image2) <= PHASH_MAX_DISTANCE)
    return MetricResult(matching / len(images1), f"{matching} of {len(images1)} pictures match the gold ones")


@metric("check_pdf_pages")
def check_pdf_pages(result: Any, rules: Any = None) -> MetricResult:
    """The page count relates to rules["ref_value"] as rules["relation"] says (eq, ne, lt, le, gt, ge)."""
    if (not isinstance(rules, dict) or rules.get("relation") not in RELATIONS
            or not isinstance(rules.get("ref_value"), (int, float))):
        logger.warning("check_pdf_pages: unusable rules %r", rules)
        return failed(f"unusable rules {show(rules)} (need relation and a numeric ref_value)")
    reader = open_pdf(result)
    if reader is None:
        return failed(_unreadable(result))
    pages = len(reader.pages)
    return verdict(RELATIONS[rules["relation"]](pages, rules["ref_value"]),
                   f"{pages} pages, expected {rules['relation']} {rules['ref_value']}")


def _one_spaced(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@metric("is_gold_text_included_in_pdf")
def is_gold_text_included_in_pdf(result: Any, expected: Any = None) -> MetricResult:
    """Every value of the gold JSON object (file at `expected`) appears in the PDF's text, as it is: OSWorld
    looks for each value in the pages' raw text, so a value the PDF breaks across lines ("EUR\n42,000") is
    not found. Under --evaluator-fixes whitespace runs count as one space on both sides."""
    if not isinstance(expected, (str, os.PathLike)) or not os.path.isfile(expected):
        return failed(f"the gold JSON file {show(expected)} does not exist")
    try:
        with open(expected, encoding="utf-8") as f:
            gold = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        return failed(f"the gold file {os.path.basename(expected)} is not readable JSON: {e}")
    if not isinstance(gold, dict):
        return failed("the gold JSON file does not hold an object")
    text = pdf_text(result)
    if text is None:
        return failed(_unreadable(result))
    spaced = _one_spaced if fixes_enabled() else str
    text = spaced(text)
    missing = [value for value in gold.values() if spaced(str(value)) not in text]
    return verdict(not missing, f"the PDF's text lacks {show(missing)}" if missing
                   else f"all {len(gold)} gold values are in the PDF")
