"""Chrome, VLC and GIMP getters against a real desktop.

Chromium runs through the `google-chrome` shim, as OSWorld's task files start it, and serves
pages from a local HTTP server in the desktop; profile state is seeded the way task files seed
it (a Preferences and a Bookmarks file written before the browser starts) and read back after
`pkill chrome`, the postconfig OSWorld's tasks use to make Chrome write its files.
"""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest

from desktop_env.a11y_namespaces import xmlns_declarations
from desktop_env.desktop_env import DesktopEnv
from desktop_env.evaluators import registry
from desktop_env.evaluators.context import LiveContext
from desktop_env.evaluators.getters import chrome, gimp, vlc
from desktop_env.evaluators.recording import RecordingContext, ReplayContext
from desktop_env.providers.local.boot.sandbox import SANDBOX_SRC

SHIM = f"{SANDBOX_SRC}/desktop_env/server/shims/google-chrome"
SITE = "http://127.0.0.1:8000"

PAGE_A = b"""<html><head><title>Page A</title></head><body><p>first page</p>
<script>document.cookie = 'flavour=oat; max-age=86400';</script></body></html>"""

PAGE_B = b"""<!doctype html><html><head><title>Page B</title></head><body>
<h2 class="city">Paris</h2>
<div class="item">one</div><div class="item">two</div>
<div class="route">SEA<span class="sep">-</span>NYC</div>
<div class="card"><h3>First</h3></div><div class="card"><p>no heading</p></div>
<div class="card"><h3>Third</h3></div>
<ul class="crumbs">
  <li class="catAllProducts"><span>Toys</span></li><li class="catAllProducts"><span>Kids</span></li>
</ul>
<label>Guests: <b>2 adults</b></label>
<input id="who" value=" Ada ">
<a id="back" href="/a.html">to page A</a>
</body></html>"""

# What a task's setup writes before starting Chrome (OSWorld's tasks do it with jq).
PREFERENCES = {
    "browser": {"has_seen_welcome_page": True, "check_default_browser": False, "theme": {"color_scheme2": 2}},
    "profile": {"name": "Thomas"},
    "webkit": {"webprefs": {"default_font_size": 20, "minimum_font_size": 8}},
    "default_search_provider_data": {"template_url_data": {
        "short_name": "Bing", "keyword": "bing.com", "url": "https://www.bing.com/search?q={searchTerms}"}},
    "enable_do_not_track": True,
    "safebrowsing": {"enabled": False, "enhanced": False},
}

BOOKMARKS = {
    "checksum": "",
    "version": 1,
    "roots": {
        "bookmark_bar": {"id": "1", "name": "Bookmarks bar", "type": "folder", "date_added": "13439774000000000",
                         "children": [
                             {"id": "4", "name": "Favorites", "type": "folder", "date_added": "13439774000000000",
                              "children": [{"id": "5", "name": "Page A", "type": "url", "url": f"{SITE}/a.html",
                                            "date_added": "13439774000000000"}]},
                             {"id": "6", "name": "Page B", "type": "url", "url": f"{SITE}/b.html",
                              "date_added": "13439774000000000"}]},
        "other": {"id": "2", "name": "Other bookmarks", "type": "folder", "date_added": "13439774000000000",
                  "children": []},
        "synced": {"id": "3", "name": "Mobile bookmarks", "type": "folder", "date_added": "13439774000000000",
                   "children": []},
    },
}

VLCRC = b"[qt]\nqt-max-volume=200\n[core]\nrecursive=expand\n"
GIMPRC = b'(default-image\n    (width 1920)\n    (height 1080))\n(undo-levels 99)\n'


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


def shell(env, script: str) -> str:
    return env.controller.run_command(script, shell=True)["output"]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    desktop = DesktopEnv(action_space="pyautogui", screen_size=(1280, 720), require_a11y_tree=False)
    desktop.cache_dir = str(tmp_path_factory.mktemp("getter-cache"))
    yield desktop
    desktop.close()


# Where the shim's stderr and exit status go, so that a failure says how Chromium ended.
CHROMIUM_LOG = "/tmp/chromium.log"
CHROMIUM_STATUS = "/tmp/chromium.status"
# How long Chromium runs before `pkill chrome` at the least. OSWorld's tasks stop Chrome after an agent's
# steps, never in its first seconds; by then Chromium has made its periodic commits (History every 10 s).
# Without this wait, a test run that hands this module's last tests to another worker (xdist's work
# stealing) stops a Chromium that is a second old: on CI, under load, one such Chromium was found to
# have written neither History nor its Preferences.
CHROMIUM_LIFETIME_S = 12.0


@pytest.fixture(scope="module")
def browser(env) -> float:
    """Chromium started by the shim on the debugging port, showing pages A then B (A active); gives the
    time.monotonic() it was launched at."""
    controller = env.controller
    controller.upload_file("/home/user/site/a.html", PAGE_A)
    controller.upload_file("/home/user/site/b.html", PAGE_B)
    controller.upload_file("/home/user/.config/chromium/Default/Preferences", json.dumps(PREFERENCES).encode())
    controller.upload_file("/home/user/.config/chromium/Default/Bookmarks", json.dumps(BOOKMARKS).encode())
    controller.launch(["python3", "-m", "http.server", "8000", "--bind", "127.0.0.1", "--directory", "/home/user/site"])
    launched = time.monotonic()
    # sh runs the shim as a child, so the shim's process is still named google-chrome for `pkill chrome`.
    controller.launch(["sh", "-c", f'"$0" "$@" 2>{CHROMIUM_LOG}; echo "$?" >{CHROMIUM_STATUS}',
                       SHIM, "--remote-debugging-port=9222", f"{SITE}/a.html", f"{SITE}/b.html?q=cats&sort=new"])
    wait_for(lambda: tab_titles(env) == ["Page A", "Page B"], 30, "Chromium to show both pages")
    return launched


def tab_titles(env) -> list[str]:
    try:
        return [tab.title for tab in chrome.DevTools.of(LiveContext(env)).tabs()]
    except chrome.DevToolsUnavailable:
        return []  # not listening yet


def activate(env, url_part: str) -> None:
    ctx = LiveContext(env)
    tab = next(tab for tab in chrome.DevTools.of(ctx).tabs() if url_part in tab.url)
    assert ctx.http("chrome_devtools", f"/json/activate/{tab.id}").status == 200
    # None while Chrome shows no active tab yet: keep waiting
    wait_for(lambda: url_part in (chrome.active_url_from_accessTree(LiveContext(env), {}) or ""), 5,
             f"{url_part} to be active")


@pytest.fixture(scope="module")
def browser_closed(env, browser) -> str:
    """After OSWorld's postconfig `pkill chrome`: Chromium has exited and written its profile. Gives how
    it ended (the shim's exit status and the end of Chromium's stderr), for the tests' messages."""
    time.sleep(max(0.0, browser + CHROMIUM_LIFETIME_S - time.monotonic()))
    env.controller.run_command(["pkill", "chrome"])
    # The shim exits once Chromium's browser process has: its status is written last.
    status = wait_for(lambda: shell(env, f"cat {CHROMIUM_STATUS} 2>/dev/null || true").strip(), 15,
                      "Chromium to exit")
    wait_for(lambda: not shell(env, "pgrep -x chromium || true").strip(), 15, "Chromium's processes to exit")
    return f"the shim exited with {status}; Chromium's stderr ended with:\n" + \
        shell(env, f"tail -n 15 {CHROMIUM_LOG} 2>/dev/null || true")


# -- the shim -----------------------------------------------------------------------------------

@pytest.mark.desktop
def test_shim_runs_chromium_sandboxed_on_a_profile_shared_with_google_chrome_paths(env, browser):
    assert shell(env, "readlink ~/.config/google-chrome").strip() == "chromium"
    seccomp = shell(env, "for pid in $(pgrep -f 'type=[r]enderer'); do grep Seccomp: /proc/$pid/status; done")
    assert seccomp and all(line.split()[-1] == "2" for line in seccomp.splitlines())


# -- the live browser ---------------------------------------------------------------------------

@pytest.mark.desktop
def test_open_tabs_info_lists_every_tab_most_recently_active_first(env, browser):
    activate(env, "a.html")
    assert chrome.open_tabs_info(LiveContext(env), {}) == [
        {"title": "Page A", "url": f"{SITE}/a.html"},
        {"title": "Page B", "url": f"{SITE}/b.html?q=cats&sort=new"},
    ]


@pytest.mark.desktop
def test_active_tab_info_follows_the_tab_the_user_switches_to(env, browser):
    activate(env, "a.html")
    first = chrome.active_tab_info(LiveContext(env), {})
    assert (first["title"], first["url"]) == ("Page A", f"{SITE}/a.html")
    assert "<p>first page</p>" in first["content"]

    env.controller.execute_python_command("pyautogui.hotkey('ctrl', 'tab')")
    wait_for(lambda: "b.html" in chrome.active_url_from_accessTree(LiveContext(env), {}), 5, "ctrl+tab to switch tabs")
    second = chrome.active_tab_info(LiveContext(env), {})
    assert second["title"] == "Page B"
    assert second["content"].startswith("<!DOCTYPE html><html>")
    assert '<h2 class="city">Paris</h2>' in second["content"]


@pytest.mark.desktop
def test_url_getters_read_the_active_tabs_address(env, browser, tmp_path):
    activate(env, "b.html")
    ctx = RecordingContext(LiveContext(env))
    assert chrome.active_url_from_accessTree(ctx, {"goto_prefix": "https://www."}) == f"{SITE}/b.html?q=cats&sort=new"
    assert chrome.active_tab_url_parse(ctx, {"parse_keys": ["q", "sort", "page"], "replace": {"sort": "order"}}) == \
        {"q": "cats", "page": "", "order": "new"}
    assert chrome.active_tab_url_parse(ctx, {"parse_keys": ["q"], "split_list": True}) == {"q": ["cats"]}
    assert chrome.url_dashPart(ctx, {"partIndex": -1, "needDeleteId": True, "returnType": "json", "key": "page"}) == \
        {"page": "b.html"}
    assert chrome.url_dashPart(ctx, {"partIndex": 2, "needDeleteId": False, "returnType": "string"}) == "127.0.0.1:8000"
    # The tab list came over HTTP through the context: recorded, so a rescore gets the same URL offline.
    assert {call["op"] for call in ctx.calls} == {"http"}
    ctx.write_blobs(tmp_path / "files")
    offline = ReplayContext(ctx.manifest(), tmp_path / "files", tmp_path, None, {})
    assert chrome.url_dashPart(offline, {"partIndex": -1, "needDeleteId": True, "returnType": "string"}) == "b.html"


@pytest.mark.desktop
def test_active_tab_html_parse_reads_elements_by_category(env, browser):
    activate(env, "b.html")
    parse = lambda **config: chrome.active_tab_html_parse(LiveContext(env), config)  # noqa: E731
    assert parse(category="xpath", xpathObject={"//h2[@class='city']": "city", "//h1": "missing"}) == \
        {"city": "Paris", "missing": ""}
    assert parse(category="input", inputObject={"//input[@id='who']": "who"}) == {"who": "Ada"}
    assert parse(category="label", labelObject={"guests:": "guests"}) == {"guests": "Guests: 2 adults"}
    assert parse(category="class",
                 class_singleObject={"city": "city"},
                 class_multiObject={"item": {"1": "second", "5": "sixth"}},
                 class_multiObject_child={"route": {"0": "from", "1": "to"}},
                 class_multiObject_only_child={"card": {"1": "heading"}},
                 class_multiObject_search_exist={"item": ["one", "three", "is_other_exist"]}) == {
        "city": "Paris", "second": "two", "sixth": "", "from": "SEA", "to": "NYC", "heading": "Third",
        "one": True, "three": False, "is_other_exist": True}
    assert parse(category="class&url",
                 class_multiObject_li={"crumbs": ["Toys", "Kids"]},
                 url_include_expected=["cats", "dogs"],
                 url_include_expected_multichoice={"order=": "Sorted", "sort=new": "Sorted"}) == {
        "toys": True, "kids": True, "is_other_exist": False, "cats": True, "dogs": False, "sorted": True}


@pytest.mark.desktop
def test_page_info_loads_a_url_in_a_new_tab_and_closes_it(env, browser):
    info = chrome.page_info(LiveContext(env), {"url": f"{SITE}/a.html"})
    assert (info["title"], info["url"]) == ("Page A", f"{SITE}/a.html")
    assert len(chrome.open_tabs_info(LiveContext(env), {})) == 2


@pytest.mark.desktop
def test_pdf_from_url_prints_the_page_into_the_cache(env, browser):
    path = chrome.pdf_from_url(LiveContext(env), {"path": f"{SITE}/b.html", "dest": "b.pdf"})
    assert path == str(Path(env.cache_dir) / "b.pdf")
    assert Path(path).read_bytes().startswith(b"%PDF-")


@pytest.mark.desktop
def test_info_from_website_reads_elements_and_follows_clicks(env, browser):
    infos = [{"action": "inner_text", "selector": ".city"},
             {"action": "attribute", "selector": "#who", "attribute": "value"},
             {"action": "click_and_inner_text", "selector": ["#back", "p"]},
             {"action": "click_and_attribute", "selector": ["#back", "script"], "attribute": "src"},
             {"action": "inner_text", "selector": ".route"}]
    config = {"url": f"{SITE}/b.html", "infos": infos, "backups": ["stale"]}
    assert chrome.info_from_website(LiveContext(env), config) == ["Paris", " Ada ", "first page", None, "SEA-NYC"]
    assert len(chrome.open_tabs_info(LiveContext(env), {})) == 2


@pytest.mark.desktop
def test_number_of_search_results_counts_the_matches_on_a_page_it_opens_and_closes(env, browser):
    assert chrome.number_of_search_results(LiveContext(env), {"url": f"{SITE}/b.html", "selector": ".item"}) == 2
    assert chrome.number_of_search_results(LiveContext(env), {}) == 0  # OSWorld's Google search, offline
    assert len(chrome.open_tabs_info(LiveContext(env), {})) == 2


@pytest.mark.desktop
def test_info_from_website_falls_back_to_the_backups_offline(env, browser):
    config = {"url": "https://scholar.google.com/citations?user=WLN3QrAAAAAJ", "backups": ["Yann LeCun"],
              "infos": [{"action": "inner_text", "selector": "#gsc_prf_in"}]}
    started = time.monotonic()
    assert chrome.info_from_website(LiveContext(env), config) == ["Yann LeCun"]
    assert time.monotonic() - started < 5


# -- profile files, after `pkill chrome` --------------------------------------------------------

@pytest.mark.desktop
def test_preferences_getters_read_the_settings_chrome_kept(env, browser_closed):
    assert chrome.default_search_engine(LiveContext(env), {}) == "Bing"
    assert chrome.profile_name(LiveContext(env), {}) == "Thomas"
    assert chrome.chrome_font_size(LiveContext(env), {}) == \
        {"default_fixed_font_size": 13, "default_font_size": 20, "minimum_font_size": 8}
    assert chrome.enable_do_not_track(LiveContext(env), {}) == "true"
    assert chrome.enable_safe_browsing(LiveContext(env), {}) == "false"
    assert chrome.chrome_appearance_mode_ui(LiveContext(env), {}) == "dark"
    assert chrome.chrome_language(LiveContext(env), {}) == "en-US"
    assert chrome.enabled_experiments(LiveContext(env), {}) == []
    assert "Chromium PDF Viewer" in chrome.find_installed_extension_name(LiveContext(env), {}), browser_closed
    # the PDF viewer's folder in whichever Chromium the desktop runs (Chromium 120's is mounted under /run)
    assert any(path.endswith("/usr/lib/chromium/resources/pdf")
               for path in chrome.find_unpacked_extension_path(LiveContext(env), {}))


@pytest.mark.desktop
def test_bookmarks_gives_the_roots_of_chromes_bookmarks_file(env, browser_closed):
    bar = chrome.bookmarks(LiveContext(env), {})["bookmark_bar"]["children"]
    assert [(item["type"], item["name"]) for item in bar] == [("folder", "Favorites"), ("url", "Page B")]
    assert bar[0]["children"][0]["url"] == f"{SITE}/a.html"


@pytest.mark.desktop
def test_history_and_cookies_hold_the_visits_once_pkill_chrome_closed_chromium(env, browser_closed):
    visited = {url: title for url, title, _ in chrome.history(LiveContext(env), {"dest": "history.sqlite"})}
    assert visited.get(f"{SITE}/a.html") == "Page A", browser_closed
    assert visited[f"{SITE}/b.html?q=cats&sort=new"] == "Page B"
    assert (Path(env.cache_dir) / "history.sqlite").is_file()
    cookies = chrome.cookie_data(LiveContext(env), {"dest": "cookies.sqlite"})
    assert [(row[1], row[3]) for row in cookies] == [("127.0.0.1", "flavour")]  # (host_key, name)


@pytest.mark.desktop
def test_live_browser_getters_give_none_once_chrome_is_closed(env, browser_closed):
    assert chrome.open_tabs_info(LiveContext(env), {}) is None
    assert chrome.active_tab_info(LiveContext(env), {}) is None
    assert chrome.page_info(LiveContext(env), {"url": f"{SITE}/a.html"}) is None


@pytest.mark.desktop
def test_shortcuts_on_desktop_gives_each_launcher_file(env):
    launcher = b"[Desktop Entry]\nType=Application\nName=Play Puzzle Game 2048\nExec=chromium --app=x\n"
    env.controller.upload_file("/home/user/Desktop/game.desktop", launcher)
    env.controller.upload_file("/home/user/Desktop/notes.txt", b"not a launcher")
    assert chrome.shortcuts_on_desktop(LiveContext(env), {}) == {"game.desktop": launcher.decode()}


# -- VLC and GIMP -------------------------------------------------------------------------------

@pytest.mark.desktop
def test_vlc_is_not_the_default_video_player_until_the_user_makes_it_so(env):
    # as on OSWorld's VM: GNOME Videos plays video until the task's user picks VLC
    assert vlc.default_video_player(LiveContext(env), {}) == "org.gnome.Totem.desktop"
    assert shell(env, "xdg-mime query default video/mp4").strip() == "org.gnome.Totem.desktop"
    types = " ".join(sorted({f"video/{kind}" for kind in vlc.VIDEO_TYPES}))
    env.controller.run_command(f"xdg-mime default vlc.desktop {types}", shell=True)
    assert vlc.default_video_player(LiveContext(env), {}) == "vlc.desktop"


@pytest.mark.desktop
def test_gnome_settings_start_at_the_vms_values(env):
    assert shell(env, "gsettings get org.gnome.desktop.screensaver lock-enabled").strip() == "false"
    env.controller.run_command("gsettings set org.gnome.desktop.screensaver lock-enabled true", shell=True)
    assert shell(env, "gsettings get org.gnome.desktop.screensaver lock-enabled").strip() == "true"


@pytest.mark.desktop
def test_vlc_config_fetches_vlcrc(env):
    env.controller.upload_file("/home/user/.config/vlc/vlcrc", VLCRC)
    assert Path(vlc.vlc_config(LiveContext(env), {"dest": "vlcrc"})).read_bytes() == VLCRC


@pytest.mark.desktop
def test_vlc_playing_info_saves_the_http_interfaces_status(env):
    assert vlc.vlc_playing_info(LiveContext(env), {"dest": "status.xml"}) is None
    shell(env, "ffmpeg -loglevel error -f lavfi -i testsrc=duration=30:size=320x240:rate=10 "
               "-pix_fmt yuv420p -y ~/Videos/clip.mp4")
    env.controller.launch(["vlc", "--extraintf", "http", "--http-password", vlc.VLC_HTTP_PASSWORD,
                           "--no-audio", "--no-video-title-show", "/home/user/Videos/clip.mp4"])

    def playing():
        path = vlc.vlc_playing_info(LiveContext(env), {"dest": "status.xml"})
        return path if path and ET.parse(path).findtext("state") == "playing" else None

    status = ET.parse(wait_for(playing, 20, "VLC to play the clip"))
    assert status.find(".//info[@name='filename']").text == "clip.mp4"


@pytest.mark.desktop
def test_gimp_config_file_fetches_a_file_of_gimps_config_folder(env):
    env.controller.upload_file("/home/user/.config/GIMP/2.10/gimprc", GIMPRC)
    path = gimp.gimp_config_file(LiveContext(env), {"file_name": "gimprc", "dest": "gimprc"})
    assert Path(path).read_bytes() == GIMPRC
    assert gimp.gimp_config_file(LiveContext(env), {"file_name": "menurc", "dest": "menurc"}) is None
    # The session GIMP restores its maximized window from is there from the start, as on the VM.
    session = gimp.gimp_config_file(LiveContext(env), {"file_name": "sessionrc", "dest": "sessionrc"})
    assert '(maximized "yes")' in Path(session).read_text()


# -- reading the address bar (no desktop needed) -------------------------------------------------

TREE = f"""<desktop-frame{xmlns_declarations("st")}>
<application name="Thunar"><entry name="Address and search bar">not a browser</entry></application>
<application name="Chromium"><frame name="Page B - Chromium"><tool-bar name="">
<entry name="Address and search bar" st:focusable="true">drugs.com/npc/</entry>
</tool-bar></frame></application></desktop-frame>"""


def test_address_bar_text_reads_the_browsers_address_entry():
    assert chrome.address_bar_text(TREE) == "drugs.com/npc/"
    assert chrome.address_bar_text(TREE.replace("Chromium", "Google Chrome")) == "drugs.com/npc/"
    assert chrome.address_bar_text("<desktop-frame/>") is None
    assert chrome.address_bar_text("not xml") is None


@pytest.mark.parametrize("text, prefix, url", [
    ("drugs.com/npc/", "https://www.", "https://www.drugs.com/npc/"),
    ("www.drugs.com/npc/", "https://www.", "https://www.drugs.com/npc/"),
    ("discussions.flightaware.com/t/1", "https://", "https://discussions.flightaware.com/t/1"),
    ("chrome://settings/appearance", "", "chrome://settings/appearance"),
    ("file:///home/user/a.html", "https://", "file:///home/user/a.html"),
    ("about:blank", "https://", "about:blank"),
    ("localhost:8000/a.html", "http://", "http://localhost:8000/a.html"),
])
def test_url_from_address_bar_puts_back_the_hidden_prefix_only_where_it_is_missing(text, prefix, url):
    assert chrome.url_from_address_bar(text, prefix) == url


# -- profile databases Chrome was killed writing (no desktop needed) ------------------------------

class FilesOnlyController:
    """A desktop that only serves files: {path on the desktop: bytes}."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files

    def get_vm_desktop_path(self) -> str:
        return "/home/user/Desktop"

    def get_file(self, path: str) -> bytes | None:
        return self.files.get(path)


def test_history_reads_the_last_committed_state_of_a_database_chrome_died_writing(tmp_path):
    live = tmp_path / "History"
    with sqlite3.connect(live) as db:
        db.execute("CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT, title TEXT, last_visit_time INTEGER)")
        db.executemany("INSERT INTO urls (url, title, last_visit_time) VALUES (?, 'kept', ?)",
                       [(f"https://site{i}.example/", i) for i in range(2000)])
    # A writer that dies mid-transaction after its small page cache spilled into the file.
    subprocess.run([sys.executable, "-c", (
        f"import os, sqlite3; db = sqlite3.connect({str(live)!r}); db.execute('PRAGMA cache_size=2'); "
        "db.execute(\"UPDATE urls SET title = 'uncommitted'\"); os._exit(0)")], check=True)
    profile = "/home/user/.config/google-chrome/Default/History"
    env = SimpleNamespace(cache_dir=str(tmp_path / "cache"), controller=FilesOnlyController({
        profile: live.read_bytes(), profile + "-journal": Path(f"{live}-journal").read_bytes()}))

    rows = chrome.history(LiveContext(env), {"dest": "history.sqlite"})

    assert len(rows) == 2000
    assert {title for _, title, _ in rows} == {"kept"}


def test_profile_getters_give_none_when_chrome_never_wrote_the_file(tmp_path):
    env = SimpleNamespace(cache_dir=str(tmp_path), controller=FilesOnlyController({}))
    assert chrome.history(LiveContext(env), {"dest": "history.sqlite"}) is None
    assert chrome.bookmarks(LiveContext(env), {}) is None
    assert chrome.default_search_engine(LiveContext(env), {}) is None


def test_profile_getters_fall_back_to_chromiums_own_folder_and_chromes_defaults(tmp_path):
    preferences = {"webkit": {"webprefs": {"minimum_font_size": 6}}}
    env = SimpleNamespace(cache_dir=str(tmp_path), controller=FilesOnlyController({
        "/home/user/.config/chromium/Default/Preferences": json.dumps(preferences).encode(),
        "/home/user/.config/chromium/Default/History": b"not a database"}))
    assert chrome.default_search_engine(LiveContext(env), {}) == "Google"
    assert chrome.chrome_font_size(LiveContext(env), {}) == \
        {"default_fixed_font_size": 13, "default_font_size": 16, "minimum_font_size": 6}
    assert chrome.enable_safe_browsing(LiveContext(env), {}) == "true"
    assert chrome.chrome_appearance_mode_ui(LiveContext(env), {}) == "system"
    assert chrome.history(LiveContext(env), {"dest": "history.sqlite"}) is None


def prefs_env(tmp_path, preferences: dict | None) -> LiveContext:
    files = {} if preferences is None else {
        "/home/user/.config/google-chrome/Default/Preferences": json.dumps(preferences).encode()}
    return LiveContext(SimpleNamespace(cache_dir=str(tmp_path), controller=FilesOnlyController(files)))


@pytest.mark.parametrize("preferences, scheme", [
    (None, "system"),  # Chrome never wrote Preferences: its default
    ({}, "system"),
    ({"browser": {"theme": {"color_scheme2": 2}}}, "dark"),
    ({"browser": {"theme": {"color_scheme": 1}}}, "light"),
    ({"browser": {"theme": {"color_scheme2": "Dark"}}}, "dark"),
    ({"browser": {"theme": {"color_scheme2": "0"}}}, "system"),
    ({"extensions": {"theme": {"system_theme": 0}}}, "light"),  # the classic theme, no mode chosen
    ({"browser": {"theme": {"color_scheme2": 2}}, "extensions": {"theme": {"system_theme": 0}}}, "dark"),
])
def test_chrome_color_scheme(tmp_path, preferences, scheme):
    assert chrome.chrome_color_scheme(prefs_env(tmp_path, preferences), {}) == scheme


def test_safety_startup_and_site_data_getters_read_preferences(tmp_path):
    fresh = prefs_env(tmp_path, {"profile": {"name": "Person 1"}})
    assert chrome.enable_enhanced_safety_browsing(fresh, {}) == "false"
    assert chrome.new_startup_page(fresh, {}) == "true"  # no session entry: Chrome's default, the New Tab page
    assert chrome.data_delete_automacally(fresh, {}) == "false"
    changed = prefs_env(tmp_path, {"safebrowsing": {"enabled": True, "enhanced": True},
                                   "session": {"restore_on_startup": 1},
                                   "profile": {"default_content_setting_values": {"cookies": 4}}})
    assert chrome.enable_enhanced_safety_browsing(changed, {}) == "true"
    assert chrome.new_startup_page(changed, {}) == "false"
    assert chrome.data_delete_automacally(changed, {}) == "true"
    assert chrome.new_startup_page(prefs_env(tmp_path, {"session": {"restore_on_startup": 5}}), {}) == "true"
    # What current Chromium writes on its first exit, and another site setting: no auto-delete.
    for other in ({"has_migrated_local_network_access": True}, {"notifications": 2}, {"cookies": 1}):
        assert chrome.data_delete_automacally(
            prefs_env(tmp_path, {"profile": {"default_content_setting_values": other}}), {}) == "false"
    never_written = prefs_env(tmp_path, None)
    for read in (chrome.enable_enhanced_safety_browsing, chrome.new_startup_page, chrome.data_delete_automacally):
        assert read(never_written, {}) is None


MACYS = ("https://www.macys.com/shop/mens-clothing/mens-dress-shirts/"
         "Men_regular_size_t,Price_discount_range,Sleeve_length/M,50_PERCENT_%20off%20%26%20more,Short%20Sleeve"
         "?id=20635")


def test_macys_filters_read_the_filter_segments_of_the_path():
    assert chrome.macys_filters(MACYS, ["Men_regular_size_t", "Price_discount_range", "Sleeve_length", "Brand"]) == {
        "mens_clothing": True, "shirts": True, "short_sleeve": True,
        "Men_regular_size_t": "M", "Price_discount_range": "50_PERCENT_ off & more", "Sleeve_length": "Short Sleeve"}
    several = MACYS.replace("50_PERCENT_%20off%20%26%20more",
                            "50_PERCENT_%20off%20%26%20more|30_PERCENT_%20off%20%26%20more")
    assert chrome.macys_filters(several, ["Price_discount_range"])["Price_discount_range"] == \
        "not_50_PERCENT_ off & more"
    plain = chrome.macys_filters("https://www.macys.com/shop/kids-clothes/dresses", ["Men_regular_size_t", "Brand"])
    assert plain == {"mens_clothing": None, "shirts": None, "short_sleeve": None, "Men_regular_size_t": None}


def test_url_path_parse_is_the_same_getter_as_macys_product_url_parse():
    assert registry.get_getter("url_path_parse") is registry.get_getter("macys_product_url_parse")
