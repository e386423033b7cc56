"""Presentation metrics on real .pptx files: made with python-pptx, and for compare_pptx_files
also saved by LibreOffice Impress, the way an agent's edit reaches the evaluator."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from docx import Document
from lxml import etree
from PIL import Image, ImageDraw
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.text import PP_ALIGN
from pptx.util import Inches, Pt

from desktop_env.a11y_namespaces import xmlns_declarations
from desktop_env.evaluators import registry
from desktop_env.evaluators.metrics import slides
from desktop_env.evaluators.scoring import MetricCall, call_metric

NS = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" ' \
     'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'

def photo(path: Path) -> Path:
    image = Image.new("RGB", (120, 90), (40, 90, 160))
    ImageDraw.Draw(image).ellipse((20, 15, 80, 75), fill=(230, 200, 40))
    image.save(path)
    return path


def build_deck(path: Path, edit: Callable | None = None) -> str:
    """Three slides: a title with bullets, a formatted text box and notes; a photo; a table.
    `edit(prs)` changes the deck before it is saved."""
    prs = Presentation()
    s1 = prs.slides.add_slide(prs.slide_layouts[1])
    s1.shapes.title.text = "Quarterly Review"
    body = s1.placeholders[1].text_frame
    body.text = "Revenue grew"
    second = body.add_paragraph()
    second.text, second.level = "Costs fell", 1
    box = s1.shapes.add_textbox(Inches(1), Inches(5.5), Inches(4), Inches(0.8)).text_frame
    box.text = "Source: finance team"
    font = box.paragraphs[0].runs[0].font
    font.bold, font.size, font.name, font.color.rgb = True, Pt(18), "Calibri", RGBColor(0xC0, 0, 0)
    s1.notes_slide.notes_text_frame.text = "Speak slowly"

    s2 = prs.slides.add_slide(prs.slide_layouts[5])
    s2.shapes.title.text = "Product Comparison"
    s2.shapes.add_picture(str(photo(path.parent / "photo.png")), Inches(1), Inches(2.5), Inches(2), Inches(1.5))

    s3 = prs.slides.add_slide(prs.slide_layouts[5])
    s3.shapes.title.text = "Numbers"
    table = s3.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1.5)).table
    for (i, j), text in {(0, 0): "Region", (0, 1): "Sales", (1, 0): "North", (1, 1): "120"}.items():
        table.cell(i, j).text = text
    s3.shapes.add_textbox(Inches(6), Inches(2), Inches(3), Inches(1)).text_frame.text = \
        "Elaborate on what you want to discuss."
    if edit is not None:
        edit(prs)
    prs.save(str(path))  # python-pptx takes a Path too; its annotation names only str and streams
    return str(path)


def textbox(prs):
    return prs.slides[0].shapes[2]


def first_run(prs):
    return textbox(prs).text_frame.paragraphs[0].runs[0]


def picture_shape(prs):
    return prs.slides[1].shapes[1]


def set_strike(prs):
    first_run(prs).font._rPr.set("strike", "sngStrike")


def set_background(prs):
    fill = prs.slides[0].background.fill
    fill.solid()
    fill.fore_color.rgb = RGBColor(0, 0, 255)


def set_bullet(prs):
    p = prs.slides[0].placeholders[1].text_frame.paragraphs[0]
    p._p.get_or_add_pPr().append(etree.fromstring(f'<a:buChar {NS} char="-"/>'))


def add_slide(prs):
    prs.slides.add_slide(prs.slide_layouts[6])


def set_attr(getter, attribute, value):
    def edit(prs):
        setattr(getter(prs), attribute, value)
    return edit


def set_text(prs):
    prs.slides[0].placeholders[1].text_frame.paragraphs[0].runs[0].text = "Revenue fell"


def set_cell(prs):
    prs.slides[2].shapes[1].table.cell(1, 1).text = "130"


# Each edit changes one thing; the option turns the check that notices it off.
EDITS_AND_OPTIONS = {
    "moved": (set_attr(textbox, "left", Inches(2)), {"examine_shape": False}),
    "bold": (set_attr(lambda p: first_run(p).font, "bold", False), {"examine_font_bold": False}),
    "italic": (set_attr(lambda p: first_run(p).font, "italic", True), {"examine_font_italic": False}),
    "underline": (set_attr(lambda p: first_run(p).font, "underline", True), {"examine_font_underline": False}),
    "size": (set_attr(lambda p: first_run(p).font, "size", Pt(24)), {"examine_font_size": False}),
    "font": (set_attr(lambda p: first_run(p).font, "name", "Arial"), {"examine_font_name": False}),
    "colour": (set_attr(lambda p: first_run(p).font.color, "rgb", RGBColor(0, 0, 0xC0)), {"examine_color_rgb": False}),
    "strike": (set_strike, {"examine_strike_through": False}),
    "alignment": (set_attr(lambda p: textbox(p).text_frame.paragraphs[0], "alignment", PP_ALIGN.RIGHT),
                  {"examine_alignment": False}),
    "notes": (set_attr(lambda p: p.slides[0].notes_slide.notes_text_frame, "text", "Speak fast"),
              {"examine_note": False}),
    "background": (set_background, {"examine_background_color": False}),
    "bullet": (set_bullet, {"examine_bullets": False}),
    "indent": (set_attr(lambda p: p.slides[0].placeholders[1].text_frame.paragraphs[1], "level", 2),
               {"examine_indent": False, "examine_bullets": False}),
    "extra slide": (add_slide, {"examine_number_of_slides": False}),
}


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    return tmp_path_factory.mktemp("decks")


@pytest.fixture(scope="module")
def gold(decks):
    return build_deck(decks / "gold.pptx")


# --------------------------------------------------------------- compare_pptx_files

def test_compare_pptx_files_identical_decks_match(decks, gold):
    assert slides.compare_pptx_files(build_deck(decks / "same.pptx"), gold).score == 1.0


@pytest.mark.parametrize("edit_name", EDITS_AND_OPTIONS)
def test_compare_pptx_files_notices_each_edit_unless_told_not_to_examine_it(edit_name, decks, gold):
    edit, options = EDITS_AND_OPTIONS[edit_name]
    edited = build_deck(decks / f"{edit_name.replace(' ', '_')}.pptx", edit)
    assert slides.compare_pptx_files(edited, gold).score == 0.0
    assert slides.compare_pptx_files(edited, gold, **options).score == 1.0


def test_compare_pptx_files_compares_text_and_table_cells(decks, gold):
    assert slides.compare_pptx_files(build_deck(decks / "text.pptx", set_text), gold).score == 0.0
    assert slides.compare_pptx_files(build_deck(decks / "cell.pptx", set_cell), gold).score == 0.0


def split_text_box_run(prs):
    """Splits the text box's run in two runs of the same format, as an editor may save it;
    returns the second run."""
    paragraph = textbox(prs).text_frame.paragraphs[0]
    run = paragraph.runs[0]
    run.text = "Source: "
    run._r.addnext(etree.fromstring(etree.tostring(run._r)))
    second = paragraph.runs[1]
    second.text = "finance team"
    return second


def test_compare_pptx_files_merges_runs_of_the_same_format(decks, gold):
    assert slides.compare_pptx_files(build_deck(decks / "split.pptx", split_text_box_run), gold).score == 1.0


def test_compare_pptx_files_runs_split_by_an_unexamined_property_count_as_one(decks, gold):
    def half_bold(prs):
        split_text_box_run(prs).font.bold = False
    edited = build_deck(decks / "half_bold.pptx", half_bold)
    assert slides.compare_pptx_files(edited, gold).score == 0.0
    assert slides.compare_pptx_files(edited, gold, examine_font_bold=False).score == 1.0


def test_examine_run_count_off_compares_runs_pairwise_as_far_as_the_shorter_paragraph(decks, gold):
    def blue_tail(prs):
        split_text_box_run(prs).font.color.rgb = RGBColor(0, 0, 0xC0)

    def blue_head(prs):
        blue_tail(prs)
        first_run(prs).font.color.rgb = RGBColor(0, 0, 0xC0)
        textbox(prs).text_frame.paragraphs[0].runs[1].font.color.rgb = RGBColor(0xC0, 0, 0)
    tail = build_deck(decks / "blue_tail.pptx", blue_tail)
    head = build_deck(decks / "blue_head.pptx", blue_head)
    verdict = slides.compare_pptx_files(tail, gold)
    assert verdict.score == 0.0 and "number of differently formatted runs: 2 vs 1" in verdict.explanation
    # OSWorld's reading: the run count is not asked, the first run of each is compared and the rest is not.
    assert slides.compare_pptx_files(tail, gold, examine_run_count=False).score == 1.0
    assert slides.compare_pptx_files(head, gold, examine_run_count=False).score == 0.0


def test_runs_without_text_in_blank_paragraphs_are_not_compared(decks, gold):
    def formatted_blank_line(prs):
        paragraph = textbox(prs).text_frame.add_paragraph()
        paragraph.add_run().font.bold = True

    def plain_blank_line(prs):
        textbox(prs).text_frame.add_paragraph()
    blank_gold = build_deck(decks / "blank_gold.pptx", plain_blank_line)
    blank_bold = build_deck(decks / "blank_bold.pptx", formatted_blank_line)
    assert slides.compare_pptx_files(blank_bold, blank_gold).score == 1.0


def test_compare_pptx_files_allows_libreoffice_rounding_of_lengths(decks):
    at_top = build_deck(decks / "at_top.pptx", set_attr(textbox, "top", 0))
    one_unit_down = build_deck(decks / "one_unit.pptx", set_attr(textbox, "top", 360))
    a_millimetre_down = build_deck(decks / "one_mm.pptx", set_attr(textbox, "top", 36000))
    assert slides.compare_pptx_files(one_unit_down, at_top).score == 1.0
    assert slides.compare_pptx_files(a_millimetre_down, at_top).score == 0.0


def test_compare_pptx_files_reads_text_inside_groups(decks):
    def grouped(text):
        def edit(prs):
            group = prs.slides[1].shapes.add_group_shape()
            group.shapes.add_textbox(Inches(5), Inches(5), Inches(2), Inches(1)).text_frame.text = text
        return edit
    gold_group = build_deck(decks / "group_gold.pptx", grouped("Inside a group"))
    same = build_deck(decks / "group_same.pptx", grouped("Inside a group"))
    other = build_deck(decks / "group_other.pptx", grouped("Something else"))
    assert slides.compare_pptx_files(same, gold_group).score == 1.0
    assert slides.compare_pptx_files(other, gold_group).score == 0.0


def test_compare_pptx_files_approximately_tolerance(decks, gold):
    nudged = build_deck(decks / "nudged.pptx", set_attr(textbox, "left", int(Inches(1) * 1.008)))
    assert slides.compare_pptx_files(nudged, gold).score == 0.0
    assert slides.compare_pptx_files(nudged, gold, approximately_tolerance=0.01).score == 1.0


def test_compare_pptx_files_examine_image_size(decks, gold):
    options = {"examine_shape": False, "examine_image_size": True}
    moved = build_deck(decks / "pic_moved.pptx", set_attr(picture_shape, "left", Inches(3)))
    resized = build_deck(decks / "pic_resized.pptx", set_attr(picture_shape, "width", Inches(3)))
    assert slides.compare_pptx_files(moved, gold, **options).score == 1.0
    assert slides.compare_pptx_files(resized, gold, **options).score == 0.0


def test_compare_pptx_files_examine_modify_height(decks, gold):
    options = {"examine_shape": False, "examine_modify_height": True}
    wider = build_deck(decks / "pic_wider.pptx", set_attr(picture_shape, "width", Inches(3)))
    taller = build_deck(decks / "pic_taller.pptx", set_attr(picture_shape, "height", Inches(3)))
    assert slides.compare_pptx_files(wider, gold, **options).score == 1.0
    assert slides.compare_pptx_files(taller, gold, **options).score == 0.0


def test_compare_pptx_files_task_specific_position_checks(decks, gold):
    """These options encode particular tasks: the result's shape must have moved past the
    gold (original) file's shape, and past a fixed line on a fixed slide."""
    right = build_deck(decks / "right.pptx", set_attr(picture_shape, "left", Inches(5)))
    assert slides.compare_pptx_files(right, gold, examine_shape=False, examine_right_position=True).score == 1.0
    assert slides.compare_pptx_files(gold, gold, examine_shape=False, examine_right_position=True).score == 0.0

    up = build_deck(decks / "up.pptx", set_attr(picture_shape, "top", Inches(1.5)))
    assert slides.compare_pptx_files(up, gold, examine_shape=False, examine_top_position=True).score == 1.0
    assert slides.compare_pptx_files(gold, gold, examine_shape=False, examine_top_position=True).score == 0.0

    table_down = build_deck(decks / "table_down.pptx", set_attr(lambda p: p.slides[2].shapes[1], "top", Inches(5)))
    table_options = {"examine_shape": False, "examine_table_bottom_position": True}
    assert slides.compare_pptx_files(table_down, gold, **table_options).score == 1.0
    assert slides.compare_pptx_files(gold, gold, **table_options).score == 0.0

    title_down = build_deck(decks / "title_down.pptx", set_attr(lambda p: p.slides[1].shapes.title, "top", Inches(6)))
    title_options = {"examine_shape": False, "examine_title_bottom_position": True}
    assert slides.compare_pptx_files(title_down, gold, **title_options).score == 1.0
    assert slides.compare_pptx_files(gold, gold, **title_options).score == 0.0

    options = {"examine_shape": False, "examine_shape_for_shift_size": True}
    prompt_moved = build_deck(decks / "prompt_moved.pptx", set_attr(lambda p: p.slides[2].shapes[2], "left", Inches(5)))
    table_moved = build_deck(decks / "table_moved.pptx", set_attr(lambda p: p.slides[2].shapes[1], "left", Inches(2)))
    assert slides.compare_pptx_files(prompt_moved, gold, **options).score == 1.0
    assert slides.compare_pptx_files(table_moved, gold, **options).score == 0.0


def test_a_note_option_is_for_readers_and_never_reaches_compare_pptx_files(decks, gold):
    # OSWorld's task files put "_note" among compare_pptx_files' options; the scorer drops it.
    call = MetricCall("compare_pptx_files", {"type": "vm_file"}, {"type": "cloud_file"},
                      {"_note": "a remark", "examine_shape": False})
    assert call_metric(call, build_deck(decks / "same2.pptx"), gold).score == 1.0
    with pytest.raises(TypeError):
        slides.compare_pptx_files(build_deck(decks / "same3.pptx"), gold, examine_shapes=False)


def test_an_option_osworld_ignores_too_is_left_out_of_the_call(decks, gold):
    # OSWorld's task files give examine_shape_lenient_height, which no OSWorld code reads.
    moved = build_deck(decks / "lenient_moved.pptx", set_attr(textbox, "left", Inches(2)))
    call = MetricCall("compare_pptx_files", {"type": "vm_file"}, {"type": "cloud_file"},
                      {"examine_shape_lenient_height": True, "examine_shape": False})
    assert call_metric(call, moved, gold).score == 1.0
    call.options = {"examine_shape_lenient_height": True}
    assert call_metric(call, moved, gold).score == 0.0  # it loosens nothing: examine_shape still decides


@pytest.fixture(scope="module")
def impress_saved(decks, gold, libreoffice):
    """The gold deck and some edits of it saved by LibreOffice Impress, and the saved gold
    saved once more (an agent opening the file and saving it again)."""
    sources = [Path(gold),
               Path(build_deck(decks / "lo_text.pptx", set_text)),
               Path(build_deck(decks / "lo_moved.pptx", set_attr(textbox, "left", Inches(2)))),
               Path(build_deck(decks / "lo_colour.pptx",
                               set_attr(lambda p: first_run(p).font.color, "rgb", RGBColor(0, 0, 0xC0)))),
               Path(build_deck(decks / "lo_numbered.pptx", lambda prs: (numbered("FF0000")(prs), dissolve(prs))))]
    once, twice = decks / "impress1", decks / "impress2"
    libreoffice.convert(sources, "pptx", once)
    libreoffice.convert([once / "gold.pptx"], "pptx", twice)
    return once, twice


def test_compare_pptx_files_on_decks_saved_by_impress(impress_saved):
    once, twice = impress_saved
    gold = str(once / "gold.pptx")
    assert slides.compare_pptx_files(str(twice / "gold.pptx"), gold).score == 1.0
    assert slides.compare_pptx_files(str(once / "lo_text.pptx"), gold).score == 0.0
    assert slides.compare_pptx_files(str(once / "lo_moved.pptx"), gold).score == 0.0
    assert slides.compare_pptx_files(str(once / "lo_moved.pptx"), gold, examine_shape=False).score == 1.0
    assert slides.compare_pptx_files(str(once / "lo_colour.pptx"), gold).score == 0.0
    assert slides.compare_pptx_files(str(once / "lo_colour.pptx"), gold, examine_color_rgb=False).score == 1.0


def test_slide_numbers_and_transitions_survive_impress(impress_saved):
    """Impress writes slide numbers as fields showing "<number>" and keeps the transition."""
    once, _ = impress_saved
    numbered_deck, plain = str(once / "lo_numbered.pptx"), str(once / "gold.pptx")
    assert slides.check_slide_numbers_color(numbered_deck).score == 1.0
    assert slides.check_slide_numbers_color(plain).score == 0.0
    assert slides.check_page_number_colors(numbered_deck, {"color": "red"}).score == 1.0
    assert slides.check_page_number_colors(numbered_deck, {"color": "black"}).score == 0.0
    assert slides.check_transition(numbered_deck, {"slide_idx": 0, "transition_type": "dissolve"}).score == 1.0
    assert slides.check_transition(plain, {"slide_idx": 0, "transition_type": "dissolve"}).score == 0.0


# ------------------------------------------------------------------- slide properties

def dissolve(prs):
    prs.slides[0]._element.append(etree.fromstring(f'<p:transition {NS} spd="slow"><p:dissolve/></p:transition>'))


def test_check_transition(decks):
    deck = build_deck(decks / "transition.pptx", dissolve)
    assert slides.check_transition(deck, {"slide_idx": 0, "transition_type": "dissolve"}).score == 1.0
    assert slides.check_transition(deck, {"slide_idx": 0, "transition_type": "fade"}).score == 0.0
    assert slides.check_transition(deck, {"slide_idx": 1, "transition_type": "dissolve"}).score == 0.0
    assert slides.check_transition(deck, {"slide_idx": 7, "transition_type": "dissolve"}).score == 0.0


def test_check_slide_orientation_portrait(decks):
    def portrait(prs):
        prs.slide_width, prs.slide_height = Inches(7.5), Inches(10)
    assert slides.check_slide_orientation_Portrait(build_deck(decks / "portrait.pptx", portrait)).score == 1.0
    assert slides.check_slide_orientation_Portrait(build_deck(decks / "landscape.pptx")).score == 0.0


def test_check_strikethrough(decks, gold):
    def strike_bullets(prs):
        for paragraph in prs.slides[0].placeholders[1].text_frame.paragraphs:
            paragraph.runs[0].font._rPr.set("strike", "sngStrike")
    struck = build_deck(decks / "struck.pptx", strike_bullets)
    rules = {"slide_index_s": [0], "shape_index_s": [1], "paragraph_index_s": [0, 1]}
    assert slides.check_strikethrough(struck, rules).score == 1.0
    assert slides.check_strikethrough(gold, rules).score == 0.0
    not_struck = build_deck(decks / "nostrike.pptx", lambda prs: [
        p.runs[0].font._rPr.set("strike", "noStrike") for p in prs.slides[0].placeholders[1].text_frame.paragraphs])
    assert slides.check_strikethrough(not_struck, rules).score == 0.0
    assert slides.check_strikethrough(struck, {**rules, "paragraph_index_s": [5]}).score == 0.0


def with_background(colours: list[tuple[int, int, int] | None]):
    def edit(prs):
        for slide, colour in zip(prs.slides, colours, strict=True):
            if colour is not None:
                fill = slide.background.fill
                fill.solid()
                fill.fore_color.rgb = RGBColor(*colour)
    return edit


def test_evaluate_presentation_fill_to_rgb_distance(decks):
    rules = {"rgb": [0, 0, 255], "original_rgb": [255, 255, 255]}
    blue = build_deck(decks / "blue.pptx", with_background([(0, 0, 255)] * 3))
    white = build_deck(decks / "white.pptx", with_background([(255, 255, 255)] * 3))
    one_left = build_deck(decks / "one_left.pptx", with_background([(0, 0, 255), (0, 0, 255), (255, 255, 255)]))
    navy = build_deck(decks / "navy.pptx", with_background([(0, 0, 200)] * 3))
    assert slides.evaluate_presentation_fill_to_rgb_distance(blue, rules).score == pytest.approx(1.0)
    assert slides.evaluate_presentation_fill_to_rgb_distance(white, rules).score == pytest.approx(0.0)
    assert slides.evaluate_presentation_fill_to_rgb_distance(one_left, rules).score == pytest.approx(2 / 3)
    assert 0.85 < slides.evaluate_presentation_fill_to_rgb_distance(navy, rules).score < 1.0


def test_evaluate_presentation_fill_inherits_the_master_background(decks):
    def master_blue(prs):
        fill = prs.slide_master.background.fill
        fill.solid()
        fill.fore_color.rgb = RGBColor(0, 0, 255)
    deck = build_deck(decks / "master_blue.pptx", master_blue)
    assert slides.evaluate_presentation_fill_to_rgb_distance(deck, {"rgb": [0, 0, 255]}).score == pytest.approx(1.0)


# ------------------------------------------------------------------- slide numbers

def slide_number_xml(number: int, colour: str | None) -> str:
    fill = f'<a:solidFill><a:srgbClr val="{colour}"/></a:solidFill>' if colour else ""
    return (f'<p:sp {NS}><p:nvSpPr><p:cNvPr id="{90 + number}" name="Slide Number"/><p:cNvSpPr/>'
            '<p:nvPr><p:ph type="sldNum" idx="12"/></p:nvPr></p:nvSpPr><p:spPr/>'
            '<p:txBody><a:bodyPr/><a:lstStyle/><a:p>'
            f'<a:fld id="{{B6F15528-21DE-4FAA-801E-634DDDAF4B2B}}" type="slidenum"><a:rPr lang="en-US">{fill}</a:rPr>'
            f'<a:t>{number}</a:t></a:fld></a:p></p:txBody></p:sp>')


def numbered(colour: str | None, master_colour: str | None = None):
    def edit(prs):
        for number, slide in enumerate(prs.slides, start=1):
            slide.shapes._spTree.append(etree.fromstring(slide_number_xml(number, colour)))
        if master_colour:
            master_number = next(s for s in prs.slide_master.placeholders if s.placeholder_format.type == 13)
            for rpr in master_number._element.iter("{http://schemas.openxmlformats.org/drawingml/2006/main}rPr"):
                rpr.append(etree.fromstring(f'<a:solidFill {NS}><a:srgbClr val="{master_colour}"/></a:solidFill>'))
    return edit


def test_check_slide_numbers_color(decks, gold):
    red = build_deck(decks / "numbers_red.pptx", numbered("FF0000"))
    black = build_deck(decks / "numbers_black.pptx", numbered("000000"))
    red_by_master = build_deck(decks / "numbers_master_red.pptx", numbered(None, master_colour="FF0000"))
    assert slides.check_slide_numbers_color(red).score == 1.0
    assert slides.check_slide_numbers_color(red_by_master).score == 1.0
    assert slides.check_slide_numbers_color(black).score == 0.0
    assert slides.check_slide_numbers_color(gold).score == 0.0  # no slide shows a number


def test_check_page_number_colors(decks):
    red = build_deck(decks / "pn_red.pptx", numbered("E02020"))
    blue = build_deck(decks / "pn_blue.pptx", numbered("1030D0"))
    assert slides.check_page_number_colors(red, {"color": "red"}).score == 1.0
    assert slides.check_page_number_colors(blue, {"color": "red"}).score == 0.0
    assert slides.check_page_number_colors(blue, {"color": "blue"}).score == 1.0
    assert slides.check_page_number_colors(red, {"color": "purple"}).score == 0.0


# ----------------------------------------------------------------------- pictures

def test_check_image_stretch_and_center(decks):
    def picture_on_first_slide(stretched: bool):
        def edit(prs):
            picture = prs.slides[0].shapes.add_picture(str(decks / "photo.png"), Inches(1), Inches(1), Inches(2))
            if stretched:
                picture.left, picture.top = 0, 0
                picture.width, picture.height = prs.slide_width, prs.slide_height
        return edit
    original = build_deck(decks / "stretch_original.pptx", picture_on_first_slide(False))
    stretched = build_deck(decks / "stretch_done.pptx", picture_on_first_slide(True))
    assert slides.check_image_stretch_and_center(stretched, original).score == 1.0
    assert slides.check_image_stretch_and_center(original, original).score == 0.0
    assert slides.check_image_stretch_and_center(stretched, build_deck(decks / "no_pic.pptx")).score == 0.0


# ------------------------------------------------------------ LibreOffice settings, UI

def xcu(path: Path, entries: list[tuple[str, str, str]]) -> str:
    items = "".join(f'<item oor:path="{item}"><prop oor:name="{prop}" oor:op="fuse">'
                    f'<value>{value}</value></prop></item>\n'
                    for item, prop, value in entries)
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n'
                    '<oor:items xmlns:oor="http://openoffice.org/2001/registry">\n' + items + '</oor:items>\n')
    return str(path)


def test_check_auto_saving_time(tmp_path):
    common = ("/org.openoffice.Office.Common/Save/Document", "AutoSaveTimeIntervall")
    recovery = ("/org.openoffice.Office.Recovery/AutoSave", "TimeIntervall")
    three = xcu(tmp_path / "three.xcu", [(*common, "3")])
    assert slides.check_auto_saving_time(three, {"minutes": 3}).score == 1.0
    assert slides.check_auto_saving_time(three, {"minutes": 10}).score == 0.0
    assert slides.check_auto_saving_time(xcu(tmp_path / "recovery.xcu", [(*recovery, "3")]),
                                         {"minutes": 3}).score == 1.0
    assert slides.check_auto_saving_time(xcu(tmp_path / "empty.xcu", []), {"minutes": 3}).score == 0.0
    changed_twice = xcu(tmp_path / "twice.xcu", [(*common, "10"), (*common, "3")])
    assert slides.check_auto_saving_time(changed_twice, {"minutes": 3}).score == 1.0


def test_check_presenter_console_disable(tmp_path):
    setting = ("/org.openoffice.Office.Impress/Misc/Start", "EnablePresenterScreen")
    assert slides.check_presenter_console_disable(xcu(tmp_path / "off.xcu", [(*setting, "false")])).score == 1.0
    assert slides.check_presenter_console_disable(xcu(tmp_path / "on.xcu", [(*setting, "true")])).score == 0.0
    assert slides.check_presenter_console_disable(xcu(tmp_path / "unset.xcu", [])).score == 0.0


def accessibility_tree(frames: list[str]) -> str:
    children = "".join(f'<document-frame name="{name}" st:showing="true"/>' for name in frames)
    return (f'<desktop-frame{xmlns_declarations("st")}>'
            f'<application name="soffice"><frame name="deck.pptx - LibreOffice Impress">{children}</frame>'
            '</application></desktop-frame>')


def test_check_left_panel():
    assert slides.check_left_panel(accessibility_tree(["Slides View", "Normal View"])).score == 1.0
    assert slides.check_left_panel(accessibility_tree(["Normal View"])).score == 0.0
    assert slides.check_left_panel("<desktop-frame><unclosed").score == 0.0
    assert slides.check_left_panel(None).score == 0.0


# ------------------------------------------------------------------ every metric at once

SECOND_ARGUMENT = {
    "check_transition": {"slide_idx": 0, "transition_type": "dissolve"},
    "check_strikethrough": {"slide_index_s": [0], "shape_index_s": [1], "paragraph_index_s": [0]},
    "evaluate_presentation_fill_to_rgb_distance": {"rgb": [0, 0, 255]},
    "check_page_number_colors": {"color": "red"},
    "check_auto_saving_time": {"minutes": 3},
}
ONE_ARGUMENT = {"check_slide_orientation_Portrait", "check_slide_numbers_color", "check_left_panel",
                "check_presenter_console_disable"}


def slides_metric_names() -> list[str]:
    """Registered names that this module defines (another module may register the same name)."""
    return [name for name in registry.metric_names() if callable(getattr(slides, name, None))]


@pytest.mark.parametrize("name", slides_metric_names())
def test_every_slides_metric_scores_missing_or_broken_input_zero(name, tmp_path, gold):
    garbage = tmp_path / "garbage.pptx"
    garbage.write_bytes(b"\x00not a presentation")
    docx_not_pptx = tmp_path / "doc.pptx"
    Document().save(docx_not_pptx)
    fn = getattr(slides, name)
    for bad in [None, str(tmp_path / "missing.pptx"), str(garbage), str(docx_not_pptx)]:
        if name in ONE_ARGUMENT:
            score = fn(bad)
        else:
            score = fn(bad, SECOND_ARGUMENT.get(name, gold))
            if name not in SECOND_ARGUMENT:  # gold-file metrics: a broken gold file scores 0 too
                assert fn(gold, bad).score == 0.0
        assert score.score == 0.0, f"{name} scored {score} on {bad!r}"
        assert score.explanation, f"{name} gives no reason for its 0 on {bad!r}"


def test_slides_metrics_are_registered_under_osworld_names():
    assert {"compare_pptx_files", "check_transition", "check_slide_orientation_Portrait", "check_strikethrough",
            "check_slide_numbers_color", "check_left_panel", "check_auto_saving_time",
            "check_presenter_console_disable", "check_image_stretch_and_center",
            "evaluate_presentation_fill_to_rgb_distance", "check_page_number_colors"} <= set(slides_metric_names())


def test_check_libre_locale_matches_the_setup_locale_else_the_ui_locale(tmp_path):
    l10n = "/org.openoffice.Setup/L10N"
    german = xcu(tmp_path / "de.xcu", [(l10n, "ooSetupSystemLocale", "de-DE"), (l10n, "ooLocale", "en-US")])
    assert slides.check_libre_locale(german, {"locale_set": ["de-*"]}).score == 1.0
    assert slides.check_libre_locale(german, {"locale_set": ["en-US", "fr-*"]}).score == 0.0
    ui_only = xcu(tmp_path / "ui.xcu", [(l10n, "ooLocale", "fr-FR")])
    assert slides.check_libre_locale(ui_only, {"locale_set": ["fr-*"]}).score == 1.0
    assert slides.check_libre_locale(xcu(tmp_path / "unset.xcu", []), {"locale_set": ["*"]}).score == 0.0
    assert slides.check_libre_locale(str(tmp_path / "missing.xcu"), {"locale_set": ["*"]}).score == 0.0
