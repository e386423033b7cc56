"""Cases for the VLC metrics: vlcrc settings as VLC writes them (defaults as # comments), the status XML
of its HTTP interface, the window against the screen size."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from .cases import Case, Files

VLCRC_DEFAULTS = """[qt] # Qt interface
# Show background cone (boolean)
#qt-bgcone=1
# Maximum volume displayed (integer)
#qt-max-volume=125
#qt-minimal-view=0
#qt-slider-colours=153;210;153;20;210;20;255;199;15;245;39;29
[core] # core program
#one-instance-when-started-from-file=1
#play-and-exit=0
#input-record-path=
#global-key-play-pause=
"""

SETTINGS: list[tuple[str, str, dict[str, Any], str]] = [
    ("check_qt_bgcone", "#qt-bgcone=1", {"expected_qt_bgcone": 0}, "qt-bgcone=0"),
    ("check_qt_max_volume", "#qt-max-volume=125", {"expected_qt_max_volume": 200}, "qt-max-volume=200"),
    ("check_qt_minimal_view", "#qt-minimal-view=0", {"expected_qt_minimal_view": 1}, "qt-minimal-view=1"),
    (
        "check_qt_slider_colours",
        "#qt-slider-colours=153;210;153;20;210;20;255;199;15;245;39;29",
        {"type": "blackish"},
        "qt-slider-colours=0;0;0;20;20;20;30;30;30;10;10;10",
    ),
    (
        "check_global_key_play_pause",
        "#global-key-play-pause=",
        {"expected_global_key_play_pause": 1},
        "global-key-play-pause=Ctrl+Space",
    ),
    (
        "check_one_instance_when_started_from_file",
        "#one-instance-when-started-from-file=1",
        {"expected_one_instance_when_started_from_file": 0},
        "one-instance-when-started-from-file=0",
    ),
    ("check_play_and_exit", "#play-and-exit=0", {"expected_play_and_exit": 0}, "play-and-exit=1"),
    (
        "is_vlc_recordings_folder",
        "#input-record-path=",
        {"recording_file_path": "/home/user/Desktop"},
        "input-record-path=/home/user/Desktop",
    ),
]


def status(state: str, meta: dict[str, str]) -> str:
    infos = "".join(f'<info name="{k}">{v}</info>' for k, v in meta.items())
    return (
        f'<?xml version="1.0" encoding="utf-8" standalone="yes" ?><root><state>{state}</state><information>'
        f'<category name="meta">{infos}</category></information></root>'
    )


def video(files: Files, source: str, seconds: float = 1.0) -> str:
    """A small MP4 made by ffmpeg from one of its test sources."""
    path = files.path(".mp4")
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", f"{source}=size=160x120:rate=10",
                    "-t", str(seconds), "-pix_fmt", "yuv420p", path], check=True, timeout=120)
    return path


def video_cases(files: Files) -> list[Case]:
    if shutil.which("ffmpeg") is None:
        return []
    gold = video(files, "testsrc")
    return [Case("compare_videos", (video(files, "testsrc"), gold), "the same frames"),
            Case("compare_videos", (video(files, "smptebars"), gold), "other frames"),
            Case("compare_videos", (video(files, "testsrc", 0.5), gold), "the first half"),
            Case("compare_videos", (video(files, "mandelbrot"), gold), "a moving picture")]


def cases(files: Files) -> list[Case]:
    found = []
    defaults = files.text(VLCRC_DEFAULTS, ".vlcrc")
    for metric, commented, rule, set_line in SETTINGS:
        changed = files.text(VLCRC_DEFAULTS.replace(commented, set_line), ".vlcrc")
        both = files.text(VLCRC_DEFAULTS.replace(commented, commented + "\n" + set_line), ".vlcrc")
        found += [
            Case(metric, (defaults, rule), "the defaults, commented out"),
            Case(metric, (changed, rule), "the setting made"),
            Case(metric, (both, rule), "the setting made below its commented default"),
        ]
    song = "Rick Astley - Never Gonna Give You Up (Official Music Video).mp4"
    for label, xml, rule in [
        ("playing the file", status("playing", {"filename": song}), {"type": "file_name", "file_name": song}),
        ("paused", status("paused", {"filename": song}), {"type": "file_name", "file_name": song}),
        (
            "playing another file",
            status("playing", {"filename": "other.mp4"}),
            {"type": "file_name", "file_name": song},
        ),
        (
            "a file name in a path",
            status("playing", {"uri": f"file:///home/user/{song}"}),
            {"type": "file_name", "file_name": song},
        ),
        (
            "playing the stream",
            status("playing", {"url": "https://cdn.example.org/videos/master.m3u8"}),
            {"type": "url", "url": "https://cdn.example.org/videos/master.m3u8"},
        ),
        (
            "the stream's file name",
            status("playing", {"filename": "master.m3u8"}),
            {"type": "url", "url": "https://cdn.example.org/videos/master.m3u8"},
        ),
        ("no meta", status("playing", {}), {"type": "url", "url": "https://cdn.example.org/videos/master.m3u8"}),
    ]:
        found.append(Case("is_vlc_playing", (files.text(xml, ".xml"), rule), label))
    screen = {"width": 1920, "height": 1080}
    for label, window in [
        ("the screen's size", {"width": 1920, "height": 1080}),
        ("smaller", {"width": 1280, "height": 720}),
    ]:
        found.append(Case("is_vlc_fullscreen", (window, screen), label))
    found.append(Case("is_vlc_fullscreen", (None, screen), "no window"))
    return found + video_cases(files)
