"""What the prompt agent shows the model: the linearized accessibility tree and set-of-marks screenshots."""
from __future__ import annotations

import csv
import io
from xml.sax.saxutils import quoteattr

import pytest
from PIL import Image

from desktop_env.a11y_namespaces import xmlns_declarations
from mm_agents.observations import (
    MARKS_HEADER,
    TABLE_HEADER,
    AccessibilityTreeError,
    linearize,
    scale_screenshot,
    set_of_marks,
    visible_nodes,
)

VISIBLE = ("showing", "visible", "enabled")


def node(tag: str, name: str = "", text: str = "", states=VISIBLE, position=(0, 0), size=(10, 10),
         extra: dict | None = None, children: str = "") -> str:
    """One element as the env server writes it: states as st:*, extents as cp:*, text as content."""
    attributes = {"name": name, **{f"st:{state}": "true" for state in states}}
    if position is not None:
        attributes["cp:screencoord"] = f"({position[0]}, {position[1]})"
        attributes["cp:size"] = f"({size[0]}, {size[1]})"
    attributes.update(extra or {})
    rendered = "".join(f" {key}={quoteattr(value)}" for key, value in attributes.items())
    body = text.replace("&", "&amp;").replace("<", "&lt;") + children
    return f"<{tag}{rendered}>{body}</{tag}>" if body else f"<{tag}{rendered}/>"


def desktop(*applications: str) -> str:
    return f'<desktop-frame name="main"{xmlns_declarations()}>{"".join(applications)}</desktop-frame>'


def gedit_tree() -> str:
    """A small gedit window on a 400x300 screen: kept nodes and nodes each filter rule drops."""
    return desktop(node("application", "gedit", states=(), position=None, children=node(
        "frame", "Untitled - gedit", position=(0, 0), size=(400, 300), children="".join([
            node("push-button", "Save", position=(300, 10), size=(80, 30),
                 extra={"attr:class": "save-button", "attr:description": "Save the current file",
                        "attr:toolkit": "gtk", "act:click_desc": "Clicks the button"}),
            node("push-button", "Hidden", states=("visible", "enabled"), position=(10, 10)),
            node("push-button", "Not visible", states=("showing", "enabled"), position=(10, 10)),
            node("push-button", "", position=(20, 10)),
            node("label", "Disabled", states=("showing", "visible"), position=(30, 10)),
            node("label", "Off screen", position=(-5, 10)),
            node("label", "No size", position=(40, 10), size=(0, 20)),
            node("label", "No extents", position=None),
            node("filler", "Not a kept tag", position=(50, 10)),
            node("check-box", "Bold", states=("showing", "visible", "checkable"), position=(10, 60), size=(20, 20)),
            node("menu", "File", states=("showing", "visible", "expandable"), position=(0, 0), size=(40, 20)),
            node("menu-item", "Open", position=(0, 20), size=(60, 20)),
            node("document-text", "", text='He said "hi"\tthen left', position=(10, 100), size=(380, 150),
                 extra={"attr:class": "view"}),
            node("table-cell", "A1", text="42", position=(10, 260), size=(50, 20)),
            node("icon", "", position=(200, 60), size=(24, 24), extra={"image": "true"}),
        ]))))


def rows(table: str) -> list[list[str]]:
    """The table's cells, read the way a CSV reader reads tab-separated values with quoting."""
    header, _, body = table.partition("\n")
    assert header == TABLE_HEADER
    return list(csv.reader(io.StringIO(body), delimiter="\t"))


def png(width: int = 400, height: int = 300, colour=(255, 255, 255)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def test_linearized_tree_keeps_the_nodes_the_protocol_keeps_in_document_order():
    table = rows(linearize(gedit_tree()))
    assert [(row[0], row[1]) for row in table] == [
        ("push-button", "Save"), ("check-box", "Bold"), ("menu", "File"), ("menu-item", "Open"),
        ("document-text", ""), ("table-cell", "A1")]


def test_linearized_rows_carry_class_and_description_from_the_attributes_namespace():
    save = rows(linearize(gedit_tree()))[0]
    assert save == ["push-button", "Save", "", "save-button", "Save the current file", "(300, 10)", "(80, 30)"]
    assert linearize(gedit_tree()).split("\n")[1] == \
        'push-button\tSave\t""\tsave-button\tSave the current file\t(300, 10)\t(80, 30)'


def test_class_in_another_namespace_is_not_read():
    xml = desktop(node("push-button", "OK", extra={"xmlns:other": "uri:deskat:attributes.at-spi.gnome.org",
                                                     "other:class": "wrong"}))
    assert rows(linearize(xml))[0][3] == ""


def test_text_cells_are_quoted_when_they_hold_tabs_or_quotes_so_rows_stay_whole():
    document = rows(linearize(gedit_tree()))[4]
    assert len(document) == 7
    assert document[2] == 'He said "hi"\tthen left'
    assert document[5:] == ["(10, 100)", "(380, 150)"]


def test_text_with_a_newline_is_one_quoted_cell():
    table = linearize(desktop(node("paragraph", "", text="line one\nline two", position=(1, 2))))
    assert table.split("\n", 1)[1].startswith('paragraph\t\t"line one\nline two"\t')


def test_positions_are_scaled_with_the_screenshot():
    save = rows(linearize(gedit_tree(), scale=0.5))[0]
    assert save[5:] == ["(150, 5)", "(40, 15)"]


def test_trimming_keeps_whole_rows_within_the_token_budget_and_says_how_many_are_left_out():
    buttons = "".join(node("push-button", f"Button number {i}", position=(i, 0)) for i in range(200))
    full = linearize(desktop(buttons), max_tokens=None)
    assert len(full.split("\n")) == 201
    trimmed = linearize(desktop(buttons), max_tokens=100).split("\n")
    assert trimmed[0] == TABLE_HEADER
    kept, note = trimmed[1:-1], trimmed[-1]
    assert 0 < len(kept) < 200
    assert all(line in full.split("\n") for line in kept)
    assert len("\n".join(trimmed[:-1])) <= 100 * 4
    assert note == f"[{200 - len(kept)} more rows left out to fit 100 tokens]"


def test_default_budget_is_ten_thousand_tokens():
    buttons = "".join(node("push-button", "B" * 90, position=(i, 0)) for i in range(1000))
    table = linearize(desktop(buttons))
    assert len(table) <= 10_000 * 4 + 100
    assert table.endswith("more rows left out to fit 10000 tokens]")


def test_malformed_tree_is_a_specific_error():
    with pytest.raises(AccessibilityTreeError, match="not well-formed"):
        linearize("<desktop-frame><oops></desktop-frame>")


def test_unnamed_images_are_kept_only_for_set_of_marks():
    assert "icon" not in [n.tag for n in visible_nodes(gedit_tree())]
    assert "icon" in [n.tag for n in visible_nodes(gedit_tree(), include_unnamed_images=True)]


def test_set_of_marks_draws_numbered_boxes_and_maps_tags_to_centres():
    screenshot = png()
    marks = set_of_marks(screenshot, gedit_tree())
    image = Image.open(io.BytesIO(marks.image)).convert("RGB")
    assert image.size == (400, 300)
    assert marks.centers == {1: (340, 25), 2: (20, 70), 3: (20, 10), 4: (30, 30), 5: (200, 175), 6: (35, 270),
                             7: (212, 72)}
    # The Save button's box outline is drawn; its inside and the far corner stay white.
    assert image.getpixel((300, 25)) != (255, 255, 255)
    assert image.getpixel((379, 25)) != (255, 255, 255)
    assert image.getpixel((340, 32)) == (255, 255, 255)
    assert image.getpixel((399, 299)) == (255, 255, 255)
    lines = marks.table.split("\n")
    assert lines[0] == MARKS_HEADER
    assert lines[1] == '1\tpush-button\tSave\t""'
    assert lines[7] == '7\ticon\t\t""'


def test_set_of_marks_skips_nodes_outside_the_screenshot():
    xml = desktop(node("push-button", "In", position=(10, 10), size=(20, 20)),
                  node("push-button", "Out", position=(390, 10), size=(50, 20)))
    marks = set_of_marks(png(), xml)
    assert marks.centers == {1: (20, 20)}
    assert "Out" not in marks.table


def test_set_of_marks_on_a_downscaled_screenshot_keeps_screen_centres():
    marks = set_of_marks(png(), gedit_tree(), scale=0.5)
    image = Image.open(io.BytesIO(marks.image)).convert("RGB")
    assert image.size == (200, 150)
    assert marks.centers[1] == (340, 25)
    assert image.getpixel((150, 12)) != (255, 255, 255)     # the Save box's left edge at half size


def test_scale_screenshot_resizes_and_leaves_scale_one_alone():
    screenshot = png()
    assert scale_screenshot(screenshot, 1.0) is screenshot
    assert Image.open(io.BytesIO(scale_screenshot(screenshot, 0.25))).size == (100, 75)
