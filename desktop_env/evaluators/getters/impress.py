"""Getters that pull media out of a presentation the agent saved (via python-pptx)."""
from __future__ import annotations

import zipfile
from pathlib import Path

from ...safe_paths import check_basename
from ..archives import check_zip_file
from ..context import EvalContext
from ..registry import getter, requires
from .files import cache_target, desktop_file, getter_field, save_in_cache

AUDIO_RELS = ("/relationships/audio", "/relationships/media")
IMAGE_REL = "/relationships/image"
R_EMBED = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed"
BLIP = "{http://schemas.openxmlformats.org/drawingml/2006/main}blip"


def _slide(ctx: EvalContext, config: dict):
    """The requested slide of the fetched presentation, or None when there is no such file/slide."""
    from pptx import Presentation
    from pptx.exc import PackageNotFoundError

    check_basename(config["ppt_file_path"], f"{getter_field(ctx, config)}.ppt_file_path", ctx.task_file)
    cache_target(ctx, config, config["dest"])  # refused before the desktop is asked
    local = desktop_file(ctx, config["ppt_file_path"], Path(config["ppt_file_path"]).name)
    if local is None:
        return None
    try:
        check_zip_file(local)
        slides = Presentation(local).slides
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError):
        return None
    index = int(config.get("slide_index", 0))
    return slides[index] if 0 <= index < len(slides) else None


def _save(ctx: EvalContext, config: dict, blob: bytes) -> str:
    return save_in_cache(ctx, config, config["dest"], blob)


@getter("audio_in_slide")
@requires("ppt_file_path", "dest")
def audio_in_slide(ctx: EvalContext, config: dict) -> str | None:
    """The audio embedded in slide `slide_index`, saved as `dest`; None when the slide has none."""
    slide = _slide(ctx, config)
    if slide is None:
        return None
    for rel in slide.part.rels.values():
        if rel.reltype.endswith(AUDIO_RELS) and not rel.is_external:
            return _save(ctx, config, rel.target_part.blob)
    return None


@getter("background_image_in_slide")
@requires("ppt_file_path", "dest")
def background_image_in_slide(ctx: EvalContext, config: dict) -> str | None:
    """The picture filling slide `slide_index`'s background (its own, else its layout's or master's)."""
    slide = _slide(ctx, config)
    if slide is None:
        return None
    for part_owner in (slide, slide.slide_layout, slide.slide_layout.slide_master):
        background = part_owner._element.cSld.bg
        if background is None:
            continue
        for blip in background.iter(BLIP):
            rel_id = blip.get(R_EMBED)
            if rel_id and rel_id in part_owner.part.rels:
                return _save(ctx, config, part_owner.part.rels[rel_id].target_part.blob)
    return None
