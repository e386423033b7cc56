"""Cases for the GIMP image metrics on PNG and JPEG files made with Pillow: brightness, saturation,
contrast, structure, palettes, sizes, backgrounds, a gimprc setting."""

from __future__ import annotations

from PIL import Image, ImageDraw, ImageEnhance

from .cases import Case, Files


def scene(size: tuple[int, int] = (96, 72), background: str = "white") -> Image.Image:
    image = Image.new("RGB", size, background)
    draw = ImageDraw.Draw(image)
    draw.rectangle([10, 10, 40, 40], fill=(200, 60, 40))
    draw.polygon([(60, 60), (80, 20), (90, 60)], fill=(240, 220, 30))
    draw.ellipse([45, 30, 70, 55], fill=(40, 90, 200))
    return image


def save(files: Files, image: Image.Image, suffix: str = ".png") -> str:
    path = files.path(suffix)
    image.save(path)
    return path


def cases(files: Files) -> list[Case]:
    original = scene()
    src = save(files, original)
    edits = {
        "the same image": original,
        "darker": ImageEnhance.Brightness(original).enhance(0.6),
        "brighter": ImageEnhance.Brightness(original).enhance(1.4),
        "more saturated": ImageEnhance.Color(original).enhance(1.8),
        "less saturated": ImageEnhance.Color(original).enhance(0.4),
        "more contrast": ImageEnhance.Contrast(original).enhance(1.6),
        "mirrored": original.transpose(Image.Transpose.FLIP_LEFT_RIGHT),
        "resized": original.resize((192, 144)),
        "a palette image": original.convert("P", palette=Image.Palette.ADAPTIVE, colors=16),
        "another scene": scene(background="black"),
    }
    paths = {label: save(files, image) for label, image in edits.items()}
    found = []
    for label, path in paths.items():
        # OSWorld's tasks pass the agent's export first and the original second.
        found += [
            Case("check_brightness_decrease_and_structure_sim", (path, src), label),
            Case("check_saturation_increase_and_structure_sim", (path, src), label),
            Case("check_contrast_increase_and_structure_sim", (path, src), label),
            Case("check_structure_sim", (path, src), label),
            Case("check_structure_sim_resized", (path, src), label),
            Case("check_file_exists_and_structure_sim", (path, src), label),
            Case("check_palette_and_structure_sim", (path, src), label),
            Case("check_structure_sim_with_threshold", (path, src), label, {"ssim_threshold": 0.85}),
            Case("check_green_background", (path, src), label),
        ]
    green = scene(background="green")
    found.append(Case("check_green_background", (save(files, green), src), "a green background"))
    found.append(Case("check_triangle_position", (src,), "a yellow triangle right of centre"))
    centred = Image.new("RGB", (96, 72), "white")
    ImageDraw.Draw(centred).polygon([(38, 46), (48, 26), (58, 46)], fill=(240, 220, 30))
    found.append(Case("check_triangle_position", (save(files, centred),), "a yellow triangle in the centre"))
    text_left = Image.new("RGB", (200, 100), "white")
    ImageDraw.Draw(text_left).text((5, 40), "Hello", fill="black")
    found.append(Case("check_textbox_on_leftside", (save(files, text_left),), "text on the left"))
    text_right = Image.new("RGB", (200, 100), "white")
    ImageDraw.Draw(text_right).text((150, 40), "Hello", fill="black")
    found.append(Case("check_textbox_on_leftside", (save(files, text_right),), "text on the right"))
    jpeg = save(files, original, ".jpg")
    found += [
        Case("check_image_file_size", (jpeg, {"max_size": 600000}), "under the limit"),
        Case("check_image_file_size", (jpeg, {"max_size": 100}), "over the limit"),
        Case("check_image_size", (paths["resized"], {"height": 144}), "a height"),
    ]
    found += [
        Case("compare_image_list", ([paths["the same image"], paths["mirrored"]], [src, src]), "one of two differs"),
        Case("compare_image_list", ([paths["the same image"]], [src]), "the same list"),
    ]
    gimprc = files.text('# GIMP gimprc\n(undo-levels 100)\n(layer-new-name "Square")\n', ".gimprc")
    for label, rule in [
        ("undo levels", {"type:": "key-value", "key": "undo-levels", "value": "100"}),
        ("a quoted name", {"type:": "key-value", "key": "layer-new-name", "value": '"Square"'}),
        ("another value", {"type:": "key-value", "key": "undo-levels", "value": "5"}),
        ("a missing key", {"type:": "key-value", "key": "show-tips", "value": "no"}),
    ]:
        found.append(Case("check_config_status", (gimprc, rule), label))
    return found
