"""Writer-document metrics on real .docx/.odt files: made with python-docx, and for the main
comparisons also saved by LibreOffice, the way an agent's edit reaches the evaluator."""
from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from docx import Document
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK, WD_COLOR_INDEX
from docx.oxml import parse_xml
from docx.shared import Pt, RGBColor
from PIL import Image, ImageDraw, ImageFont

from desktop_env.evaluators import registry
from desktop_env.evaluators.fixes import evaluator_fixes
from desktop_env.evaluators.metrics import docs

W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
M_NS = 'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"'

# Documents are saved at str(path): python-docx takes a Path too, but its annotation names only str and streams.
def write_docx(path: Path, paragraphs: Sequence[str | list[str]]) -> Path:
    """A document of plain paragraphs; a list item is one paragraph made of several runs."""
    doc = Document()
    for paragraph in paragraphs:
        runs = paragraph if isinstance(paragraph, list) else [paragraph]
        p = doc.add_paragraph()
        for text in runs:
            p.add_run(text)
    doc.save(str(path))
    return path


def picture(path: Path, colour: tuple[int, int, int]) -> Path:
    image = Image.new("RGB", (64, 48), colour)
    ImageDraw.Draw(image).rectangle((8, 8, 30, 30), fill=(255 - colour[0], 200, 40))
    image.save(path)
    return path


ESSAY = ["Essay on Rivers", "Rivers carry water to the sea.", "They shape valleys over time."]


@pytest.fixture(scope="module")
def saved(tmp_path_factory, libreoffice):
    """The gold essay, the same essay typed with other run splits, and a wrong essay,
    each saved by LibreOffice as .docx and as .odt; plus a highlighted copy as .odt."""
    src = tmp_path_factory.mktemp("typed")
    gold = write_docx(src / "gold.docx", ESSAY)
    retyped = write_docx(src / "retyped.docx",
                         [["Essay on ", "Rivers"], ESSAY[1], ["They shape ", "valleys over time."]])
    wrong = write_docx(src / "wrong.docx", [ESSAY[0], "Rivers carry sand to the sea.", ESSAY[2]])
    doc = Document()
    doc.add_paragraph(ESSAY[0])
    doc.add_paragraph().add_run(ESSAY[1]).font.highlight_color = WD_COLOR_INDEX.YELLOW
    doc.add_paragraph(ESSAY[2])
    doc.save(src / "highlighted.docx")
    doc = Document()
    doc.add_paragraph("Page one")
    doc.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    doc.add_paragraph("Page two")
    doc.save(src / "breaks.docx")
    images = Document()
    images.add_paragraph("A figure:")
    images.add_picture(str(picture(src / "red.png", (220, 20, 20))))
    images.save(src / "figure.docx")
    sources = [gold, retyped, wrong, src / "highlighted.docx", src / "breaks.docx", src / "figure.docx"]
    out = tmp_path_factory.mktemp("libreoffice")
    libreoffice.convert(sources, "docx", out / "docx")
    libreoffice.convert(sources[:4], "odt", out / "odt")
    return {"docx": out / "docx", "odt": out / "odt", "typed": src}


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    """None, a missing path, a file that is no zip, and a zip that is no document."""
    folder = tmp_path_factory.mktemp("bad")
    garbage = folder / "garbage.docx"
    garbage.write_bytes(b"this is not a zip archive")
    shutil.make_archive(str(folder / "other"), "zip", root_dir=folder, base_dir="garbage.docx")
    not_a_document = (folder / "other.zip").rename(folder / "other.docx")
    return [None, str(folder / "missing.docx"), str(garbage), str(not_a_document)]


@pytest.fixture(scope="module")
def gold_essay(tmp_path_factory) -> str:
    return str(write_docx(tmp_path_factory.mktemp("gold") / "gold.docx", ESSAY))


# ----------------------------------------------------------------- compare_docx_files

def test_compare_docx_files_matches_documents_saved_by_libreoffice(saved):
    d = saved["docx"]
    assert docs.compare_docx_files(str(d / "retyped.docx"), str(d / "gold.docx")).score == 1.0
    assert docs.compare_docx_files(str(d / "wrong.docx"), str(d / "gold.docx")).score == 0.0


def test_compare_docx_files_reads_odt(saved):
    o = saved["odt"]
    assert docs.compare_docx_files(str(o / "retyped.odt"), str(o / "gold.odt")).score == 1.0
    assert docs.compare_docx_files(str(o / "wrong.odt"), str(o / "gold.odt")).score == 0.0


def test_compare_docx_files_tells_formats_apart_by_name_as_osworld_does(saved, tmp_path):
    disguised = tmp_path / "answer.docx"
    shutil.copy(saved["odt"] / "retyped.odt", disguised)
    # OSWorld reads a .docx/.odt pair as neither: 0 (see also test_osworld_verdicts.py).
    assert docs.compare_docx_files(str(disguised), str(saved["odt"] / "gold.odt")).score == 0.0


def test_compare_docx_files_with_the_evaluator_fixes_tells_formats_apart_by_content(saved, tmp_path):
    disguised = tmp_path / "answer.docx"
    shutil.copy(saved["odt"] / "retyped.odt", disguised)
    with evaluator_fixes():
        assert docs.compare_docx_files(str(disguised), str(saved["odt"] / "gold.odt")).score == 1.0


def test_compare_docx_files_missing_or_unreadable_scores_zero(gold_essay, bad_files):
    gold = gold_essay
    for bad in bad_files:
        assert docs.compare_docx_files(bad, gold).score == 0.0
        assert docs.compare_docx_files(gold, bad).score == 0.0


def test_compare_docx_files_options(tmp_path):
    gold = str(write_docx(tmp_path / "gold.docx", ESSAY))
    def variant(name, paragraphs):
        return str(write_docx(tmp_path / f"{name}.docx", paragraphs))

    upper = variant("upper", [p.upper() for p in ESSAY])
    assert docs.compare_docx_files(upper, gold).score == 0.0
    assert docs.compare_docx_files(upper, gold, ignore_case=True).score == 1.0

    shuffled = variant("shuffled", [ESSAY[2], ESSAY[0], ESSAY[1]])
    assert docs.compare_docx_files(shuffled, gold).score == 0.0
    assert docs.compare_docx_files(shuffled, gold, ignore_order=True).score == 1.0

    spaced = variant("spaced", [ESSAY[0], "Rivers  carry water to the sea. ", ESSAY[2]])
    assert docs.compare_docx_files(spaced, gold).score == 1.0  # ignore_blanks is on by default
    assert docs.compare_docx_files(spaced, gold, ignore_blanks=False).score == 0.0

    gappy = variant("gappy", [ESSAY[0], "", ESSAY[1], ESSAY[2]])
    assert docs.compare_docx_files(gappy, gold, ignore_blanks=False).score == 0.0
    assert docs.compare_docx_files(gappy, gold, ignore_blanks=False, delete_empty_lines=True).score == 1.0

    near = variant("near", [ESSAY[0], "Rivers carry water to the ocean.", ESSAY[2]])
    assert docs.compare_docx_files(near, gold).score == 0.0
    similarity = docs.compare_docx_files(near, gold, fuzzy_match=True)
    assert 0.8 < similarity.score < 1.0
    assert docs.compare_docx_files(near, gold, content_only=True).score == pytest.approx(similarity.score)
    assert docs.compare_docx_files(near, gold, fuzzy_match=True, fuzzy_match_threshold=0.8).score == 1.0
    assert docs.compare_docx_files(near, gold, fuzzy_match=True, fuzzy_match_threshold=0.99).score == 0.0
    per_paragraph = docs.compare_docx_files(near, gold, fuzzy_match=True, ignore_blanks=False)
    assert 2 / 3 < per_paragraph.score < 1.0  # two paragraphs equal, one close
    assert docs.compare_docx_files(near, gold, fuzzy_match=True, ignore_blanks=False,
                                   fuzzy_match_threshold=0.99).score == pytest.approx(2 / 3)


def test_compare_docx_files_and_ignore_new_lines(tmp_path):
    gold = str(write_docx(tmp_path / "gold.docx", ESSAY))
    gappy = str(write_docx(tmp_path / "gappy.docx", [ESSAY[0], "", ESSAY[1], "", ESSAY[2]]))
    wrong = str(write_docx(tmp_path / "wrong.docx", ESSAY[:2]))
    assert docs.compare_docx_files_and_ignore_new_lines(gappy, gold).score == 1.0
    assert docs.compare_docx_files_and_ignore_new_lines(gappy, gold, ignore_blanks=False).score == 1.0
    assert docs.compare_docx_files_and_ignore_new_lines(wrong, gold).score == 0.0


def test_compare_init_lines_and_docx_lines(tmp_path):
    gold = str(write_docx(tmp_path / "gold.docx", ESSAY))
    head = str(write_docx(tmp_path / "head.docx", ESSAY[:2]))
    shuffled = str(write_docx(tmp_path / "shuffled.docx", [ESSAY[2], ESSAY[0], ESSAY[1], ESSAY[0]]))
    wrong = str(write_docx(tmp_path / "wrong.docx", [ESSAY[0], "Something else", ESSAY[2]]))
    assert docs.compare_init_lines(head, gold).score == 1.0
    assert docs.compare_init_lines(wrong, gold).score == 0.0
    assert docs.compare_docx_lines(shuffled, gold).score == 1.0
    assert docs.compare_docx_lines(wrong, gold).score == 0.0


# ------------------------------------------------------------------------ tables/images

def table_doc(path: Path, cells: list[list[str]], tables: int = 1) -> str:
    doc = Document()
    doc.add_paragraph("Work effort")
    for _ in range(tables):
        table = doc.add_table(rows=len(cells), cols=len(cells[0]))
        for i, row in enumerate(cells):
            for j, text in enumerate(row):
                table.cell(i, j).text = text
    doc.save(str(path))
    return str(path)


def test_compare_docx_tables(tmp_path):
    cells = [["Task", "Hours"], ["Design", "12"]]
    gold = table_doc(tmp_path / "gold.docx", cells)
    same = table_doc(tmp_path / "same.docx", [["Task ", "Hours"], ["Design", " 12"]])
    assert docs.compare_docx_tables(same, gold).score == 1.0
    cell = table_doc(tmp_path / "cell.docx", [["Task", "Hours"], ["Design", "13"]])
    assert docs.compare_docx_tables(cell, gold).score == 0.0
    assert docs.compare_docx_tables(table_doc(tmp_path / "two.docx", cells, tables=2), gold).score == 0.0
    assert docs.compare_docx_tables(table_doc(tmp_path / "shape.docx", [["Task"], ["Design"]]), gold).score == 0.0


def image_doc(path: Path, image: Path | None, before: int = 0) -> str:
    doc = Document()
    for i in range(before):
        doc.add_paragraph(f"Paragraph {i}")
    if image is not None:
        doc.add_picture(str(image))
    doc.add_paragraph("Caption")
    doc.save(str(path))
    return str(path)


def test_compare_docx_images(tmp_path):
    red, blue = picture(tmp_path / "red.png", (220, 20, 20)), picture(tmp_path / "blue.png", (20, 20, 220))
    gold = image_doc(tmp_path / "gold.docx", red)
    assert docs.compare_docx_images(image_doc(tmp_path / "same.docx", red, before=1), gold).score == 1.0
    assert docs.compare_docx_images(image_doc(tmp_path / "blue.docx", blue), gold).score == 0.0
    assert docs.compare_docx_images(image_doc(tmp_path / "none.docx", None), gold).score == 0.0


def test_compare_docx_images_after_libreoffice_saves_the_file(saved):
    assert docs.compare_docx_images(str(saved["docx"] / "figure.docx"),
                                    str(saved["typed"] / "figure.docx")).score == 1.0


def test_compare_contains_image(tmp_path):
    red = picture(tmp_path / "red.png", (220, 20, 20))
    gold = image_doc(tmp_path / "gold.docx", red, before=2)
    assert docs.compare_contains_image(image_doc(tmp_path / "same.docx", red, before=2), gold).score == 1.0
    assert docs.compare_contains_image(image_doc(tmp_path / "moved.docx", red, before=0), gold).score == 0.0
    assert docs.compare_contains_image(image_doc(tmp_path / "none.docx", None, before=2), gold).score == 0.0


# ----------------------------------------------------------------- paragraph formatting

def spaced_doc(path: Path, spacings: list[float | None], texts: list[str] = ESSAY) -> str:
    doc = Document()
    for text, spacing in zip(texts, spacings, strict=True):
        doc.add_paragraph(text).paragraph_format.line_spacing = spacing
    doc.save(str(path))
    return str(path)


def test_compare_line_spacing(tmp_path):
    gold = spaced_doc(tmp_path / "gold.docx", [1.0, 2.0, 1.0])
    assert docs.compare_line_spacing(spaced_doc(tmp_path / "same.docx", [1.0, 2.0, 1.0]), gold).score == 1.0
    assert docs.compare_line_spacing(spaced_doc(tmp_path / "single.docx", [1.0, 1.0, 1.0]), gold).score == 0.0
    other_text = spaced_doc(tmp_path / "text.docx", [1.0, 2.0, 1.0], ["A", "B", "C"])
    assert docs.compare_line_spacing(other_text, gold).score == 0.0


def test_evaluate_spacing(tmp_path):
    assert docs.evaluate_spacing(spaced_doc(tmp_path / "good.docx", [1.0, 2.0, 1.5])).score == 1.0
    assert docs.evaluate_spacing(spaced_doc(tmp_path / "bad.docx", [1.0, 1.5, 2.0])).score == 0.0
    assert docs.evaluate_spacing(spaced_doc(tmp_path / "short.docx", [1.0, 2.0], ESSAY[:2])).score == 0.0


def test_is_first_line_centered(tmp_path):
    doc = Document()
    doc.add_paragraph("Constitution").alignment = WD_ALIGN_PARAGRAPH.CENTER
    doc.add_paragraph("Article 1")
    doc.save(tmp_path / "centred.docx")
    assert docs.is_first_line_centered(str(tmp_path / "centred.docx")).score == 1.0

    doc = Document()
    doc.add_paragraph("Constitution", style="Title")
    doc.styles["Title"].paragraph_format.alignment = WD_ALIGN_PARAGRAPH.CENTER
    doc.save(tmp_path / "by_style.docx")
    assert docs.is_first_line_centered(str(tmp_path / "by_style.docx")).score == 1.0

    assert docs.is_first_line_centered(str(write_docx(tmp_path / "left.docx", ["Constitution"]))).score == 0.0
    assert docs.is_first_line_centered(str(write_docx(tmp_path / "empty.docx", []))).score == 0.0


def tab_doc(path: Path, lines: list[str], stops_pt: list[int]) -> str:
    doc = Document()
    for line in lines:
        p = doc.add_paragraph(line)
        for stop in stops_pt:
            p.paragraph_format.tab_stops.add_tab_stop(Pt(stop))
    doc.save(str(path))
    return str(path)


def test_check_tabstops(tmp_path):
    lines = ["Ebook purchase info\tDetails here", "Access code given\tMore"]
    gold = tab_doc(tmp_path / "gold.docx", lines, [200])
    assert docs.check_tabstops(tab_doc(tmp_path / "same.docx", lines, [200]), gold).score == 1.0
    shifted = docs.check_tabstops(tab_doc(tmp_path / "shifted.docx", lines, [220]), gold)
    assert 0.9 < shifted.score < 1.0  # 20 pt off on a 432 pt line
    assert docs.check_tabstops(tab_doc(tmp_path / "none.docx", lines, []), gold).score == 0.0
    same = tab_doc(tmp_path / "same2.docx", lines, [200])
    assert docs.check_tabstops(same, gold, word_number_split_by_tabstop=3, index=0).score == 1.0
    assert docs.check_tabstops(same, gold, word_number_split_by_tabstop=2, index=0).score == 0.0


def test_evaluate_alignment(tmp_path):
    good = write_docx(tmp_path / "good.docx", ["One two three\tfour five six. Alpha beta gamma     delta."])
    bad = write_docx(tmp_path / "bad.docx", ["One  two three four five six."])
    assert docs.evaluate_alignment(str(good)).score == 1.0
    assert docs.evaluate_alignment(str(bad)).score == 0.0


# ------------------------------------------------------------------------ run formatting

def test_compare_font_names(tmp_path):
    doc = Document()
    doc.add_paragraph().add_run("Dublin Zoo").font.name = "Times New Roman"
    doc.add_paragraph().add_run("opened in 1831").font.name = "Times New Roman"
    doc.save(tmp_path / "all.docx")
    doc.paragraphs[1].runs[0].font.name = "Arial"
    doc.save(tmp_path / "mixed.docx")
    doc = Document()
    doc.styles["Normal"].font.name = "Times New Roman"
    doc.add_paragraph("Dublin Zoo")
    doc.save(tmp_path / "by_style.docx")
    rules = {"font_name": "Times New Roman"}
    assert docs.compare_font_names(str(tmp_path / "all.docx"), rules).score == 1.0
    assert docs.compare_font_names(str(tmp_path / "by_style.docx"), rules).score == 1.0
    assert docs.compare_font_names(str(tmp_path / "mixed.docx"), rules).score == 0.0
    assert docs.compare_font_names(str(tmp_path / "all.docx"), None).score == 0.0


def formula_doc(path: Path, subscript: bool = False, equation: bool = False) -> str:
    doc = Document()
    p = doc.add_paragraph("H")
    p.add_run("2").font.subscript = subscript
    p.add_run("O")
    p = doc.add_paragraph("Energy: ")
    if equation:
        p._p.append(parse_xml(f'<m:oMath {M_NS}><m:r><m:t>E=mc2</m:t></m:r></m:oMath>'))
    doc.save(str(path))
    return str(path)


def test_compare_subscript_contains(tmp_path):
    gold = formula_doc(tmp_path / "gold.docx", subscript=True)
    assert docs.compare_subscript_contains(formula_doc(tmp_path / "sub.docx", subscript=True), gold).score == 1.0
    assert docs.compare_subscript_contains(formula_doc(tmp_path / "plain.docx"), gold).score == 0.0


def test_compare_insert_equation(tmp_path):
    gold = formula_doc(tmp_path / "gold.docx", equation=True)
    assert docs.compare_insert_equation(formula_doc(tmp_path / "eq.docx", equation=True), gold).score == 1.0
    assert docs.compare_insert_equation(formula_doc(tmp_path / "none.docx"), gold).score == 0.0


def highlight_doc(path: Path, highlighted: list[str]) -> str:
    doc = Document()
    for text in ESSAY:
        run = doc.add_paragraph().add_run(text)
        if text in highlighted:
            run.font.highlight_color = WD_COLOR_INDEX.YELLOW
    doc.save(str(path))
    return str(path)


def test_compare_highlighted_text(tmp_path):
    gold = highlight_doc(tmp_path / "gold.docx", [ESSAY[1]])
    assert docs.compare_highlighted_text(highlight_doc(tmp_path / "same.docx", [ESSAY[1]]), gold).score == 1.0
    assert docs.compare_highlighted_text(highlight_doc(tmp_path / "other.docx", [ESSAY[2]]), gold).score == 0.0


def test_check_highlighted_words_on_odt_saved_by_libreoffice(saved):
    o = saved["odt"]
    assert docs.check_highlighted_words(str(o / "gold.odt"), str(o / "gold.odt")).score == 1.0
    assert docs.check_highlighted_words(str(o / "highlighted.odt"), str(o / "gold.odt")).score == 0.0
    assert docs.check_highlighted_words(str(o / "wrong.odt"), str(o / "gold.odt")).score == 0.0  # text changed


def test_check_highlighted_words_on_docx(tmp_path):
    gold = highlight_doc(tmp_path / "gold.docx", [])
    assert docs.check_highlighted_words(highlight_doc(tmp_path / "clean.docx", []), gold).score == 1.0
    assert docs.check_highlighted_words(highlight_doc(tmp_path / "left.docx", [ESSAY[0]]), gold).score == 0.0


def coloured_table(path: Path, colours: dict[str, RGBColor | None]) -> str:
    doc = Document()
    doc.add_paragraph("Words")
    table = doc.add_table(rows=1, cols=len(colours))
    for cell, (word, colour) in zip(table.rows[0].cells, colours.items(), strict=True):
        run = cell.paragraphs[0].add_run(word)
        if colour is not None:
            run.font.color.rgb = colour
    doc.save(str(path))
    return str(path)


def test_evaluate_colored_words_in_tables(tmp_path):
    red, blue = RGBColor(255, 0, 0), RGBColor(0, 0, 255)
    gold = coloured_table(tmp_path / "gold.docx", {"apple": red, "banana": blue})
    right = coloured_table(tmp_path / "right.docx", {"apple": RGBColor(250, 2, 2), "banana": blue})
    swapped = coloured_table(tmp_path / "swapped.docx", {"apple": blue, "banana": red})
    uncoloured = coloured_table(tmp_path / "plain.docx", {"apple": None, "banana": blue})
    assert docs.evaluate_colored_words_in_tables(right, gold).score == 1.0
    assert docs.evaluate_colored_words_in_tables(swapped, gold).score == 0.0
    assert docs.evaluate_colored_words_in_tables(uncoloured, gold).score == 0.0


def test_evaluate_strike_through_last_paragraph(tmp_path):
    def doc_with(strike: bool, name: str) -> str:
        doc = Document()
        for text in ESSAY:
            doc.add_paragraph().add_run(text).font.strike = strike and text == ESSAY[-1]
        doc.add_paragraph("")  # the empty paragraph an editor leaves at the end
        doc.save(tmp_path / name)
        return str(tmp_path / name)
    gold = doc_with(True, "gold.docx")
    assert docs.evaluate_strike_through_last_paragraph(doc_with(True, "struck.docx"), gold).score == 1.0
    assert docs.evaluate_strike_through_last_paragraph(doc_with(False, "plain.docx"), gold).score == 0.0


def test_check_italic_font_size_14(tmp_path):
    def doc_with(size: int, name: str) -> str:
        doc = Document()
        p = doc.add_paragraph("Read ")
        run = p.add_run("Hamlet")
        run.italic, run.font.size = True, Pt(size)
        doc.save(tmp_path / name)
        return str(tmp_path / name)
    gold = doc_with(14, "gold.docx")
    assert docs.check_italic_font_size_14(doc_with(14, "right.docx"), gold).score == 1.0
    assert docs.check_italic_font_size_14(doc_with(12, "small.docx"), gold).score == 0.0


def test_evaluate_conversion(tmp_path):
    lower = str(write_docx(tmp_path / "lower.docx", ["all lower case now", "Mixed Case Is Fine"]))
    upper = str(write_docx(tmp_path / "upper.docx", ["all lower case now", "SHOUTING"]))
    assert docs.evaluate_conversion(lower).score == 1.0
    assert docs.evaluate_conversion(upper).score == 0.0
    assert docs.evaluate_conversion(table_doc(tmp_path / "table.docx", [["ok", "NOT OK"]])).score == 0.0


# ------------------------------------------------------------------- breaks and footers

def breaks_doc(path: Path, breaks: int) -> str:
    doc = Document()
    for i in range(breaks + 1):
        p = doc.add_paragraph(f"Section {i}")
        if i < breaks:
            p.add_run().add_break(WD_BREAK.PAGE)
    doc.save(str(path))
    return str(path)


def test_contains_page_break(tmp_path):
    two = breaks_doc(tmp_path / "two.docx", 2)
    assert docs.contains_page_break(two, {"page_break_count": 2}).score == 1.0
    assert docs.contains_page_break(two, None).score == 1.0
    assert docs.contains_page_break(two, {"page_break_count": 5}).score == 0.0
    assert docs.contains_page_break(breaks_doc(tmp_path / "none.docx", 0), None).score == 0.0


def test_contains_page_break_after_libreoffice_saves_the_file(saved):
    assert docs.contains_page_break(str(saved["docx"] / "breaks.docx"), {"page_break_count": 1}).score == 1.0


def test_has_page_numbers_in_footers(tmp_path):
    doc = Document()
    doc.add_paragraph("Body")
    footer = doc.sections[0].footer.paragraphs[0]
    footer.text = "Page "
    footer._p.append(parse_xml(f'<w:fldSimple {W_NS} w:instr=" PAGE "><w:r><w:t>1</w:t></w:r></w:fldSimple>'))
    doc.save(tmp_path / "numbered.docx")
    doc = Document()
    doc.add_paragraph("Body")
    doc.sections[0].footer.paragraphs[0].text = "Confidential"
    doc.save(tmp_path / "plain.docx")
    assert docs.has_page_numbers_in_footers(str(tmp_path / "numbered.docx")).score == 1.0
    assert docs.has_page_numbers_in_footers(str(tmp_path / "plain.docx")).score == 0.0


# ----------------------------------------------------------------- settings and files

def xcu(path: Path, item: str, prop: str, value: str) -> str:
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<oor:items xmlns:oor="http://openoffice.org/2001/registry" '
        'xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
        f'<item oor:path="{item}"><prop oor:name="{prop}" oor:op="fuse"><value>{value}</value></prop></item>\n'
        '</oor:items>\n')
    return str(path)


def test_find_default_font(tmp_path):
    path = "/org.openoffice.Office.Writer/DefaultFont"
    assert docs.find_default_font(xcu(tmp_path / "a.xcu", path, "Standard", "Times New Roman"),
                                  {"font_name": "Times New Roman"}).score == 1.0
    assert docs.find_default_font(xcu(tmp_path / "b.xcu", path, "Standard", "Liberation Serif"),
                                  {"font_name": "Times New Roman"}).score == 0.0
    garbage = tmp_path / "c.xcu"
    garbage.write_text("<oor:items")
    assert docs.find_default_font(str(garbage), {"font_name": "Times New Roman"}).score == 0.0


def test_check_file_exists(tmp_path):
    (tmp_path / "report.docx").write_bytes(b"x")
    assert docs.check_file_exists(str(tmp_path), "report.docx").score == 1.0
    assert docs.check_file_exists(str(tmp_path), "other.docx").score == 0.0
    assert docs.check_file_exists(None, "report.docx").score == 0.0


# ----------------------------------------------------------------- references, records

def test_compare_references(tmp_path):
    refs = ["Smith, J. (2020). Rivers. Water Press.", "Lee, K. (2019). Valleys. Geo Journal."]
    gold = str(write_docx(tmp_path / "gold.docx", ["Case study", "References", *refs]))
    same = str(write_docx(tmp_path / "same.docx", ["Case study", "References", "", *refs]))
    close = str(write_docx(tmp_path / "close.docx", ["Case study", "References",
                                                      "Smith J 2020 Rivers Water Press", refs[1]]))
    short = str(write_docx(tmp_path / "short.docx", ["Case study", "References", refs[0]]))
    none = str(write_docx(tmp_path / "none.docx", ["Case study"]))
    assert docs.compare_references(same, gold).score == 1.0
    partial = docs.compare_references(close, gold, reference_base_result=0.6)
    assert 0.0 < partial.score < 1.0
    assert docs.compare_references(short, gold).score == 0.0
    assert docs.compare_references(none, gold).score == 0.0
    assert docs.compare_references(none, none).score == 1.0  # neither has a reference list


TRAINS = ["08:00:00, T100, S1, 1", "08:05:00, T200, S2, 2", "08:10:00, T100, S1, 1", "08:20:00, T300, S3, 3"]


def test_compare_unique_train_records(tmp_path):
    original = str(write_docx(tmp_path / "original.docx", TRAINS))
    gold = str(write_docx(tmp_path / "gold.docx", [TRAINS[0], TRAINS[1], TRAINS[3]]))
    right = str(write_docx(tmp_path / "right.docx", [TRAINS[0], TRAINS[1], TRAINS[3]]))
    kept_duplicate = str(write_docx(tmp_path / "dup.docx", TRAINS))
    invented = str(write_docx(tmp_path / "invented.docx", [TRAINS[0], TRAINS[1], "09:00:00, T300, S9, 9"]))
    assert docs.compare_unique_train_records(right, [gold, original]).score == 1.0
    assert docs.compare_unique_train_records(kept_duplicate, [gold, original]).score == 0.0
    assert docs.compare_unique_train_records(invented, [gold, original]).score == 0.0
    assert docs.compare_unique_train_records(right, gold).score == 0.0  # expected must be [gold, original]


def test_check_no_duplicates(tmp_path):
    original = str(write_docx(tmp_path / "original.docx", TRAINS))
    right = str(write_docx(tmp_path / "right.docx", [TRAINS[0], TRAINS[1], TRAINS[3]]))
    kept_duplicate = str(write_docx(tmp_path / "dup.docx", TRAINS))
    assert docs.check_no_duplicates(original, right).score == 1.0
    assert docs.check_no_duplicates(original, kept_duplicate).score == 0.0


# ------------------------------------------------------------------------------ OCR

def text_image(path: Path, text: str) -> str:
    font = ImageFont.truetype("DejaVuSansMono.ttf", 36) if Path(
        "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf").exists() else ImageFont.load_default(size=36)
    image = Image.new("RGB", (640, 120), (30, 30, 30))
    ImageDraw.Draw(image).text((20, 35), text, fill=(230, 230, 230), font=font)
    image.save(path)
    return str(path)


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract OCR is not installed")
def test_compare_image_text(tmp_path):
    screenshot = text_image(tmp_path / "ls.png", "user@host:~$ ls -la")
    rule = {"type": "text", "text": "ls"}
    assert docs.compare_image_text(screenshot, rule).score == 1.0
    assert docs.compare_image_text(text_image(tmp_path / "pwd.png", "user@host:~$ pwd"), rule).score == 0.0
    assert docs.compare_image_text(screenshot, {"type": "regex", "text": "ls"}).score == 0.0
    not_an_image = tmp_path / "broken.png"
    not_an_image.write_bytes(b"not a png")
    assert docs.compare_image_text(str(not_an_image), rule).score == 0.0


def test_compare_image_text_without_tesseract_is_an_evaluator_error(tmp_path, monkeypatch):
    """A missing OCR program is the harness's fault, not the agent's: it raises, and the
    scorer records an evaluation error instead of a 0."""
    monkeypatch.setattr(docs.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="tesseract-ocr"):
        docs.compare_image_text(text_image(tmp_path / "ls.png", "ls"), {"type": "text", "text": "ls"})


# ------------------------------------------------------------------ every metric at once

# A well-formed second argument for each metric, so only the first one is missing or broken.
SECOND_ARGUMENT = {
    "compare_font_names": {"font_name": "Times New Roman"},
    "contains_page_break": {"page_break_count": 1},
    "find_default_font": {"font_name": "Times New Roman"},
    "compare_image_text": {"type": "text", "text": "ls"},
}
GOLD_FIRST = {"check_no_duplicates"}  # OSWorld's argument order: original, then processed
NO_FILE_ARGUMENT = {"check_file_exists"}


def docs_metric_names() -> list[str]:
    """Registered names that this module defines (another module may register the same name)."""
    return [name for name in registry.metric_names() if callable(getattr(docs, name, None))]


@pytest.mark.parametrize("name", docs_metric_names())
def test_every_docs_metric_scores_missing_or_broken_input_zero(name, gold_essay, bad_files):
    fn = getattr(docs, name)
    if name in NO_FILE_ARGUMENT:
        assert fn(None, None).score == 0.0
        assert fn(None, None).explanation  # a 0 always says why
        return
    gold = gold_essay
    second = SECOND_ARGUMENT.get(name, [gold, gold] if name == "compare_unique_train_records" else gold)
    for bad in bad_files:
        outcome = fn(gold, bad) if name in GOLD_FIRST else fn(bad, second)
        assert outcome.score == 0.0, f"{name} scored {outcome.score} on {bad!r}"
        assert outcome.explanation, f"{name} gives no reason for its 0 on {bad!r}"


def test_docs_metrics_are_registered_under_osworld_names():
    names = set(docs_metric_names())
    assert {"compare_docx_files", "compare_docx_tables", "compare_line_spacing", "check_tabstops",
            "contains_page_break", "has_page_numbers_in_footers", "compare_unique_train_records",
            "check_highlighted_words", "compare_image_text", "find_default_font"} <= names


def test_get_unique_train_ids_asks_whether_every_train_id_is_unique(tmp_path):
    unique = str(write_docx(tmp_path / "unique.docx", ["Timetable", TRAINS[0], TRAINS[1], TRAINS[3]]))
    repeated = str(write_docx(tmp_path / "repeated.docx", TRAINS))
    no_trains = str(write_docx(tmp_path / "none.docx", ["Timetable", "no lines of four fields"]))
    assert docs.get_unique_train_ids(unique).score == 1.0
    assert docs.get_unique_train_ids(repeated).score == 0.0
    assert docs.get_unique_train_ids(no_trains).score == 0.0
    assert registry.get_metric("get_unique_train_ids") is docs.get_unique_train_ids
