"""Image metrics for the GIMP tasks (and image checks other domains borrow).

Calling convention as in OSWorld: `metric(result, expected, option=...)`, where
`result` is usually the local path of the image the agent saved and `expected`
either a reference image path or a `rules` dict. Several GIMP metrics name their
arguments (src, tgt) and the task files put the agent's file first; e.g.
check_brightness_decrease_and_structure_sim(src, tgt) scores 1 when `src` is
darker than `tgt` (a task that wants a *brighter* image simply swaps the order).

Every metric returns a MetricResult (the score and what was measured); it gives
0, never raises, when an input is None, missing or not an image, and says which.

"Structure similar" means SSIM >= a threshold on 8-bit RGB, as in OSWorld
(7x7 window, 0.9 unless a metric says otherwise). One deliberate difference:
OSWorld drops the alpha channel, so it compares whatever colour values sit
under fully transparent pixels (GIMP writes black there, many scripts keep the
old colours). We composite transparent images onto black first, which equals
OSWorld on GIMP's own exports and stops invisible pixels deciding the score.
"""
from __future__ import annotations

import logging
import os
import shlex
from collections.abc import Iterable
from typing import Any

import numpy as np
from PIL import Image, ImageChops, UnidentifiedImageError

from ..outcome import MetricResult, failed, passed, show, verdict
from ..registry import metric

logger = logging.getLogger("desktopenv.metrics.gimp")

DEFAULT_SSIM_THRESHOLD = 0.9
# Errors Pillow raises on a file that is not a (complete) image.
_IMAGE_ERRORS = (UnidentifiedImageError, OSError, ValueError, SyntaxError,
                 Image.DecompressionBombError)


# ---------------------------------------------------------------- helpers

def open_image(path: Any) -> Image.Image | None:
    """The fully decoded image at `path` (first frame), or None if there is none."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    try:
        with Image.open(path) as img:
            img.load()
            return img.copy()
    except _IMAGE_ERRORS as exc:
        logger.warning("cannot read image %s: %s", path, exc)
        return None


def has_alpha(img: Image.Image) -> bool:
    return img.mode in ("RGBA", "LA", "PA") or "transparency" in img.info


def to_rgb(img: Image.Image) -> Image.Image:
    """RGB view of `img`; transparent pixels become black (see module doc)."""
    if not has_alpha(img):
        return img.convert("RGB")
    rgba = np.asarray(img.convert("RGBA"), dtype=np.float32)
    premultiplied = rgba[..., :3] * (rgba[..., 3:] / 255.0)
    return Image.fromarray(np.round(premultiplied).astype(np.uint8), "RGB")


def ssim(img1: Image.Image, img2: Image.Image) -> float | None:
    """SSIM of two equally sized images over their RGB channels; None if not comparable.

    The window is 7x7 like skimage's default, shrunk to the largest odd size that
    fits an image smaller than 7 pixels on a side (OSWorld does the same).
    """
    from skimage.metrics import structural_similarity

    if img1.size != img2.size:
        return None
    a, b = np.asarray(to_rgb(img1)), np.asarray(to_rgb(img2))
    window = min(7, *a.shape[:2])
    window -= 1 - window % 2  # nearest odd size not above
    if window < 3:
        return None
    return float(structural_similarity(a, b, win_size=window, channel_axis=2, data_range=255))


def mean_brightness(img: Image.Image) -> float:
    return float(np.asarray(to_rgb(img).convert("L"), dtype=np.float64).mean())


def normalize_brightness(img: Image.Image, target: float = 128.0) -> Image.Image:
    """Scales every channel so the mean grey level becomes `target` (clipped at 255)."""
    rgb = to_rgb(img)
    current = mean_brightness(rgb)
    if current == 0:  # an all-black image stays black
        return rgb
    scaled = np.asarray(rgb, dtype=np.float64) * (target / current)
    return Image.fromarray(np.clip(scaled, 0, 255).astype(np.uint8), "RGB")


def mean_squared_error(img1: Image.Image, img2: Image.Image) -> float:
    """MSE of RGB values in [0, 1]; `img1` is resized to `img2`'s size first."""
    if img1.size != img2.size:
        img1 = img1.resize(img2.size, Image.Resampling.LANCZOS)
    a = np.asarray(to_rgb(img1), dtype=np.float64) / 255
    b = np.asarray(to_rgb(img2), dtype=np.float64) / 255
    return float(np.mean((a - b) ** 2))


def mean_saturation(img: Image.Image) -> float:
    return float(np.asarray(to_rgb(img).convert("HSV"))[..., 1].mean())


def contrast(img: Image.Image) -> float:
    """Standard deviation of all RGB values (OSWorld's contrast measure)."""
    return float(np.asarray(to_rgb(img), dtype=np.float64).std())


def sharpness(img: Image.Image) -> float:
    """Variance of the grey image's 4-neighbour Laplacian (what cv2.Laplacian gives)."""
    from scipy.ndimage import laplace

    grey = np.asarray(to_rgb(img).convert("L"), dtype=np.float64)
    return float(laplace(grey, mode="mirror").var())


def crop_to_opaque(img: Image.Image) -> Image.Image | None:
    """`img` cropped to its non-transparent pixels; None if it is all transparent."""
    if not has_alpha(img):
        return img
    rgba = img.convert("RGBA")
    bbox = rgba.getchannel("A").getbbox()
    return rgba.crop(bbox) if bbox else None


def _images(*paths: Any) -> list[Image.Image] | None:
    images = [open_image(p) for p in paths]
    opened = [i for i in images if i is not None]
    return opened if len(opened) == len(images) else None


def _no_image(*paths: Any) -> MetricResult:
    """The 0 for a missing or unreadable image, naming the first such file."""
    for i, path in enumerate(paths):
        if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
            return failed(f"image {i + 1} {show(path)} does not exist")
        if open_image(path) is None:
            return failed(f"image {i + 1} {os.path.basename(path)} is not a readable image")
    return failed("an image cannot be read")


def _ssim_said(img1: Image.Image, img2: Image.Image, threshold: float = DEFAULT_SSIM_THRESHOLD) -> tuple[bool, str]:
    """Whether two images are structure-similar, and the sentence saying so."""
    score = ssim(img1, img2)
    if score is None:
        return False, f"the images cannot be compared (sizes {img1.size} vs {img2.size})"
    return score >= threshold, f"SSIM {score:.3f} (needs {threshold:g})"


def _rule(rule: Any) -> dict:
    return rule if isinstance(rule, dict) else {}


# ---------------------------------------------------------------- structure

@metric("check_structure_sim")
def check_structure_sim(src_path: str | None, tgt_path: str | None) -> MetricResult:
    """1 if both images have the same size and SSIM >= 0.9."""
    images = _images(src_path, tgt_path)
    if images is None:
        return _no_image(src_path, tgt_path)
    src, tgt = images
    return verdict(*_ssim_said(src, tgt))


@metric("check_structure_sim_with_threshold")
def check_structure_sim_with_threshold(src_path: str | None, tgt_path: str | None,
                                       ssim_threshold: float = 0.85) -> MetricResult:
    """1 if SSIM >= `ssim_threshold` (default 0.85) after resizing src to tgt's size."""
    images = _images(src_path, tgt_path)
    if images is None:
        return _no_image(src_path, tgt_path)
    src, tgt = images
    if src.size != tgt.size:
        src = src.resize(tgt.size, Image.Resampling.LANCZOS)
    return verdict(*_ssim_said(src, tgt, float(ssim_threshold)))


@metric("check_structure_sim_resized")
def check_structure_sim_resized(src_path: str | None, tgt_path: str | None) -> MetricResult:
    """1 if src, cropped to its opaque content and scaled to tgt's size, has SSIM >= 0.9."""
    images = _images(src_path, tgt_path)
    if images is None:
        return _no_image(src_path, tgt_path)
    src, tgt = images
    content = crop_to_opaque(src)
    if content is None:
        return failed("the image is fully transparent")
    return verdict(*_ssim_said(content.resize(tgt.size), tgt))


@metric("check_file_exists_and_structure_sim")
def check_file_exists_and_structure_sim(src_path: str | None, tgt_path: str | None) -> MetricResult:
    """1 if the exported file exists and looks like the reference (SSIM >= 0.9)."""
    return check_structure_sim(src_path, tgt_path)  # its MetricResult says which it was


@metric("check_palette_and_structure_sim")
def check_palette_and_structure_sim(src_path: str | None, tgt_path: str | None) -> MetricResult:
    """1 if src is an indexed-colour (palette) image and looks like tgt (SSIM >= 0.9)."""
    images = _images(src_path, tgt_path)
    if images is None:
        return _no_image(src_path, tgt_path)
    src, tgt = images
    if src.mode != "P":
        return failed(f"the image is in mode {src.mode}, not indexed colour (P)")
    return verdict(*_ssim_said(src, tgt))


@metric("check_image_mirror")
def check_image_mirror(src_path: str | None, tgt_path: str | None) -> MetricResult:
    """1 if src is tgt flipped left-right (SSIM >= 0.99, GIMP's flip is not bit-exact)."""
    images = _images(src_path, tgt_path)
    if images is None:
        return _no_image(src_path, tgt_path)
    src, tgt = images
    ok, said = _ssim_said(src.transpose(Image.Transpose.FLIP_LEFT_RIGHT), tgt, 0.99)
    return verdict(ok, f"mirrored image against the original: {said}")


# ---------------------------------------------------------------- adjustments

@metric("check_brightness_decrease_and_structure_sim")
def check_brightness_decrease_and_structure_sim(src_path: str | None, tgt_path: str | None,
                                                threshold: float = 0.03) -> MetricResult:
    """1 if src is darker than tgt and, once both are scaled to the same mean
    brightness, their MSE is below `threshold` (default 0.03)."""
    images = _images(src_path, tgt_path)
    if images is None:
        return _no_image(src_path, tgt_path)
    src, tgt = images
    if not mean_brightness(src) < mean_brightness(tgt):
        return failed(f"mean brightness {mean_brightness(src):.1f} is not below the original's "
                      f"{mean_brightness(tgt):.1f}")
    mse = mean_squared_error(normalize_brightness(src), normalize_brightness(tgt))
    return verdict(mse < float(threshold), f"darker ({mean_brightness(src):.1f} vs {mean_brightness(tgt):.1f}); "
                                           f"MSE at equal brightness {mse:.4f} (needs below {float(threshold):g})")


@metric("check_saturation_increase_and_structure_sim")
def check_saturation_increase_and_structure_sim(src_path: str | None, tgt_path: str | None) -> MetricResult:
    """1 if src is more saturated than tgt while its hue and value channels each
    keep SSIM >= 0.9 with tgt's."""
    images = _images(src_path, tgt_path)
    if images is None:
        return _no_image(src_path, tgt_path)
    src, tgt = images
    if not mean_saturation(src) > mean_saturation(tgt):
        return failed(f"mean saturation {mean_saturation(src):.1f} is not above the original's "
                      f"{mean_saturation(tgt):.1f}")
    src_h, _, src_v = to_rgb(src).convert("HSV").split()
    tgt_h, _, tgt_v = to_rgb(tgt).convert("HSV").split()
    hue_ok, hue = _ssim_said(src_h, tgt_h)
    value_ok, value = _ssim_said(src_v, tgt_v)
    return verdict(hue_ok and value_ok, f"more saturated; hue {hue}; value {value}")


@metric("check_contrast_increase_and_structure_sim")
def check_contrast_increase_and_structure_sim(src_path: str | None, tgt_path: str | None) -> MetricResult:
    """1 if src has more contrast (std of RGB values) than tgt and SSIM >= 0.65.

    OSWorld takes the std over all channels of the file as stored, so an RGBA
    export's constant alpha channel dilutes it; we measure RGB only.
    """
    images = _images(src_path, tgt_path)
    if images is None:
        return _no_image(src_path, tgt_path)
    src, tgt = images
    if not contrast(src) > contrast(tgt):
        return failed(f"contrast {contrast(src):.1f} is not above the original's {contrast(tgt):.1f}")
    ok, said = _ssim_said(src, tgt, 0.65)
    return verdict(ok, f"more contrast ({contrast(src):.1f} vs {contrast(tgt):.1f}); {said}")


@metric("check_sharper")
def check_sharper(src_path: str | None, tgt_path: str | None) -> MetricResult:
    """1 if src is sharper (higher Laplacian variance) than tgt."""
    images = _images(src_path, tgt_path)
    if images is None:
        return _no_image(src_path, tgt_path)
    a, b = sharpness(images[0]), sharpness(images[1])
    return verdict(a > b, f"sharpness {a:.1f} vs the original's {b:.1f}")


@metric("increase_saturation")
def increase_saturation(image1_path: str | None, image2_path: str | None) -> MetricResult:
    """1 if the second image is more saturated than the first."""
    images = _images(image1_path, image2_path)
    if images is None:
        return _no_image(image1_path, image2_path)
    a, b = mean_saturation(images[0]), mean_saturation(images[1])
    return verdict(a < b, f"mean saturation {a:.1f} then {b:.1f} (must rise)")


@metric("decrease_brightness")
def decrease_brightness(image1_path: str | None, image2_path: str | None) -> MetricResult:
    """1 if the second image is darker than the first."""
    images = _images(image1_path, image2_path)
    if images is None:
        return _no_image(image1_path, image2_path)
    a, b = mean_brightness(images[0]), mean_brightness(images[1])
    return verdict(a > b, f"mean brightness {a:.1f} then {b:.1f} (must fall)")


# ---------------------------------------------------------------- geometry and content

@metric("check_image_size")
def check_image_size(src_path: str | None, rule: dict | None = None) -> MetricResult:
    """1 if the image's width/height equal `rule["width"]`/`rule["height"]` (each optional).

    With `rule["ignore_transparent"]` the size of the opaque content counts. (OSWorld's
    operator precedence also crops any palette image with a transparent colour even
    without that flag; we crop only when asked.)
    """
    img = open_image(src_path)
    rule = _rule(rule)
    if img is None:
        return _no_image(src_path)
    if rule.get("ignore_transparent"):
        content = crop_to_opaque(img)
        width, height = content.size if content is not None else (0, 0)
    else:
        width, height = img.size
    for key, actual in (("width", width), ("height", height)):
        wanted = rule.get(key)
        if wanted is not None and actual != int(wanted):
            return failed(f"the image is {width}x{height}; {key} {actual}, expected {int(wanted)}")
    return passed(f"the image is {width}x{height}")


@metric("check_image_file_size")
def check_image_file_size(src_path: str | None, rule: dict | None = None) -> MetricResult:
    """1 if the file is smaller than `rule["max_size"]` bytes."""
    max_size = _rule(rule).get("max_size")
    if max_size is None:
        return failed("no rule['max_size'] given")
    if not isinstance(src_path, (str, os.PathLike)) or not os.path.isfile(src_path):
        return failed(f"the file {show(src_path)} does not exist")
    size = os.path.getsize(src_path)
    return verdict(size < float(max_size), f"the file is {size} bytes, expected under {max_size}")


def _second_colour_centroid(img: Image.Image) -> tuple[np.ndarray, np.ndarray] | None:
    """(centroid (row, col), image shape) of the second most common colour.

    The most common colour is taken as the background and the next one as the
    shape drawn on it. (OSWorld sorts colours by ascending count and picks index
    1, i.e. the second *rarest* colour, contradicting its own comment.)
    """
    pixels = np.asarray(to_rgb(img)).astype(np.int32)
    # One integer per colour: np.unique on a flat array is much faster than on rows.
    packed = (pixels[..., 0] << 16) | (pixels[..., 1] << 8) | pixels[..., 2]
    colours, counts = np.unique(packed, return_counts=True)
    if len(colours) < 2:
        return None
    shape_colour = colours[np.argsort(counts, kind="stable")[-2]]
    coords = np.argwhere(packed == shape_colour)
    return coords.mean(axis=0), np.array(packed.shape)


@metric("check_triangle_position")
def check_triangle_position(tgt_path: str | None) -> MetricResult:
    """1 if the shape (second most common colour) is centred within 5% of each side."""
    img = open_image(tgt_path)
    if img is None:
        return _no_image(tgt_path)
    found = _second_colour_centroid(img)
    if found is None:
        return failed("the image has a single colour: no shape on it")
    centroid, shape = found
    return verdict(bool(np.all(np.abs(centroid - shape / 2) < 0.05 * shape)),
                   f"the shape's centre (row, col) {tuple(round(float(c)) for c in centroid)} in a "
                   f"{shape[0]}x{shape[1]} image, expected within 5% of the middle")


@metric("compare_triangle_positions")
def compare_triangle_positions(image1: str | None, image2: str | None) -> MetricResult:
    """1 if the shape sits closer to the image centre in image2 than in image1.

    (OSWorld's version thresholds every pixel as "yellow", finds the whole frame
    and so always measures the image centre; we locate the shape as
    check_triangle_position does.)
    """
    images = _images(image1, image2)
    if images is None:
        return _no_image(image1, image2)
    found = [_second_colour_centroid(i) for i in images]
    centroids = [f for f in found if f is not None]
    if len(centroids) != len(found):
        return failed("an image has a single colour: no shape on it")
    distances = [float(np.linalg.norm(c - s / 2)) for c, s in centroids]
    return verdict(distances[0] > distances[1], f"the shape is {distances[0]:.1f} then {distances[1]:.1f} pixels "
                                                "from the centre (must come closer)")


@metric("check_textbox_on_leftside")
def check_textbox_on_leftside(src_path: str | None) -> MetricResult:
    """1 if the leftmost dark pixel (grey < 128) lies in the left 5% of the image."""
    img = open_image(src_path)
    if img is None:
        return _no_image(src_path)
    dark_columns = np.nonzero((np.asarray(to_rgb(img).convert("L")) < 128).any(axis=0))[0]
    leftmost = dark_columns[0] if len(dark_columns) else img.width
    return verdict(leftmost < img.width * 0.05, f"the leftmost dark pixel is in column {leftmost} of {img.width}, "
                                                "expected in the left 5%")


@metric("check_green_background")
def check_green_background(src_path: str | None, tgt_path: str | None) -> MetricResult:
    """1 if every pixel that is not black in the reference (its background) is
    green in src, i.e. G > R and G > B.

    (OSWorld indexes pixels as [x, y], which transposes the image and fails on
    non-square ones; we index rows and columns properly.)
    """
    images = _images(src_path, tgt_path)
    if images is None:
        return _no_image(src_path, tgt_path)
    if images[0].size != images[1].size:
        return failed(f"the image is {images[0].size}, the reference {images[1].size}")
    src = np.asarray(to_rgb(images[0])).astype(np.int16)
    background = np.asarray(to_rgb(images[1])).any(axis=2)
    r, g, b = src[..., 0], src[..., 1], src[..., 2]
    green = (g > r) & (g > b)
    not_green = int(np.count_nonzero(~green[background]))
    return verdict(not_green == 0,
                   f"{not_green} of {int(np.count_nonzero(background))} background pixels are not green")


# ---------------------------------------------------------------- files and lists

def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def images_identical(pred: Image.Image, gold: Image.Image) -> bool:
    """Pixel equality after scaling pred to gold's size and mode (OSWorld's rule)."""
    if pred.size != gold.size:
        pred = pred.resize(gold.size, Image.Resampling.LANCZOS)
    if pred.mode != gold.mode:
        if gold.mode in ("RGB", "RGBA", "L", "LA"):
            pred = pred.convert(gold.mode)
        else:  # palette and other modes: compare as RGBA rather than re-quantize
            pred, gold = pred.convert("RGBA"), gold.convert("RGBA")
    return ImageChops.difference(pred, gold).getbbox() is None


@metric("compare_image_list")
def compare_image_list(pred_img_path_list: str | list | None,
                       gold_img_path_list: str | list | None) -> MetricResult:
    """1 if every predicted image equals its gold counterpart pixel for pixel.

    Accepts one path or aligned lists. (OSWorld zips the lists, so a missing
    trailing image goes unnoticed; we require equal, non-empty lists.)
    """
    preds, golds = _as_list(pred_img_path_list), _as_list(gold_img_path_list)
    if not preds or len(preds) != len(golds):
        return failed(f"{len(preds)} images for {len(golds)} gold ones")
    for pred_path, gold_path in zip(preds, golds, strict=True):
        images = _images(pred_path, gold_path)
        if images is None:
            return _no_image(pred_path, gold_path)
        if not images_identical(*images):
            return failed(f"{os.path.basename(str(pred_path))} differs from {os.path.basename(str(gold_path))} "
                          "in its pixels")
    return passed(f"the {len(preds)} images equal their gold ones")


# ---------------------------------------------------------------- GIMP settings

def _config_entries(text: str) -> Iterable[list[str]]:
    """Token lists of gimprc/sessionrc lines: `(theme "Light")` -> ["theme", "Light"].

    Nested entries count too (each line is read on its own, as OSWorld does);
    lines whose quotes do not close on the line are skipped.
    """
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            tokens = shlex.split(line.lstrip("(").rstrip(")"))
        except ValueError:
            continue
        if tokens:
            yield tokens


def _unquote(value: Any) -> str:
    text = str(value).strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    return text


@metric("check_config_status")
def check_config_status(actual_config_path: str | None, rule: dict | None = None) -> MetricResult:
    """1 if a line of the GIMP config file (gimprc, sessionrc...) sets `rule["key"]`
    to `rule["value"]`.

    `key` is a name (`"undo-levels"`) or a [name, first argument] pair; the value
    is compared with the line's last token. Quotes are ignored on both sides, so
    `"\\"Light\\""` and `"Light"` both match `(theme "Light")`.
    """
    rule = _rule(rule)
    key, value = rule.get("key"), rule.get("value")
    if key is None or value is None or not isinstance(actual_config_path, (str, os.PathLike)):
        return failed(f"no config file (got {show(actual_config_path)})" if key is not None and value is not None
                      else f"the rule needs key and value: {show(rule)}")
    try:
        with open(actual_config_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        return failed(f"the config file cannot be read: {e}")
    key_tokens = [key] if isinstance(key, str) else [str(k) for k in key]
    wanted = _unquote(value)
    seen = []
    for tokens in _config_entries(text):
        if len(tokens) > len(key_tokens) and tokens[:len(key_tokens)] == key_tokens:
            if tokens[-1] == wanted:
                return passed(f"{' '.join(key_tokens)} is {wanted!r}")
            seen.append(tokens[-1])
    return failed(f"{' '.join(key_tokens)} is {show(seen[-1]) if seen else 'not set'}, expected {wanted!r}")
