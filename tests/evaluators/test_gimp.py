"""GIMP image metrics on real image files made with Pillow the way an edit would."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageEnhance, ImageFilter

from desktop_env.evaluators import registry
from desktop_env.evaluators.metrics import gimp


def photo(width: int = 160, height: int = 120) -> Image.Image:
    """A small asymmetric 'photo': smooth gradients, mild grain and a few shapes."""
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:height, 0:width]
    channels = [60 + 120 * x / width, 40 + 100 * y / height,
                120 + 60 * np.sin(x / 9.0) * np.cos(y / 13.0)]
    pixels = np.stack(channels, axis=2) + rng.normal(0, 2, (height, width, 3))
    img = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(img)
    draw.ellipse((15, 20, 70, 75), fill=(200, 40, 40))
    draw.rectangle((95, 60, 150, 110), fill=(30, 160, 60))
    draw.polygon([(100, 10), (140, 15), (120, 45)], fill=(240, 220, 30))
    return img


def unrelated(width: int = 160, height: int = 120) -> Image.Image:
    return Image.effect_mandelbrot((width, height), (-2, -1.5, 1, 1.5), 100).convert("RGB")


def scale_saturation(img: Image.Image, factor: float) -> Image.Image:
    """Like GIMP's Hue-Saturation: scales S and keeps hue and value."""
    hsv = np.asarray(img.convert("HSV")).astype(np.float64)
    hsv[..., 1] = np.clip(hsv[..., 1] * factor, 0, 255)
    return Image.fromarray(hsv.astype(np.uint8), "HSV").convert("RGB")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Paths of the original photo and its edited variants, saved as an app would."""
    folder = tmp_path_factory.mktemp("images")
    original = photo()
    variants = {
        "original.png": original,
        "original.jpg": original,
        "darker.png": ImageEnhance.Brightness(original).enhance(0.6),
        "brighter.png": ImageEnhance.Brightness(original).enhance(1.4),
        "saturated.png": scale_saturation(original, 1.5),
        "desaturated.png": scale_saturation(original, 0.5),
        "more_contrast.png": ImageEnhance.Contrast(original).enhance(1.5),
        "less_contrast.png": ImageEnhance.Contrast(original).enhance(0.6),
        "sharper.png": original.filter(ImageFilter.SHARPEN),
        "blurred.png": original.filter(ImageFilter.GaussianBlur(2)),
        "mirrored.png": original.transpose(Image.Transpose.FLIP_LEFT_RIGHT),
        "double_size.png": original.resize((320, 240), Image.Resampling.LANCZOS),
        "unrelated.png": unrelated(),
        "unrelated_darker.png": ImageEnhance.Brightness(unrelated()).enhance(0.6),
        "palette.png": original.convert("P", palette=Image.Palette.ADAPTIVE, colors=256),
    }
    paths = {}
    for name, img in variants.items():
        path = folder / name
        img.save(path, quality=95) if name.endswith(".jpg") else img.save(path)
        paths[name] = str(path)
    corrupt = folder / "corrupt.png"
    corrupt.write_bytes(b"\x89PNG\r\n\x1a\n this is not really a png")
    paths["corrupt.png"] = str(corrupt)
    paths["missing.png"] = str(folder / "missing.png")
    paths["folder"] = str(folder)
    return paths


def test_metrics_are_registered_under_osworld_names():
    for name in ("check_structure_sim", "check_brightness_decrease_and_structure_sim",
                 "check_config_status", "compare_image_list", "check_image_size"):
        assert registry.get_metric(name) is getattr(gimp, name)


@pytest.mark.parametrize("func", [
    gimp.check_structure_sim, gimp.check_structure_sim_with_threshold,
    gimp.check_structure_sim_resized, gimp.check_file_exists_and_structure_sim,
    gimp.check_palette_and_structure_sim, gimp.check_image_mirror,
    gimp.check_brightness_decrease_and_structure_sim,
    gimp.check_saturation_increase_and_structure_sim,
    gimp.check_contrast_increase_and_structure_sim, gimp.check_sharper,
    gimp.increase_saturation, gimp.decrease_brightness, gimp.check_green_background,
    gimp.compare_triangle_positions, gimp.compare_image_list,
])
@pytest.mark.parametrize("bad", [None, "missing.png", "corrupt.png"])
def test_two_image_metrics_score_0_on_absent_or_broken_result(files, func, bad):
    result = files.get(bad)
    assert func(result, files["original.png"]).score == 0.0
    assert func(files["original.png"], result).score == 0.0


@pytest.mark.parametrize("func", [gimp.check_triangle_position, gimp.check_textbox_on_leftside])
@pytest.mark.parametrize("bad", [None, "missing.png", "corrupt.png"])
def test_one_image_metrics_score_0_on_absent_or_broken_result(files, func, bad):
    assert func(files.get(bad)).score == 0.0


# ---------------------------------------------------------------- structure

def test_structure_sim_accepts_a_lossless_copy_and_rejects_another_picture(files):
    assert gimp.check_structure_sim(files["original.png"], files["original.jpg"]).score == 1.0
    assert gimp.check_structure_sim(files["unrelated.png"], files["original.png"]).score == 0.0


def test_structure_sim_needs_equal_sizes(files):
    assert gimp.check_structure_sim(files["double_size.png"], files["original.png"]).score == 0.0


def test_structure_sim_with_threshold_resizes_and_honours_the_threshold(files):
    assert gimp.check_structure_sim_with_threshold(
        files["double_size.png"], files["original.png"], ssim_threshold=0.85).score == 1.0
    assert gimp.check_structure_sim_with_threshold(
        files["unrelated.png"], files["original.png"], ssim_threshold=0.85).score == 0.0
    # The JPEG copy is close but not identical: a near-1 threshold rejects it.
    assert gimp.check_structure_sim_with_threshold(files["original.jpg"], files["original.png"]).score == 1.0
    assert gimp.check_structure_sim_with_threshold(
        files["original.jpg"], files["original.png"], ssim_threshold=0.999).score == 0.0


def test_transparent_pixels_count_as_black_whatever_colour_they_hide(tmp_path):
    """A script that only zeroes alpha and GIMP, which also zeroes the colour, both match."""
    sprite = np.zeros((64, 64, 4), dtype=np.uint8)
    sprite[..., :3] = (90, 200, 250)  # sky-blue background, about to be made transparent
    sprite[16:48, 20:44] = (200, 60, 30, 255)
    sprite[16:48, 20:44, 1] = np.linspace(0, 200, 24, dtype=np.uint8)
    script_output = sprite.copy()
    script_output[..., 3] = np.where(sprite[..., 3] == 255, 255, 0)
    gimp_output = script_output.copy()
    gimp_output[script_output[..., 3] == 0] = 0
    with_background = sprite.copy()
    with_background[..., 3] = 255
    paths = {}
    for name, pixels in [("script", script_output), ("gimp", gimp_output),
                         ("not_extracted", with_background)]:
        paths[name] = str(tmp_path / f"{name}.png")
        Image.fromarray(pixels, "RGBA").save(paths[name])
    assert gimp.check_structure_sim_with_threshold(paths["script"], paths["gimp"]).score == 1.0
    assert gimp.check_structure_sim_with_threshold(paths["not_extracted"], paths["gimp"]).score == 0.0


def test_structure_sim_resized_compares_the_opaque_content(tmp_path, files):
    """A layer scaled down on a transparent canvas, as GIMP exports it."""
    canvas = Image.new("RGBA", (300, 300), (0, 0, 0, 0))
    canvas.paste(photo().resize((80, 60)).convert("RGBA"), (40, 100))
    layer = tmp_path / "resized.png"
    canvas.save(layer)
    assert gimp.check_structure_sim_resized(str(layer), files["original.png"]).score == 1.0
    other = Image.new("RGBA", (300, 300), (0, 0, 0, 0))
    other.paste(unrelated().resize((80, 60)).convert("RGBA"), (40, 100))
    other.save(tmp_path / "other.png")
    assert gimp.check_structure_sim_resized(str(tmp_path / "other.png"), files["original.png"]).score == 0.0
    Image.new("RGBA", (50, 50), (0, 0, 0, 0)).save(tmp_path / "empty.png")
    assert gimp.check_structure_sim_resized(str(tmp_path / "empty.png"), files["original.png"]).score == 0.0


def test_file_exists_and_structure_sim(files):
    assert gimp.check_file_exists_and_structure_sim(files["original.jpg"], files["original.png"]).score == 1.0
    assert gimp.check_file_exists_and_structure_sim(files["unrelated.png"], files["original.png"]).score == 0.0


def test_palette_check_wants_indexed_colour(files):
    assert gimp.check_palette_and_structure_sim(files["palette.png"], files["original.png"]).score == 1.0
    assert gimp.check_palette_and_structure_sim(files["original.png"], files["original.png"]).score == 0.0


def test_image_mirror(files):
    assert gimp.check_image_mirror(files["mirrored.png"], files["original.png"]).score == 1.0
    assert gimp.check_image_mirror(files["original.png"], files["original.png"]).score == 0.0


def test_image_mirror_of_a_jpeg_exported_as_png(tmp_path, files):
    decoded = Image.open(files["original.jpg"]).transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    decoded.save(tmp_path / "berry_mirror.png")
    assert gimp.check_image_mirror(str(tmp_path / "berry_mirror.png"), files["original.jpg"]).score == 1.0


# ---------------------------------------------------------------- adjustments

def test_brightness_decrease(files):
    assert gimp.check_brightness_decrease_and_structure_sim(
        files["darker.png"], files["original.png"]).score == 1.0
    assert gimp.check_brightness_decrease_and_structure_sim(
        files["brighter.png"], files["original.png"]).score == 0.0
    assert gimp.check_brightness_decrease_and_structure_sim(
        files["unrelated_darker.png"], files["original.png"]).score == 0.0


def test_brightness_task_that_wants_brighter_passes_the_files_swapped(files):
    """multi_apps 4c26e3f3: result = original, expected = the agent's brightened image."""
    assert gimp.check_brightness_decrease_and_structure_sim(
        files["original.png"], files["brighter.png"], threshold=0.15).score == 1.0
    assert gimp.check_brightness_decrease_and_structure_sim(
        files["original.png"], files["darker.png"], threshold=0.15).score == 0.0


def test_brightness_threshold_option_loosens_the_structure_check(tmp_path, files):
    edited = photo()
    ImageDraw.Draw(edited).rectangle((0, 0, 40, 60), fill=(250, 250, 250))
    ImageEnhance.Brightness(edited).enhance(0.6).save(tmp_path / "edited_darker.png")
    darker_but_edited = str(tmp_path / "edited_darker.png")
    assert gimp.check_brightness_decrease_and_structure_sim(darker_but_edited, files["original.png"]).score == 0.0
    assert gimp.check_brightness_decrease_and_structure_sim(
        darker_but_edited, files["original.png"], threshold=0.15).score == 1.0


def test_saturation_increase(files):
    assert gimp.check_saturation_increase_and_structure_sim(
        files["saturated.png"], files["original.png"]).score == 1.0
    assert gimp.check_saturation_increase_and_structure_sim(
        files["desaturated.png"], files["original.png"]).score == 0.0
    assert gimp.check_saturation_increase_and_structure_sim(
        files["original.png"], files["unrelated.png"]).score == 0.0


def test_contrast_increase(files):
    assert gimp.check_contrast_increase_and_structure_sim(
        files["more_contrast.png"], files["original.png"]).score == 1.0
    assert gimp.check_contrast_increase_and_structure_sim(
        files["less_contrast.png"], files["original.png"]).score == 0.0


def test_sharper(files):
    assert gimp.check_sharper(files["sharper.png"], files["original.png"]).score == 1.0
    assert gimp.check_sharper(files["blurred.png"], files["original.png"]).score == 0.0


def test_increase_saturation_and_decrease_brightness_compare_first_to_second(files):
    assert gimp.increase_saturation(files["original.png"], files["saturated.png"]).score == 1.0
    assert gimp.increase_saturation(files["original.png"], files["desaturated.png"]).score == 0.0
    assert gimp.decrease_brightness(files["original.png"], files["darker.png"]).score == 1.0
    assert gimp.decrease_brightness(files["original.png"], files["brighter.png"]).score == 0.0


# ---------------------------------------------------------------- geometry and content

def test_image_size(files):
    assert gimp.check_image_size(files["original.png"], {"width": 160, "height": 120}).score == 1.0
    assert gimp.check_image_size(files["original.png"], {"height": 120}).score == 1.0
    assert gimp.check_image_size(files["original.png"], {"height": 128, "width": 128}).score == 0.0
    assert gimp.check_image_size(None, {"height": 120}).score == 0.0
    assert gimp.check_image_size(files["corrupt.png"], {"height": 120}).score == 0.0


def test_image_size_ignore_transparent_measures_the_layer_content(tmp_path):
    canvas = Image.new("RGBA", (700, 700), (0, 0, 0, 0))
    canvas.paste(Image.new("RGBA", (384, 512), (120, 80, 40, 255)), (100, 90))
    canvas.save(tmp_path / "resized.png")
    path = str(tmp_path / "resized.png")
    assert gimp.check_image_size(path, {"height": 512, "ignore_transparent": True}).score == 1.0
    assert gimp.check_image_size(path, {"height": 512}).score == 0.0


def test_image_file_size(files):
    assert gimp.check_image_file_size(files["original.jpg"], {"max_size": 600000}).score == 1.0
    assert gimp.check_image_file_size(files["original.png"], {"max_size": 100}).score == 0.0
    assert gimp.check_image_file_size(files["missing.png"], {"max_size": 600000}).score == 0.0
    assert gimp.check_image_file_size(None, {"max_size": 600000}).score == 0.0


def triangle_picture(path, centre_x: int, centre_y: int, size=(200, 150)):
    img = Image.new("RGB", size, (255, 255, 255))
    ImageDraw.Draw(img).polygon(
        [(centre_x - 20, centre_y + 13), (centre_x + 20, centre_y + 13), (centre_x, centre_y - 27)],
        fill=(250, 220, 20))
    img.save(path)
    return str(path)


def test_triangle_position(tmp_path):
    centred = triangle_picture(tmp_path / "centred.png", 100, 75)
    corner = triangle_picture(tmp_path / "corner.png", 40, 40)
    assert gimp.check_triangle_position(centred).score == 1.0
    assert gimp.check_triangle_position(corner).score == 0.0
    Image.new("RGB", (50, 50), "white").save(tmp_path / "blank.png")
    assert gimp.check_triangle_position(str(tmp_path / "blank.png")).score == 0.0


def test_compare_triangle_positions(tmp_path):
    centred = triangle_picture(tmp_path / "centred.png", 100, 75)
    corner = triangle_picture(tmp_path / "corner.png", 40, 40)
    assert gimp.compare_triangle_positions(corner, centred).score == 1.0
    assert gimp.compare_triangle_positions(centred, corner).score == 0.0


def test_textbox_on_leftside(tmp_path):
    for name, x in [("left", 3), ("middle", 90)]:
        img = Image.new("RGB", (200, 100), (230, 230, 200))
        ImageDraw.Draw(img).rectangle((x, 40, x + 60, 55), fill=(10, 10, 10))
        img.save(tmp_path / f"{name}.png")
    assert gimp.check_textbox_on_leftside(str(tmp_path / "left.png")).score == 1.0
    assert gimp.check_textbox_on_leftside(str(tmp_path / "middle.png")).score == 0.0


def test_green_background_on_a_wide_image(tmp_path):
    def picture(background, name):
        img = Image.new("RGB", (240, 120), background)
        ImageDraw.Draw(img).ellipse((90, 20, 170, 100), fill=(0, 0, 0))
        img.save(tmp_path / name)
        return str(tmp_path / name)

    reference = picture((255, 255, 255), "white_background_with_object.png")
    assert gimp.check_green_background(picture((40, 200, 60), "green.png"), reference).score == 1.0
    assert gimp.check_green_background(picture((200, 200, 200), "grey.png"), reference).score == 0.0


# ---------------------------------------------------------------- files and lists

def test_compare_image_list(tmp_path, files):
    copies = []
    for name in ("original.png", "unrelated.png"):
        copy = tmp_path / f"copy_{name}"
        Image.open(files[name]).save(copy)
        copies.append(str(copy))
    golds = [files["original.png"], files["unrelated.png"]]
    assert gimp.compare_image_list(copies, golds).score == 1.0
    assert gimp.compare_image_list(copies[0], golds[0]).score == 1.0
    assert gimp.compare_image_list(list(reversed(copies)), golds).score == 0.0
    assert gimp.compare_image_list(copies[:1], golds).score == 0.0
    assert gimp.compare_image_list([copies[0], None], golds).score == 0.0
    assert gimp.compare_image_list([], []).score == 0.0


def test_compare_image_list_ignores_mode_only_differences(tmp_path, files):
    Image.open(files["original.png"]).convert("RGBA").save(tmp_path / "rgba.png")
    assert gimp.compare_image_list(str(tmp_path / "rgba.png"), files["original.png"]).score == 1.0


# ---------------------------------------------------------------- GIMP settings

GIMPRC = """\
# GIMP gimprc
#
# This is your personal gimprc file.  Any variable defined in this file takes
# precedence over the value defined in the system-wide gimprc.

(theme "Light")
(undo-levels 100)
(layer-new-name "Square")
(default-view
    (show-menubar yes)
    (padding-mode light-check))

# end of gimprc
"""

SESSIONRC = """\
# GIMP sessionrc

(session-info "toplevel"
    (factory-entry "image-window")
    (position 0 0)
    (size 1920 1043))
(hide-docks yes)
(single-window-mode yes)

# end of sessionrc
"""


@pytest.fixture()
def gimp_config(tmp_path):
    (tmp_path / "gimprc").write_text(GIMPRC)
    (tmp_path / "sessionrc").write_text(SESSIONRC)
    return tmp_path


@pytest.mark.parametrize("file_name, rule", [
    ("gimprc", {"type:": "key-value", "key": "theme", "value": "\"Light\""}),
    ("gimprc", {"type:": "key-value", "key": "undo-levels", "value": "100"}),
    ("gimprc", {"type:": "key-value", "key": "layer-new-name", "value": "\"Square\""}),
    ("sessionrc", {"type:": "key-value", "key": "hide-docks", "value": "yes"}),
    ("gimprc", {"key": "theme", "value": "Light"}),
    ("sessionrc", {"key": ["size", "1920"], "value": "1043"}),
])
def test_config_status_finds_the_setting(gimp_config, file_name, rule):
    assert gimp.check_config_status(str(gimp_config / file_name), rule).score == 1.0


@pytest.mark.parametrize("file_name, rule", [
    ("gimprc", {"key": "theme", "value": "\"Dark\""}),
    ("gimprc", {"key": "undo-levels", "value": "5"}),
    ("sessionrc", {"key": "hide-docks", "value": "yes-please"}),
    ("gimprc", {"key": "hide-docks", "value": "yes"}),
    ("sessionrc", {"key": ["size", "1043"], "value": "1043"}),
])
def test_config_status_rejects_other_values(gimp_config, file_name, rule):
    assert gimp.check_config_status(str(gimp_config / file_name), rule).score == 0.0


def test_config_status_without_a_file_scores_0(gimp_config):
    rule = {"key": "theme", "value": "\"Light\""}
    assert gimp.check_config_status(None, rule).score == 0.0
    assert gimp.check_config_status(str(gimp_config / "nope"), rule).score == 0.0
    assert gimp.check_config_status(str(gimp_config / "gimprc"), None).score == 0.0
