#!/usr/bin/env python3
"""Builds the input files of the os tasks added after os-organize-invoices (deterministic data;
that task's files were made by hand and are left as they are).

    python3 make_files.py          # needs Pillow
"""
from __future__ import annotations

import random
from pathlib import Path

from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent


def task_dir(task_id: str) -> Path:
    path = HERE / task_id
    path.mkdir(parents=True, exist_ok=True)
    return path


def simple_pdf(lines: list[str]) -> bytes:
    """A one-page PDF showing `lines` in Helvetica, with a correct xref table."""
    text = "BT /F1 12 Tf 72 760 Td 16 TL " + " ".join(
        "(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") '" for line in lines) + " ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(text) + text.encode("latin-1") + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


# -- os-find-copy-lease ------------------------------------------------------------------------
def find_copy_lease() -> None:
    d = task_dir("os-find-copy-lease")
    (d / "lease-agreement.pdf").write_bytes(simple_pdf([
        "Residential Lease Agreement", "",
        "Landlord: Harbour View Properties Ltd.", "Tenant: Noor Jansen",
        "Property: Flat 3B, 27 Canal Street", "Term: 1 September 2024 to 31 August 2026",
        "Monthly rent: 1,150.00 EUR, due on the 1st of each month."]))
    (d / "lease-agreement-draft.pdf").write_bytes(simple_pdf([
        "DRAFT - Residential Lease Agreement", "", "Landlord: Harbour View Properties Ltd.",
        "Tenant: (to be completed)", "Monthly rent: to be agreed."]))
    (d / "deposit-receipt.pdf").write_bytes(simple_pdf([
        "Deposit receipt", "", "Received from Noor Jansen: 2,300.00 EUR (two months' rent).",
        "Date: 20 August 2024"]))
    (d / "moving-checklist.txt").write_text(
        "Moving checklist\n- book the van\n- change address at the bank\n- read the electricity meter\n")


# -- os-make-script-executable -----------------------------------------------------------------
def make_script_executable() -> None:
    d = task_dir("os-make-script-executable")
    (d / "backup-photos.sh").write_text(
        "#!/bin/sh\n"
        "# Copies new photos from Pictures to the backup folder.\n"
        "mkdir -p \"$HOME/Backup/Photos\"\n"
        "cp -u \"$HOME\"/Pictures/*.jpg \"$HOME/Backup/Photos/\" 2>/dev/null\n"
        "echo \"Photos backed up.\"\n")


# -- os-zip-project-folder ---------------------------------------------------------------------
def zip_project_folder() -> None:
    d = task_dir("os-zip-project-folder")
    (d / "plan.txt").write_text(
        "Garden project, spring 2026\n\n1. Clear the bed by the fence.\n2. Build two raised beds (120 x 80 cm).\n"
        "3. Plant tomatoes, beans and herbs after the last frost.\n")
    (d / "plants.csv").write_text(
        "plant,bed,sow_from,harvest_from\ntomato,1,April,July\nrunner bean,1,May,July\n"
        "basil,2,April,June\nparsley,2,March,May\n")
    image = Image.new("RGB", (240, 160), (235, 230, 215))
    draw = ImageDraw.Draw(image)
    draw.rectangle((20, 30, 110, 130), outline=(90, 60, 30), width=3)
    draw.rectangle((130, 30, 220, 130), outline=(90, 60, 30), width=3)
    draw.text((45, 70), "Bed 1", fill=(40, 90, 40))
    draw.text((155, 70), "Bed 2", fill=(40, 90, 40))
    image.save(d / "layout.png", optimize=False)


# -- os-rename-photos-pattern ------------------------------------------------------------------
def rename_photos_pattern() -> None:
    d = task_dir("os-rename-photos-pattern")
    colours = [(70, 130, 180), (230, 150, 60), (120, 170, 90), (200, 90, 110)]
    for number, colour in zip(range(2041, 2045), colours, strict=True):
        image = Image.new("RGB", (320, 240), colour)
        ImageDraw.Draw(image).text((20, 20), f"Lisbon {number}", fill=(255, 255, 255))
        image.save(d / f"IMG_{number}.JPG", quality=85)
    (d / "notes.txt").write_text("Best light at Miradouro da Senhora do Monte around 7 pm.\n")


# -- os-count-log-errors -----------------------------------------------------------------------
def count_log_errors() -> int:
    d = task_dir("os-count-log-errors")
    rng = random.Random(20260315)
    paths = ["/", "/index.html", "/api/orders", "/api/users/42", "/static/app.js", "/login", "/api/cart"]
    messages = {
        "INFO": ["GET {p} 200 in {ms} ms", "POST {p} 201 in {ms} ms", "cache refreshed ({n} entries)"],
        "WARN": ["slow response for {p}: {ms} ms", "retrying upstream request to {p}"],
        "ERROR": ["GET {p} 500: upstream timed out after 30000 ms", "database connection refused (attempt {n})",
                  "POST {p} 502: bad gateway"],
    }
    lines, errors = [], 0
    for i in range(240):
        level = rng.choices(["INFO", "WARN", "ERROR"], weights=[80, 12, 8])[0]
        errors += level == "ERROR"
        text = rng.choice(messages[level]).format(p=rng.choice(paths), ms=rng.randint(3, 4000), n=rng.randint(1, 500))
        minute, second = divmod(i * 13, 60)
        lines.append(f"2026-03-15 09:{minute % 60:02d}:{second:02d} [{level:<5}] {text}")
    (d / "webserver.log").write_text("\n".join(lines) + "\n")
    return errors


if __name__ == "__main__":
    find_copy_lease()
    make_script_executable()
    zip_project_folder()
    rename_photos_pattern()
    print("ERROR lines in webserver.log:", count_log_errors())
