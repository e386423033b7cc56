"""VLC metrics on real files: VLC 3 status XML, vlcrc text, and images, audio,
video and MP3s made with Pillow, ffmpeg and mutagen."""
from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
from mutagen.easyid3 import EasyID3
from PIL import Image, ImageDraw

from desktop_env.evaluators import registry
from desktop_env.evaluators.metrics import vlc

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs ffmpeg")


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True, timeout=60)


def has_ffmpeg_filter(name: str) -> bool:
    listing = subprocess.run(["ffmpeg", "-hide_banner", "-filters"], capture_output=True,
                             text=True, check=False).stdout
    return any(line.split()[1:2] == [name] for line in listing.splitlines() if line.strip())


def test_metrics_are_registered_under_osworld_names():
    for name in ("is_vlc_playing", "is_vlc_fullscreen", "check_qt_bgcone", "compare_audios",
                 "compare_videos", "compare_images", "check_mp3_meta", "check_play_and_exit"):
        assert registry.get_metric(name) is getattr(vlc, name)


# ---------------------------------------------------------------- player status

def status_xml(state: str = "playing", meta: dict[str, str] | None = None) -> str:
    """requests/status.xml as VLC 3.0 prints it (names escaped by VLC)."""
    meta = {"filename": "Rick Astley - Never Gonna Give You Up (Official Music Video).mp4"} \
        if meta is None else meta
    infos = "".join(f"<info name='{k}'>{v}</info>" for k, v in meta.items())
    return f"""<?xml version="1.0" encoding="utf-8" standalone="yes" ?>
<root>
<fullscreen>false</fullscreen>
<aspectratio>default</aspectratio>
<audiodelay>0</audiodelay>
<apiversion>3</apiversion>
<currentplid>4</currentplid>
<time>12</time>
<volume>256</volume>
<length>213</length>
<random>false</random>
<audiofilters>
  <filter_0></filter_0></audiofilters>
<rate>1</rate>
<videoeffects>
  <hue>0</hue>
  <saturation>1</saturation>
  <contrast>1</contrast>
  <brightness>1</brightness>
  <gamma>1</gamma></videoeffects>
<state>{state}</state>
<loop>false</loop>
<version>3.0.16 Vetinari</version>
<position>0.056338027119637</position>
<repeat>false</repeat>
<subtitledelay>0</subtitledelay>
<equalizer></equalizer><information>
    <category name="meta">
    {infos}    </category>
  <category name='Stream 0'><info name='Codec'>H264 - MPEG-4 AVC (part 10) (avc1)</info>\
<info name='Type'>Video</info><info name='Frame rate'>25</info></category>
  </information>
  <stats>
  <lostabuffers>0</lostabuffers>
  <readpackets>310</readpackets>
  </stats>
</root>
"""


MUSIC_VIDEO = "Rick Astley - Never Gonna Give You Up (Official Music Video).mp4"
STREAM = "https://devstreaming-cdn.apple.com/videos/streaming/examples/img_bipbop_adv_example_fmp4/master.m3u8"


@pytest.fixture()
def write(tmp_path):
    def write_file(name: str, text: str) -> str:
        (tmp_path / name).write_text(text, encoding="utf-8")
        return str(tmp_path / name)
    return write_file


def test_playing_the_expected_file(write):
    rule = {"type": "file_name", "file_name": MUSIC_VIDEO}
    assert vlc.is_vlc_playing(write("status.xml", status_xml()), rule).score == 1.0
    other = status_xml(meta={"filename": "holiday.mp4"})
    assert vlc.is_vlc_playing(write("other.xml", other), rule).score == 0.0


def test_a_paused_or_stopped_player_is_not_playing(write):
    rule = {"type": "file_name", "file_name": MUSIC_VIDEO}
    assert vlc.is_vlc_playing(write("paused.xml", status_xml("paused")), rule).score == 0.0
    assert vlc.is_vlc_playing(write("stopped.xml", status_xml("stopped", meta={})), rule).score == 0.0


def test_file_name_given_as_uri_or_with_escaped_characters(write):
    uri = "file:///home/user/Desktop/Tom%20%26%20Jerry.mp4"
    rule = {"type": "file_name", "file_name": "Tom & Jerry.mp4"}
    assert vlc.is_vlc_playing(write("uri.xml", status_xml(meta={"uri": uri})), rule).score == 1.0
    escaped = status_xml(meta={"filename": "Tom &amp; Jerry.mp4"})
    assert vlc.is_vlc_playing(write("escaped.xml", escaped), rule).score == 1.0


def test_playing_a_stream_url(write):
    rule = {"type": "url", "url": STREAM}
    # VLC shows an HLS stream by its playlist's file name...
    shown_by_name = status_xml(meta={"filename": "master.m3u8"})
    assert vlc.is_vlc_playing(write("hls.xml", shown_by_name), rule).score == 1.0
    # ...or by the full URL.
    shown_by_url = status_xml(meta={"url": STREAM, "title": "bipbop"})
    assert vlc.is_vlc_playing(write("url.xml", shown_by_url), rule).score == 1.0
    elsewhere = status_xml(meta={"url": "https://example.org/live/index.m3u8"})
    assert vlc.is_vlc_playing(write("elsewhere.xml", elsewhere), rule).score == 0.0


def test_status_json_and_raw_text_are_read_too(write):
    rule = {"type": "file_name", "file_name": MUSIC_VIDEO}
    doc = {"state": "playing", "information": {"category": {"meta": {"filename": MUSIC_VIDEO}}}}
    assert vlc.is_vlc_playing(write("status.json", json.dumps(doc)), rule).score == 1.0
    assert vlc.is_vlc_playing(doc, rule).score == 1.0
    assert vlc.is_vlc_playing(status_xml(), rule).score == 1.0


def test_missing_or_broken_status_scores_0(write, tmp_path):
    rule = {"type": "file_name", "file_name": MUSIC_VIDEO}
    assert vlc.is_vlc_playing(None, rule).score == 0.0
    assert vlc.is_vlc_playing(str(tmp_path / "none.xml"), rule).score == 0.0
    assert vlc.is_vlc_playing(write("broken.xml", "<root><state>playing"), rule).score == 0.0
    assert vlc.is_vlc_playing(write("ok.xml", status_xml()), {"type": "title"}).score == 0.0


def test_fullscreen_means_window_size_equals_screen_size():
    screen = {"width": 1920, "height": 1080}
    assert vlc.is_vlc_fullscreen({"width": 1920, "height": 1080}, screen).score == 1.0
    assert vlc.is_vlc_fullscreen({"width": 1280, "height": 720}, screen).score == 0.0
    assert vlc.is_vlc_fullscreen(None, screen).score == 0.0
    assert vlc.is_vlc_fullscreen(screen, None).score == 0.0
    assert vlc.is_vlc_fullscreen({"width": 1920}, screen).score == 0.0


# ---------------------------------------------------------------- vlcrc

def vlcrc(**active: str) -> str:
    """A vlcrc as VLC 3 writes it: defaults commented out, changed options active."""
    options = {
        "qt-minimal-view": "0", "qt-slider-colours": vlc.DEFAULT_SLIDER_COLOURS,
        "qt-max-volume": "125", "qt-bgcone": "1", "input-record-path": "",
        "play-and-exit": "0", "one-instance-when-started-from-file": "1",
        "global-key-play-pause": "", "key-play-pause": "Space",
    }
    lines = ["###", "###  vlc 3.0.16", "###", "",
             "###", "### lines beginning with a '#' character are comments", "###", "",
             "[qt] # Qt interface", ""]
    for key, default in options.items():
        if key == "input-record-path":
            lines += ["", "[core] # core program", ""]
        lines.append(f"# {key} (string)")
        name = key.replace("-", "_")
        lines.append(f"{key}={active[name]}" if name in active else f"#{key}={default}")
        lines.append("")
    return "\n".join(lines)


@pytest.mark.parametrize("func, rule, changed", [
    (vlc.check_qt_bgcone, {"expected_qt_bgcone": 0}, {"qt_bgcone": "0"}),
    (vlc.check_qt_max_volume, {"expected_qt_max_volume": 200}, {"qt_max_volume": "200"}),
    (vlc.check_qt_minimal_view, {"expected_qt_minimal_view": 1}, {"qt_minimal_view": "1"}),
    (vlc.check_play_and_exit, {"expected_play_and_exit": 0}, {"play_and_exit": "0"}),
    (vlc.check_global_key_play_pause, {"expected_global_key_play_pause": 1},
     {"global_key_play_pause": "Ctrl+Alt+p"}),
    (vlc.check_one_instance_when_started_from_file,
     {"expected_one_instance_when_started_from_file": 0},
     {"one_instance_when_started_from_file": "0"}),
    (vlc.is_vlc_recordings_folder, {"recording_file_path": "/home/user/Desktop"},
     {"input_record_path": "/home/user/Desktop/"}),
])
def test_vlcrc_setting_changed_as_asked(write, func, rule, changed):
    assert func(write("vlcrc", vlcrc(**changed)), rule).score == 1.0


@pytest.mark.parametrize("func, rule", [
    (vlc.check_qt_bgcone, {"expected_qt_bgcone": 0}),
    (vlc.check_qt_max_volume, {"expected_qt_max_volume": 200}),
    (vlc.check_qt_minimal_view, {"expected_qt_minimal_view": 1}),
    (vlc.check_global_key_play_pause, {"expected_global_key_play_pause": 1}),
    (vlc.check_one_instance_when_started_from_file,
     {"expected_one_instance_when_started_from_file": 0}),
    (vlc.is_vlc_recordings_folder, {"recording_file_path": "/home/user/Desktop"}),
    (vlc.check_qt_slider_colours, {"type": "blackish"}),
])
def test_vlcrc_left_at_defaults_fails(write, func, rule):
    assert func(write("vlcrc", vlcrc()), rule).score == 0.0


def test_play_and_exit_turned_on_fails_and_default_passes(write):
    rule = {"expected_play_and_exit": 0}
    assert vlc.check_play_and_exit(write("on", vlcrc(play_and_exit="1")), rule).score == 0.0
    assert vlc.check_play_and_exit(write("default", vlcrc()), rule).score == 1.0


def test_a_commented_out_value_is_not_a_setting(write):
    text = vlcrc().replace("#qt-max-volume=125", "#qt-max-volume=200")
    assert vlc.check_qt_max_volume(write("vlcrc", text), {"expected_qt_max_volume": 200}).score == 0.0


def test_recordings_folder_elsewhere_fails(write):
    text = vlcrc(input_record_path="/home/user/Videos")
    assert vlc.is_vlc_recordings_folder(write("vlcrc", text),
                                        {"recording_file_path": "/home/user/Desktop"}).score == 0.0


def test_slider_colours(write):
    dark = "20;20;20;40;40;40;60;60;60;10;10;10"
    assert vlc.check_qt_slider_colours(write("dark", vlcrc(qt_slider_colours=dark)),
                                       {"type": "blackish"}).score == 1.0
    half_dark = "20;20;20;40;40;40;255;199;15;10;10;10"
    assert vlc.check_qt_slider_colours(write("half", vlcrc(qt_slider_colours=half_dark)),
                                       {"type": "blackish"}).score == 0.0
    rule = {"type": "match", "expected_qt_slider_colours": dark}
    assert vlc.check_qt_slider_colours(write("dark2", vlcrc(qt_slider_colours=dark)), rule).score == 1.0
    assert vlc.check_qt_slider_colours(write("default", vlcrc()), rule).score == 0.0
    garbled = vlcrc(qt_slider_colours="black")
    assert vlc.check_qt_slider_colours(write("garbled", garbled), {"type": "blackish"}).score == 0.0


@pytest.mark.parametrize("func, rule", [
    (vlc.check_qt_bgcone, {"expected_qt_bgcone": 1}),
    (vlc.check_qt_max_volume, {"expected_qt_max_volume": 125}),
    (vlc.check_qt_minimal_view, {"expected_qt_minimal_view": 0}),
    (vlc.check_play_and_exit, {"expected_play_and_exit": 0}),
    (vlc.check_global_key_play_pause, {"expected_global_key_play_pause": 0}),
    (vlc.check_one_instance_when_started_from_file,
     {"expected_one_instance_when_started_from_file": 1}),
    (vlc.is_vlc_recordings_folder, {"recording_file_path": "/home/user/Desktop"}),
    (vlc.check_qt_slider_colours, {"type": "match",
                                   "expected_qt_slider_colours": vlc.DEFAULT_SLIDER_COLOURS}),
])
def test_missing_vlcrc_scores_0_even_when_defaults_would_match(tmp_path, func, rule):
    assert func(None, rule).score == 0.0
    assert func(str(tmp_path / "vlcrc"), rule).score == 0.0


# ---------------------------------------------------------------- images

def frame(shift: int = 0, size=(320, 180)) -> Image.Image:
    """A video still: sky gradient, ground, sun and a mountain."""
    width, height = size
    y = np.linspace(0, 1, height)[:, None, None]
    sky = np.broadcast_to(np.array([40, 80, 160]) + y * np.array([120, 110, 60]), (height, width, 3))
    img = Image.fromarray(sky.astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, height * 2 // 3, width, height), fill=(60, 90, 40))
    draw.ellipse((200 + shift, 20, 250 + shift, 70), fill=(250, 230, 120))
    draw.polygon([(30 + shift, 130), (110 + shift, 40), (190 + shift, 130)], fill=(90, 80, 70))
    return img


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    folder = tmp_path_factory.mktemp("images")
    paths = {}
    variants = {
        "still.png": frame(),
        "still_small.jpg": frame().resize((160, 90), Image.Resampling.LANCZOS),
        "desktop.png": Image.effect_noise((320, 180), 60).convert("RGB"),
    }
    for name, img in variants.items():
        img.save(folder / name)
        paths[name] = str(folder / name)
    gif = folder / "clip.gif"
    frames = [frame(shift) for shift in (0, 4, 8)]
    frames[0].save(gif, save_all=True, append_images=frames[1:], duration=100)
    paths["clip.gif"] = str(gif)
    (folder / "corrupt.png").write_bytes(b"GIF89a but then nothing")
    paths["corrupt.png"] = str(folder / "corrupt.png")
    return paths


def test_compare_images_scores_the_ssim(images):
    assert vlc.compare_images(images["still.png"], images["still.png"]).score == pytest.approx(1.0)
    assert vlc.compare_images(images["still_small.jpg"], images["still.png"]).score > 0.9
    assert vlc.compare_images(images["desktop.png"], images["still.png"]).score < 0.2


def test_compare_images_reads_the_first_frame_of_a_gif(images):
    assert vlc.compare_images(images["clip.gif"], images["still.png"]).score > 0.95


def test_compare_images_reference_base_rescales_and_floors_at_0(images):
    assert vlc.compare_images(images["still.png"], images["still.png"],
                              reference_base_result=0.11).score == pytest.approx(1.0)
    rescaled = vlc.compare_images(images["still_small.jpg"], images["still.png"],
                                  reference_base_result=0.54)
    plain = vlc.compare_images(images["still_small.jpg"], images["still.png"])
    assert rescaled.score == pytest.approx((plain.score - 0.54) / (1 - 0.54))
    assert vlc.compare_images(images["desktop.png"], images["still.png"],
                              reference_base_result=0.11).score == 0.0


@pytest.mark.parametrize("bad", [None, "missing", "corrupt.png"])
def test_compare_images_without_a_readable_image_scores_0(images, bad):
    path = images.get(bad, f"/nonexistent/{bad}") if bad else None
    assert vlc.compare_images(path, images["still.png"]).score == 0.0
    assert vlc.compare_images(images["still.png"], path).score == 0.0


# ---------------------------------------------------------------- audio

def melody(path, notes, seconds_per_note=0.5) -> str:
    """A plucked melody, one note after another (ffmpeg's aevalsrc)."""
    note, t = f"{seconds_per_note}", "t"
    frequency = str(notes[-1])
    for index in range(len(notes) - 2, -1, -1):
        frequency = f"if(lt({t},{(index + 1) * float(note)}),{notes[index]},{frequency})"
    expression = f"0.5*sin(2*PI*{t}*{frequency})*(1-0.6*mod({t},{note}))"
    ffmpeg("-f", "lavfi", "-i", f"aevalsrc='{expression}':d={len(notes) * float(note)}:s=22050",
           str(path))
    return str(path)


@pytest.fixture(scope="module")
def audio(tmp_path_factory):
    folder = tmp_path_factory.mktemp("audio")
    paths = {"planet.wav": melody(folder / "planet.wav", [440, 554, 659, 880]),
             "reversed.wav": melody(folder / "reversed.wav", [880, 659, 554, 440])}
    # What an agent's export looks like: another codec, rate and channel count.
    paths["planet.mp3"] = str(folder / "planet.mp3")
    ffmpeg("-i", paths["planet.wav"], "-ar", "44100", "-ac", "2", "-c:a", "libmp3lame",
           "-b:a", "128k", paths["planet.mp3"])
    paths["late.wav"] = str(folder / "late.wav")
    ffmpeg("-i", paths["planet.wav"], "-af", "adelay=300", paths["late.wav"])
    (folder / "corrupt.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEfmt garbage")
    paths["corrupt.wav"] = str(folder / "corrupt.wav")
    (folder / "silence_header.wav").write_bytes(b"")
    paths["empty.wav"] = str(folder / "silence_header.wav")
    return paths


def test_same_sound_in_another_format_matches(audio):
    assert vlc.compare_audios(audio["planet.mp3"], audio["planet.wav"]).score == 1.0


def test_other_sound_does_not_match(audio):
    assert vlc.compare_audios(audio["reversed.wav"], audio["planet.wav"]).score == 0.0


def test_threshold_option_decides_how_close_is_close_enough(audio):
    similarity = vlc.audio_similarity(audio["late.wav"], audio["planet.wav"])
    assert 0.9 < similarity < 0.999
    assert vlc.compare_audios(audio["late.wav"], audio["planet.wav"]).score == 1.0
    assert vlc.compare_audios(audio["late.wav"], audio["planet.wav"], threshold=0.999).score == 0.0


@pytest.mark.parametrize("bad", [None, "missing", "corrupt.wav", "empty.wav"])
def test_unreadable_audio_scores_0(audio, bad):
    path = audio.get(bad, "/nonexistent/x.wav") if bad else None
    assert vlc.compare_audios(path, audio["planet.wav"]).score == 0.0
    assert vlc.compare_audios(audio["planet.wav"], path).score == 0.0
    assert vlc.compare_audios(path, path).score == 0.0  # OSWorld calls two broken files equal


@pytest.mark.skipif(not has_ffmpeg_filter("flite"), reason="ffmpeg built without flite")
def test_speech_matches_its_reencoding_but_not_another_sentence(tmp_path):
    def say(name, text):
        ffmpeg("-f", "lavfi", "-i", f"flite=text='{text}'", str(tmp_path / name))
        return str(tmp_path / name)

    said = say("said.wav", "The quick brown fox jumps over the lazy dog")
    other = say("other.wav", "Please remember to buy milk and eggs tomorrow morning")
    ffmpeg("-i", said, "-ar", "44100", "-ac", "2", "-c:a", "aac", str(tmp_path / "said.m4a"))
    assert vlc.compare_audios(str(tmp_path / "said.m4a"), said).score == 1.0
    assert vlc.compare_audios(other, said).score == 0.0


def test_dtw_aligns_a_stretched_sequence_at_no_cost():
    a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    stretched = np.repeat(a, 3, axis=0)
    assert vlc.dtw_mean_cost(vlc._cosine_distances(a, stretched)) == pytest.approx(0.0)
    # Reversed, the cheapest alignment is the diagonal: 0.29 + 0 + 0.29 over 3 steps.
    corner = 1 - np.sqrt(0.5)
    assert vlc.dtw_mean_cost(vlc._cosine_distances(a, a[::-1])) == pytest.approx(2 * corner / 3)


# ---------------------------------------------------------------- video

@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    folder = tmp_path_factory.mktemp("video")
    paths = {name: str(folder / name) for name in
             ("clip.mp4", "clip.avi", "short.mp4", "half_other.mp4", "other.mp4")}
    h264 = ["-c:v", "libx264", "-pix_fmt", "yuv420p"]
    ffmpeg("-f", "lavfi", "-i", "testsrc=d=2:s=160x120:r=10", *h264, paths["clip.mp4"])
    ffmpeg("-i", paths["clip.mp4"], "-c:v", "mpeg4", "-q:v", "5", paths["clip.avi"])
    ffmpeg("-f", "lavfi", "-i", "testsrc=d=1:s=160x120:r=10", *h264, paths["short.mp4"])
    ffmpeg("-f", "lavfi", "-i", "testsrc=d=1:s=160x120:r=10",
           "-f", "lavfi", "-i", "mandelbrot=s=160x120:r=10",
           "-filter_complex", "[1]trim=duration=1[m];[0][m]concat=n=2:v=1", *h264,
           paths["half_other.mp4"])
    ffmpeg("-f", "lavfi", "-i", "mandelbrot=s=160x120:r=10", "-t", "2", *h264, paths["other.mp4"])
    (folder / "corrupt.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42 not a movie")
    paths["corrupt.mp4"] = str(folder / "corrupt.mp4")
    return paths


def test_same_video_in_another_codec_matches(videos):
    assert vlc.compare_videos(videos["clip.avi"], videos["clip.mp4"]).score == 1.0


def test_different_or_shorter_video_does_not_match(videos):
    assert vlc.compare_videos(videos["other.mp4"], videos["clip.mp4"]).score == 0.0
    assert vlc.compare_videos(videos["short.mp4"], videos["clip.mp4"]).score == 0.0
    assert vlc.compare_videos(videos["half_other.mp4"], videos["clip.mp4"]).score == 0.0


def test_max_frames_to_check_limits_the_comparison(videos):
    """The first second (10 frames) of these videos is the same."""
    assert vlc.compare_videos(videos["half_other.mp4"], videos["clip.mp4"],
                              max_frames_to_check=10).score == 1.0
    assert vlc.compare_videos(videos["short.mp4"], videos["clip.mp4"],
                              max_frames_to_check=10).score == 1.0


@pytest.mark.parametrize("bad", [None, "missing", "corrupt.mp4"])
def test_unreadable_video_scores_0(videos, bad):
    path = videos.get(bad, "/nonexistent/x.mp4") if bad else None
    assert vlc.compare_videos(path, videos["clip.mp4"]).score == 0.0
    assert vlc.compare_videos(path, path).score == 0.0  # OSWorld calls two unreadable videos equal


# ---------------------------------------------------------------- MP3 tags

@pytest.fixture(scope="module")
def mp3s(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mp3")
    untagged = str(folder / "untagged.mp3")
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "libmp3lame",
           "-id3v2_version", "0", "-map_metadata", "-1", untagged)
    tagged = str(folder / "tagged.mp3")
    shutil.copy(untagged, tagged)
    tags = EasyID3()
    tags.update({"title": "Yellow Submarine", "artist": ["The Beatles", "George Martin"],
                 "album": "Revolver", "date": "1966"})
    tags.save(tagged)
    (folder / "corrupt.mp3").write_bytes(b"ID3\x04\x00\x00\x00\x00\x00\x10not an mp3")
    return {"tagged": tagged, "untagged": untagged, "corrupt": str(folder / "corrupt.mp3")}


def test_mp3_tags_match_rules(mp3s):
    meta = {"title": {"method": "eq", "ref": "Yellow Submarine"},
            "artist": {"method": "eq", "ref": "The Beatles,George Martin"},
            "album": {"method": "re.IGNORECASE", "ref": "^revolver$"},
            "date": {"method": "approx:1", "ref": 1967}}
    assert vlc.check_mp3_meta(mp3s["tagged"], meta).score == 1.0


def test_mp3_tag_mismatch_fails(mp3s):
    assert vlc.check_mp3_meta(mp3s["tagged"], {"title": {"method": "eq", "ref": "Help!"}}).score == 0.0
    assert vlc.check_mp3_meta(mp3s["tagged"], {"album": {"method": "re", "ref": "^revolver$"}}).score == 0.0
    assert vlc.check_mp3_meta(mp3s["tagged"], {"title": {"method": "contains", "ref": "Y"}}).score == 0.0


def test_untagged_mp3_reads_as_empty_tags(mp3s):
    assert vlc.check_mp3_meta(mp3s["untagged"], {"title": {"method": "eq", "ref": "Yellow Submarine"}}).score == 0.0
    assert vlc.check_mp3_meta(mp3s["untagged"], {"title": {"method": "eq", "ref": ""}}).score == 1.0


@pytest.mark.parametrize("bad", [None, "/nonexistent/song.mp3", "corrupt"])
def test_unreadable_mp3_scores_0(mp3s, bad):
    path = mp3s.get(bad, bad)
    assert vlc.check_mp3_meta(path, {"title": {"method": "eq", "ref": ""}}).score == 0.0
