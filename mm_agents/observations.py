"""What a prompt agent shows the model: the linearized accessibility tree and set-of-marks screenshots.

The linearized tree is desktop_env/server/PROTOCOL.md's table: one row per on-screen node a user could act on or
read, with its tag, name, text, class, description, position and size. Set-of-marks draws a
numbered box around each such node on the screenshot, so the model can name a node (`tag_3`)
instead of guessing pixel coordinates; `SetOfMarks.centers` turns the numbers back into points.

Positions in both are in the model's coordinate space: screen pixels times `scale`, the factor
the screenshot was resized by before the model saw it.
"""
from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from desktop_env.a11y_namespaces import A11Y_NAMESPACES

STATE_NS = A11Y_NAMESPACES["st"]
ATTRIBUTES_NS = A11Y_NAMESPACES["attr"]
COMPONENT_NS = A11Y_NAMESPACES["cp"]

TABLE_HEADER = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)"
MARKS_HEADER = "index\ttag\tname\ttext"

# The paper's agent trims the table to 10k tokens; a token is about four characters of
# English or of this table, which is close enough for a budget that only has to stop the
# tree from crowding out everything else in the context.
DEFAULT_MAX_TOKENS = 10_000
CHARS_PER_TOKEN = 4

_KEPT_TAG_PREFIXES = ("document",)
_KEPT_TAG_SUFFIXES = ("item", "button", "heading", "label", "scrollbar", "searchbox", "textbox", "link",
                      "tabelement", "textfield", "textarea", "menu")
_KEPT_TAGS = frozenset({"alert", "canvas", "check-box", "combo-box", "entry", "icon", "image", "paragraph",
                        "scroll-bar", "section", "slider", "static", "table-cell", "terminal", "text"})
_ACTIONABLE_STATES = ("enabled", "editable", "expandable", "checkable")
_PAIR = re.compile(r"^\s*\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)\s*$")

# Distinct, saturated colours that stay readable on both light and dark themes.
_MARK_COLOURS = ((230, 25, 75), (60, 140, 60), (0, 90, 200), (245, 130, 48), (145, 30, 180),
                 (0, 150, 150), (200, 0, 200), (128, 90, 0))
_MARK_FONT_SIZE = 14


class AccessibilityTreeError(ValueError):
    """The accessibility tree the environment returned is not well-formed XML."""


@dataclass(frozen=True)
class TreeNode:
    """One node kept for the model, with its box in screen pixels."""
    tag: str
    name: str
    text: str
    class_name: str
    description: str
    x: int
    y: int
    width: int
    height: int

    @property
    def center(self) -> tuple[int, int]:
        return self.x + self.width // 2, self.y + self.height // 2


@dataclass(frozen=True)
class SetOfMarks:
    """A screenshot with numbered boxes, the table describing them and each box's centre on screen."""
    image: bytes                                # PNG, in the model's coordinate space
    table: str
    centers: dict[int, tuple[int, int]]         # mark number -> centre in screen pixels


def visible_nodes(xml: str, include_unnamed_images: bool = False) -> list[TreeNode]:
    """The nodes desktop_env/server/PROTOCOL.md's filter keeps, in document order.

    `include_unnamed_images` also keeps nodes that have neither name nor text but are images
    (set-of-marks boxes them: an icon without a label is still something to click).
    """
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as e:
        raise AccessibilityTreeError(f"the accessibility tree is not well-formed XML ({e}); "
                                     f"it starts with {xml[:120]!r}") from e
    nodes = []
    for element in root.iter():
        node = _kept_node(element, include_unnamed_images)
        if node is not None:
            nodes.append(node)
    return nodes


def linearize(xml: str, max_tokens: int | None = DEFAULT_MAX_TOKENS, scale: float = 1.0) -> str:
    """The tab-separated table of `visible_nodes(xml)`, trimmed to about `max_tokens` (None: no limit)."""
    rows = [_row(node.tag, _cell(node.name), _text_cell(node.text), _cell(node.class_name), _cell(node.description),
                 _pair(node.x, node.y, scale), _pair(node.width, node.height, scale))
            for node in visible_nodes(xml)]
    return trim_table(TABLE_HEADER, rows, max_tokens)


def trim_table(header: str, rows: list[str], max_tokens: int | None) -> str:
    """Header plus as many whole rows as fit in the budget; a last line says how many were left out."""
    if max_tokens is None:
        return "\n".join([header, *rows])
    budget = max_tokens * CHARS_PER_TOKEN - len(header)
    kept = []
    for row in rows:
        budget -= len(row) + 1
        if budget < 0:
            break
        kept.append(row)
    lines = [header, *kept]
    if len(kept) < len(rows):
        lines.append(f"[{len(rows) - len(kept)} more rows left out to fit {max_tokens} tokens]")
    return "\n".join(lines)


def scale_screenshot(png: bytes, scale: float) -> bytes:
    """The screenshot resized by `scale` (the PNG itself when scale is 1)."""
    if scale == 1:
        return png
    image = Image.open(io.BytesIO(png))
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return _png(image.convert("RGB").resize(size, Image.Resampling.LANCZOS))


def set_of_marks(screenshot: bytes, xml: str, scale: float = 1.0,
                 max_tokens: int | None = DEFAULT_MAX_TOKENS) -> SetOfMarks:
    """Numbers every visible node (from 1) and boxes it on the screenshot resized by `scale`.

    Nodes whose box lies outside the screenshot get no mark: the model could not see them.
    """
    image = Image.open(io.BytesIO(screenshot)).convert("RGB")
    if scale != 1:
        image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))),
                             Image.Resampling.LANCZOS)
    draw = ImageDraw.Draw(image)
    font = _mark_font()
    rows: list[str] = []
    centers: dict[int, tuple[int, int]] = {}
    for node in visible_nodes(xml, include_unnamed_images=True):
        left, top = round(node.x * scale), round(node.y * scale)
        right, bottom = round((node.x + node.width) * scale) - 1, round((node.y + node.height) * scale) - 1
        if right >= image.width or bottom >= image.height or right < left or bottom < top:
            continue
        number = len(centers) + 1
        centers[number] = node.center
        _draw_mark(draw, font, number, (left, top, right, bottom), image.size)
        rows.append(_row(str(number), node.tag, _cell(node.name), _text_cell(node.text)))
    return SetOfMarks(image=_png(image), table=trim_table(MARKS_HEADER, rows, max_tokens), centers=centers)


def _kept_node(element: ET.Element, include_unnamed_images: bool) -> TreeNode | None:
    tag = element.tag
    if not (tag.startswith(_KEPT_TAG_PREFIXES) or tag.endswith(_KEPT_TAG_SUFFIXES) or tag in _KEPT_TAGS):
        return None
    if not (_state(element, "showing") and _state(element, "visible")):
        return None
    if not any(_state(element, state) for state in _ACTIONABLE_STATES):
        return None
    name, text = element.get("name", ""), element.text or ""
    if not (name or text or include_unnamed_images and element.get("image") == "true"):
        return None
    position = _parse_pair(element.get(f"{{{COMPONENT_NS}}}screencoord"))
    size = _parse_pair(element.get(f"{{{COMPONENT_NS}}}size"))
    if position is None or size is None or position[0] < 0 or position[1] < 0 or size[0] <= 0 or size[1] <= 0:
        return None
    return TreeNode(tag=tag, name=name, text=text,
                    class_name=element.get(f"{{{ATTRIBUTES_NS}}}class", ""),
                    description=element.get(f"{{{ATTRIBUTES_NS}}}description", ""),
                    x=position[0], y=position[1], width=size[0], height=size[1])


def _state(element: ET.Element, name: str) -> bool:
    return element.get(f"{{{STATE_NS}}}{name}") == "true"


def _parse_pair(value: str | None) -> tuple[int, int] | None:
    match = _PAIR.match(value or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def _pair(first: int, second: int, scale: float) -> str:
    return f"({round(first * scale)}, {round(second * scale)})"


def _cell(value: str) -> str:
    """A table cell; quoted CSV-style when it holds a tab, line break or quote, so rows stay rows."""
    if any(c in value for c in '\t\n\r"'):
        return '"' + value.replace('"', '""') + '"'
    return value


def _text_cell(text: str) -> str:
    # An empty text shows as "" (as in the paper's table), telling the model the node has none.
    return _cell(text) if text else '""'


def _row(*cells: str) -> str:
    return "\t".join(cells)


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _mark_font() -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=_MARK_FONT_SIZE)
    except TypeError:  # Pillow < 10.1 has only the small fixed-size bitmap font
        return ImageFont.load_default()


def _draw_mark(draw: ImageDraw.ImageDraw, font, number: int, box: tuple[int, int, int, int],
               image_size: tuple[int, int]) -> None:
    colour = _MARK_COLOURS[(number - 1) % len(_MARK_COLOURS)]
    draw.rectangle(box, outline=colour, width=2)
    label = str(number)
    text_left, text_top, text_right, text_bottom = draw.textbbox((0, 0), label, font=font)
    width, height = text_right - text_left + 4, text_bottom - text_top + 2
    # The label sits above the box's top-left corner, or inside it when the box touches the top edge.
    left = min(box[0], image_size[0] - width)
    top = box[1] - height if box[1] >= height else box[1]
    draw.rectangle((left, top, left + width - 1, top + height - 1), fill=colour)
    draw.text((left + 2 - text_left, top + 1 - text_top), label, fill=(255, 255, 255), font=font)
