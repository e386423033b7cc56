"""A cell's colours as aRGB text: rgb as written, indexed colours from Office's table, theme colours through
the book's own theme (tinted), so an Excel file's theme colour equals the rgb LibreOffice writes."""
from __future__ import annotations

import colorsys
import re
from xml.etree import ElementTree

_DRAWING_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
# The colour scheme of Office's default theme, in the file's order (dk1, lt1, dk2, lt2,
# accent1..6, hlink, folHlink): what a workbook without a theme part shows.
_DEFAULT_SCHEME = ("000000", "FFFFFF", "1F497D", "EEECE1", "4F81BD", "C0504D", "9BBB59",
                   "8064A2", "4BACC6", "F79646", "0000FF", "800080")


def _theme_palette(workbook) -> list[str]:
    """RGB of theme colours 0, 1, 2, ... as cells number them (light 1 before dark 1)."""
    scheme = list(_DEFAULT_SCHEME)
    if workbook.loaded_theme:
        try:
            theme = ElementTree.fromstring(workbook.loaded_theme)
        except ElementTree.ParseError:
            theme = None
        colors = theme.find(f".//{{{_DRAWING_NS}}}clrScheme") if theme is not None else None
        for i, entry in enumerate(list(colors)[:12] if colors is not None else []):
            for child in entry:
                value = child.get("lastClr") or child.get("val")
                if value and re.fullmatch(r"[0-9A-Fa-f]{6}", value):
                    scheme[i] = value.upper()
    scheme[0], scheme[1], scheme[2], scheme[3] = scheme[1], scheme[0], scheme[3], scheme[2]
    return scheme


def _tinted(rgb: str, tint: float) -> str:
    red, green, blue = (int(rgb[i:i + 2], 16) / 255 for i in (0, 2, 4))
    hue, lightness, saturation = colorsys.rgb_to_hls(red, green, blue)
    lightness = lightness * (1 + tint) if tint < 0 else lightness * (1 - tint) + tint
    channels = colorsys.hls_to_rgb(hue, lightness, saturation)
    return "".join(f"{round(channel * 255):02X}" for channel in channels)


def _color(color, palette: list[str] | None = None) -> str | None:
    """aRGB text, e.g. FFFF0000 for red. Indexed and theme colours are resolved (the theme
    through the book's palette), so an Excel file's theme colour equals LibreOffice's rgb."""
    from openpyxl.styles.colors import COLOR_INDEX
    if color is None:
        return None
    if color.type == "rgb":
        return color.rgb
    if color.type == "indexed":
        index = color.indexed
        return f"FF{COLOR_INDEX[index][2:]}" if 0 <= index < 64 else f"indexed:{index}"
    if color.type == "theme" and palette and 0 <= color.theme < len(palette):
        return "FF" + _tinted(palette[color.theme], color.tint or 0.0)
    return f"{color.type}:{color.value}"


def _fill_color(fill, differential: bool, palette: list[str] | None) -> str | None:
    # A solid cell fill shows its fgColor; a conditional format's fill (dxf) shows bgColor.
    if fill is None:
        return None
    fg = _color(getattr(fill, "fgColor", None), palette)
    bg = _color(getattr(fill, "bgColor", None), palette)
    if differential:
        return bg if bg not in (None, "00000000") or fg in (None, "00000000") else fg
    return fg
