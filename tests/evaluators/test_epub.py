"""compare_epub on real EPUB containers (zip with XHTML chapters)."""
import zipfile

from desktop_env.evaluators.metrics.epub import compare_epub


def make_epub(path, chapters: list[str]) -> str:
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        book.writestr("META-INF/container.xml", '<?xml version="1.0"?><container version="1.0" '
                      'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile '
                      'full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
                      '</rootfiles></container>')
        for i, text in enumerate(chapters, 1):
            book.writestr(f"OEBPS/chapter{i}.xhtml", f'<?xml version="1.0" encoding="utf-8"?><html '
                          f'xmlns="http://www.w3.org/1999/xhtml"><body><h1>Chapter {i}</h1><p>{text}</p></body></html>')
    return str(path)


def test_same_text_scores_one_even_if_markup_spacing_differs(tmp_path):
    gold = make_epub(tmp_path / "gold.epub", ["It was a bright cold day.", "The clocks were striking."])
    again = make_epub(tmp_path / "again.epub", ["It was a bright  cold day.", "The clocks were striking."])
    assert compare_epub(again, gold).score == 1.0


def test_different_text_scores_below_one_and_missing_chapters_zero(tmp_path):
    gold = make_epub(tmp_path / "gold.epub", ["It was a bright cold day.", "The clocks were striking."])
    edited = make_epub(tmp_path / "edited.epub", ["It was a dark and stormy night.", "The clocks were striking."])
    short = make_epub(tmp_path / "short.epub", ["It was a bright cold day."])
    assert 0 < compare_epub(edited, gold).score < 0.9
    assert compare_epub(short, gold).score == 0.0


def test_missing_or_corrupt_books_score_zero(tmp_path):
    gold = make_epub(tmp_path / "gold.epub", ["text"])
    (tmp_path / "broken.epub").write_bytes(b"not a zip")
    assert compare_epub(None, gold).score == 0.0
    assert compare_epub(str(tmp_path / "nope.epub"), gold).score == 0.0
    assert compare_epub(str(tmp_path / "broken.epub"), gold).score == 0.0
