"""E-book metric: an EPUB's text against a gold EPUB's."""
from __future__ import annotations

import difflib
import math
import zipfile
from typing import Any

from lxml import etree, html

from ..archives import check_zip
from ..outcome import MetricResult, failed, first_difference, show
from ..registry import metric

DOCUMENT_SUFFIXES = (".xhtml", ".html", ".htm")


def epub_texts(path: Any) -> list[str] | None:
    """The visible text of each (X)HTML document in the book, in the order of their names."""
    if not isinstance(path, str):
        return None
    try:
        with zipfile.ZipFile(path) as book:
            check_zip(path, book)
            names = sorted(n for n in book.namelist() if n.lower().endswith(DOCUMENT_SUFFIXES))
            texts = []
            for name in names:
                data = book.read(name)
                if not data.strip():
                    texts.append("")
                    continue
                root = html.fromstring(data)
                # lxml-stubs say html.fromstring gives an _Element; it gives an HtmlElement.
                texts.append(" ".join(root.text_content().split()))  # type: ignore[attr-defined]
            return texts
    except (OSError, zipfile.BadZipFile, etree.ParserError, ValueError):
        return None


@metric("compare_epub")
def compare_epub(result: Any, expected: Any = None) -> MetricResult:
    """Product over the books' documents of their text similarity (1.0 = same text).

    Like OSWorld, documents pair up by order; a book with a different number of
    documents scores 0 (OSWorld compared only the shorter list).
    """
    got, want = epub_texts(result), epub_texts(expected)
    if not got:
        return failed(f"the result book {show(result)} is missing, unreadable or has no documents")
    if not want:
        return failed(f"the expected book {show(expected)} is missing, unreadable or has no documents")
    if len(got) != len(want):
        return failed(f"the book has {len(got)} documents, expected {len(want)}")
    ratios = [1.0 if a == b else difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
              for a, b in zip(got, want, strict=True)]
    score = math.prod(ratios)
    if score == 1.0:
        return MetricResult(score, f"all {len(got)} documents have the expected text")
    i = min(range(len(ratios)), key=ratios.__getitem__)  # the first of the least alike
    ratio, a, b = ratios[i], got[i], want[i]
    return MetricResult(score, f"text similarity {score:.3f}; least alike: document {i} ({ratio:.3f}): "
                               f"{first_difference(a.split(), b.split())}")
