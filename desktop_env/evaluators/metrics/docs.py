"""Writer-document metrics (OSWorld's `docs` family): .docx via python-docx, .odt via its XML.

Every metric takes the local paths the getters fetched (`result` first, the gold file or a
`rules` dict second) and returns a MetricResult (a score in [0, 1] and what differed). A None path,
a missing file or a file that does not parse as a document scores 0.0; nothing here raises on such input.

What each metric compares follows OSWorld's metric of the same name. Where OSWorld's check
is brittle in a way that rejects (or accepts) documents for reasons unrelated to the task,
the docstring says what we do instead.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterable
from io import BytesIO
from typing import Any

import numpy as np
from lxml import etree
from PIL import Image, UnidentifiedImageError
from rapidfuzz import fuzz

from ..archives import ArchiveTooLarge, check_zip_file, read_member
from ..fixes import fixes_enabled
from ..outcome import MetricResult, failed, first_difference, passed, show, verdict
from ..registry import metric
from .slides import libreoffice_setting

logger = logging.getLogger("desktopenv.metrics.docs")

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
W = f"{{{W_NS}}}"
NSMAP = {
    "w": W_NS,
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "m": "http://schemas.openxmlformats.org/officeDocument/2006/math",
}
ODF_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
}


# --------------------------------------------------------------------------- loading

def _parse_errors() -> tuple[type[BaseException], ...]:
    from docx.opc.exceptions import PackageNotFoundError
    return (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, OSError,
            etree.XMLSyntaxError)


def open_docx(path: Any):
    """The python-docx Document at `path`, or None when there is no readable .docx there."""
    from docx import Document
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    try:
        check_zip_file(path)
        return Document(os.fspath(path))
    except _parse_errors() as e:
        logger.info("not a readable .docx: %s (%s: %s)", path, type(e).__name__, e)
        return None


def _zip_member(path: str, name: str) -> bytes | None:
    try:
        with zipfile.ZipFile(path) as zf:
            return read_member(path, zf, name) if name in zf.namelist() else None
    except (zipfile.BadZipFile, OSError, ArchiveTooLarge):
        return None


def _odt_content(path: Any) -> etree._Element | None:
    """The parsed content.xml of an OpenDocument text file, or None."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    data = _zip_member(os.fspath(path), "content.xml")
    if data is None:
        return None
    try:
        return etree.fromstring(data)
    except etree.XMLSyntaxError:
        return None


def _odt_text(element: etree._Element) -> str:
    """Visible text of an ODF paragraph: spans, links, <text:s c=N/>, tabs and line breaks."""
    t = ODF_NS["text"]
    parts: list[str] = [element.text or ""]
    for child in element:
        tag = child.tag
        if tag == f"{{{t}}}s":
            parts.append(" " * int(child.get(f"{{{t}}}c", "1")))
        elif tag == f"{{{t}}}tab":
            parts.append("\t")
        elif tag == f"{{{t}}}line-break":
            parts.append("\n")
        elif tag in (f"{{{t}}}note", f"{{{t}}}bookmark", f"{{{t}}}bookmark-start",
                     f"{{{t}}}bookmark-end", f"{{{t}}}soft-page-break"):
            pass  # footnote bodies and markers are not part of the line's text
        else:
            parts.append(_odt_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _odt_paragraph_texts(root: etree._Element) -> list[str]:
    t = ODF_NS["text"]
    body = root.find(f"{{{ODF_NS['office']}}}body")
    if body is None:
        return []
    return [_odt_text(p) for p in body.iter(f"{{{t}}}p", f"{{{t}}}h")]


def paragraph_texts(path: Any) -> list[str] | None:
    """Body paragraph texts of a .docx or .odt (told apart by content, not by name), or None."""
    doc = open_docx(path)
    if doc is not None:
        return [p.text for p in doc.paragraphs]
    root = _odt_content(path)
    if root is not None:
        return _odt_paragraph_texts(root)
    return None


def _unreadable(path: Any, role: str = "result") -> str:
    """Why a document is not there to compare: the path is missing or the file is no document."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return f"the {role} document {show(path)} does not exist"
    return f"the {role} file {os.path.basename(path)} is not a readable .docx/.odt"


def _rules_value(rules: Any, key: str) -> Any:
    return rules.get(key) if isinstance(rules, dict) else None


# ------------------------------------------------------------ effective formatting

def _style_chain(style) -> Iterable:
    seen = set()
    while style is not None and style.style_id not in seen:
        seen.add(style.style_id)
        yield style
        style = style.base_style


def _paragraph_format_value(paragraph, attribute: str):
    """A paragraph-format property as shown: direct formatting first, then the style chain.

    OSWorld reads direct formatting only, so a paragraph centred through its style counts as
    not centred there; here the style's value applies when the paragraph sets none.
    """
    value = getattr(paragraph.paragraph_format, attribute)
    if value is not None:
        return value
    for style in _style_chain(paragraph.style):
        value = getattr(style.paragraph_format, attribute)
        if value is not None:
            return value
    return None


def _default_font_name(doc) -> str | None:
    names = doc.styles.element.xpath("w:docDefaults/w:rPrDefault/w:rPr/w:rFonts/@w:ascii")
    return str(names[0]) if names else None


def _effective_font_name(run, paragraph, doc) -> str | None:
    """The font a run is shown in: run, character style, paragraph style chain, document default."""
    if run.font.name:
        return run.font.name
    if run.style is not None:
        for style in _style_chain(run.style):
            if style.font.name:
                return style.font.name
    for style in _style_chain(paragraph.style):
        if style.font.name:
            return style.font.name
    return _default_font_name(doc)


# --------------------------------------------------------------------- comparison

def _normalized_text(paragraphs: list[str], ignore_case: bool) -> str:
    text = re.sub(r"\s+", " ", "\n".join(paragraphs)).strip()
    return text.lower() if ignore_case else text


def _similarity(a: str, b: str) -> float:
    return fuzz.ratio(a, b) / 100.0


def _same_document_kind(first: Any, second: Any) -> bool:
    return isinstance(first, str) and isinstance(second, str) and any(
        first.endswith(suffix) and second.endswith(suffix) for suffix in (".docx", ".odt"))


@metric("compare_docx_files")
def compare_docx_files(result: Any, expected: Any = None, ignore_blanks: bool = True, ignore_case: bool = False,
                       ignore_order: bool = False, delete_empty_lines: bool = False, content_only: bool = False,
                       fuzzy_match: bool = False, fuzzy_match_threshold: float | None = None) -> MetricResult:
    """Text of two documents (.docx or .odt), paragraph by paragraph.

    Options (OSWorld's names and defaults):
      ignore_blanks=True   compare the whole text with every whitespace run made one space
      ignore_case=False    compare lower-cased
      ignore_order=False   sort the paragraphs first
      delete_empty_lines=False  drop blank paragraphs first
      content_only=False   return the fuzzy similarity (0..1) of the whole normalised text
      fuzzy_match=False    fuzzy similarity instead of equality (whole text under
                           ignore_blanks, else the mean over paragraphs)
      fuzzy_match_threshold=None  with fuzzy_match: a similarity at or above it counts as 1, else 0
    Without ignore_blanks the paragraph counts must match and paragraphs are compared in turn.
    A .docx gives its body paragraphs (not those in tables); an .odt gives every paragraph
    and heading, table cells included (OSWorld's .odt reading takes table cells too, but
    drops headings and the text of links, tabs and repeated spaces). OSWorld picks the
    reader from the file names and scores 0 unless both end in .docx or both in .odt, and so do
    we; the evaluator fixes choose the reader from the content instead, so a .docx/.odt pair, or a
    file saved in the other format under the expected name, is still read.
    """
    if not fixes_enabled() and not _same_document_kind(result, expected):
        return failed(f"the result {show(result)} and the expected {show(expected)} are not both .docx or both "
                      ".odt by name, which OSWorld's compare_docx_files requires")
    paragraphs1 = paragraph_texts(result)
    paragraphs2 = paragraph_texts(expected)
    if paragraphs1 is None or paragraphs2 is None:
        return failed(_unreadable(result if paragraphs1 is None else expected,
                                  "result" if paragraphs1 is None else "expected"))
    fuzzy = fuzzy_match
    threshold = fuzzy_match_threshold

    if ignore_order:
        paragraphs1, paragraphs2 = sorted(paragraphs1), sorted(paragraphs2)
    if delete_empty_lines:
        paragraphs1 = [p for p in paragraphs1 if p.strip()]
        paragraphs2 = [p for p in paragraphs2 if p.strip()]

    def where() -> str:  # the first differing paragraph, for people
        return f"paragraph {first_difference(paragraphs1, paragraphs2)}"

    if content_only:
        score = _similarity(_normalized_text(paragraphs1, ignore_case), _normalized_text(paragraphs2, ignore_case))
        return MetricResult(score, f"text similarity {score:.3f}" + ("" if score == 1 else f"; {where()}"))

    def thresholded(similarity: float) -> float:
        return float(similarity >= threshold) if threshold is not None else similarity

    if ignore_blanks:
        text1 = _normalized_text(paragraphs1, ignore_case)
        text2 = _normalized_text(paragraphs2, ignore_case)
        if fuzzy:
            similarity = _similarity(text1, text2)
            return MetricResult(thresholded(similarity), f"text similarity {similarity:.3f}"
                                + (f" (threshold {threshold})" if threshold is not None else "")
                                + ("" if similarity == 1 else f"; {where()}"))
        if text1 == text2:
            return passed("the same text (blanks aside)")
        return failed(f"the text differs: {where()}" if paragraphs1 != paragraphs2 else
                      f"the text differs: {first_difference(text1.split(), text2.split())} (words)")

    if len(paragraphs1) != len(paragraphs2):
        return failed(f"{len(paragraphs1)} paragraphs, expected {len(paragraphs2)}; {where()}")
    if ignore_case:
        paragraphs1 = [p.lower() for p in paragraphs1]
        paragraphs2 = [p.lower() for p in paragraphs2]
    if fuzzy:
        if not paragraphs1:
            return passed("both documents are empty")
        pairs = zip(paragraphs1, paragraphs2, strict=True)
        score = sum(thresholded(_similarity(p1, p2)) for p1, p2 in pairs) / len(paragraphs1)
        return MetricResult(score, f"mean paragraph similarity {score:.3f}" + ("" if score == 1 else f"; {where()}"))
    return verdict(paragraphs1 == paragraphs2, where() if paragraphs1 != paragraphs2 else "the same paragraphs")


@metric("compare_docx_files_and_ignore_new_lines")
def compare_docx_files_and_ignore_new_lines(result: Any, expected: Any = None,
                                            ignore_blanks: bool = True) -> MetricResult:
    """compare_docx_files after dropping empty paragraphs (.docx only); option ignore_blanks=True."""
    doc1, doc2 = open_docx(result), open_docx(expected)
    if doc1 is None or doc2 is None:
        return failed(_unreadable(result if doc1 is None else expected, "result" if doc1 is None else "expected"))
    paragraphs1 = [p.text for p in doc1.paragraphs if p.text != ""]
    paragraphs2 = [p.text for p in doc2.paragraphs if p.text != ""]
    same = (_normalized_text(paragraphs1, False) == _normalized_text(paragraphs2, False)) if ignore_blanks \
        else paragraphs1 == paragraphs2
    return verdict(same, "the same non-empty paragraphs" if same
                   else f"paragraph {first_difference(paragraphs1, paragraphs2)}")


@metric("compare_init_lines")
def compare_init_lines(result: Any, expected: Any = None) -> MetricResult:
    """The paragraphs both documents have (the shorter one's count) are equal, in order."""
    doc1, doc2 = open_docx(result), open_docx(expected)
    if doc1 is None or doc2 is None:
        return failed(_unreadable(result if doc1 is None else expected, "result" if doc1 is None else "expected"))
    shared = min(len(doc1.paragraphs), len(doc2.paragraphs))
    texts1, texts2 = [p.text for p in doc1.paragraphs[:shared]], [p.text for p in doc2.paragraphs[:shared]]
    return verdict(texts1 == texts2, f"the first {shared} paragraphs match" if texts1 == texts2
                   else f"paragraph {first_difference(texts1, texts2)}")


@metric("compare_docx_lines")
def compare_docx_lines(result: Any, expected: Any = None) -> MetricResult:
    """The sets of non-blank, stripped paragraph texts are equal (order and repeats ignored)."""
    doc1, doc2 = open_docx(result), open_docx(expected)
    if doc1 is None or doc2 is None:
        return failed(_unreadable(result if doc1 is None else expected, "result" if doc1 is None else "expected"))
    def lines(doc):
        return {p.text.strip() for p in doc.paragraphs if p.text.strip()}
    lines1, lines2 = lines(doc1), lines(doc2)
    return verdict(lines1 == lines2, "the same set of lines" if lines1 == lines2 else
                   f"lines only in the result: {show(sorted(lines1 - lines2))}; "
                   f"only expected: {show(sorted(lines2 - lines1))}")


@metric("compare_docx_tables")
def compare_docx_tables(result: Any, expected: Any = None) -> MetricResult:
    """Same number of tables, same shapes, and the same stripped text in every cell."""
    doc1, doc2 = open_docx(result), open_docx(expected)
    if doc1 is None or doc2 is None:
        return failed(_unreadable(result if doc1 is None else expected, "result" if doc1 is None else "expected"))
    if len(doc1.tables) != len(doc2.tables):
        return failed(f"{len(doc1.tables)} tables, expected {len(doc2.tables)}")
    for n, (table1, table2) in enumerate(zip(doc1.tables, doc2.tables, strict=True)):
        if len(table1.rows) != len(table2.rows) or len(table1.columns) != len(table2.columns):
            return failed(f"table {n} is {len(table1.rows)}x{len(table1.columns)}, "
                          f"expected {len(table2.rows)}x{len(table2.columns)}")
        for i in range(len(table1.rows)):
            for j in range(len(table1.columns)):
                got, want = table1.cell(i, j).text.strip(), table2.cell(i, j).text.strip()
                if got != want:
                    return failed(f"table {n} row {i + 1} column {j + 1}: {show(got)} vs expected {show(want)}")
    return passed(f"the {len(doc1.tables)} tables match cell by cell")


def _images_in_order(doc) -> list[bytes]:
    """Blobs of the pictures the body shows, in reading order."""
    rel_attr = f"{{{NSMAP['r']}}}embed"
    blobs = []
    for blip in doc.element.body.iter(f"{{{NSMAP['a']}}}blip"):
        rel_id = blip.get(rel_attr)
        rel = doc.part.rels.get(rel_id) if rel_id else None
        if rel is not None and not rel.is_external and "image" in rel.reltype:
            blobs.append(rel.target_part.blob)
    return blobs


def _same_picture(blob1: bytes, blob2: bytes) -> bool:
    if blob1 == blob2:
        return True
    try:
        image1 = Image.open(BytesIO(blob1)).convert("RGBA")
        image2 = Image.open(BytesIO(blob2)).convert("RGBA")
    except (UnidentifiedImageError, OSError):
        return False
    return image1.size == image2.size and image1.tobytes() == image2.tobytes()


@metric("compare_docx_images")
def compare_docx_images(result: Any, expected: Any = None) -> MetricResult:
    """Same number of pictures with the same pixels, in order.

    OSWorld walks the package's image relationships in storage order; here the pictures are
    taken in the order the body shows them, so a re-saved file with renumbered parts still matches.
    """
    doc1, doc2 = open_docx(result), open_docx(expected)
    if doc1 is None or doc2 is None:
        return failed(_unreadable(result if doc1 is None else expected, "result" if doc1 is None else "expected"))
    images1, images2 = _images_in_order(doc1), _images_in_order(doc2)
    if len(images1) != len(images2):
        return failed(f"{len(images1)} pictures, expected {len(images2)}")
    for i, (b1, b2) in enumerate(zip(images1, images2, strict=True)):
        if not _same_picture(b1, b2):
            return failed(f"picture {i} differs from the gold file's")
    return passed(f"the {len(images1)} pictures match")


def _picture_count(paragraph) -> int:
    return len(paragraph._p.xpath(".//a:graphicData"))


@metric("compare_contains_image")
def compare_contains_image(result: Any, expected: Any = None) -> MetricResult:
    """Pictures sit in the same paragraphs: each paragraph holds as many pictures as its counterpart.

    OSWorld compares run by run over the paragraphs both have, so a re-saved file whose runs
    split differently fails and a picture past the shorter document's end goes unseen; here
    the counts are per paragraph and extra paragraphs with pictures count as a difference.
    """
    doc1, doc2 = open_docx(result), open_docx(expected)
    if doc1 is None or doc2 is None:
        return failed(_unreadable(result if doc1 is None else expected, "result" if doc1 is None else "expected"))
    counts1 = [_picture_count(p) for p in doc1.paragraphs]
    counts2 = [_picture_count(p) for p in doc2.paragraphs]
    length = max(len(counts1), len(counts2))
    counts1 += [0] * (length - len(counts1))
    counts2 += [0] * (length - len(counts2))
    return verdict(counts1 == counts2, "pictures sit in the same paragraphs" if counts1 == counts2
                   else f"pictures per paragraph, {first_difference(counts1, counts2)}")


@metric("compare_line_spacing")
def compare_line_spacing(result: Any, expected: Any = None) -> MetricResult:
    """Same text (default compare_docx_files) and the same line spacing in every paragraph."""
    if (different := _text_differs(result, expected)) is not None:
        return different
    doc1, doc2 = open_docx(result), open_docx(expected)
    if doc1 is None or doc2 is None:
        return failed(_unreadable(result if doc1 is None else expected, "result" if doc1 is None else "expected"))
    if len(doc1.paragraphs) != len(doc2.paragraphs):
        return failed(f"{len(doc1.paragraphs)} paragraphs, expected {len(doc2.paragraphs)}")
    spacing1 = [_paragraph_format_value(p, "line_spacing") for p in doc1.paragraphs]
    spacing2 = [_paragraph_format_value(p, "line_spacing") for p in doc2.paragraphs]
    return verdict(spacing1 == spacing2, "the same line spacing in every paragraph" if spacing1 == spacing2
                   else f"line spacing of paragraph {first_difference(spacing1, spacing2)}")


def _text_differs(result: Any, expected: Any) -> MetricResult | None:
    """OSWorld's precondition for the formatting checks (the default compare_docx_files holds):
    None when it does, else the 0 that says where the text differs."""
    same = compare_docx_files(result, expected)
    return None if same.score == 1.0 else failed(f"the text is not the gold file's: {same.explanation}")


def _has_equation(paragraph) -> bool:
    # An embedded OLE formula (w:object) or an Office Math zone (m:oMath), which is how
    # LibreOffice writes a Math object to .docx.
    return bool(paragraph._p.xpath(".//w:object | .//m:oMath"))


@metric("compare_insert_equation")
def compare_insert_equation(result: Any, expected: Any = None) -> MetricResult:
    """Same text, and some paragraph holds an equation in both documents.

    OSWorld looks for w:object inside runs paired by position; LibreOffice saves formulas as
    Office Math (m:oMath), which sits outside runs, so both forms are accepted per paragraph.
    """
    if (different := _text_differs(result, expected)) is not None:
        return different
    doc1, doc2 = open_docx(result), open_docx(expected)
    if doc1 is None or doc2 is None:
        return failed(_unreadable(result if doc1 is None else expected, "result" if doc1 is None else "expected"))
    # Paragraphs paired by position, up to the shorter document's end (as OSWorld pairs them).
    pairs = zip(doc1.paragraphs, doc2.paragraphs, strict=False)
    return verdict(any(_has_equation(p1) and _has_equation(p2) for p1, p2 in pairs),
                   f"an equation in the same paragraph of both documents (result has "
                   f"{sum(map(_has_equation, doc1.paragraphs))} paragraphs with one, expected "
                   f"{sum(map(_has_equation, doc2.paragraphs))})")


@metric("compare_font_names")
def compare_font_names(result: Any, rules: Any = None) -> MetricResult:
    """Every run with text is shown in rules["font_name"].

    OSWorld reads the run's own font only, so text that inherits the font from its style
    fails; here the font is resolved through character style, paragraph style and the
    document default.
    """
    doc = open_docx(result)
    expected_font = _rules_value(rules, "font_name")
    if doc is None or not expected_font:
        return failed(_unreadable(result) if doc is None else "no rules['font_name'] given")
    for paragraph in doc.paragraphs:
        for run in paragraph.runs:
            font = _effective_font_name(run, paragraph, doc) if run.text else expected_font
            if font != expected_font:
                return failed(f"the text {show(run.text)} is in {font!r}, expected {expected_font!r}")
    return passed(f"all text is in {expected_font!r}")


@metric("compare_subscript_contains")
def compare_subscript_contains(result: Any, expected: Any = None) -> MetricResult:
    """Some run is subscript in both documents at the same paragraph and run position."""
    doc1, doc2 = open_docx(result), open_docx(expected)
    if doc1 is None or doc2 is None:
        return failed(_unreadable(result if doc1 is None else expected, "result" if doc1 is None else "expected"))
    # Paragraphs and runs paired by position, up to the shorter one's end (as OSWorld pairs them).
    for p1, p2 in zip(doc1.paragraphs, doc2.paragraphs, strict=False):
        for run1, run2 in zip(p1.runs, p2.runs, strict=False):
            if run1.font.subscript and run2.font.subscript:
                return passed(f"{show(run1.text)} is subscript as in the gold file")
    return failed("no run is subscript where the gold file has one")


def _has_page_field(paragraph) -> bool:
    instructions = paragraph._p.xpath(".//w:instrText/text() | .//w:fldSimple/@w:instr")
    return any(re.search(r"\bPAGE\b", str(i)) for i in instructions)


@metric("has_page_numbers_in_footers")
def has_page_numbers_in_footers(result: Any, *_unused) -> MetricResult:
    """Every section's footer shows a page number.

    OSWorld takes a digit in the footer's first paragraph as a page number; here any footer
    paragraph counts, and so does a PAGE field.
    """
    doc = open_docx(result)
    if doc is None or not doc.sections:
        return failed(_unreadable(result) if doc is None else "the document has no sections")
    for n, section in enumerate(doc.sections):
        paragraphs = section.footer.paragraphs
        if not any(_has_page_field(p) or any(c.isdigit() for c in p.text) for p in paragraphs):
            return failed(f"the footer of section {n} shows no page number "
                          f"({show(' / '.join(p.text for p in paragraphs))})")
    return passed(f"the footers of all {len(doc.sections)} sections show a page number")


@metric("is_first_line_centered")
def is_first_line_centered(result: Any, *_unused) -> MetricResult:
    """The first paragraph is centred (directly or through its style)."""
    from docx.enum.text import WD_PARAGRAPH_ALIGNMENT
    doc = open_docx(result)
    if doc is None or not doc.paragraphs:
        return failed(_unreadable(result) if doc is None else "the document has no paragraphs")
    alignment = _paragraph_format_value(doc.paragraphs[0], "alignment")
    return verdict(alignment == WD_PARAGRAPH_ALIGNMENT.CENTER,
                   f"the first paragraph is aligned {alignment}, expected centred")


@metric("check_file_exists")
def check_file_exists(directory: Any, filename: Any = None) -> MetricResult:
    """A regular file `filename` exists in `directory` (both plain strings)."""
    if not isinstance(directory, str) or not isinstance(filename, str) or not directory or not filename:
        return failed(f"no folder and file name to look for (got {show(directory)}, {show(filename)})")
    path = os.path.join(directory, filename)
    return verdict(os.path.isfile(path), f"{path} {'exists' if os.path.isfile(path) else 'does not exist'}")


@metric("check_tabstops")
def check_tabstops(result: Any, expected: Any = None, word_number_split_by_tabstop: int | None = None,
                   index: int = 0) -> MetricResult:
    """Tab stops of the non-blank paragraphs against the gold file's: 1 minus the mean drift.

    The paragraphs must pair up and each pair must have tab stops of the same kinds (clear
    stops and the default left stop at 0 ignored); the score is 1 minus the mean over
    paragraphs of the summed position differences as a fraction of the text width.
    Options: word_number_split_by_tabstop=N requires the text before tab number `index`
    (default 0) of every paragraph of the result to have exactly N words.
    """
    from docx.enum.text import WD_TAB_ALIGNMENT
    doc1, doc2 = open_docx(result), open_docx(expected)
    if doc1 is None or doc2 is None:
        return failed(_unreadable(result if doc1 is None else expected, "result" if doc1 is None else "expected"))
    paragraphs1 = [p for p in doc1.paragraphs if p.text.strip()]
    paragraphs2 = [p for p in doc2.paragraphs if p.text.strip()]
    if len(paragraphs1) != len(paragraphs2) or not paragraphs1 or not doc2.sections:
        return failed(f"{len(paragraphs1)} non-blank paragraphs, expected {len(paragraphs2)}"
                      if doc2.sections else "the gold document has no sections")

    words_wanted = word_number_split_by_tabstop
    if words_wanted is not None:
        for paragraph in paragraphs1:
            pieces = paragraph.text.split("\t")
            if index >= len(pieces) or len(pieces[index].split()) != words_wanted:
                return failed(f"paragraph {show(paragraph.text)}: the text before tab {index} is not "
                              f"{words_wanted} words")

    section = doc2.sections[0]
    text_width = section.page_width - section.left_margin - section.right_margin
    if not text_width or text_width <= 0:
        return failed("the gold document's text width is not positive")

    def counted(stops):
        return [s for s in stops if not (s.alignment == WD_TAB_ALIGNMENT.CLEAR
                                          or (s.alignment == WD_TAB_ALIGNMENT.LEFT and s.position == 0))]

    drift = 0.0
    for p1, p2 in zip(paragraphs1, paragraphs2, strict=True):
        stops1, stops2 = counted(p1.paragraph_format.tab_stops), counted(p2.paragraph_format.tab_stops)
        kinds1, kinds2 = [str(s.alignment) for s in stops1], [str(s.alignment) for s in stops2]
        if kinds1 != kinds2:
            return failed(f"paragraph {show(p1.text)} has tab stops {kinds1}, expected {kinds2}")
        drift += sum(abs(s1.position - s2.position) for s1, s2 in zip(stops1, stops2, strict=True)) / text_width
    score = max(0.0, 1.0 - drift / len(paragraphs1))
    return MetricResult(score, f"tab stops of the same kinds; mean drift {drift / len(paragraphs1):.3f} "
                               "of the text width")


# ------------------------------------------------------------------ highlighting

def _odt_highlighted_span_count(root: etree._Element, colour: str) -> int:
    """Spans whose automatic style paints the background in `colour` (#rrggbb)."""
    style_ns, fo_ns, text_ns = ODF_NS["style"], ODF_NS["fo"], ODF_NS["text"]
    painted = set()
    for style in root.iter(f"{{{style_ns}}}style"):
        for props in style.iter(f"{{{style_ns}}}text-properties"):
            if (props.get(f"{{{fo_ns}}}background-color") or "").lower() == colour:
                painted.add(style.get(f"{{{style_ns}}}name"))
    return sum(1 for span in root.iter(f"{{{text_ns}}}span")
               if span.get(f"{{{text_ns}}}style-name") in painted and _odt_text(span).strip())


def _docx_highlighted_runs(doc, colour_names: set[str] | None = None) -> list[str]:
    """Texts of runs with a highlight (w:highlight other than none), optionally of given colours."""
    texts = []
    for run in doc.element.body.iter(f"{W}r"):
        highlight = run.find(f"{W}rPr/{W}highlight")
        if highlight is None:
            continue
        value = highlight.get(f"{W}val")
        if value == "none" or (colour_names is not None and value not in colour_names):
            continue
        texts.append("".join(t.text or "" for t in run.iter(f"{W}t")))
    return texts


@metric("check_highlighted_words")
def check_highlighted_words(result: Any, expected: Any = None) -> MetricResult:
    """Same text as the gold file and no yellow highlighting left in the result.

    Reads .odt (spans whose style has background #ffff00, as OSWorld does) and also .docx
    (runs highlighted yellow).
    """
    if (different := _text_differs(result, expected)) is not None:
        return different
    root = _odt_content(result)
    if root is not None:
        left = _odt_highlighted_span_count(root, "#ffff00")
        return verdict(left == 0, f"{left} yellow-highlighted spans are left")
    doc = open_docx(result)
    if doc is not None:
        highlighted = [t for t in _docx_highlighted_runs(doc, {"yellow"}) if t.strip()]
        return verdict(not highlighted, f"yellow highlighting is left on {show(highlighted)}" if highlighted
                       else "no yellow highlighting is left")
    return failed(_unreadable(result))


@metric("compare_highlighted_text")
def compare_highlighted_text(result: Any, expected: Any = None) -> MetricResult:
    """The sets of highlighted run texts of two .docx files are equal."""
    doc1, doc2 = open_docx(result), open_docx(expected)
    if doc1 is None or doc2 is None:
        return failed(_unreadable(result if doc1 is None else expected, "result" if doc1 is None else "expected"))
    got, want = set(_docx_highlighted_runs(doc1)), set(_docx_highlighted_runs(doc2))
    return verdict(got == want, f"highlighted {show(sorted(got))}, expected {show(sorted(want))}")


# ------------------------------------------------------------ run formatting checks

def _delta_e_ciede2000(rgb1: Iterable[int], rgb2: Iterable[int]) -> float:
    from skimage.color import deltaE_ciede2000, rgb2lab
    lab1 = rgb2lab(np.array([[list(rgb1)]], dtype=float) / 255.0)
    lab2 = rgb2lab(np.array([[list(rgb2)]], dtype=float) / 255.0)
    return float(deltaE_ciede2000(lab1, lab2)[0][0])


@metric("evaluate_colored_words_in_tables")
def evaluate_colored_words_in_tables(result: Any, expected: Any = None, threshold: float = 3.5) -> MetricResult:
    """Same text, and in every table each run starting with a vowel is red and every other run blue.

    A run's colour may differ from pure red/blue by at most `threshold` (CIEDE2000, default
    3.5). A run without an explicit colour fails (OSWorld crashes on it).
    """
    if (different := _text_differs(result, expected)) is not None:
        return different
    doc = open_docx(result)
    if doc is None:
        return failed(_unreadable(result))
    for table in doc.tables:
        for row in table.rows:
            for cell in row.cells:
                for paragraph in cell.paragraphs:
                    for run in paragraph.runs:
                        if not run.text:
                            continue
                        colour = run.font.color.rgb if run.font.color.type is not None else None
                        if colour is None:
                            return failed(f"the word {show(run.text)} in a table has no colour of its own")
                        target = (255, 0, 0) if run.text[0].lower() in "aeiou" else (0, 0, 255)
                        if _delta_e_ciede2000(colour, target) > threshold:
                            return failed(f"the word {show(run.text)} is #{colour}, expected "
                                          f"{'red' if target[0] else 'blue'}")
    return passed("every table word starting with a vowel is red, every other one blue")


@metric("evaluate_strike_through_last_paragraph")
def evaluate_strike_through_last_paragraph(result: Any, expected: Any = None) -> MetricResult:
    """Same text, and all text of the last paragraph is struck through.

    OSWorld takes the last paragraph even when it is empty (which passes vacuously); here it
    is the last paragraph with text.
    """
    if (different := _text_differs(result, expected)) is not None:
        return different
    doc = open_docx(result)
    if doc is None:
        return failed(_unreadable(result))
    with_text = [p for p in doc.paragraphs if p.text.strip()]
    if not with_text:
        return failed("the document has no paragraph with text")
    runs = [r for r in with_text[-1].runs if r.text.strip()]
    plain = [r.text for r in runs if not (r.font.strike or r.font.double_strike)]
    return verdict(bool(runs) and not plain, f"not struck through in the last paragraph: {show(plain)}" if plain
                   else "the last paragraph is struck through" if runs else "the last paragraph has no runs")


@metric("check_italic_font_size_14")
def check_italic_font_size_14(result: Any, expected: Any = None) -> MetricResult:
    """Same text, and every italic run of the result is 14 pt."""
    if (different := _text_differs(result, expected)) is not None:
        return different
    doc = open_docx(result)
    if doc is None:
        return failed(_unreadable(result))
    for paragraph in doc.paragraphs:
        for run in paragraph.runs:
            if run.italic and (run.font.size is None or run.font.size.pt != 14):
                size = "no size" if run.font.size is None else f"{run.font.size.pt:g} pt"
                return failed(f"the italic text {show(run.text)} has {size}, expected 14 pt")
    return passed("every italic run is 14 pt")


@metric("evaluate_conversion")
def evaluate_conversion(result: Any, *_unused) -> MetricResult:
    """No run, in the body or in tables, is all upper case (the task lower-cases the text)."""
    doc = open_docx(result)
    if doc is None:
        return failed(_unreadable(result))
    paragraphs = list(doc.paragraphs)
    for table in doc.tables:
        for row in table.rows:
            for cell in row.cells:
                paragraphs.extend(cell.paragraphs)
    upper = [run.text for p in paragraphs for run in p.runs if run.text.isupper()]
    return verdict(not upper, f"still upper case: {show(upper)}" if upper else "no run is all upper case")


@metric("evaluate_spacing")
def evaluate_spacing(result: Any, *_unused) -> MetricResult:
    """Line spacing of the first three paragraphs is single, double and 1.5 (intro, body, conclusion)."""
    doc = open_docx(result)
    if doc is None or len(doc.paragraphs) < 3:
        return failed(_unreadable(result) if doc is None else f"{len(doc.paragraphs)} paragraphs, expected at least 3")
    spacings = [_paragraph_format_value(p, "line_spacing") for p in doc.paragraphs[:3]]
    return verdict(spacings == [1.0, 2.0, 1.5], f"line spacings {spacings}, expected [1.0, 2.0, 1.5]")


@metric("evaluate_alignment")
def evaluate_alignment(result: Any, *_unused) -> MetricResult:
    """Every sentence of three or more words reads: first three words, a gap, the rest.

    As OSWorld: sentences are split on '.', and the first three words (one space apart) and
    the remaining words (one space apart) must both appear, in that order; only the gap
    between them may be any whitespace (such as the tab the task asks for).
    """
    doc = open_docx(result)
    if doc is None:
        return failed(_unreadable(result))
    for paragraph in doc.paragraphs:
        for sentence in paragraph.text.split("."):
            words = sentence.split()
            if len(words) < 3:
                continue
            first, rest = " ".join(words[:3]), " ".join(words[3:])
            start = sentence.find(first)
            if start < 0 or sentence.find(rest, start + len(first)) < 0:
                return failed(f"the sentence {show(sentence.strip())} is not its first three words, a gap, the rest")
    return passed("every sentence is its first three words, a gap, the rest")


@metric("contains_page_break")
def contains_page_break(result: Any, rules: Any = None) -> MetricResult:
    """The body has a page break (w:br type=page in a run); with rules["page_break_count"], exactly that many."""
    doc = open_docx(result)
    if doc is None:
        return failed(_unreadable(result))
    count = sum(1 for paragraph in doc.paragraphs
                for br in paragraph._p.xpath("./w:r/w:br | ./w:hyperlink/w:r/w:br")
                if br.get(f"{W}type") == "page")
    wanted = _rules_value(rules, "page_break_count")
    if wanted is not None and count != wanted:
        return failed(f"{count} page breaks, expected {wanted}")
    return verdict(count > 0, f"{count} page breaks")


@metric("find_default_font")
def find_default_font(result: Any, rules: Any = None) -> MetricResult:
    """LibreOffice Writer's default font (registrymodifications.xcu) is rules["font_name"]."""
    expected_font = _rules_value(rules, "font_name")
    if not expected_font:
        return failed("no rules['font_name'] given")
    font = libreoffice_setting(result, "/org.openoffice.Office.Writer/DefaultFont", "Standard")
    return verdict(font == expected_font, f"Writer's default font is {font!r}, expected {expected_font!r}")


# --------------------------------------------------------------------- references

@metric("compare_references")
def compare_references(result: Any, expected: Any = None, reference_indicator: str = "References",
                       reference_base_result: float = 0.5, content_only: bool = False) -> MetricResult:
    """Fuzzy similarity of the reference lists after the `reference_indicator` paragraph.

    Options: reference_indicator="References", reference_base_result=0.5. Neither document
    having the heading scores 1; only one having it scores 0; different counts of non-blank
    reference paragraphs score 0. Otherwise the mean similarity s is rescaled: s at or
    below base + 0.01 scores 0, above it (s - base) / (1 - base).
    """
    doc1, doc2 = open_docx(result), open_docx(expected)
    if doc1 is None or doc2 is None:
        return failed(_unreadable(result if doc1 is None else expected, "result" if doc1 is None else "expected"))
    # content_only is accepted as OSWorld's task files pass it; its metric ignored it too.
    heading, base = reference_indicator, reference_base_result
    paragraphs1 = [p.text for p in doc1.paragraphs]
    paragraphs2 = [p.text for p in doc2.paragraphs]
    has1, has2 = heading in paragraphs1, heading in paragraphs2
    if not has1 and not has2:
        return passed(f"neither document has a {heading!r} paragraph")
    if not (has1 and has2):
        return failed(f"only the {'result' if has1 else 'expected'} document has a {heading!r} paragraph")
    refs1 = [p for p in paragraphs1[paragraphs1.index(heading) + 1:] if p.strip()]
    refs2 = [p for p in paragraphs2[paragraphs2.index(heading) + 1:] if p.strip()]
    if len(refs1) != len(refs2):
        return failed(f"{len(refs1)} references, expected {len(refs2)}")
    if not refs1:
        return passed("both reference lists are empty")
    similarity = sum(_similarity(r1, r2) for r1, r2 in zip(refs1, refs2, strict=True)) / len(refs1)
    said = f"mean reference similarity {similarity:.3f} (base {base:g})"
    if similarity < base + 0.01 or base >= 1:
        return failed(f"{said}; reference {first_difference(refs1, refs2)}")
    return MetricResult((similarity - base) / (1 - base), said)


# ------------------------------------------------------------------ train records

def _train_lines(doc) -> tuple[list[str], list[str]]:
    """Non-blank lines, and the train ids of those shaped `time, train_id, station, platform`."""
    lines = [p.text.strip() for p in doc.paragraphs if p.text.strip()]
    ids = [line.split(",")[1].strip() for line in lines if len(line.split(",")) == 4]
    return lines, ids


@metric("get_unique_train_ids")
def get_unique_train_ids(result: Any, *_unused) -> MetricResult:
    """1 when the .docx has train lines (`time, train_id, station, platform`) and no train id
    repeats. OSWorld exports this name as the helper of check_no_duplicates, which returns the
    set of ids and their count; as a metric, its question is whether the ids are unique."""
    doc = open_docx(result)
    if doc is None:
        return failed(_unreadable(result))
    _, ids = _train_lines(doc)
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    return verdict(bool(ids) and not repeated, "no train lines" if not ids else
                   f"repeated train ids {show(repeated)}" if repeated else f"{len(ids)} unique train ids")


@metric("compare_unique_train_records")
def compare_unique_train_records(result: Any, expected: Any = None) -> MetricResult:
    """De-duplicated train records: `expected` is [gold .docx, original .docx].

    The result's lines all come from the original, no train id repeats, its ids are the
    gold file's ids, and it has as many lines as the gold file.
    """
    if not isinstance(expected, (list, tuple)) or len(expected) < 2:
        return failed(f"expected must be [gold .docx, original .docx], got {show(expected)}")
    for role, path in (("result", result), ("gold", expected[0]), ("original", expected[1])):
        if open_docx(path) is None:
            return failed(_unreadable(path, role))
    processed, gold, original = open_docx(result), open_docx(expected[0]), open_docx(expected[1])
    lines, ids = _train_lines(processed)
    gold_lines, gold_ids = _train_lines(gold)
    original_lines, _ = _train_lines(original)
    invented = sorted(set(lines) - set(original_lines))
    if invented:
        return failed(f"lines not in the original: {show(invented)}")
    if len(ids) != len(set(ids)):
        return failed(f"repeated train ids {show(sorted({i for i in ids if ids.count(i) > 1}))}")
    if set(ids) != set(gold_ids):
        return failed(f"train ids {show(sorted(set(ids)))}, expected {show(sorted(set(gold_ids)))}")
    return verdict(len(lines) == len(gold_lines), f"{len(lines)} lines, expected {len(gold_lines)}")


@metric("check_no_duplicates")
def check_no_duplicates(original: Any, processed: Any = None) -> MetricResult:
    """The processed file keeps exactly one line per train id of the original (argument order as OSWorld)."""
    original_doc, processed_doc = open_docx(original), open_docx(processed)
    if original_doc is None or processed_doc is None:
        return failed(_unreadable(original, "original") if original_doc is None
                      else _unreadable(processed, "processed"))
    _, original_ids = _train_lines(original_doc)
    _, processed_ids = _train_lines(processed_doc)
    if len(processed_ids) != len(set(processed_ids)):
        return failed(f"repeated train ids {show(sorted({i for i in processed_ids if processed_ids.count(i) > 1}))}")
    return verdict(set(processed_ids) == set(original_ids),
                   f"train ids {show(sorted(set(processed_ids)))}, expected {show(sorted(set(original_ids)))}")


# ---------------------------------------------------------------------------- OCR

def _ocr_text(png_path: str) -> str:
    """Text tesseract reads in the image. Raises RuntimeError when tesseract is not installed."""
    tesseract = shutil.which("tesseract")
    if tesseract is None:
        raise RuntimeError("compare_image_text needs the tesseract OCR program "
                           "(Debian/Ubuntu package tesseract-ocr)")
    done = subprocess.run([tesseract, png_path, "stdout"], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"tesseract failed: {done.stderr.strip()[:500]}")
    return done.stdout


@metric("compare_image_text")
def compare_image_text(result: Any, rule: Any = None) -> MetricResult:
    """rule = {"type": "text", "text": T}: the text read from the image (OCR) contains T.

    OSWorld uses EasyOCR, whose model weights are downloaded at run time; this uses the
    tesseract program instead, so its reading of a given image can differ slightly. OCR
    joins what it reads line by line with single spaces, as OSWorld does.
    """
    if not isinstance(result, str) or not os.path.isfile(result):
        return failed(f"the result image {show(result)} does not exist")
    if _rules_value(rule, "type") != "text" or not isinstance(rule.get("text"), str):
        logger.warning("compare_image_text: unsupported rule %r", rule)
        return failed(f"unsupported rule {show(rule)} (only type 'text' with a 'text' string)")
    with tempfile.TemporaryDirectory() as tmp:
        # Re-encode as PNG: the agent's file may be any format Pillow reads, under any name.
        png = os.path.join(tmp, "image.png")
        try:
            with Image.open(result) as image:
                image.convert("RGB").save(png)
        except (UnidentifiedImageError, OSError) as e:
            return failed(f"the result {os.path.basename(result)} is not a readable image: {e}")
        text = " ".join(_ocr_text(png).split())
    return verdict(rule["text"] in text, f"OCR read {show(text)}, looking for {show(rule['text'])}")
