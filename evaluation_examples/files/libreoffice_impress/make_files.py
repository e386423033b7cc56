#!/usr/bin/env python3
"""Builds the input and expected files of the libreoffice_impress tasks (deterministic content).

Presentations are written with python-pptx and then round-tripped through
`soffice --headless --convert-to pptx`, so inputs look like files LibreOffice saved. An
expected file is the round-tripped input, changed the way the task asks (python-pptx),
round-tripped once more -- the same path an agent's result takes (LibreOffice opens the
input, the agent edits, LibreOffice saves). Save times and field ids are pinned, so
re-running the script gives the same bytes.

    python3 make_files.py          # needs python-pptx and soffice
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import uuid
import zipfile
from pathlib import Path

from pptx import Presentation
from pptx.presentation import Presentation as PresentationFile

HERE = Path(__file__).resolve().parent
STAMP = (2026, 1, 5, 9, 0, 0)


def task_dir(task_id: str) -> Path:
    path = HERE / task_id
    path.mkdir(parents=True, exist_ok=True)
    return path


def pin_field_ids(name: str, content: bytes) -> bytes:
    """The text fields of one part with GUIDs derived from the part's name and their order."""
    counter = iter(range(1_000_000))
    return re.sub(
        rb'(<a:fld id="\{)[0-9A-Fa-f-]{36}(\}")',
        lambda m: m.group(1) + str(uuid.uuid5(uuid.NAMESPACE_URL, f"{name}#{next(counter)}")).upper().encode()
        + m.group(2),
        content)


def pin_volatile_parts(path: Path) -> None:
    """Pins what changes from run to run: the save time in docProps and the zip entries, and the
    random GUIDs LibreOffice gives text fields (slide numbers, dates) in masters and layouts."""
    with zipfile.ZipFile(path) as archive:
        data = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    if "docProps/core.xml" in data:
        data["docProps/core.xml"] = re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?", b"2026-01-05T09:00:00Z",
                                           data["docProps/core.xml"])
    for name, content in data.items():
        if name.endswith(".xml"):
            data[name] = pin_field_ids(name, content)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in data.items():
            info = zipfile.ZipInfo(name, date_time=STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)


def soffice_convert(source: Path, target: Path, filter_name: str) -> None:
    """LibreOffice's conversion of `source` into `target` (format given by filter_name)."""
    with tempfile.TemporaryDirectory() as tmp:
        profile = Path(tmp) / "profile"
        out = Path(tmp) / "out"
        subprocess.run(["soffice", f"-env:UserInstallation=file://{profile}", "--headless",
                        "--convert-to", filter_name, "--outdir", str(out), str(source)],
                       check=True, capture_output=True, timeout=180)
        produced = list(out.iterdir())
        if len(produced) != 1:
            raise RuntimeError(f"soffice produced {produced} for {source}")
        shutil.move(str(produced[0]), target)


def save_through_libreoffice(prs, path: Path) -> None:
    """python-pptx Presentation -> tmp .pptx -> soffice -> path."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / path.name
        prs.save(raw)
        soffice_convert(raw, path, "pptx")
    pin_volatile_parts(path)


def new_presentation(title: str, subtitle: str, slides: list[tuple[str, list[str]]]) -> PresentationFile:
    """A 4:3 deck (python-pptx's template): a title slide, then one 'Title and Content' slide per (title, bullets)."""
    prs = Presentation()
    first = prs.slides.add_slide(prs.slide_layouts[0])
    first.shapes.title.text = title
    first.placeholders[1].text = subtitle
    for slide_title, bullets in slides:
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = slide_title
        body = slide.placeholders[1].text_frame
        body.text = bullets[0]
        for bullet in bullets[1:]:
            body.add_paragraph().text = bullet
    return prs


def move_slide(prs, old_index: int, new_index: int) -> None:
    slide_ids = prs.slides._sldIdLst
    entry = list(slide_ids)[old_index]
    slide_ids.remove(entry)
    slide_ids.insert(new_index, entry)


# ---------------------------------------------------------------------------------------------

def retitle():
    d = task_dir("impress-rename-slide-title")
    prs = new_presentation("Team Update", "Product team - January 2026", [
        ("Roadmap", ["Mobile app beta in March", "Offline mode for field staff", "New reporting dashboard"]),
        ("Hiring", ["Two backend developers", "One UX researcher", "Interviews start 2 February"]),
        ("Risks", ["Vendor API changes in Q2", "Holiday season load on support"]),
    ])
    save_through_libreoffice(prs, d / "team_update.pptx")
    prs = Presentation(d / "team_update.pptx")
    prs.slides[1].shapes.title.text_frame.paragraphs[0].runs[0].text = "Product Roadmap 2026"
    save_through_libreoffice(prs, d / "expected.pptx")


def reorder():
    d = task_dir("impress-move-budget-slide")
    prs = new_presentation("Community Festival 2026", "Planning committee, 12 February", [
        ("Programme", ["Live music on two stages", "Food market with 30 stalls", "Children's corner"]),
        ("Volunteers", ["45 volunteers signed up", "Shift plan ready by April"]),
        ("Sponsors", ["Three local businesses confirmed", "Two more in talks"]),
        ("Budget", ["Total: EUR 38,500", "Stage and sound: EUR 14,000", "Safety and cleaning: EUR 9,200"]),
    ])
    save_through_libreoffice(prs, d / "festival_plan.pptx")
    prs = Presentation(d / "festival_plan.pptx")
    move_slide(prs, 4, 1)
    save_through_libreoffice(prs, d / "expected.pptx")


def transitions():
    d = task_dir("impress-fade-transition-all")
    prs = new_presentation("Welcome to Brightside Dental", "Information for new patients", [
        ("Opening Hours", ["Monday to Friday: 8:00-18:00", "Saturday: 9:00-13:00"]),
        ("Your First Visit", ["Bring your insurance card", "Arrive 10 minutes early", "Fill in the health form"]),
        ("Emergencies", ["Call 0123 456 789", "Out of hours: on-call dentist"]),
    ])
    save_through_libreoffice(prs, d / "patient_welcome.pptx")


def portrait():
    d = task_dir("impress-portrait-orientation")
    prs = new_presentation("Spring Reading Club", "Poster slides for the library screen", [
        ("This Month's Book", ["'The Glass Orchard'", "Meeting: every Thursday, 18:30"]),
        ("How to Join", ["Sign up at the front desk", "Membership is free"]),
    ])
    save_through_libreoffice(prs, d / "reading_club.pptx")


NOTES = "Mention that the new warehouse opens in April."


def speaker_notes():
    d = task_dir("impress-add-speaker-notes")
    prs = new_presentation("Logistics Review", "Operations meeting, Q1 2026", [
        ("Delivery Times", ["Average: 2.9 days (was 3.4)", "Same-day share up to 18%"]),
        ("Capacity", ["Hall B at 92% utilisation", "Peak season forecast +25%"]),
        ("Next Steps", ["Extend picking layout to Hall C", "Review carrier contracts"]),
    ])
    save_through_libreoffice(prs, d / "logistics_review.pptx")
    prs = Presentation(d / "logistics_review.pptx")
    prs.slides[2].notes_slide.notes_text_frame.text = NOTES
    save_through_libreoffice(prs, d / "expected.pptx")


def export_pdf():
    d = task_dir("impress-export-pdf")
    prs = new_presentation("Museum Night 2026", "Volunteer briefing", [
        ("Schedule", ["Doors open at 19:00", "Guided tours every 30 minutes", "Closing at 01:00"]),
        ("Your Role", ["Welcome desk or gallery guide", "Wear the orange lanyard"]),
        ("Contacts", ["Event lead: Clara Mendes", "Security desk: extension 204"]),
    ])
    save_through_libreoffice(prs, d / "museum_night.pptx")
    gold = {"title": "Museum Night 2026", "tours": "Guided tours every 30 minutes",
            "lanyard": "Wear the orange lanyard", "lead": "Event lead: Clara Mendes"}
    (d / "expected_text.json").write_text(json.dumps(gold, indent=2) + "\n")


def video():
    d = task_dir("impress-export-mp4-video")
    prs = new_presentation("Our Year in Pictures", "Riverside Rowing Club 2025", [
        ("Spring", ["New boat shed opened", "42 new members"]),
        ("Summer", ["Regatta win in the coxed four", "Open day with 300 visitors"]),
        ("Autumn", ["Head of the River: 3rd place", "Coaching course for juniors"]),
    ])
    save_through_libreoffice(prs, d / "rowing_club_year.pptx")


if __name__ == "__main__":
    for make in (retitle, reorder, transitions, portrait, speaker_notes, export_pdf, video):
        make()
    print("done")
