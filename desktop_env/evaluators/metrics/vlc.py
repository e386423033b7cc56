"""VLC metrics (player status, vlcrc settings) and the media comparisons
OSWorld keeps beside them: images, audio, video and MP3 tags.

Inputs, as OSWorld's getters hand them over:
- `vlc_playing_info` gives the local path of VLC's HTTP `requests/status.xml`
  (`<root><state>playing</state>...<information><category name="meta">
  <info name='filename'>clip.mp4</info>...`). We also take status.json, or the
  XML/JSON text itself.
- `vlc_config` gives the local path of the user's vlcrc (`key=value` lines under
  `[section]` headers; an option still at its default is written commented out,
  `#key=default`).
- `vm_screen_size` / `vm_window_size` give `{"width": W, "height": H}` dicts.
- file getters give local paths of images, audio and video files.

Every metric returns a MetricResult (the score and what was compared); a None,
missing or unreadable input gives 0 and says which, never an exception.
Audio and video are decoded with the ffmpeg executable (it must be on PATH).
"""
from __future__ import annotations

import json
import logging
import operator
import os
import re
import subprocess
from typing import Any, Literal
from urllib.parse import unquote, urlparse
from xml.etree import ElementTree

import numpy as np
from mutagen import MutagenError
from mutagen.easyid3 import EasyID3
from mutagen.id3 import ID3NoHeaderError
from PIL import Image

from ..outcome import MetricResult, failed, passed, show, verdict
from ..registry import metric
from .gimp import open_image

logger = logging.getLogger("desktopenv.metrics.vlc")

FFMPEG_TIMEOUT_S = 300


def _read_text(path: Any) -> str | None:
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", errors="replace")
    except OSError as exc:
        logger.warning("cannot read %s: %s", path, exc)
        return None


# ---------------------------------------------------------------- player status

def read_vlc_status(status: Any) -> tuple[str, dict[str, dict[str, str]]] | None:
    """(state, {category: {info name: text}}) from VLC's status.xml/status.json.

    `status` is a file path, the document's text, or an already parsed JSON dict.
    """
    if isinstance(status, dict):
        return _status_from_json(status)
    if not isinstance(status, str):
        return None
    text = status if status.lstrip()[:1] in ("<", "{") else _read_text(status)
    if text is None:
        return None
    if text.lstrip().startswith("{"):
        try:
            return _status_from_json(json.loads(text))
        except json.JSONDecodeError:
            return None
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        logger.warning("VLC status is not XML: %s", exc)
        return None
    categories: dict[str, dict[str, str]] = {}
    for category in root.iterfind("information/category"):
        infos = categories.setdefault(category.get("name", ""), {})
        for info in category.iterfind("info"):
            infos[info.get("name", "")] = info.text or ""
    return (root.findtext("state") or "").strip(), categories


def _status_from_json(doc: Any) -> tuple[str, dict[str, dict[str, str]]] | None:
    information = doc.get("information") if isinstance(doc, dict) else None
    categories = information.get("category") if isinstance(information, dict) else {}
    if not isinstance(doc, dict) or not isinstance(categories, dict):
        return None
    infos = {name: {k: str(v) for k, v in (fields or {}).items()}
             for name, fields in categories.items() if isinstance(fields, dict)}
    return str(doc.get("state", "")), infos


def _local_name(location: str) -> str:
    """The file name in a path or file:// URI, percent-decoded."""
    path = urlparse(location).path if "://" in location else location
    return os.path.basename(unquote(path).replace("\\", "/"))


def _playing_file_matches(meta: dict[str, str], expected: str) -> bool:
    for key in ("filename", "title", "uri", "location", "name"):
        value = meta.get(key, "").strip()
        if value and (_local_name(value) == expected or value.endswith(expected)):
            return True
    return False


def _playing_url_matches(meta: dict[str, str], expected: str) -> bool:
    wanted = urlparse(expected)
    wanted_name = os.path.basename(wanted.path)
    for key in ("url", "URI", "uri", "location", "title", "filename"):
        value = meta.get(key, "").strip()
        if not value:
            continue
        if expected in value or value == wanted_name:
            return True  # streams often show only the playlist's file name
        if "://" in value:
            actual = urlparse(value)
            if actual.netloc == wanted.netloc and wanted.path and wanted.path in actual.path:
                return True
    return False


@metric("is_vlc_playing")
def is_vlc_playing(actual_status_path: Any, rule: dict | None = None) -> MetricResult:
    """1 if VLC's state is "playing" and the current item is the expected one.

    rule `{"type": "file_name", "file_name": NAME}`: a meta field (filename, title,
    uri, location, name) names that file. rule `{"type": "url", "url": URL}`: a meta
    field (url, URI, location, title, filename) contains the URL, equals its file
    name (how VLC shows HLS streams), or is a URL on the same host whose path
    contains the expected path. (OSWorld reads only the first meta field present
    and also looks at stream codec fields, which never hold a URL.)
    """
    status = read_vlc_status(actual_status_path)
    if status is None or not isinstance(rule, dict):
        return failed(f"no readable VLC status ({show(actual_status_path)})" if isinstance(rule, dict)
                      else "no rule given")
    state, categories = status
    if state != "playing":
        return failed(f"VLC's state is {state!r}, expected 'playing'")
    meta = categories.get("meta", {})
    shown = show({k: v for k, v in meta.items() if k in ("filename", "title", "url", "uri", "URI", "location", "name")})
    if rule.get("type") == "file_name" and rule.get("file_name"):
        return verdict(_playing_file_matches(meta, str(rule["file_name"])),
                       f"playing {shown}, expected the file {rule['file_name']!r}")
    if rule.get("type") == "url" and rule.get("url"):
        return verdict(_playing_url_matches(meta, str(rule["url"])), f"playing {shown}, expected {rule['url']!r}")
    logger.error("is_vlc_playing: unknown rule %r", rule)
    return failed(f"unknown rule {show(rule)} (type file_name or url)")


@metric("is_vlc_fullscreen")
def is_vlc_fullscreen(actual_window_size: Any, screen_size: Any = None) -> MetricResult:
    """1 if the VLC window's width and height equal the screen's."""
    try:
        same = all(int(actual_window_size[k]) == int(screen_size[k]) for k in ("width", "height"))
    except (TypeError, KeyError, ValueError):
        return failed(f"no window and screen sizes to compare ({show(actual_window_size)}, {show(screen_size)})")
    return verdict(same, f"the window is {actual_window_size['width']}x{actual_window_size['height']}, "
                         f"the screen {screen_size['width']}x{screen_size['height']}")


# ---------------------------------------------------------------- vlcrc settings

def read_vlcrc(path: Any) -> dict[str, str] | None:
    """Active `key=value` settings of a vlcrc; commented-out defaults are skipped."""
    text = _read_text(path)
    if text is None:
        return None
    settings: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        settings[key.strip()] = value.strip()
    return settings


def _no_vlcrc(config_path: Any) -> MetricResult:
    return failed(f"the vlcrc {show(config_path)} does not exist or cannot be read")


def _setting_equals(config_path: Any, key: str, default: str, expected: Any) -> MetricResult:
    """1 if vlcrc's `key` (or VLC's `default` when it is unset) equals `expected`."""
    settings = read_vlcrc(config_path)
    if settings is None or expected is None:
        return _no_vlcrc(config_path) if settings is None else failed(f"the rule gives no expected {key}")
    value = settings.get(key, default)
    return verdict(value == str(expected).strip(), f"{key} is {value!r}" + ("" if key in settings else " (the default)")
                   + f", expected {str(expected).strip()!r}")


def _rule_value(rule: Any, name: str) -> Any:
    return rule.get(name) if isinstance(rule, dict) else None


@metric("is_vlc_recordings_folder")
def is_vlc_recordings_folder(actual_config_path: Any, rule: dict | None = None) -> MetricResult:
    """1 if vlcrc's input-record-path is `rule["recording_file_path"]`
    (trailing slashes aside). Unset means VLC's default folder: 0."""
    settings = read_vlcrc(actual_config_path)
    expected = _rule_value(rule, "recording_file_path")
    if settings is None or not expected or not settings.get("input-record-path"):
        return _no_vlcrc(actual_config_path) if settings is None else failed(
            "the rule gives no recording_file_path" if not expected else "input-record-path is not set")
    folder = settings["input-record-path"]
    return verdict(os.path.normpath(folder) == os.path.normpath(expected),
                   f"input-record-path is {folder!r}, expected {expected!r}")


@metric("check_qt_bgcone")
def check_qt_bgcone(actual_config_path: Any, rule: dict | None = None) -> MetricResult:
    """1 if qt-bgcone (cone on the splash/background; default 1) is `expected_qt_bgcone`."""
    return _setting_equals(actual_config_path, "qt-bgcone", "1",
                           _rule_value(rule, "expected_qt_bgcone"))


@metric("check_qt_max_volume")
def check_qt_max_volume(actual_config_path: Any, rule: dict | None = None) -> MetricResult:
    """1 if qt-max-volume (default 125) is `expected_qt_max_volume`."""
    return _setting_equals(actual_config_path, "qt-max-volume", "125",
                           _rule_value(rule, "expected_qt_max_volume"))


@metric("check_qt_minimal_view")
def check_qt_minimal_view(actual_config_path: Any, rule: dict | None = None) -> MetricResult:
    """1 if qt-minimal-view (default 0) is `expected_qt_minimal_view`."""
    return _setting_equals(actual_config_path, "qt-minimal-view", "0",
                           _rule_value(rule, "expected_qt_minimal_view"))


@metric("check_play_and_exit")
def check_play_and_exit(actual_config_path: Any, rule: dict | None = None) -> MetricResult:
    """1 if play-and-exit (quit at the end of the playlist; default 0) is `expected_play_and_exit`."""
    return _setting_equals(actual_config_path, "play-and-exit", "0",
                           _rule_value(rule, "expected_play_and_exit"))


@metric("check_one_instance_when_started_from_file")
def check_one_instance_when_started_from_file(actual_config_path: Any, rule: dict | None = None) -> MetricResult:
    """1 if one-instance-when-started-from-file (default 1) is the expected value."""
    return _setting_equals(actual_config_path, "one-instance-when-started-from-file", "1",
                           _rule_value(rule, "expected_one_instance_when_started_from_file"))


@metric("check_global_key_play_pause")
def check_global_key_play_pause(actual_config_path: Any, rule: dict | None = None) -> MetricResult:
    """1 if a global play/pause hotkey is set (1) or not (0), as `expected_global_key_play_pause` says."""
    settings = read_vlcrc(actual_config_path)
    expected = _rule_value(rule, "expected_global_key_play_pause")
    if settings is None or expected is None:
        return _no_vlcrc(actual_config_path) if settings is None else failed("the rule gives no expected value")
    has_key = "1" if settings.get("global-key-play-pause", "") else "0"
    return verdict(has_key == str(expected).strip(), f"global-key-play-pause is "
                   f"{show(settings.get('global-key-play-pause', '(unset)'))}, expected "
                   f"{'a key' if str(expected).strip() == '1' else 'none'}")


DEFAULT_SLIDER_COLOURS = "153;210;153;20;210;20;255;199;15;245;39;29"


@metric("check_qt_slider_colours")
def check_qt_slider_colours(actual_config_path: Any, rule: dict | None = None) -> MetricResult:
    """Checks qt-slider-colours (the volume slider's gradient, `r;g;b;r;g;b;...`).

    rule `{"type": "match", "expected_qt_slider_colours": "..."}`: exact string;
    rule `{"type": "blackish"}`: every colour has all components below 100.
    """
    settings = read_vlcrc(actual_config_path)
    if settings is None or not isinstance(rule, dict):
        return _no_vlcrc(actual_config_path) if settings is None else failed("no rule given")
    colours = settings.get("qt-slider-colours", DEFAULT_SLIDER_COLOURS)
    if rule.get("type") == "match":
        wanted = str(rule.get("expected_qt_slider_colours", "")).strip()
        return verdict(colours == wanted, f"qt-slider-colours is {colours!r}, expected {wanted!r}")
    if rule.get("type") == "blackish":
        try:
            values = [int(v) for v in colours.split(";")]
        except ValueError:
            return failed(f"qt-slider-colours {colours!r} is not r;g;b numbers")
        return verdict(bool(values) and all(v < 100 for v in values),
                       f"qt-slider-colours is {colours!r}, expected every component below 100")
    return failed(f"unknown rule type {rule.get('type')!r} (match or blackish)")


# ---------------------------------------------------------------- images

def _ssim_grey(a: np.ndarray, b: np.ndarray) -> float | None:
    from skimage.metrics import structural_similarity

    window = min(7, *a.shape)
    window -= 1 - window % 2
    if window < 3:
        return None
    return float(structural_similarity(a, b, win_size=window, data_range=255))


@metric("compare_images")
def compare_images(image1_path: Any, image2_path: Any, reference_base_result: float | None = None) -> MetricResult:
    """Grey-level SSIM of two images (the first frame of a GIF), clipped to [0, 1].

    Both images are scaled to the smaller one's size first. With
    `reference_base_result` b (the SSIM an untouched screen scores against the
    gold image), the score is (ssim - b) / (1 - b) when ssim >= b + 0.01, else 0:
    only improvement over doing nothing counts. Without it the SSIM itself is the
    score, a fraction, as in OSWorld.
    """
    first, second = open_image(image1_path), open_image(image2_path)
    if first is None or second is None:
        path = image1_path if first is None else image2_path
        return failed(f"image {1 if first is None else 2} {show(path)} is missing or unreadable")
    images = [first, second]
    size = min((i.size for i in images), key=lambda s: s[0] * s[1])
    a, b = (np.asarray(i.convert("L").resize(size, Image.Resampling.LANCZOS)) for i in images)
    similarity = _ssim_grey(a, b)
    if similarity is None:
        return failed(f"the images are too small to compare ({size[0]}x{size[1]})")
    similarity = min(max(similarity, 0.0), 1.0)
    if reference_base_result is None:
        return MetricResult(similarity, f"grey SSIM {similarity:.3f}")
    base = float(reference_base_result)
    said = f"grey SSIM {similarity:.3f} against the base {base:g} of an untouched screen"
    if base >= 1 or similarity < base + 0.01:
        return failed(f"{said}: no improvement")
    return MetricResult((similarity - base) / (1 - base), said)


# ---------------------------------------------------------------- audio
#
# OSWorld compares audio with librosa MFCCs aligned by (fast)DTW. We compute the
# same kind of features with numpy/scipy so the project does not pull librosa:
# mono 22.05 kHz PCM from ffmpeg, 2048-sample Hann frames every 512 samples,
# 128 triangular mel bands, log power (80 dB range), DCT -> 20 MFCCs, each
# coefficient scaled by its peak over time. Exact DTW over the cosine distances
# of frames gives a mean distance d along the best alignment, and
# similarity = exp(-d), exactly 1 for identical sound.
#
# Measured with this code on synthetic speech (ffmpeg's flite) and tones: the
# same sound re-encoded (MP3, AAC), resampled, made stereo, quieter or
# loudness-normalised scores >= 0.99; delayed by 0.5 s 0.97; with the first 1 s of
# 10 s cut off 0.94. A sentence with one word changed scores 0.94, a different
# sentence in the same voice 0.72-0.86, a tone against speech or noise 0.3-0.5.
# Like OSWorld's, the measure is weak on pure tones, whose MFCCs barely change
# over time: a four-note melody with its last note changed scores 0.92.
# OSWorld returns the raw similarity, which hands unrelated sound ~0.4 credit; we
# score 1 when similarity >= `threshold` (default 0.9: the same recording, however
# encoded or slightly trimmed) and 0 otherwise.

_SAMPLE_RATE = 22050
_N_FFT = 2048
_HOP = 512
_N_MELS = 128
_N_MFCC = 20
_MAX_FRAMES = 1500  # longer audio is averaged down to this many frames, bounding DTW's cost


def decode_audio(path: Any) -> np.ndarray | None:
    """Mono float32 samples at 22.05 kHz, or None if ffmpeg cannot decode any."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    try:
        proc = subprocess.run(
            ["ffmpeg", "-nostdin", "-v", "error", "-i", os.fspath(path), "-vn",
             "-ac", "1", "-ar", str(_SAMPLE_RATE), "-f", "f32le", "pipe:1"],
            capture_output=True, timeout=FFMPEG_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        logger.warning("ffmpeg could not decode %s: %s", path, exc)
        return None
    samples = np.frombuffer(proc.stdout, dtype="<f4")
    if proc.returncode != 0 or samples.size == 0:
        logger.warning("no audio in %s: %s", path, proc.stderr.decode(errors="replace")[-300:])
        return None
    return samples.astype(np.float64)


def _mel_filterbank() -> np.ndarray:
    """(n_mels, n_fft/2+1) triangular filters, equally spaced on the mel scale, unit area."""
    def hz_to_mel(hz):
        return 2595.0 * np.log10(1.0 + hz / 700.0)

    def mel_to_hz(mel):
        return 700.0 * (10.0 ** (mel / 2595.0) - 1.0)

    edges = mel_to_hz(np.linspace(0.0, hz_to_mel(_SAMPLE_RATE / 2), _N_MELS + 2))
    freqs = np.linspace(0.0, _SAMPLE_RATE / 2, _N_FFT // 2 + 1)
    low, centre, high = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    rising = (freqs - low) / (centre - low)
    falling = (high - freqs) / (high - centre)
    return np.maximum(0.0, np.minimum(rising, falling)) * (2.0 / (high - low))


def mfcc_frames(samples: np.ndarray) -> np.ndarray:
    """(frames, 20) MFCCs, each coefficient scaled to peak magnitude 1 over time."""
    from scipy.fft import dct, rfft
    from scipy.signal import get_window

    pad_mode: Literal["reflect", "constant"] = "reflect" if samples.size > _N_FFT // 2 else "constant"
    padded = np.pad(samples, _N_FFT // 2, mode=pad_mode)  # centred frames, like librosa
    n_frames = 1 + max(0, (padded.size - _N_FFT) // _HOP)
    starts = _HOP * np.arange(n_frames)
    frames = padded[starts[:, None] + np.arange(_N_FFT)] * get_window("hann", _N_FFT)
    mel_power = (np.abs(rfft(frames, axis=1)) ** 2) @ _mel_filterbank().T
    log_mel = 10.0 * np.log10(np.maximum(mel_power, 1e-10))
    log_mel = np.maximum(log_mel, log_mel.max() - 80.0)
    coefficients = dct(log_mel, type=2, norm="ortho", axis=1)[:, :_N_MFCC]
    if len(coefficients) > _MAX_FRAMES:
        groups = np.array_split(coefficients, _MAX_FRAMES)
        coefficients = np.stack([g.mean(axis=0) for g in groups])
    peaks = np.abs(coefficients).max(axis=0)
    peaks[peaks == 0] = 1.0
    return coefficients / peaks


def _cosine_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)) cosine distances; two all-zero frames are 0 apart, zero vs not 1."""
    eps = 1e-12
    norm_a, norm_b = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    distances = 1.0 - (a / np.maximum(norm_a, eps)[:, None]) @ (b / np.maximum(norm_b, eps)[:, None]).T
    zero_a, zero_b = norm_a < eps, norm_b < eps
    distances[zero_a, :] = 1.0
    distances[:, zero_b] = 1.0
    distances[np.ix_(zero_a, zero_b)] = 0.0
    return np.clip(distances, 0.0, 2.0)


def dtw_mean_cost(cost: np.ndarray) -> float:
    """Exact DTW: the least total cost of a monotone alignment divided by its length.

    Filled one anti-diagonal at a time so each step is a vector operation.
    """
    n, m = cost.shape
    total = np.full((n + 1, m + 1), np.inf)
    length = np.zeros((n + 1, m + 1))
    total[0, 0] = 0.0
    for diagonal in range(2, n + m + 1):
        i = np.arange(max(1, diagonal - m), min(n, diagonal - 1) + 1)
        j = diagonal - i
        previous = np.stack([total[i - 1, j - 1], total[i - 1, j], total[i, j - 1]])
        previous_length = np.stack([length[i - 1, j - 1], length[i - 1, j], length[i, j - 1]])
        best = np.argmin(previous, axis=0)
        columns = np.arange(len(i))
        total[i, j] = cost[i - 1, j - 1] + previous[best, columns]
        length[i, j] = previous_length[best, columns] + 1
    return float(total[n, m] / length[n, m])


def audio_similarity(path1: Any, path2: Any) -> float | None:
    """exp(-mean DTW cosine distance of MFCC frames), in (0, 1]; None if undecodable."""
    first = decode_audio(path1)
    second = decode_audio(path2) if first is not None else None
    if first is None or second is None:
        return None
    cost = _cosine_distances(mfcc_frames(first), mfcc_frames(second))
    return float(np.exp(-dtw_mean_cost(cost)))


@metric("compare_audios")
def compare_audios(audio_path_1: Any, audio_path_2: Any, threshold: float = 0.9) -> MetricResult:
    """1 if the two files hold the same sound (MFCC/DTW similarity >= `threshold`).

    See the notes above on the measure and the threshold. (OSWorld scores two
    unreadable files as identical; here any unreadable input scores 0.)
    """
    similarity = audio_similarity(audio_path_1, audio_path_2)
    if similarity is None:
        path = audio_path_1 if decode_audio(audio_path_1) is None else audio_path_2
        return failed(f"no audio can be decoded from {show(path)}")
    return verdict(similarity >= float(threshold), f"audio similarity {similarity:.3f} (needs {float(threshold):g})")


# ---------------------------------------------------------------- video

_HASH_SIDE = 32  # frames are hashed from a 32x32 grey thumbnail, as imagehash.phash does


def video_frame_hashes(path: Any, max_frames: int) -> np.ndarray | None:
    """(frames, 64) bool perceptual hashes of the first `max_frames` frames, or None."""
    from scipy.fft import dct

    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    try:
        proc = subprocess.run(
            ["ffmpeg", "-nostdin", "-v", "error", "-i", os.fspath(path), "-an",
             "-frames:v", str(max_frames), "-fps_mode", "passthrough",
             "-vf", f"scale={_HASH_SIDE}:{_HASH_SIDE}:flags=area,format=gray",
             "-f", "rawvideo", "pipe:1"],
            capture_output=True, timeout=FFMPEG_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        logger.warning("ffmpeg could not decode %s: %s", path, exc)
        return None
    frame_bytes = _HASH_SIDE * _HASH_SIDE
    count = len(proc.stdout) // frame_bytes
    if proc.returncode != 0 or count == 0:
        return None
    frames = np.frombuffer(proc.stdout[:count * frame_bytes], dtype=np.uint8)
    frames = frames.reshape(count, _HASH_SIDE, _HASH_SIDE).astype(np.float64)
    low = dct(dct(frames, axis=1), axis=2)[:, :8, :8].reshape(count, 64)
    return low > np.median(low, axis=1, keepdims=True)


@metric("compare_videos")
def compare_videos(video_path1: Any, video_path2: Any, max_frames_to_check: int = 100,
                   threshold: int = 5) -> MetricResult:
    """1 if the videos show the same frames: of the first `max_frames_to_check`,
    at most `threshold` differ by more than `threshold` bits of their 64-bit
    perceptual hash, and neither video ends before the other within that span.
    """
    max_frames = int(max_frames_to_check)
    first = video_frame_hashes(video_path1, max_frames)
    second = video_frame_hashes(video_path2, max_frames) if first is not None else None
    if first is None or second is None:
        path = video_path1 if first is None else video_path2
        return failed(f"no video frames can be decoded from {show(path)}")
    if len(first) != len(second):
        return failed(f"{len(first)} frames vs {len(second)} (within the first {max_frames})")
    differing_bits = np.count_nonzero(first != second, axis=1)
    differing = int(np.count_nonzero(differing_bits > threshold))
    return verdict(differing <= threshold, f"{differing} of {len(first)} frames differ by more than {threshold} "
                                           f"hash bits (at most {threshold} may)")


# ---------------------------------------------------------------- MP3 tags

def _value_matches_rule(value: str, rule: dict) -> bool:
    """OSWorld's rule forms: {"method": "eq"|"ne"|"lt"|"le"|"gt"|"ge"|"re[.FLAG...]"|
    "approx:TOLERANCE", "ref": ...}."""
    method = str(rule.get("method", ""))
    ref: Any = rule.get("ref")  # a task file's JSON value
    if method.startswith("re"):
        flags = 0
        for name in method.split(".")[1:]:
            flags |= getattr(re, name, 0)
        return re.search(str(ref), value, flags) is not None
    if method in ("eq", "ne", "lt", "le", "gt", "ge"):
        return bool(getattr(operator, method)(value, ref))
    if method.startswith("approx:"):
        try:
            return abs(float(value) - float(ref)) <= float(method.split(":", 1)[1])
        except (TypeError, ValueError):
            return False
    logger.error("unknown rule method %r", method)
    return False


@metric("check_mp3_meta")
def check_mp3_meta(result: Any, meta: dict | None = None) -> MetricResult:
    """1 if every ID3 tag named in `meta` (EasyID3 names: title, artist, album,
    date, genre, ...) satisfies its rule; several values are joined with ",".

    A file with no ID3 tag at all is read as having empty tags.
    """
    if not isinstance(meta, dict):
        return failed("no tag rules given")
    if not isinstance(result, (str, os.PathLike)) or not os.path.isfile(result):
        return failed(f"the MP3 file {show(result)} does not exist")
    tags: EasyID3 | dict[str, list[str]]
    try:
        tags = EasyID3(result)
    except ID3NoHeaderError:
        tags = {}
    except MutagenError as exc:
        return failed(f"cannot read the ID3 tags of {os.path.basename(result)}: {exc}")
    for key, rule in meta.items():
        value = tags.get(key, "")
        text = ",".join(value) if isinstance(value, list) else str(value)
        if not isinstance(rule, dict) or not _value_matches_rule(text, rule):
            return failed(f"tag {key} is {text!r}, expected {show(rule)}")
    return passed(f"all {len(meta)} tags match")
