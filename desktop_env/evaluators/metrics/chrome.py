"""Chrome metrics, and the file comparisons OSWorld keeps beside them (HTML, archives;
its compare_pdfs and compare_pdf_images are in pdf.py).

Inputs are what the chrome getters return: `open_tabs_info` a list of {title, url};
`active_tab_info` / `page_info` a dict {title, url, content} (or None); the accessibility-tree
URL getters a URL string; `bookmarks` the "roots" object of Chrome's Bookmarks JSON;
`history` rows (url, title, last_visit_time); `cookie_data` rows of the Cookies table
(host_key second); `chrome_font_size` the Preferences' webkit.webprefs dict;
`shortcuts_on_desktop` {path: .desktop file text}; `enabled_experiments` Local State's
"name@n" strings; `find_installed_extension_name` a list of names.
A None or empty getter value scores 0, and every metric's MetricResult says what it compared
(the URL, the tabs, the setting). An unknown rule `type` raises ValueError (a task error).
"""
from __future__ import annotations

import difflib
import functools
import inspect
import itertools
import logging
import os
import re
import tarfile
import tempfile
import zipfile
from typing import Any
from urllib.parse import ParseResult, urlparse, urlunparse

import lxml.etree
import lxml.html

from ...safe_paths import UnsafeTaskPath
from ..archives import ArchiveTooLarge, NotAnArchive, inner_folder_problem, unpack
from ..fixes import fixes_enabled
from ..outcome import MetricResult, as_metric_result, failed, passed, show, verdict
from ..registry import OptionIssue, declare_option_check, get_metric, metric
from .general import read_text

logger = logging.getLogger(__name__)


# -- URLs ---------------------------------------------------------------------------------------

_HAS_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+\-.]*://")


@functools.lru_cache(maxsize=1)
def _split_host():
    import tldextract

    # The public suffix list snapshot bundled with tldextract: nothing is downloaded.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def normalize_url(url: str, full: bool = True) -> str:
    """OSWorld's URL normal form: http:// when no scheme, lowercase host without a lone "www"
    and without the public suffix (so amazon.com and amazon.co.uk agree), "/" path dropped;
    query and fragment kept only when `full`."""
    if not _HAS_SCHEME.match(url):
        url = "http://" + url
    parsed = urlparse(url)
    host = _split_host()(parsed.netloc.lower())
    subdomain = "" if host.subdomain == "www" else host.subdomain
    netloc = f"{subdomain}.{host.domain}" if subdomain else host.domain
    return urlunparse(ParseResult(
        scheme=parsed.scheme.lower(),
        netloc=netloc,
        path="" if parsed.path == "/" else parsed.path,
        params=parsed.params if full else "",
        query=parsed.query if full else "",
        fragment=parsed.fragment if full else "",
    ))


def urls_match(first: Any, second: Any, full: bool = True) -> bool:
    if not isinstance(first, str) or not isinstance(second, str):
        return False
    return normalize_url(first, full) == normalize_url(second, full)


def _url_of(tab: Any) -> str | None:
    """The URL in an active-tab getter value: a dict with "url", or the URL string itself."""
    if isinstance(tab, dict):
        url = tab.get("url")
        return url if isinstance(url, str) else None
    return tab if isinstance(tab, str) and tab else None


def _no_url(tab: Any, rule: Any) -> str:
    return f"no active tab URL (got {show(tab)})" if rule is not None else "no rule given"


def _rule_type(rule: dict, metric_name: str, supported: tuple[str, ...]) -> str:
    rule_type = rule.get("type")
    if rule_type not in supported:
        raise ValueError(f"{metric_name}: rule type must be one of {list(supported)}, got {rule_type!r}")
    return rule_type


@metric("is_expected_tabs")
def is_expected_tabs(open_tabs: Any, rule: dict | None = None) -> MetricResult:
    """The open tabs' URLs match rule["urls"] (`type: "url"`): same count, and each expected
    URL matches some open tab (see normalize_url)."""
    if not open_tabs or rule is None:
        return failed("no open tabs were read" if rule is not None else "no rule given")
    if rule.get("type") != "url":  # OSWorld's is_expected_tabs scores any other rule type 0
        return failed(f"rule type {rule.get('type')!r} is not 'url', which is_expected_tabs scores 0")
    actual = [tab.get("url") for tab in open_tabs if isinstance(tab, dict)]
    expected = rule["urls"]
    if len(actual) != len(expected):
        return failed(f"{len(actual)} tabs open {show(actual)}, expected {len(expected)} {show(expected)}")
    missing = [e for e in expected if not any(urls_match(e, a) for a in actual)]
    return verdict(not missing, f"no open tab has {show(missing)} (open: {show(actual)})" if missing
                   else f"the {len(actual)} open tabs are the expected ones")


@metric("is_expected_active_tab")
def is_expected_active_tab(active_tab: Any, rule: dict | None = None) -> MetricResult:
    """The active tab's URL matches rule["url"] (`type: "url"`; see normalize_url)."""
    url = _url_of(active_tab)
    if url is None or rule is None:
        return failed(_no_url(active_tab, rule))
    if rule.get("type") != "url":  # OSWorld's is_expected_active_tab scores any other rule type 0
        return failed(f"rule type {rule.get('type')!r} is not 'url', which is_expected_active_tab scores 0")
    return verdict(urls_match(rule["url"], url), f"the active tab is at {show(url)}, expected {show(rule['url'])}")


@metric("is_expected_active_tab_approximate")
def is_expected_active_tab_approximate(active_tab: Any, rule: dict | None = None) -> MetricResult:
    """The active tab's URL equals rule["url"] once both lose their query string."""
    url = _url_of(active_tab)
    if url is None or rule is None:
        return failed(_no_url(active_tab, rule))
    if rule.get("type") != "url":  # OSWorld's is_expected_active_tab_approximate scores any other rule type 0
        return failed(f"rule type {rule.get('type')!r} is not 'url', which is_expected_active_tab_approximate scores 0")

    def without_query(u: str) -> str:
        return urlunparse(urlparse(u)._replace(query=""))

    return verdict(without_query(rule["url"]) == without_query(url),
                   f"the active tab is at {show(url)}, expected {show(rule['url'])} (query aside)")


def _is_regex(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


@metric("is_expected_url_pattern_match")
def is_expected_url_pattern_match(active_tab: Any, rules: dict | None = None) -> MetricResult:
    """Every regex of rules["expected"] is found (re.search) in the active tab's URL.

    OSWorld loops over rules["expected"] as it is, so a pattern given as one string (not a list) is
    searched character by character, each character a regex of its own ("." finds any character; "(",
    "*", "?", "+", "[" or a lone backslash are no regex, which makes OSWorld's function raise: 0 here).
    With the evaluator fixes such a string is one regex."""
    url = _url_of(active_tab)
    if url is None or rules is None:
        return failed(_no_url(active_tab, rules))
    patterns = rules["expected"]
    if isinstance(patterns, str):
        if fixes_enabled():
            patterns = [patterns]
        else:
            patterns = list(patterns)
            bad = [p for p in patterns if not _is_regex(p)]
            if bad:
                return failed(f"the pattern {show(rules['expected'])} is a string, whose characters OSWorld "
                              f"searches one by one, and {show(bad[0])} alone is no regex")
    unmatched = [pattern for pattern in patterns if not re.search(pattern, url)]
    return verdict(not unmatched, f"the URL {show(url)} " + (f"does not match {show(unmatched)}" if unmatched
                                                             else "matches every pattern"))


@metric("is_expected_search_query")
def is_expected_search_query(active_tab: Any, rules: dict | None = None) -> MetricResult:
    """The active tab's URL contains a match of rules["expect"]["pattern"]."""
    url = _url_of(active_tab)
    if url is None or rules is None:
        return failed(_no_url(active_tab, rules))
    pattern = rules["expect"]["pattern"]
    return verdict(re.search(pattern, url) is not None, f"the URL {show(url)} against the pattern {pattern!r}")


@metric("is_added_to_steam_cart")
def is_added_to_steam_cart(page: Any, rule: dict | None = None) -> MetricResult:
    """Every rule["items"] name appears in the cart page's HTML (page_info's "content")."""
    if not isinstance(page, dict) or not isinstance(page.get("content"), str) or rule is None:
        return failed("no page content was read" if rule is not None else "no rule given")
    missing = [item for item in rule["items"] if item not in page["content"]]
    return verdict(not missing, f"the cart page lacks {show(missing)}" if missing else "every item is in the cart")


# -- profile state ------------------------------------------------------------------------------

def _bar_children(bookmarks: dict) -> list[dict]:
    return bookmarks.get("bookmark_bar", {}).get("children", [])


@metric("is_expected_bookmarks")
def is_expected_bookmarks(bookmarks: Any, rule: dict | None = None) -> MetricResult:
    """Checks the bookmarks bar. Rule types:
    `bookmark_bar_folders_names`: its folders' names are exactly the set rule["names"];
    `bookmark_bar_websites_urls`: its direct URL bookmarks are exactly the set rule["urls"];
    `liked_authors_websites_urls`: a folder named one of rule["names"] (default
    "Liked Authors") holds exactly one URL per rule["urls"] entry (an entry may be a list of
    accepted alternatives)."""
    if not isinstance(bookmarks, dict) or not bookmarks or rule is None:
        return failed("no bookmarks were read" if rule is not None else "no rule given")
    rule_type = _rule_type(rule, "is_expected_bookmarks", (
        "bookmark_bar_folders_names", "bookmark_bar_websites_urls", "liked_authors_websites_urls"))
    children = _bar_children(bookmarks)
    if rule_type == "bookmark_bar_folders_names":
        names = {c.get("name") for c in children if c.get("type") == "folder"}
        return verdict(names == set(rule["names"]), f"bookmark bar folders {sorted(map(str, names))}, "
                                                    f"expected {sorted(rule['names'])}")
    if rule_type == "bookmark_bar_websites_urls":
        urls = {c.get("url") for c in children if c.get("type") == "url"}
        return verdict(urls == set(rule["urls"]), f"bookmark bar URLs {sorted(map(str, urls))}, "
                                                  f"expected {sorted(rule['urls'])}")
    folder_names = rule.get("names", ["Liked Authors"])
    folder = next((c for c in children if c.get("type") == "folder" and c.get("name") in folder_names), None)
    if folder is None:
        return failed(f"no bookmark bar folder named {' or '.join(map(repr, folder_names))}")
    saved = {c.get("url") for c in folder.get("children", []) if c.get("type") == "url"}
    alternatives = [[entry] if isinstance(entry, str) else entry for entry in rule["urls"]]
    return verdict(any(set(choice) == saved for choice in itertools.product(*alternatives)),
                   f"folder {folder.get('name')!r} holds {sorted(map(str, saved))}, expected {show(rule['urls'])}")


ZOOM_NAMES = frozenset({"Zoom Chrome Extension", "Zoom for Google Chrome"})


@metric("is_expected_installed_extensions")
def is_expected_installed_extensions(installed: Any, expected: dict | None = None) -> MetricResult:
    """Every name in expected["expected"] is among the installed extensions' names."""
    if not installed or expected is None:
        return failed("no installed extensions were found" if expected is not None else "no expected names given")
    def canonical(name: str) -> str:  # OSWorld's one alias group: a renamed Zoom extension
        return min(ZOOM_NAMES) if name in ZOOM_NAMES else name

    missing = sorted({canonical(n) for n in expected["expected"]} - {canonical(n) for n in installed})
    return verdict(not missing, f"not installed: {show(missing)} (installed: {show(sorted(installed))})" if missing
                   else "every expected extension is installed")


def _cookie_host_matches(host_key: str, domain: str) -> bool:
    host = host_key.lstrip(".").lower()
    wanted = (urlparse(domain).hostname if _HAS_SCHEME.match(domain) else domain) or ""
    wanted = wanted.lstrip(".").lower().removeprefix("www.")
    return host == wanted or host.endswith("." + wanted) or urls_match(domain, host)


@metric("is_cookie_deleted")
def is_cookie_deleted(cookie_data: Any, rule: dict | None = None) -> MetricResult:
    """No cookie is left for any of rule["domains"] (`type: "domains"`).

    A cookie of a subdomain (accounts.google.com for google.com) counts as the domain's;
    OSWorld's URL comparison missed those. No readable cookie database (None) scores 0."""
    if cookie_data is None or rule is None:
        return failed("no cookie database could be read" if rule is not None else "no rule given")
    _rule_type(rule, "is_cookie_deleted", ("domains",))
    hosts = [row[1] for row in cookie_data if len(row) > 1 and isinstance(row[1], str)]
    left = sorted({h for d in rule["domains"] for h in hosts if _cookie_host_matches(h, d)})
    return verdict(not left, f"cookies are left for {show(left)}" if left
                   else f"no cookie of {show(rule['domains'])} is left")


@metric("check_history_deleted")
def check_history_deleted(history: Any, rule: dict | None = None) -> MetricResult:
    """No history URL contains any of rule["keywords"] (`type: "keywords"`)."""
    if history is None or rule is None:
        return failed("no history could be read" if rule is not None else "no rule given")
    _rule_type(rule, "check_history_deleted", ("keywords",))
    urls = [row[0] for row in history if row and isinstance(row[0], str)]
    left = [url for url in urls if any(keyword in url for keyword in rule["keywords"])]
    return verdict(not left, f"{len(left)} history entries remain, e.g. {show(left[0])}" if left
                   else f"no history URL holds {show(rule['keywords'])}")


@metric("check_enabled_experiments")
def check_enabled_experiments(enabled: Any, rule: dict | None = None) -> MetricResult:
    """The enabled chrome://flags experiments (names without "@n") are exactly rule["names"]."""
    if enabled is None or rule is None:
        return failed("no experiments could be read" if rule is not None else "no rule given")
    _rule_type(rule, "check_enabled_experiments", ("names",))
    names = [e.split("@")[0] for e in enabled]
    return verdict(names == rule["names"], f"enabled experiments {show(names)}, expected {show(rule['names'])}")


@metric("check_font_size")
def check_font_size(font_size: Any, rule: dict | None = None) -> MetricResult:
    """Chrome's default font size equals rule["value"] (`type: "value"`) or lies strictly
    between rule["min"] and rule["max"] (`type: "range"`)."""
    if not isinstance(font_size, dict) or rule is None:
        return failed("no font preferences could be read" if rule is not None else "no rule given")
    rule_type = _rule_type(rule, "check_font_size", ("value", "range"))
    size = font_size.get("default_font_size")
    if not isinstance(size, (int, float)):
        return failed(f"no default font size is set (got {show(size)})")
    if rule_type == "value":
        return verdict(size == rule["value"], f"the default font size is {size}, expected {rule['value']}")
    return verdict(rule["min"] < size < rule["max"],
                   f"the default font size is {size}, expected between {rule['min']} and {rule['max']}")


@metric("is_shortcut_on_desktop")
def is_shortcut_on_desktop(shortcuts: Any, rule: dict | None = None) -> MetricResult:
    """A desktop .desktop file has the line `Name=<rule["name"]>` (`type: "name"`) or
    `Exec=<rule["exec"]>` (`type: "exec"`)."""
    if not isinstance(shortcuts, dict) or rule is None:
        return failed("no desktop shortcuts were read" if rule is not None else "no rule given")
    rule_type = _rule_type(rule, "is_shortcut_on_desktop", ("name", "exec"))
    wanted = ("Name=" + rule["name"]) if rule_type == "name" else ("Exec=" + rule["exec"])
    return verdict(any(wanted in (content or "").splitlines() for content in shortcuts.values()),
                   f"a line {wanted!r} in the {len(shortcuts)} desktop files {show(sorted(shortcuts))}")


# -- HTML files ---------------------------------------------------------------------------------

def _html_elements(path: Any) -> list | None:
    text = read_text(path)
    if text is None:
        return None
    try:
        root = lxml.html.document_fromstring(text)
    except (lxml.etree.ParserError, ValueError) as e:
        logger.info("cannot parse HTML %s: %s", path, e)
        return None
    return list(root.iter(lxml.etree.Element))  # elements only: comments and PIs are skipped


@metric("compare_htmls")
def compare_htmls(result: Any, expected: Any = None, ignore_sdnum: bool = False) -> MetricResult:
    """The HTML files have the same elements in document order, each with the same tag,
    attributes and (stripped) text. `ignore_sdnum` ignores LibreOffice's `sdnum` number-format
    attribute. Unlike OSWorld's zip over both documents, extra trailing elements fail."""
    produced, gold = _html_elements(result), _html_elements(expected)
    if produced is None or gold is None:
        role, path = ("result", result) if produced is None else ("expected", expected)
        return failed(f"the {role} HTML {show(path)} is missing or cannot be parsed")
    if len(produced) != len(gold):
        return failed(f"{len(produced)} HTML elements, expected {len(gold)}")

    def attributes(element) -> dict:
        attrs = dict(element.attrib)
        if ignore_sdnum:
            attrs.pop("sdnum", None)
        return attrs

    def own(element) -> tuple:  # what the element itself holds, without its children's text
        return element.tag, attributes(element), (element.text or "").strip(), (element.tail or "").strip()

    for a, b in zip(produced, gold, strict=True):
        if a.tag != b.tag or a.text_content().strip() != b.text_content().strip() or attributes(a) != attributes(b):
            # The first element that differs is often <html> (its text holds every other's): name
            # the first one that differs in itself.
            pairs = enumerate(zip(produced, gold, strict=True))
            i, (a, b) = next(((j, pair) for j, pair in pairs if own(pair[0]) != own(pair[1])),
                             (produced.index(a), (a, b)))
            return failed(f"element {i}: <{a.tag}> {show(attributes(a))} {show(own(a)[2])} vs "
                          f"expected <{b.tag}> {show(attributes(b))} {show(own(b)[2])}")
    return passed(f"the {len(gold)} HTML elements match")


# -- archives -----------------------------------------------------------------------------------

# compare_archive's `file_type` -> the metric that compares one member file with its gold twin.
ARCHIVE_MEMBER_METRICS = {
    "text": "compare_text_file",
    "pdf": "compare_pdfs",
    "docx": "compare_docx_files",
    "ppt": "compare_pptx_files",
    "image": "compare_images",
    "csv": "compare_csv",
    "table": "compare_table",
    "audio": "compare_audios",
    "video": "compare_videos",
}


def _unpack(role: str, archive: str, into: str) -> MetricResult | None:
    """Unpacks the `role` archive; a failed MetricResult when the agent's cannot be, or is past the
    bounds. A gold archive past them is the task's fault: ArchiveTooLarge propagates."""
    try:
        unpack(archive, into)
        return None
    except ArchiveTooLarge as e:
        if role == "expected":
            raise ArchiveTooLarge(f"the expected archive {e}") from None
        return failed(f"the {role} archive {e}")
    except (NotAnArchive, zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as e:
        logger.info("cannot unpack %s: %s", archive, e)
        return failed(f"the {role} archive {os.path.basename(archive)} is not a readable zip or tar")


@metric("compare_archive")
def compare_archive(result: Any, expected: Any = None, file_path: str = "", file_type: str = "text",
                    **member_options) -> MetricResult:
    """Unpacks both archives (zip, tar, tar.gz...); the entries under `file_path` must have the
    same names, and the score is the mean of the `file_type` metric over the pairs. Other
    options go to that metric (as in OSWorld), so they are checked against its parameters
    at validation time (archive_options_problems)."""
    if file_type not in ARCHIVE_MEMBER_METRICS:
        raise ValueError(f"compare_archive: file_type must be one of {sorted(ARCHIVE_MEMBER_METRICS)}, "
                         f"got {file_type!r}")
    outside = inner_folder_problem(file_path)
    if outside:
        raise UnsafeTaskPath(file_path, outside, "options.file_path")
    for role, path in (("result", result), ("expected", expected)):
        if not (isinstance(path, str) and os.path.isfile(path)):
            return failed(f"the {role} archive {show(path)} does not exist")
    compare_member = get_metric(ARCHIVE_MEMBER_METRICS[file_type])
    with tempfile.TemporaryDirectory(prefix="osworld-archive-") as work:
        produced_dir, gold_dir = os.path.join(work, "result"), os.path.join(work, "expected")
        for role, path, into in (("result", result, produced_dir), ("expected", expected, gold_dir)):
            refused = _unpack(role, path, into)
            if refused is not None:
                return refused
        produced_dir, gold_dir = os.path.join(produced_dir, file_path), os.path.join(gold_dir, file_path)
        for role, folder in (("result", produced_dir), ("expected", gold_dir)):
            if not os.path.isdir(folder):
                return failed(f"the {role} archive has no folder {file_path!r}")
        names = sorted(os.listdir(produced_dir))
        if names != sorted(os.listdir(gold_dir)):
            return failed(f"the archive holds {show(names)}, expected {show(sorted(os.listdir(gold_dir)))}")
        if not names:
            return passed("both archives hold no entries")
        parts = {n: as_metric_result(compare_member(os.path.join(produced_dir, n), os.path.join(gold_dir, n),
                                                    **member_options), ARCHIVE_MEMBER_METRICS[file_type])
                 for n in names}
    score = sum(p.score for p in parts.values()) / len(parts)
    worst = min(parts, key=lambda n: parts[n].score)
    if score == 1.0:
        return MetricResult(score, f"all {len(parts)} entries match ({ARCHIVE_MEMBER_METRICS[file_type]})")
    return MetricResult(score, f"mean {score:.3f} over {len(parts)} entries; {worst}: {parts[worst].explanation}")


def archive_options_problems(options: dict) -> list[OptionIssue]:
    """compare_archive's `file_path` stays inside the unpacked archive, and its extra options are
    the member metric's: each must be a parameter of it."""
    outside = inner_folder_problem(options.get("file_path", ""))
    folder = [OptionIssue("file_path", str(options["file_path"]), outside)] if outside else []
    return folder + _member_option_problems(options)


def _member_option_problems(options: dict) -> list[OptionIssue]:
    file_type = options.get("file_type", "text")
    if file_type not in ARCHIVE_MEMBER_METRICS:
        return [OptionIssue("file_type", str(file_type), f"must be one of {sorted(ARCHIVE_MEMBER_METRICS)}",
                            tuple(difflib.get_close_matches(str(file_type), ARCHIVE_MEMBER_METRICS, n=3,
                                                            cutoff=0.6)))]
    member = ARCHIVE_MEMBER_METRICS[file_type]
    params = inspect.signature(get_metric(member)).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return []
    accepted = [p.name for p in params][2:]
    return [OptionIssue(name, name, f"compare_archive passes {name!r} to {member!r}, which takes no such option "
                                    f"(it takes: {', '.join(accepted) or 'no options'})",
                        tuple(difflib.get_close_matches(name, accepted, n=3, cutoff=0.6)))
            for name in options if name not in ("file_path", "file_type") and not name.startswith("_")
            and name not in accepted]


declare_option_check(compare_archive, archive_options_problems)
