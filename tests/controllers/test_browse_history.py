"""update_browse_history replaces Chrome's history with the task's visits, keeping the schema of
the desktop's own History, which a fresh profile gets from one headless run of Chromium."""
from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from types import SimpleNamespace

import pytest

from desktop_env.controllers import setup

HISTORY = "/home/user/.config/google-chrome/Default/History"
# The tables the step writes, as Chromium declares them (a History has many more).
SCHEMA = """
CREATE TABLE meta(key LONGVARCHAR NOT NULL UNIQUE PRIMARY KEY, value LONGVARCHAR);
CREATE TABLE urls(id INTEGER PRIMARY KEY AUTOINCREMENT, url LONGVARCHAR, title LONGVARCHAR,
  visit_count INTEGER DEFAULT 0 NOT NULL, typed_count INTEGER DEFAULT 0 NOT NULL,
  last_visit_time INTEGER NOT NULL, hidden INTEGER DEFAULT 0 NOT NULL);
CREATE TABLE visits(id INTEGER PRIMARY KEY AUTOINCREMENT, url INTEGER NOT NULL, visit_time INTEGER NOT NULL,
  from_visit INTEGER, transition INTEGER DEFAULT 0 NOT NULL, segment_id INTEGER,
  visit_duration INTEGER DEFAULT 0 NOT NULL);
CREATE TABLE keyword_search_terms (keyword_id INTEGER NOT NULL, url_id INTEGER NOT NULL, term LONGVARCHAR NOT NULL);
INSERT INTO meta VALUES ('version', '70'), ('last_compatible_version', '16');
"""


def chrome_history(path, visited: list[str]) -> bytes:
    with closing(sqlite3.connect(path)) as db:
        db.executescript(SCHEMA)
        for url in visited:
            db.execute("INSERT INTO urls (url, title, last_visit_time) VALUES (?, 'old', 1)", (url,))
            db.execute("INSERT INTO keyword_search_terms VALUES (1, last_insert_rowid(), 'old search')")
        db.commit()
    return path.read_bytes()


class Desktop:
    """Files by path; `google-chrome` run headless makes `made` appear at HISTORY."""

    def __init__(self, files: dict[str, bytes], made: bytes | None = None):
        self.files, self.made = files, made
        self.commands: list[list[str] | str] = []

    def get_file(self, path):
        return self.files.get(path)

    def upload_file(self, path, data):
        self.files[path] = data

    def run_command(self, command, shell=False):
        self.commands.append(command)
        if self.made is not None:
            self.files[HISTORY] = self.made
        return {"output": "", "error": "no display", "returncode": 0 if self.made else 1}


VISITS = [{"url": "https://www.youtube.com/watch?v=1", "title": "One", "visit_time_from_now_in_seconds": 60},
          {"url": "https://www.bbc.co.uk/", "title": "BBC", "visit_time_from_now_in_seconds": 3600}]


def read_back(desktop: Desktop, tmp_path) -> sqlite3.Connection:
    (tmp_path / "uploaded").write_bytes(desktop.files[HISTORY])
    return sqlite3.connect(tmp_path / "uploaded")


def test_the_history_becomes_exactly_the_tasks_visits(tmp_path):
    desktop = Desktop({HISTORY: chrome_history(tmp_path / "History", ["https://old.example/"])})
    setup.update_browse_history(SimpleNamespace(controller=desktop), VISITS)
    with closing(read_back(desktop, tmp_path)) as db:
        urls = db.execute("SELECT id, url, title, visit_count, last_visit_time FROM urls ORDER BY id").fetchall()
        assert [(url, title, count) for _, url, title, count, _ in urls] == \
            [("https://www.youtube.com/watch?v=1", "One", 1), ("https://www.bbc.co.uk/", "BBC", 1)]
        visits = db.execute("SELECT url, visit_time, transition FROM visits ORDER BY id").fetchall()
        assert visits == [(id_, last_visit, setup.LINK_VISIT) for id_, *_, last_visit in urls]
        now_us = (time.time() + 11644473600) * 1_000_000
        assert [round((now_us - t) / 1e6) for _, t, _ in visits] == [60, 3600]
        assert db.execute("SELECT count(*) FROM keyword_search_terms").fetchone() == (0,)
        assert dict(db.execute("SELECT key, value FROM meta")) == {"version": "70", "last_compatible_version": "16"}
    assert desktop.files[HISTORY + "-journal"] == b""
    assert desktop.commands == []


def test_a_fresh_profile_gets_its_history_from_one_headless_run_of_chromium(tmp_path):
    desktop = Desktop({}, made=chrome_history(tmp_path / "History", []))
    setup.update_browse_history(SimpleNamespace(controller=desktop), VISITS)
    assert desktop.commands == [["google-chrome", "--headless=new", "--dump-dom", "about:blank"]]
    with closing(read_back(desktop, tmp_path)) as db:
        assert db.execute("SELECT count(*) FROM visits").fetchone() == (2,)


def test_no_history_even_after_chromium_ran_is_a_setup_error(tmp_path):
    with pytest.raises(setup.SetupError, match="exit 1.*no display"):
        setup.update_browse_history(SimpleNamespace(controller=Desktop({})), VISITS)
