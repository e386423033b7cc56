"""VLC getters: what is playing (VLC's HTTP interface), its settings file, the default video player."""
from __future__ import annotations

import logging
import shlex
from collections import Counter

from ..context import EvalContext, ServiceUnavailable
from ..registry import getter, requires
from .files import cache_target, desktop_file, save_in_cache

log = logging.getLogger("osworld.getters.vlc")

# OSWorld's desktop image runs VLC's HTTP interface with this password (user name empty).
VLC_HTTP_PASSWORD = "password"
VLCRC = ".config/vlc/vlcrc"
# Video types a desktop's default player is asked for; the answer most of them give wins.
# The video types OSWorld's getter asks about, in its order; it asks about each twice but
# x-ogm+ogg, so they weigh in the count that way.
_VIDEO_KINDS = ("3gp", "3gpp", "3gpp2", "avi", "divx", "dv", "fli", "flv", "mp2t", "mp4", "mp4v-es", "mpeg",
                "mpeg-system", "msvideo", "ogg", "quicktime", "vnd.divx", "vnd.mpegurl", "vnd.rn-realvideo", "webm",
                "x-anim", "x-avi", "x-flc", "x-fli", "x-flv", "x-m4v", "x-matroska", "x-mpeg", "x-mpeg-system",
                "x-mpeg2", "x-ms-asf", "x-ms-asf-plugin", "x-ms-asx", "x-ms-wm", "x-ms-wmv", "x-ms-wmx", "x-ms-wvx",
                "x-msvideo", "x-nsv", "x-ogm", "x-ogm+ogg", "x-theora", "x-theora+ogg")
VIDEO_TYPES = tuple(kind for kind in _VIDEO_KINDS for _ in range(1 if kind == "x-ogm+ogg" else 2))


@getter("vlc_playing_info")
@requires("dest")
def vlc_playing_info(ctx: EvalContext, config: dict) -> str | None:
    """VLC's /requests/status.xml (state, position, the playing file's metadata), saved as config["dest"].

    None when nothing answers on VLC's HTTP port (VLC is closed, or runs without its HTTP interface).
    """
    cache_target(ctx, config, config["dest"])  # refused before VLC is asked
    try:
        response = ctx.http("vlc_http", "/requests/status.xml", auth=("", VLC_HTTP_PASSWORD))
    except ServiceUnavailable as e:
        log.warning("vlc_playing_info: VLC's HTTP interface did not answer: %s", e)
        return None
    if response.status != 200:
        log.warning("vlc_playing_info: VLC's HTTP interface answered HTTP %d", response.status)
        return None
    return save_in_cache(ctx, config, config["dest"], response.body)


@getter("vlc_config")
@requires("dest")
def vlc_config(ctx: EvalContext, config: dict) -> str | None:
    """VLC's settings file (~/.config/vlc/vlcrc), saved as config["dest"]; None when VLC never saved one."""
    cache_target(ctx, config, config["dest"])
    return desktop_file(ctx, str(ctx.home() / VLCRC), config["dest"])


@getter("default_video_player")
def default_video_player(ctx: EvalContext, config: dict) -> str | None:
    """The .desktop file (e.g. "vlc.desktop") that opens most video types, per `xdg-mime`;
    None when no type has one."""
    types = " ".join(shlex.quote(f"video/{kind}") for kind in VIDEO_TYPES)
    script = f'for type in {types}; do printf "%s\\n" "$(xdg-mime query default "$type" 2>/dev/null)"; done'
    output = ctx.run_command(script, shell=True).output
    players = Counter(line.strip() for line in output.splitlines() if line.strip())
    return players.most_common(1)[0][0] if players else None
