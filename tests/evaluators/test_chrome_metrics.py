"""Chrome metrics on values shaped like the chrome getters' (profile files, debugging port),
and the PDF/HTML/archive comparisons that live beside them."""
from __future__ import annotations

import shutil
import sqlite3
import tarfile
import zipfile

import pytest

# compare_archive compares members with other modules' metrics, found by name in the registry.
from desktop_env.evaluators.metrics import pdf, vscode  # noqa: F401  (compare_pdfs, compare_text_file)
from desktop_env.evaluators.metrics.chrome import (
    check_enabled_experiments,
    check_font_size,
    check_history_deleted,
    compare_archive,
    compare_htmls,
    is_added_to_steam_cart,
    is_cookie_deleted,
    is_expected_active_tab,
    is_expected_active_tab_approximate,
    is_expected_bookmarks,
    is_expected_installed_extensions,
    is_expected_search_query,
    is_expected_tabs,
    is_expected_url_pattern_match,
    is_shortcut_on_desktop,
    normalize_url,
)


def tab(url: str, title: str = "") -> dict:
    return {"title": title, "url": url}


# -- tabs and URLs -----------------------------------------------------------------------------

def test_normalize_url_drops_www_suffix_and_root_slash():
    assert normalize_url("https://www.airbnb.com.sg/") == normalize_url("https://airbnb.com")
    assert normalize_url("github.com") == "http://github"
    assert normalize_url("https://scholar.google.com/citations?user=x", full=False) == "https://scholar.google/citations"


def test_is_expected_tabs_needs_the_same_urls_in_any_order():
    rule = {"type": "url", "urls": ["https://github.com", "https://docs.python.org/3/"]}
    assert is_expected_tabs([tab("https://docs.python.org/3/", "3.12 Documentation"), tab("https://github.com/")],
                            rule).score == 1.0
    assert is_expected_tabs([tab("https://github.com/")], rule).score == 0.0
    assert is_expected_tabs([tab("https://github.com/"), tab("https://docs.python.org/2/")], rule).score == 0.0
    assert is_expected_tabs([], rule).score == 0.0
    assert is_expected_tabs(None, rule).score == 0.0


def test_is_expected_tabs_with_a_local_file_tab():
    rule = {"type": "url", "urls": ["https://aclanthology.org/", "file:///home/user/Desktop/survey.html"]}
    assert is_expected_tabs([tab("https://aclanthology.org/"), tab("file:///home/user/Desktop/survey.html")],
                            rule).score == 1.0


def test_a_tab_rule_type_other_than_url_scores_0_as_in_osworld():
    assert is_expected_tabs([tab("https://github.com")], {"type": "title", "titles": ["GitHub"]}).score == 0.0


def test_is_expected_active_tab_from_the_url_bar_or_the_debugging_port():
    rule = {"type": "url", "url": "https://www.drugs.com/npc/"}
    assert is_expected_active_tab("https://drugs.com/npc/", rule).score == 1.0
    assert is_expected_active_tab(tab("https://www.drugs.com/npc/", "Drugs.com"), rule).score == 1.0
    assert is_expected_active_tab("https://www.drugs.com/npp/", rule).score == 0.0
    assert is_expected_active_tab(None, rule).score == 0.0
    assert is_expected_active_tab({"title": "no url"}, rule).score == 0.0


def test_is_expected_active_tab_approximate_ignores_the_query():
    rule = {"type": "url", "url": "chrome://password-manager/passwords"}
    assert is_expected_active_tab_approximate("chrome://password-manager/passwords?q=github", rule).score == 1.0
    assert is_expected_active_tab_approximate("chrome://settings/passwords", rule).score == 0.0
    assert is_expected_active_tab_approximate(None, rule).score == 0.0


def test_is_expected_url_pattern_match_needs_every_pattern():
    rules = {"type": "url", "url": "?hl=en&", "expected": ["https://scholar.google.com/citations", "user=qRAQ5BsAAAAJ"]}
    assert is_expected_url_pattern_match("https://scholar.google.com/citations?hl=en&user=qRAQ5BsAAAAJ",
                                         rules).score == 1.0
    assert is_expected_url_pattern_match("https://scholar.google.com/citations?hl=en&user=other", rules).score == 0.0
    assert is_expected_url_pattern_match(None, rules).score == 0.0


def test_is_expected_url_pattern_match_on_an_active_tab_dict():
    rules = {"expected": [r"united\.com/en/us/checked-bag-fee-calculator(/.*)?"]}
    assert is_expected_url_pattern_match(tab("https://www.united.com/en/us/checked-bag-fee-calculator/any"),
                                         rules).score == 1.0
    assert is_expected_url_pattern_match(tab("https://www.united.com/en/us/"), rules).score == 0.0


def test_is_expected_search_query():
    rules = {"expect": {"pattern": r"(?i)https?://(?:www\.)?google\.com/(?:search\?q=nereida(?:&|$|#)).*"}}
    assert is_expected_search_query(tab("https://www.google.com/search?q=nereida&sca_esv=1"), rules).score == 1.0
    assert is_expected_search_query(tab("https://www.google.com/search?q=neptune"), rules).score == 0.0
    assert is_expected_search_query(None, rules).score == 0.0


def test_is_added_to_steam_cart_looks_for_items_in_the_page_html():
    rule = {"items": ["The Dota 2 Official Soundtrack"]}
    page = {"title": "Shopping Cart", "url": "https://store.steampowered.com/cart/",
            "content": '<div class="cart_item_desc"><a>The Dota 2 Official Soundtrack</a></div>'}
    assert is_added_to_steam_cart(page, rule).score == 1.0
    assert is_added_to_steam_cart({**page, "content": "<div>Your cart is empty.</div>"}, rule).score == 0.0
    assert is_added_to_steam_cart(None, rule).score == 0.0


# -- profile state -----------------------------------------------------------------------------

def bookmark(name: str, url: str, ident: int) -> dict:
    return {"date_added": "13350000000000000", "guid": f"00000000-0000-4000-8000-{ident:012d}", "id": str(ident),
            "name": name, "type": "url", "url": url}


def folder(name: str, children: list, ident: int) -> dict:
    return {"children": children, "date_added": "13350000000000000", "date_modified": "13350000000000001",
            "guid": f"00000000-0000-4000-9000-{ident:012d}", "id": str(ident), "name": name, "type": "folder"}


def roots(bar_children: list) -> dict:
    """The "roots" object of Chrome's Bookmarks file, as the bookmarks getter returns it."""
    return {"bookmark_bar": folder("Bookmarks bar", bar_children, 1),
            "other": folder("Other bookmarks", [], 2), "synced": folder("Mobile bookmarks", [], 3)}


def test_is_expected_bookmarks_folder_names_on_the_bar():
    rule = {"type": "bookmark_bar_folders_names", "names": ["Favorites"]}
    assert is_expected_bookmarks(roots([folder("Favorites", [], 5), bookmark("Gmail", "https://mail.google.com", 6)]),
                                 rule).score == 1.0
    assert is_expected_bookmarks(roots([folder("Favourites", [], 5)]), rule).score == 0.0
    assert is_expected_bookmarks([], rule).score == 0.0
    assert is_expected_bookmarks(None, rule).score == 0.0


def test_is_expected_bookmarks_urls_on_the_bar():
    rule = {"type": "bookmark_bar_websites_urls", "urls": ["https://jalammar.github.io/illustrated-transformer/"]}
    saved = bookmark("The Illustrated Transformer", "https://jalammar.github.io/illustrated-transformer/", 7)
    assert is_expected_bookmarks(roots([saved]), rule).score == 1.0
    assert is_expected_bookmarks(roots([saved, bookmark("x", "https://example.com/", 8)]), rule).score == 0.0


def test_is_expected_bookmarks_liked_authors_with_alternative_urls():
    rule = {"type": "liked_authors_websites_urls", "names": ["Liked Authors"],
            "urls": [["https://a.example/~ada", "https://a.example/ada"], "https://b.example/bob"]}
    authors = folder("Liked Authors", [bookmark("Ada", "https://a.example/ada", 10),
                                       bookmark("Bob", "https://b.example/bob", 11)], 9)
    assert is_expected_bookmarks(roots([authors]), rule).score == 1.0
    only_ada = folder("Liked Authors", [bookmark("Ada", "https://a.example/ada", 10)], 9)
    assert is_expected_bookmarks(roots([only_ada]), rule).score == 0.0
    assert is_expected_bookmarks(roots([]), rule).score == 0.0


def test_is_expected_installed_extensions_is_a_subset_check():
    expected = {"expected": ["Zoom for Google Chrome", "Momentum"]}
    assert is_expected_installed_extensions(["Momentum", "Zoom for Google Chrome", "Google Docs Offline"],
                                            expected).score == 1.0
    assert is_expected_installed_extensions(["Momentum"], expected).score == 0.0
    assert is_expected_installed_extensions(None, expected).score == 0.0


def cookie_rows(path, hosts: list[str]) -> list[tuple]:
    """Rows of a Chrome Cookies database, read as the cookie_data getter reads them."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE cookies (creation_utc INTEGER NOT NULL, host_key TEXT NOT NULL, "
               "top_frame_site_key TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, "
               "encrypted_value BLOB NOT NULL, path TEXT NOT NULL, expires_utc INTEGER NOT NULL)")
    db.executemany("INSERT INTO cookies VALUES (13350000000000000, ?, '', 'session-id', '', x'00', '/', 0)",
                   [(h,) for h in hosts])
    db.commit()
    rows = db.execute("SELECT * FROM cookies").fetchall()
    db.close()
    return rows


def test_is_cookie_deleted(tmp_path):
    rule = {"type": "domains", "domains": [".amazon.com"]}
    assert is_cookie_deleted(cookie_rows(tmp_path / "a_Cookies", [".google.com"]), rule).score == 1.0
    assert is_cookie_deleted(cookie_rows(tmp_path / "b_Cookies", [".google.com", ".amazon.com"]), rule).score == 0.0
    assert is_cookie_deleted(cookie_rows(tmp_path / "c_Cookies", ["fls-na.amazon.com"]), rule).score == 0.0
    assert is_cookie_deleted([], rule).score == 1.0  # every cookie is gone
    assert is_cookie_deleted(None, rule).score == 0.0  # the cookie database could not be read


def history_rows(path, urls: list[str]) -> list[tuple]:
    """Rows of a Chrome History database, read as the history getter reads them."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE urls (id INTEGER PRIMARY KEY AUTOINCREMENT, url LONGVARCHAR, title LONGVARCHAR, "
               "visit_count INTEGER DEFAULT 0 NOT NULL, typed_count INTEGER DEFAULT 0 NOT NULL, "
               "last_visit_time INTEGER NOT NULL, hidden INTEGER DEFAULT 0 NOT NULL)")
    db.executemany("INSERT INTO urls (url, title, last_visit_time) VALUES (?, ?, 13350000000000000)",
                   [(u, "page") for u in urls])
    db.commit()
    rows = db.execute("SELECT url, title, last_visit_time FROM urls").fetchall()
    db.close()
    return rows


def test_check_history_deleted(tmp_path):
    rule = {"type": "keywords", "keywords": ["youtube"]}
    kept = history_rows(tmp_path / "a_History", ["https://www.wikipedia.org/"])
    assert check_history_deleted(kept, rule).score == 1.0
    left = history_rows(tmp_path / "b_History", ["https://www.youtube.com/watch?v=1"])
    assert check_history_deleted(left, rule).score == 0.0
    assert check_history_deleted(None, rule).score == 0.0


def test_check_enabled_experiments():
    rule = {"type": "names", "names": ["calculate-native-win-occlusion", "smooth-scrolling"]}
    assert check_enabled_experiments(["calculate-native-win-occlusion@2", "smooth-scrolling@1"], rule).score == 1.0
    assert check_enabled_experiments(["smooth-scrolling@1"], rule).score == 0.0
    assert check_enabled_experiments(None, rule).score == 0.0


def test_check_font_size_range_is_exclusive():
    rule = {"type": "range", "min": 16, "max": 99999}
    assert check_font_size({"default_fixed_font_size": 13, "default_font_size": 20}, rule).score == 1.0
    assert check_font_size({"default_fixed_font_size": 13, "default_font_size": 16}, rule).score == 0.0
    assert check_font_size({"default_font_size": 18}, {"type": "value", "value": 18}).score == 1.0
    assert check_font_size(None, rule).score == 0.0


GAME_SHORTCUT = """#!/usr/bin/env xdg-open
[Desktop Entry]
Version=1.0
Terminal=false
Type=Application
Name=Play Puzzle Game 2048
Exec=/opt/google/chrome/google-chrome --profile-directory=Default --app-id=abcdefghijklmnop
Icon=chrome-abcdefghijklmnop-Default
StartupWMClass=crx_abcdefghijklmnop"""


def test_is_shortcut_on_desktop_by_name_or_exec():
    shortcuts = {"/home/user/Desktop/chrome-abcdefghijklmnop-Default.desktop": GAME_SHORTCUT}
    assert is_shortcut_on_desktop(shortcuts, {"type": "name", "name": "Play Puzzle Game 2048"}).score == 1.0
    assert is_shortcut_on_desktop(shortcuts, {"type": "name", "name": "Play Puzzle Game"}).score == 0.0
    exec_line = "/opt/google/chrome/google-chrome --profile-directory=Default --app-id=abcdefghijklmnop"
    assert is_shortcut_on_desktop(shortcuts, {"type": "exec", "exec": exec_line}).score == 1.0
    assert is_shortcut_on_desktop({}, {"type": "name", "name": "Play Puzzle Game 2048"}).score == 0.0
    assert is_shortcut_on_desktop(None, {"type": "name", "name": "Play Puzzle Game 2048"}).score == 0.0


# -- PDF, HTML, archives -----------------------------------------------------------------------

AGENDA = "Meeting agenda\n1. Budget review\n2. Hiring plan\n3. Office move\n"
SURVEY_CSV = "Year,Industry,Value\n2021,Agriculture,1234.5\n2021,Mining,99\n"


@pytest.fixture(scope="module")
def exported(tmp_path_factory, libreoffice) -> dict[str, str]:
    """PDFs and an HTML table exported by LibreOffice, once for the module."""
    folder = tmp_path_factory.mktemp("exports")
    sources = {"agenda.txt": AGENDA, "agenda_edited.txt": AGENDA.replace("Office move", "Retreat planning"),
               "minutes.txt": "Minutes\nAll items were approved.\n"}
    for name, text in sources.items():
        (folder / name).write_text(text)
    (folder / "survey.csv").write_text(SURVEY_CSV)
    for target, names in (("pdf", list(sources)), ("html", ["survey.csv"])):
        libreoffice.convert([folder / n for n in names], target, folder)
    return {p.name: str(p) for p in folder.iterdir() if p.suffix in (".pdf", ".html")}


def test_compare_htmls_of_libreoffice_exports(exported, tmp_path):
    gold = exported["survey.html"]
    assert compare_htmls(shutil.copy(gold, tmp_path / "agent.html"), gold).score == 1.0
    html = (tmp_path / "agent.html").read_text()
    changed_value = tmp_path / "value.html"
    changed_value.write_text(html.replace(">99<", ">98<"))
    assert compare_htmls(str(changed_value), gold).score == 0.0
    extra_row = tmp_path / "extra.html"
    extra_row.write_text(html.replace("</table>", "<tr><td>2022</td></tr></table>"))
    assert compare_htmls(str(extra_row), gold).score == 0.0
    assert compare_htmls(None, gold).score == 0.0
    assert compare_htmls(str(tmp_path / "missing.html"), gold).score == 0.0


def test_compare_htmls_ignore_sdnum(exported, tmp_path):
    gold = exported["survey.html"]
    other_locale = tmp_path / "uk.html"
    other_locale.write_text(open(gold).read().replace('sdnum="1033;"', 'sdnum="2057;"'))
    assert compare_htmls(str(other_locale), gold).score == 0.0
    assert compare_htmls(str(other_locale), gold, ignore_sdnum=True).score == 1.0


def zip_of(path, members: dict[str, str]) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return str(path)


def test_compare_archive_of_text_files(tmp_path):
    gold = zip_of(tmp_path / "gold.zip", {"a.txt": "alpha\n", "b.txt": "beta\n"})
    assert compare_archive(zip_of(tmp_path / "same.zip", {"b.txt": "beta\n", "a.txt": "alpha\n"}), gold).score == 1.0
    assert compare_archive(zip_of(tmp_path / "half.zip", {"a.txt": "alpha\n", "b.txt": "gamma\n"}), gold).score == 0.5
    assert compare_archive(zip_of(tmp_path / "renamed.zip", {"a.txt": "alpha\n", "c.txt": "beta\n"}), gold).score == 0.0
    assert compare_archive(None, gold).score == 0.0
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(b"PK\x03\x04 truncated")
    assert compare_archive(str(corrupt), gold).score == 0.0


def test_compare_archive_options_reach_the_member_metric(tmp_path):
    gold = zip_of(tmp_path / "gold.zip", {"a.txt": "Alpha  Beta\n"})
    agent = zip_of(tmp_path / "agent.zip", {"a.txt": "alpha beta"})
    assert compare_archive(agent, gold).score == 0.0
    assert compare_archive(agent, gold, ignore_case=True, ignore_blanks=True).score == 1.0


def test_compare_archive_of_pdfs_in_a_subfolder(exported, tmp_path):
    def tarball(path, members: dict[str, str]) -> str:
        """A .tar.gz holding lecture_slides/<name> for each name -> exported PDF."""
        with tarfile.open(path, "w:gz") as archive:
            for name, source in members.items():
                archive.add(exported[source], arcname=f"lecture_slides/{name}")
        return str(path)

    both = {"agenda.pdf": "agenda.pdf", "minutes.pdf": "minutes.pdf"}
    gold = tarball(tmp_path / "gold.tar.gz", both)
    options = {"file_path": "lecture_slides", "file_type": "pdf"}
    assert compare_archive(tarball(tmp_path / "pdf.tar.gz", both), gold, **options).score == 1.0
    edited = tarball(tmp_path / "edited.tar.gz", {**both, "agenda.pdf": "agenda_edited.pdf"})
    assert 0.75 < compare_archive(edited, gold, **options).score < 1.0  # the mean of the members' scores
    assert compare_archive(tarball(tmp_path / "one.tar.gz", {"agenda.pdf": "agenda.pdf"}), gold, **options).score == 0.0
    assert compare_archive(tarball(tmp_path / "other.tar.gz", both), gold, file_path="slides",
                           file_type="pdf").score == 0.0


def test_compare_archive_unknown_file_type_is_a_task_error(tmp_path):
    gold = zip_of(tmp_path / "gold.zip", {"a.txt": "x"})
    with pytest.raises(ValueError, match="file_type"):
        compare_archive(gold, gold, file_type="spreadsheet")
