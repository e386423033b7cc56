"""Chrome getters: what the browser's profile files, its debugging port and its address bar say.

Profile files (Preferences, Local State, Bookmarks, History, Cookies) are fetched from the
desktop: from ~/.config/google-chrome, where OSWorld's Ubuntu image keeps them, else from
~/.config/chromium (Debian's Chromium; the `google-chrome` shim links the two). Chrome
writes them lazily (Preferences about 10 s after a change, History and Cookies in batches),
which is why OSWorld's tasks run `pkill chrome` before these getters; the shim turns that
into a clean exit, on which Chromium writes them all.

The live browser is read over its remote-debugging port (tasks start Chrome on 1337 and
forward 9222 to it): Chrome's JSON target list gives the tabs, and the DevTools protocol
over a WebSocket (package `websocket-client`) evaluates JavaScript in a tab or prints it to
PDF. OSWorld drives Playwright for the same; the values returned have the same shapes.
"""
from __future__ import annotations

import base64
import itertools
import json
import logging
import re
import sqlite3
import time
import xml.etree.ElementTree as ET
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlparse

import websocket  # websocket-client; only the getters that talk to a tab need it

from ...errors import DesktopEnvError
from ...waiting import poll_until
from ..context import EvalContext, HttpAnswer, ServiceUnavailable
from ..registry import getter, requires, unsupported_getter
from .files import cache_target, save_in_cache

log = logging.getLogger("osworld.getters.chrome")

PROFILE_ROOTS = (".config/google-chrome", ".config/chromium")
# Chrome's own defaults, for settings a profile has never changed.
DEFAULT_FONT_SIZES = {"default_fixed_font_size": 13, "default_font_size": 16, "minimum_font_size": 13}
COLOR_SCHEMES = {0: "system", 1: "light", 2: "dark"}
# How long a getter waits for a tab to finish loading before reading it as it is.
LOAD_TIMEOUT_S = 10.0
NEW_PAGE_TIMEOUT_S = 30.0


# -- profile files --------------------------------------------------------------------------

def _find_profile_file(ctx: EvalContext, *relatives: str) -> tuple[str, bytes] | None:
    """(desktop path, bytes) of the first of `relatives` (paths inside the profile folder) that exists."""
    home = ctx.home()
    for root in PROFILE_ROOTS:
        for relative in relatives:
            path = str(home / root / relative)
            data = ctx.read_file(path)
            if data is not None:
                return path, data
    return None


def _profile_json(ctx: EvalContext, relative: str) -> dict | None:
    found = _find_profile_file(ctx, relative)
    if found is None:
        return None
    try:
        parsed = json.loads(found[1])
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError are both ValueErrors
        log.warning("Chrome's %s is not JSON: %s", relative, e)
        return None
    return parsed if isinstance(parsed, dict) else None


def _dig(data: Any, *keys: str, default: Any = None) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return default
        data = data[key]
    return data


def _profile_rows(ctx: EvalContext, config: dict, default_dest: str, relatives: tuple[str, ...], query: str
                  ) -> list[tuple] | None:
    """Rows of `query` on a copy of one of Chrome's SQLite files, saved in the cache as config's `dest`.

    The file is copied, never opened in place: Chrome holds its databases locked while it
    runs. Its rollback journal comes along, so a copy taken mid-commit (or after Chrome was
    killed mid-commit) reads as the last committed state.
    """
    dest = config.get("dest", default_dest)
    cache_target(ctx, config, dest)  # refused before the desktop is asked
    found = _find_profile_file(ctx, *relatives)
    if found is None:
        return None
    source, data = found
    path = Path(save_in_cache(ctx, config, dest, data))
    journal = path.with_name(path.name + "-journal")
    journal.unlink(missing_ok=True)
    journal_data = ctx.read_file(source + "-journal")
    if journal_data:
        save_in_cache(ctx, config, f"{dest}-journal", journal_data)
    try:
        with closing(sqlite3.connect(path)) as db:
            return db.execute(query).fetchall()
    except sqlite3.DatabaseError as e:
        log.warning("Chrome's %s could not be read as SQLite: %s", relatives[0], e)
        return None


def _extension_settings(ctx: EvalContext) -> dict | None:
    """extensions.settings from Preferences and Secure Preferences (Chrome splits them by version)."""
    found = [_profile_json(ctx, name) for name in ("Default/Preferences", "Default/Secure Preferences")]
    if all(prefs is None for prefs in found):
        return None
    settings: dict = {}
    for prefs in found:
        entries = _dig(prefs, "extensions", "settings", default={})
        settings.update(entries if isinstance(entries, dict) else {})
    return settings


@getter("default_search_engine")
def default_search_engine(ctx: EvalContext, config: dict) -> str | None:
    """The default search engine's name; "Google" while the user never chose one (Chrome's default)."""
    prefs = _profile_json(ctx, "Default/Preferences")
    if prefs is None:
        return None
    return _dig(prefs, "default_search_provider_data", "template_url_data", "short_name", default="Google")


@getter("cookie_data")
def cookie_data(ctx: EvalContext, config: dict) -> list[tuple] | None:
    """Every row of Chrome's cookies table (creation_utc, host_key, ...), as SQLite gives them."""
    return _profile_rows(ctx, config, "Cookies", ("Default/Network/Cookies", "Default/Cookies"),
                         "SELECT * FROM cookies")


@getter("history")
def history(ctx: EvalContext, config: dict) -> list[tuple] | None:
    """(url, title, last_visit_time) of every URL in Chrome's history."""
    return _profile_rows(ctx, config, "History", ("Default/History",),
                         "SELECT url, title, last_visit_time FROM urls")


@getter("bookmarks")
def bookmarks(ctx: EvalContext, config: dict) -> dict | None:
    """The "roots" object of Chrome's Bookmarks file (bookmark_bar, other, synced)."""
    data = _profile_json(ctx, "Default/Bookmarks")
    return None if data is None else data.get("roots", {})


@getter("enabled_experiments")
def enabled_experiments(ctx: EvalContext, config: dict) -> list[str] | None:
    """chrome://flags entries the user changed, as Local State keeps them ("name@option")."""
    state = _profile_json(ctx, "Local State")
    return None if state is None else _dig(state, "browser", "enabled_labs_experiments", default=[])


@getter("chrome_language")
def chrome_language(ctx: EvalContext, config: dict) -> str | None:
    """The UI language chosen in settings; "en-US" while none was chosen."""
    state = _profile_json(ctx, "Local State")
    return None if state is None else _dig(state, "intl", "app_locale", default="en-US")


@getter("profile_name")
def profile_name(ctx: EvalContext, config: dict) -> str | None:
    prefs = _profile_json(ctx, "Default/Preferences")
    return None if prefs is None else _dig(prefs, "profile", "name")


@getter("chrome_font_size")
def chrome_font_size(ctx: EvalContext, config: dict) -> dict | None:
    """webkit.webprefs font sizes, with Chrome's defaults for the ones never changed.

    OSWorld returns the stored dict as is, which lacks default_font_size when only the
    minimum size was changed; filling in the defaults keeps the metric from failing on that.
    """
    prefs = _profile_json(ctx, "Default/Preferences")
    if prefs is None:
        return None
    return {**DEFAULT_FONT_SIZES, **_dig(prefs, "webkit", "webprefs", default={})}


@getter("chrome_appearance_mode_ui")
def chrome_appearance_mode_ui(ctx: EvalContext, config: dict) -> str | None:
    """"light", "dark" or "system", the mode chosen in chrome://settings/appearance.

    Read from Preferences (browser.theme.color_scheme2, or color_scheme in older versions);
    OSWorld reads the settings page first, which also sees a change Chrome has not written yet.
    """
    prefs = _profile_json(ctx, "Default/Preferences")
    if prefs is None:
        return None
    return _color_scheme(prefs) or "system"


def _color_scheme(prefs: dict) -> str | None:
    """"light"/"dark"/"system" from browser.theme.color_scheme2 (color_scheme in older Chromes), which
    Chrome writes as a number and some profiles as a word; None when neither is set."""
    theme = _dig(prefs, "browser", "theme", default={})
    value = theme.get("color_scheme2", theme.get("color_scheme")) if isinstance(theme, dict) else None
    if isinstance(value, str):
        word = value.strip().lower()
        if not word.isdigit():
            word = "system" if word == "default" else word
            return word if word in COLOR_SCHEMES.values() else None
        value = int(word)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return COLOR_SCHEMES.get(int(value))
    return None


@getter("chrome_color_scheme")
def chrome_color_scheme(ctx: EvalContext, config: dict) -> str:
    """"light", "dark" or "system" as the profile's Preferences say.

    As OSWorld: a profile that never wrote Preferences is "system" (Chrome's default), and a
    profile on the classic theme (extensions.theme.system_theme 0, not GTK) without a mode of
    its own reads as "light"; a mode the user chose wins over that (OSWorld says "light" then).
    """
    prefs = _profile_json(ctx, "Default/Preferences")
    if prefs is None:
        return "system"
    chosen = _color_scheme(prefs)
    if chosen in ("light", "dark"):
        return chosen
    if _dig(prefs, "extensions", "theme", "system_theme") in (0, "0", False):
        return "light"
    return "system"


@getter("enable_do_not_track")
def enable_do_not_track(ctx: EvalContext, config: dict) -> str | None:
    prefs = _profile_json(ctx, "Default/Preferences")
    return None if prefs is None else ("true" if prefs.get("enable_do_not_track") else "false")


@getter("enable_safe_browsing")
def enable_safe_browsing(ctx: EvalContext, config: dict) -> str | None:
    """"true" when standard or enhanced Safe Browsing is on.

    A profile that never changed it has Safe Browsing on (Chrome's default); OSWorld
    reads a missing key as off.
    """
    prefs = _profile_json(ctx, "Default/Preferences")
    if prefs is None:
        return None
    safe_browsing = _dig(prefs, "safebrowsing", default={})
    on = bool(safe_browsing.get("enhanced", False)) or bool(safe_browsing.get("enabled", True))
    return "true" if on else "false"


@getter("enable_enhanced_safety_browsing")
def enable_enhanced_safety_browsing(ctx: EvalContext, config: dict) -> str | None:
    """"true" when Safe Browsing's enhanced protection is on (safebrowsing.enhanced)."""
    prefs = _profile_json(ctx, "Default/Preferences")
    return None if prefs is None else ("true" if _dig(prefs, "safebrowsing", "enhanced") else "false")


# session.restore_on_startup: 1 continue where you left off, 4 open given pages, 5 the New Tab page.
RESTORE_NEW_TAB_PAGE = 5


@getter("new_startup_page")
def new_startup_page(ctx: EvalContext, config: dict) -> str | None:
    """"true" when Chrome opens the New Tab page on startup: a profile without a `session`
    entry (never changed: Chrome's default) or with session.restore_on_startup 5."""
    prefs = _profile_json(ctx, "Default/Preferences")
    if prefs is None:
        return None
    if "session" not in prefs:
        return "true"
    return "true" if _dig(prefs, "session", "restore_on_startup") == RESTORE_NEW_TAB_PAGE else "false"


# Chrome's content setting value "clear on exit" (CONTENT_SETTING_SESSION_ONLY).
SESSION_ONLY = 4


@getter("data_delete_automacally")
def data_delete_automacally(ctx: EvalContext, config: dict) -> str | None:
    """"true" when site data is deleted on closing Chrome: the default cookie setting is
    "session only" (profile.default_content_setting_values.cookies = 4), which is what Chrome's
    "Delete data sites have saved to your device when you close all windows" writes.

    OSWorld takes any profile.default_content_setting_values for "true": on the VM's Chrome the
    dict is absent until a site setting is changed, but current Chromium writes it on its first
    exit (a migration mark), which would score doing nothing 1.
    """
    prefs = _profile_json(ctx, "Default/Preferences")
    if prefs is None:
        return None
    cookies = _dig(prefs, "profile", "default_content_setting_values", "cookies")
    return "true" if cookies == SESSION_ONLY else "false"


@getter("find_installed_extension_name")
def find_installed_extension_name(ctx: EvalContext, config: dict) -> list[str] | None:
    """Names of the installed extensions (built-in ones such as the PDF viewer included)."""
    settings = _extension_settings(ctx)
    if settings is None:
        return None
    return [name for entry in settings.values() if (name := _dig(entry, "manifest", "name"))]


@getter("find_unpacked_extension_path")
def find_unpacked_extension_path(ctx: EvalContext, config: dict) -> list[str] | None:
    """Folders the installed extensions load from (an unpacked one's is where the user picked)."""
    settings = _extension_settings(ctx)
    if settings is None:
        return None
    return [path for entry in settings.values() if isinstance(entry, dict) and (path := entry.get("path"))]


@getter("shortcuts_on_desktop")
def shortcuts_on_desktop(ctx: EvalContext, config: dict) -> dict[str, str]:
    """{file name: contents} of the .desktop launchers on the Desktop (Chrome's "Create shortcut")."""
    desktop = PurePosixPath(ctx.desktop_path())
    tree = ctx.directory_tree(str(desktop)) or {}
    shortcuts = {}
    for child in tree.get("children", []):
        name = child.get("name", "")
        if child.get("type") == "file" and name.endswith(".desktop"):
            data = ctx.read_file(str(desktop / name))
            if data is not None:
                shortcuts[name] = data.decode("utf-8", errors="replace")
    return shortcuts


# -- the live browser: Chrome's remote-debugging port -----------------------------------------

class DevToolsError(DesktopEnvError):
    """Chrome's DevTools endpoint refused a request or a command failed."""


class DevToolsUnavailable(DevToolsError):
    """Nothing answers on Chrome's debugging port (Chrome is closed or was started without it)."""


@dataclass(frozen=True)
class Tab:
    id: str
    title: str
    url: str
    websocket_url: str


class DevTools:
    """Chrome's remote-debugging endpoint: the JSON target list, and the protocol over a WebSocket.

    The JSON list goes through the evaluation context's `http`, so getters that only read the
    tabs (the active tab's URL) are recorded and can be rescored. The protocol itself (evaluating
    JavaScript, printing to PDF) runs over a websocket the context cannot record: it asks
    `ctx.endpoint` first, which marks the evaluation live-only for a rescore.
    """

    SERVICE = "chrome_devtools"

    def __init__(self, ctx: EvalContext, timeout: float = 10.0):
        self.ctx = ctx
        self.timeout = timeout
        self._websockets_allowed = False

    @classmethod
    def of(cls, ctx: EvalContext) -> DevTools:
        return cls(ctx)

    def _http(self, path: str, method: str = "GET") -> HttpAnswer:
        try:
            return self.ctx.http(self.SERVICE, path, method)
        except ServiceUnavailable as e:
            raise DevToolsUnavailable(f"Chrome's DevTools endpoint did not answer: {e}") from e

    def _json(self, path: str, method: str = "GET") -> Any:
        response = self._http(path, method)
        if response.status != 200:
            raise DevToolsError(f"{method} {path}: HTTP {response.status} {response.text[:200]}")
        try:
            return response.json()
        except ValueError as e:
            raise DevToolsError(f"{method} {path}: not JSON: {response.text[:200]}") from e

    @staticmethod
    def _tab(target: dict) -> Tab:
        return Tab(target["id"], target.get("title", ""), target.get("url", ""), target.get("webSocketDebuggerUrl", ""))

    def tabs(self) -> list[Tab]:
        """The open tabs, the most recently active first (Chrome orders its target list so)."""
        return [self._tab(target) for target in self._json("/json/list") if target.get("type") == "page"]

    def open_tab(self, url: str) -> Tab:
        # Chrome unescapes everything after "?" as the URL to open.
        return self._tab(self._json("/json/new?" + quote(url, safe=""), method="PUT"))

    def close_tab(self, tab: Tab) -> None:
        try:
            self._http(f"/json/close/{tab.id}")
        except DevToolsUnavailable as e:
            log.warning("could not close tab %s (%s): %s", tab.id, tab.url, e)

    def call(self, tab: Tab, method: str, params: dict | None = None, timeout: float | None = None) -> dict:
        """Sends one DevTools command to a tab and returns its result."""
        if not self._websockets_allowed:  # a live-only conversation: a replay stops here
            try:
                self.ctx.endpoint(self.SERVICE)
            except ServiceUnavailable as e:
                raise DevToolsUnavailable(str(e)) from e
            self._websockets_allowed = True
        try:
            # Chrome refuses WebSocket clients that send an Origin it was not told to allow.
            connection = websocket.create_connection(tab.websocket_url, timeout=timeout or self.timeout,
                                                     suppress_origin=True)
        except (OSError, websocket.WebSocketException) as e:
            raise DevToolsUnavailable(f"cannot open the DevTools socket of tab {tab.url}: {e}") from e
        try:
            connection.send(json.dumps({"id": 1, "method": method, "params": params or {}}))
            while True:
                message = json.loads(connection.recv())
                if message.get("id") == 1:
                    break
        except (OSError, ValueError, websocket.WebSocketException) as e:
            raise DevToolsError(f"{method} on tab {tab.url}: {type(e).__name__}: {e}") from e
        finally:
            connection.close()
        if "error" in message:
            raise DevToolsError(f"{method} on tab {tab.url}: {message['error']}")
        return message.get("result", {})

    def evaluate(self, tab: Tab, expression: str, timeout: float | None = None) -> Any:
        result = self.call(tab, "Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                     "awaitPromise": True}, timeout)
        if "exceptionDetails" in result:
            raise DevToolsError(f"JavaScript failed in tab {tab.url}: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def wait_until_loaded(self, tab: Tab, deadline: float) -> bool:
        """Polls document.readyState until "complete" or `deadline` (time.monotonic())."""
        while True:  # a deadline shared by several tabs, its time left given to each call: not wait_until's
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                if self.evaluate(tab, "document.readyState", timeout=remaining) == "complete":
                    return True
            except DevToolsUnavailable:
                return False  # the tab is gone
            except DevToolsError:
                pass  # a navigation replaced the page's context mid-call: ask again
            time.sleep(0.05)


# What Playwright's page.title(), page.url and page.content() give.
PAGE_SNAPSHOT_JS = """(() => ({
  title: document.title,
  url: location.href,
  content: (document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '')
           + (document.documentElement ? document.documentElement.outerHTML : ''),
}))()"""


def _snapshot(devtools: DevTools, tab: Tab, load_timeout: float) -> dict:
    if not devtools.wait_until_loaded(tab, time.monotonic() + load_timeout):
        log.info("tab %s still loading after %.0f s; reading it as it is", tab.url, load_timeout)
    return devtools.evaluate(tab, PAGE_SNAPSHOT_JS)


def _active_tab(ctx: EvalContext) -> tuple[DevTools, Tab] | None:
    devtools = DevTools.of(ctx)
    tabs = devtools.tabs()
    return (devtools, tabs[0]) if tabs else None


@getter("open_tabs_info")
def open_tabs_info(ctx: EvalContext, config: dict) -> list[dict] | None:
    """[{title, url}] of every open tab, the most recently active first; None when Chrome is unreachable."""
    try:
        devtools = DevTools.of(ctx)
        deadline = time.monotonic() + LOAD_TIMEOUT_S
        for tab in devtools.tabs():
            devtools.wait_until_loaded(tab, deadline)
        tabs = devtools.tabs()  # titles as they are once the pages have loaded
    except DevToolsError as e:
        log.warning("open_tabs_info: %s", e)
        return None
    return [{"title": tab.title, "url": tab.url} for tab in tabs]


@getter("active_tab_info")
def active_tab_info(ctx: EvalContext, config: dict) -> dict | None:
    """{title, url, content} of the active tab.

    OSWorld reads the address bar and loads that URL again in a new tab (its docstring warns
    this can land elsewhere); this reads the active tab itself.
    """
    try:
        found = _active_tab(ctx)
        return _snapshot(*found, LOAD_TIMEOUT_S) if found else None
    except DevToolsError as e:
        log.warning("active_tab_info: %s", e)
        return None


@getter("page_info")
@requires("url")
def page_info(ctx: EvalContext, config: dict) -> dict | None:
    """{title, url, content} of config["url"], loaded in a new tab of the user's browser (then closed)."""
    try:
        devtools = DevTools.of(ctx)
        tab = devtools.open_tab(config["url"])
        try:
            return _snapshot(devtools, tab, NEW_PAGE_TIMEOUT_S)
        finally:
            devtools.close_tab(tab)
    except DevToolsError as e:
        log.warning("page_info %s: %s", config["url"], e)
        return None


@getter("pdf_from_url")
@requires("path", "dest")
def pdf_from_url(ctx: EvalContext, config: dict) -> str | None:
    """config["path"] (a URL) printed to PDF by the desktop's Chrome, saved in the cache as config["dest"].

    Letter paper without margins or backgrounds: Playwright's page.pdf() defaults, which OSWorld's
    reference PDFs were made with.
    """
    cache_target(ctx, config, config["dest"])  # refused before the page is opened
    try:
        devtools = DevTools.of(ctx)
        tab = devtools.open_tab(config["path"])
        try:
            devtools.wait_until_loaded(tab, time.monotonic() + NEW_PAGE_TIMEOUT_S)
            result = devtools.call(tab, "Page.printToPDF", {
                "paperWidth": 8.5, "paperHeight": 11, "marginTop": 0, "marginBottom": 0,
                "marginLeft": 0, "marginRight": 0, "printBackground": False}, timeout=NEW_PAGE_TIMEOUT_S)
        finally:
            devtools.close_tab(tab)
    except DevToolsError as e:
        log.warning("pdf_from_url %s: %s", config["path"], e)
        return None
    return save_in_cache(ctx, config, config["dest"], base64.b64decode(result["data"]))


class _PageFailed(Exception):
    """A website did not offer what info_from_website was told to read."""


def _wait_for_element(devtools: DevTools, tab: Tab, selector: str, timeout_s: float = 10.0) -> None:
    """Waits until `selector` matches an element, as Playwright's wait_for_selector(state="attached")."""
    query = f"document.querySelector({json.dumps(selector)}) !== null"

    def found() -> bool:
        if devtools.evaluate(tab, query):
            return True
        if devtools.evaluate(tab, "location.protocol") == "chrome-error:":
            raise _PageFailed(f"the page did not load (offline?): {tab.url}")
        return False

    if not poll_until(found, timeout_s, 0.1):
        raise _PageFailed(f"no element {selector!r} on {tab.url} after {timeout_s:.0f} s")


def _click_through(devtools: DevTools, tab: Tab, selector: str) -> None:
    """Clicks an element and, when that navigates, waits for the next page to load."""
    _wait_for_element(devtools, tab, selector)
    before = devtools.evaluate(tab, "location.href")
    devtools.evaluate(tab, f"document.querySelector({json.dumps(selector)}).click()")
    deadline = time.monotonic() + NEW_PAGE_TIMEOUT_S

    def navigated() -> bool:
        try:
            return devtools.evaluate(tab, "location.href") != before
        except DevToolsError:
            return False  # the old page's context went away mid-call: the navigation has begun

    poll_until(navigated, NEW_PAGE_TIMEOUT_S, 0.1)
    devtools.wait_until_loaded(tab, deadline)


def _read_info(devtools: DevTools, tab: Tab, url: str, info: dict) -> str | None:
    action = info.get("action", "inner_text")
    selectors = info["selector"] if isinstance(info["selector"], list) else [info["selector"]]
    if action not in ("inner_text", "attribute", "click_and_inner_text", "click_and_attribute"):
        raise ValueError(f"info_from_website: unknown action {action!r}")
    if devtools.evaluate(tab, "location.href") != url:  # an earlier click went elsewhere
        devtools.call(tab, "Page.navigate", {"url": url})
        devtools.wait_until_loaded(tab, time.monotonic() + NEW_PAGE_TIMEOUT_S)
    if action.startswith("click_and_"):
        for selector in selectors[:-1]:
            _click_through(devtools, tab, selector)
    _wait_for_element(devtools, tab, selectors[-1])
    element = f"document.querySelector({json.dumps(selectors[-1])})"
    if action.endswith("inner_text"):
        return devtools.evaluate(tab, f"{element}.innerText")
    return devtools.evaluate(tab, f"{element}.getAttribute({json.dumps(info['attribute'])})")


@getter("info_from_website")
@requires("url")
def info_from_website(ctx: EvalContext, config: dict) -> list | None:
    """Texts or attributes of elements of a live website, one per `infos` entry, read in a new tab.

    Each entry has `action` (inner_text, attribute, click_and_inner_text, click_and_attribute),
    `selector` (CSS; a list for the click actions: elements clicked in turn, then the one
    read) and `attribute`. As in OSWorld, when the site cannot be read (the local desktop
    is offline unless started with network=True) the task's `backups` are returned instead.
    """
    try:
        devtools = DevTools.of(ctx)
        tab = devtools.open_tab(config["url"])
        try:
            devtools.wait_until_loaded(tab, time.monotonic() + NEW_PAGE_TIMEOUT_S)
            url = devtools.evaluate(tab, "location.href")
            return [_read_info(devtools, tab, url, info) for info in config.get("infos", [])]
        finally:
            devtools.close_tab(tab)
    except (DevToolsError, _PageFailed) as e:
        log.warning("info_from_website %s: %s; using the task's backups", config["url"], e)
        return config.get("backups")


@getter("number_of_search_results")
def number_of_search_results(ctx: EvalContext, config: dict) -> int:
    """How many elements match `selector` on `url`, loaded in a new tab (then closed); 0 when the
    page cannot be read. OSWorld fixes both to a Google search for "query" and ".search-result";
    a task may name its own."""
    url = config.get("url", "https://google.com/search?q=query")
    selector = config.get("selector", ".search-result")
    try:
        devtools = DevTools.of(ctx)
        tab = devtools.open_tab(url)
        try:
            devtools.wait_until_loaded(tab, time.monotonic() + NEW_PAGE_TIMEOUT_S)
            return int(devtools.evaluate(tab, f"document.querySelectorAll({json.dumps(selector)}).length") or 0)
        finally:
            devtools.close_tab(tab)
    except DevToolsError as e:
        log.warning("number_of_search_results %s: %s", url, e)
        return 0


unsupported_getter("googledrive_file", "needs OSWorld's Google Drive account and credentials")
unsupported_getter("gotoRecreationPage_and_get_html_content",
                   "scripts a live session on recreation.gov; the local desktop is offline")


# -- the active tab's URL ---------------------------------------------------------------------

BROWSER_APPLICATIONS = ("Google Chrome", "Chromium")
ADDRESS_BAR_NAMES = ("Address and search bar", "アドレス検索バー")
_HAS_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://|^(about|data|javascript|mailto|view-source):")


def address_bar_text(tree_xml: str) -> str | None:
    """The text in Chrome's address bar, from the accessibility tree's XML."""
    try:
        root = ET.fromstring(tree_xml)
    except ET.ParseError:
        return None
    local = lambda tag: tag.rsplit("}", 1)[-1]  # noqa: E731
    for app in root.iter():
        if local(app.tag) == "application" and app.get("name") in BROWSER_APPLICATIONS:
            for node in app.iter():
                text = (node.text or "").strip()
                if local(node.tag) == "entry" and node.get("name") in ADDRESS_BAR_NAMES and text:
                    return text
    return None


def url_from_address_bar(text: str, goto_prefix: str) -> str:
    """The address bar's text as a URL: Chrome hides "https://" and "www.", tasks say what to put back.

    Text that already has a scheme (file://, chrome://, what the bar shows while edited)
    is taken as it is; OSWorld prefixes it anyway ("https://file:///...").
    """
    if _HAS_SCHEME.match(text):
        return text
    if goto_prefix.endswith("www.") and text.startswith("www."):
        goto_prefix = goto_prefix[:-len("www.")]
    return goto_prefix + text


def _active_url(ctx: EvalContext, config: dict) -> str | None:
    """The active tab's URL from the debugging port, else from the address bar in the a11y tree.

    OSWorld only reads the address bar, whose text has lost the scheme and "www." (tasks give a
    `goto_prefix` to put back); the debugging port gives the exact URL, so the address bar is
    the fallback for a Chrome started without the port.
    """
    try:
        found = _active_tab(ctx)
        if found:
            return found[1].url
    except DevToolsError as e:
        log.info("active tab URL: %s; reading the address bar instead", e)
    text = address_bar_text(ctx.accessibility_tree())
    return None if text is None else url_from_address_bar(text, config.get("goto_prefix", "https://"))


@getter("active_url_from_accessTree")
def active_url_from_accessTree(ctx: EvalContext, config: dict) -> str | None:
    return _active_url(ctx, config)


@getter("active_tab_url_parse")
@requires("parse_keys")
def active_tab_url_parse(ctx: EvalContext, config: dict) -> dict | None:
    """Query parameters `parse_keys` of the active tab's URL ("" when absent).

    `replace` renames keys ({old: new}); `split_list` splits each value on commas.
    """
    url = _active_url(ctx, config)
    if url is None:
        return None
    query = parse_qs(urlparse(url).query)
    params = {key: query.get(key, [""])[0] for key in config["parse_keys"]}
    for old, new in config.get("replace", {}).items():
        params[new] = params.pop(old)
    if config.get("split_list", False):
        return {key: value.split(",") for key, value in params.items()}
    return params


@getter("url_dashPart")
@requires("partIndex", "returnType")
def url_dashPart(ctx: EvalContext, config: dict) -> str | dict | None:
    """One "/"-separated part of the active tab's URL (`partIndex`, negative counts from the end).

    `needDeleteId` drops its query string; `returnType` "string" gives the part,
    "json" gives {config["key"]: part}.
    """
    url = _active_url(ctx, config)
    if url is None:
        return None
    parts = url.split("/")
    index = int(config["partIndex"])
    if not -len(parts) <= index < len(parts):
        log.warning("url_dashPart: part %d of %s does not exist", index, url)
        return None
    part = parts[index]
    if config.get("needDeleteId", False):
        part = part.split("?")[0]
    if config["returnType"] == "string":
        return part
    if config["returnType"] == "json":
        return {config["key"]: part}
    raise ValueError(f"url_dashPart: returnType must be 'string' or 'json', got {config['returnType']!r}")


# Macy's filter pages put filter names and values in two comma-separated path segments:
# /shop/mens-clothing/shirts/Men_regular_size_t,Price_discount_range/M,50_PERCENT_ off & more
FIFTY_OFF = "50_PERCENT_ off & more"


def macys_filters(url: str, parse_keys: list[str]) -> dict:
    """What OSWorld's Macy's task reads from a product-listing URL.

    `mens_clothing`, `shirts` and `short_sleeve` are True or None (the path says so, or its
    Product_department / Sleeve_length filter does); then each of `parse_keys` the URL's
    filters have, Men_regular_size_t and Price_discount_range always (None when absent).
    Price_discount_range reads FIFTY_OFF only when that is the one discount chosen among
    50, 30 and 20 percent, else "not_" + FIFTY_OFF.
    """
    path = unquote(urlparse(url).path)
    parts = path.strip("/").split("/")
    filters: dict[str, Any] = {}
    shirts, short_sleeve = "shirts" in path, "short-sleeve" in path
    for names, values in itertools.pairwise(parts):
        if "," in names and "," in values:
            # A name without a value (or the reverse) is left out, as OSWorld's zip leaves it.
            for name, value in zip((n.strip() for n in names.split(",")), (v.strip() for v in values.split(",")),
                                   strict=False):
                if name == "Price_discount_range":
                    filters[name] = [item.strip() for item in value.split("|")] if value else None
                else:
                    filters[name] = value or None
                shirts |= name == "Product_department" and value in ("shirts", "Shirts", "Shirt")
                short_sleeve |= name == "Sleeve_length" and value in ("short-sleeve", "Short Sleeve")
            break
    for name in ("Men_regular_size_t", "Price_discount_range"):
        filters.setdefault(name, None)
    result: dict[str, Any] = {"mens_clothing": True if "mens-clothing" in path else None,
                              "shirts": True if shirts else None, "short_sleeve": True if short_sleeve else None}
    for key in parse_keys:
        if key not in filters:
            continue
        if key == "Price_discount_range":
            chosen = filters[key] or []
            only_fifty = FIFTY_OFF in chosen and not {"30_PERCENT_ off & more", "20_PERCENT_ off & more"} & set(chosen)
            result[key] = FIFTY_OFF if only_fifty else "not_" + FIFTY_OFF
        else:
            result[key] = filters[key]
    return result


@getter("macys_product_url_parse")
@getter("url_path_parse")  # OSWorld's older name for the same getter
def macys_product_url_parse(ctx: EvalContext, config: dict) -> dict | None:
    """macys_filters() of the active tab's URL, for config["parse_keys"]."""
    url = _active_url(ctx, config)
    return None if url is None else macys_filters(url, config.get("parse_keys", []))


# -- reading elements of the active tab -------------------------------------------------------

# Runs in the page: each query is [kind, argument]; answers come back in the same order.
# Texts are textContent (Playwright's text_content()), the li/span one innerText (inner_text()).
ELEMENT_QUERIES_JS = r"""(queries) => {
  const all = (selector) => {
    try { return Array.from(document.querySelectorAll(selector)); } catch (e) { return []; }
  };
  const text = (node) => (node.textContent || '').trim();
  const byXPath = (xpath) => {
    try { return document.evaluate(xpath, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue; }
    catch (e) { return null; }
  };
  const byVisibleText = (needle) => {
    // Playwright's text=... : the innermost element whose text contains the needle, any case.
    const normalize = (s) => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
    const wanted = normalize(needle);
    const contains = (el) => normalize(el.textContent).includes(wanted);
    const skip = new Set(['SCRIPT', 'STYLE', 'HEAD', 'TITLE', 'NOSCRIPT']);
    for (const el of document.body ? document.body.querySelectorAll('*') : []) {
      if (!skip.has(el.tagName) && contains(el) && !Array.from(el.children).some(contains)) return el;
    }
    return null;
  };
  const kinds = {
    texts: (sel) => all(sel).map(text),
    direct_texts: (sel) => {
      const first = all(sel)[0];
      if (!first) return [];
      return Array.from(first.childNodes).filter((n) => n.nodeType === Node.TEXT_NODE).map(text).filter(Boolean);
    },
    h3_texts: (sel) => all(sel).map((el) => el.querySelector('h3')).filter(Boolean).map(text),
    li_span_texts: (sel) => all(sel + ' li.catAllProducts').map((el) => el.querySelector('span')).filter(Boolean)
                                .map((span) => span.innerText.trim()),
    xpath_text: (xpath) => { const node = byXPath(xpath); return node ? text(node) : null; },
    xpath_value: (xpath) => {
      const node = byXPath(xpath);
      return node && 'value' in node ? String(node.value).trim() : null;
    },
    label_text: (needle) => { const el = byVisibleText(needle); return el ? text(el) : null; },
  };
  return {url: location.href, answers: queries.map(([kind, arg]) => kinds[kind](arg))};
}"""


class _ElementReader:
    """Collects the element queries a config needs, runs them in one call, then answers them."""

    def __init__(self) -> None:
        self.queries: list[tuple[str, str]] = []
        self.answers: dict[tuple[str, str], Any] = {}
        self.url = ""

    def ask(self, kind: str, arg: str) -> None:
        if (kind, arg) not in self.queries:
            self.queries.append((kind, arg))

    def run(self, devtools: DevTools, tab: Tab) -> None:
        result = devtools.evaluate(tab, f"({ELEMENT_QUERIES_JS})({json.dumps(self.queries)})")
        self.url = result["url"]
        self.answers = dict(zip(self.queries, result["answers"], strict=True))  # one answer per query

    def __call__(self, kind: str, arg: str) -> Any:
        return self.answers[(kind, arg)]


# The config keys of each html_parse category and the element query each one needs.
CLASS_KEYS = {"class_multiObject": "texts", "class_multiObject_child": "direct_texts",
              "class_multiObject_only_child": "h3_texts", "class_multiObject_search_exist": "texts",
              "class_singleObject": "texts", "class_multiObject_li": "li_span_texts"}
KEYED_CATEGORIES = {"label": ("labelObject", "label_text"), "xpath": ("xpathObject", "xpath_text"),
                    "input": ("inputObject", "xpath_value")}


def _nth(texts: list[str], index: Any) -> str:
    index = int(index)
    return texts[index] if 0 <= index < len(texts) else ""


def _parse_class(config: dict, read: _ElementReader) -> dict:
    out: dict[str, Any] = {}
    for name, picks in config.get("class_multiObject", {}).items():
        out.update({key: _nth(read("texts", "." + name), index) for index, key in picks.items()})
    for name, picks in config.get("class_multiObject_child", {}).items():
        out.update({key: _nth(read("direct_texts", "." + name), index) for index, key in picks.items()})
    for name, picks in config.get("class_multiObject_only_child", {}).items():
        out.update({key: _nth(read("h3_texts", "." + name), index) for index, key in picks.items()})
    for name, wanted in config.get("class_multiObject_search_exist", {}).items():
        texts = read("texts", "." + name)
        out.update({item: item in texts for item in wanted if item != "is_other_exist"})
        if "is_other_exist" in wanted:
            out["is_other_exist"] = any(text not in wanted for text in texts)
    for name, key in config.get("class_singleObject", {}).items():
        out[key] = _nth(read("texts", "." + name), 0)
    return out


def _parse_class_and_url(config: dict, read: _ElementReader) -> dict:
    """Which expected names the page lists (lower-cased keys) and whether it lists others.

    A name may be looked for in the URL under several spellings
    (`url_include_expected_multichoice`); any of them found counts, where OSWorld lets the
    first spelling decide.
    """
    out: dict[str, Any] = {}
    for key, kind in (("class_multiObject", "texts"), ("class_multiObject_li", "li_span_texts")):
        for name, expected in config.get(key, {}).items():
            texts = read(kind, "." + name)
            out.update({item.lower(): True for item in expected
                        if any(item.lower() == text.lower() for text in texts)})
            if any(all(text.lower() not in item.lower() for item in expected) for text in texts):
                out["is_other_exist"] = True
            out.setdefault("is_other_exist", False)
    url = read.url.lower()
    for item in config.get("url_include_expected", []):
        out[item.lower()] = out.get(item.lower(), False) or item.lower() in url
    for spelling, item in config.get("url_include_expected_multichoice", {}).items():
        out[item.lower()] = out.get(item.lower(), False) or spelling.lower() in url
    return out


@getter("active_tab_html_parse")
@requires("category")
def active_tab_html_parse(ctx: EvalContext, config: dict) -> dict | None:
    """Texts of elements of the active tab, keyed as the config says (OSWorld's categories).

    category "class" (class_multiObject, _child, _only_child, _search_exist, class_singleObject),
    "label" (labelObject), "xpath" (xpathObject), "input" (inputObject: an input's value),
    "class&url" (class_multiObject, class_multiObject_li, url_include_expected[_multichoice]).
    An element that is not there gives "".
    """
    category = config["category"]
    read = _ElementReader()
    if category in ("class", "class&url"):
        for key, kind in CLASS_KEYS.items():
            for name in config.get(key, {}):
                read.ask(kind, "." + name)
    elif category in KEYED_CATEGORIES:
        key, kind = KEYED_CATEGORIES[category]
        for arg in config.get(key, {}):
            read.ask(kind, arg)
    else:
        raise ValueError(f"active_tab_html_parse: unknown category {category!r}")
    try:
        found = _active_tab(ctx)
        if not found:
            return None
        devtools, tab = found
        devtools.wait_until_loaded(tab, time.monotonic() + LOAD_TIMEOUT_S)
        read.run(devtools, tab)
    except DevToolsError as e:
        log.warning("active_tab_html_parse: %s", e)
        return None
    if category == "class":
        return _parse_class(config, read)
    if category == "class&url":
        return _parse_class_and_url(config, read)
    key, kind = KEYED_CATEGORIES[category]
    return {name: read(kind, arg) or "" for arg, name in config.get(key, {}).items()}
