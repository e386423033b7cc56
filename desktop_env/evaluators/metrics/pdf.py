"""PDF metrics (OSWorld's compare_pdfs, compare_pdf_images, check_pdf_pages and
is_gold_text_included_in_pdf), read with pypdf.

Every metric returns a MetricResult (a score in [0, 1] and why); a None path, a missing file or a file that does not
parse as a PDF scores 0.0, and nothing here raises on such input.
"""
from __future__ import annotations

import json
import logging
import operator
import os
import re
from typing import Any

from rapidfuzz import fuzz

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


def _unreadable(path: Any, role: str = "result") -> str:
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return f"the {role} PDF {show(path)} does not exist"
    return f"the {role} file {os.path.basename(path)} is not a readable PDF"


@metric("compare_pdfs")
def compare_pdfs(result: Any, expected: Any = None) -> MetricResult:
    """Fuzzy similarity (0..1) of the text of two PDFs.

    Either argument may be a list of paths (the files of a multi-file task): the pairs are
    compared in order and the score is the sum of their similarities over the number of gold
    files, a missing or unreadable file adding 0. OSWorld extracts text with PyMuPDF; pypdf's
    extraction can place whitespace differently, but both files go through the same reader.
    """
    if not isinstance(expected, (list, tuple)):
        results, golds = [result], [expected]
    else:
        results = list(result) if isinstance(result, (list, tuple)) else [result]
        golds = list(expected)
    if not golds:
        return failed("no gold PDF given")
    total = 0.0
    notes = []
    # Fewer result files than gold ones: the missing ones add 0 (said below); extra ones are not scored.
    for result_path, gold_path in zip(results, golds, strict=False):
        text1, text2 = pdf_text(result_path), pdf_text(gold_path)
        if text1 is None or text2 is None:
            path, role = (result_path, "result") if text1 is None else (gold_path, "gold")
            notes.append(f"the {role} PDF {show(path)} is missing or unreadable")
            continue
        similarity = fuzz.ratio(text1, text2) / 100.0
        total += similarity
        if similarity < 1:
            notes.append(f"{os.path.basename(str(result_path))}: text similarity {similarity:.3f}")
    if len(results) < len(golds):
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
    """Every value of the gold JSON object (file at `expected`) appears in the PDF's text.

    Whitespace runs count as one space on both sides, so a value that the PDF breaks across
    lines still matches (OSWorld compares the raw pdfplumber text).
    """
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
    text = _one_spaced(text)
    missing = [value for value in gold.values() if _one_spaced(str(value)) not in text]
    return verdict(not missing, f"the PDF's text lacks {show(missing)}" if missing
                   else f"all {len(gold)} gold values are in the PDF")
