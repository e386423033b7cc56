"""`osworld tasks prefetch` against a real HTTP server on loopback: every file a task names by URL lands
where a run reads it, with its size and sha256 in the manifest; interrupted downloads continue with a
Range request; a run then reads only the cache, and a changed or missing file is an error naming the
task and the URL."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from desktop_env.cache_manifest import MANIFEST_NAME, CacheManifest
from desktop_env.evaluators.recording import MANIFEST_VERSION, ReplayContext
from desktop_env.evaluators.scoring import run_getter
from desktop_env.resources import ResourceUnavailable, cache_name
from desktop_env.tasks import load_task
from desktop_env.tasks.prefetch import prefetch
from osworld_cli.errors import TASK_ERRORS
from osworld_cli.main import cli
from tests.file_server import FileServer

SLIDES = os.urandom(300_000)   # big enough to arrive in several chunks
GOLD = b"gold deck " * 1000
GOLD_B = b"another gold deck"
CSV = b"Year,Conference,City\n2023,ICML,Honolulu\n"


def write_task(root: Path, task_id: str, url: str, domain: str = "libreoffice_impress") -> Path:
    path = root / "examples" / domain / f"{task_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / "local.txt").write_text("shipped beside the task")
    path.write_text(json.dumps({
        "id": task_id, "instruction": "Edit the deck.",
        "config": [{"type": "download", "parameters": {"files": [
            {"url": f"{url}/files/slides.pptx", "path": "/home/user/Desktop/slides.pptx"},
            {"url": "local.txt", "path": "/home/user/local.txt"}]}}],
        "evaluator": {
            "postconfig": [{"type": "download", "parameters": {"files": [
                {"url": f"{url}/files/cities.csv", "path": "/home/user/cities.csv"}]}}],
            "func": ["compare_pptx_files", "compare_pptx_files", "compare_conference_city_in_order"],
            "result": [{"type": "vm_file", "path": "/home/user/Desktop/slides.pptx", "dest": "slides.pptx"}] * 2
                      + [{"type": "vm_file", "path": "/home/user/cities.csv", "dest": "cities.csv"}],
            "expected": [{"type": "cloud_file", "path": f"{url}/files/gold.pptx", "dest": "gold.pptx"},
                         {"type": "cloud_file", "multi": True, "gives": [0, 1],
                          "path": [f"{url}/files/gold.pptx", f"{url}/files/gold_b.pptx"],
                          "dest": ["gold_again.pptx", "gold_b.pptx"]},
                         {"type": "conference_city_in_order", "csv_path": f"{url}/files/cities.csv"}],
            "conj": "or"}}))
    return path


@pytest.fixture
def server():
    with FileServer({"/files/slides.pptx": SLIDES, "/files/gold.pptx": GOLD, "/files/gold_b.pptx": GOLD_B,
                     "/files/cities.csv": CSV}) as running:
        yield running


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def replay_context(cache: Path, task_path: Path) -> ReplayContext:
    """An evaluation context of the task with no desktop behind it: cloud files come from the cache."""
    task = load_task(task_path)
    return ReplayContext({"version": MANIFEST_VERSION, "evaluated_at": "2026-01-01T00:00:00+00:00", "calls": []},
                         cache / "blobs", cache / task.id, str(task.task_dir), task.config)


def test_each_file_lands_where_the_run_reads_it_with_its_size_and_sha256(tmp_path, server):
    task_path = write_task(tmp_path, "deck", server.url)
    cache = tmp_path / "cache"
    report = prefetch([load_task(task_path)], cache)
    assert [o.status for o in report.outcomes] == ["fetched", "fetched", "fetched", "copied", "fetched", "copied"]
    slides_url = f"{server.url}/files/slides.pptx"
    folder = cache / "deck"
    # The download step's name (OSWorld's uuid5 cache name), cloud_file's dest, the CSV getter's name.
    expected = {cache_name(slides_url, "slides.pptx"): SLIDES, cache_name(f"{server.url}/files/cities.csv",
                "cities.csv"): CSV, "gold.pptx": GOLD, "gold_again.pptx": GOLD, "gold_b.pptx": GOLD_B,
                cache_name(f"{server.url}/files/cities.csv", "conference_cities.csv"): CSV}
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == expected
    manifest = json.loads((cache / MANIFEST_NAME).read_text())
    entry = manifest["files"][f"deck/{cache_name(slides_url, 'slides.pptx')}"]
    assert entry == {"url": slides_url, "size": len(SLIDES), "sha256": sha(SLIDES), "task_file": str(task_path),
                     "field": "config[0].parameters.files[0].url"}
    assert len(manifest["files"]) == 6
    # Each URL crossed the network once; the task-relative file is never fetched.
    assert sorted(path for path, _ in server.requests) == [
        "/files/cities.csv", "/files/gold.pptx", "/files/gold_b.pptx", "/files/slides.pptx"]


def test_a_run_reads_only_the_cache_and_a_changed_or_missing_file_is_an_error_naming_task_and_url(tmp_path):
    with FileServer({"/files/slides.pptx": SLIDES, "/files/gold.pptx": GOLD, "/files/gold_b.pptx": GOLD_B,
                     "/files/cities.csv": CSV}) as server:
        task_path = write_task(tmp_path, "deck", server.url)
        cache = tmp_path / "cache"
        prefetch([load_task(task_path)], cache)
        url = server.url
    # The server is gone: the getters read the cache.
    ctx = replay_context(cache, task_path)
    evaluator = load_task(task_path).evaluator
    assert Path(run_getter(ctx, evaluator["expected"][0], "expected", "compare_pptx_files")).read_bytes() == GOLD
    assert [Path(p).read_bytes() for p in run_getter(ctx, evaluator["expected"][1], "expected", "m")] == [GOLD, GOLD_B]
    assert run_getter(ctx, evaluator["expected"][2], "expected", "m") == ["Honolulu"]

    (cache / "deck" / "gold.pptx").write_bytes(GOLD.replace(b"gold", b"GOLD", 1))  # same size, other bytes
    with pytest.raises(ResourceUnavailable) as changed:
        run_getter(replay_context(cache, task_path), evaluator["expected"][0], "expected", "compare_pptx_files")
    message = str(changed.value)
    assert str(task_path) in message and "evaluator.expected[0].path" in message and f"{url}/files/gold.pptx" in message
    assert "has changed: sha256" in message and "osworld tasks prefetch" in message

    (cache / "deck" / "gold_b.pptx").unlink()
    with pytest.raises(ResourceUnavailable, match=r"evaluator.expected\[1\].path\[1\] = .*gold_b.pptx.*is missing"):
        run_getter(replay_context(cache, task_path), evaluator["expected"][1], "expected", "m")


def test_an_interrupted_download_continues_with_a_range_request(tmp_path, server):
    task_path = write_task(tmp_path, "deck", server.url)
    cache = tmp_path / "cache"
    server.cut_once["/files/slides.pptx"] = 100_000
    first = prefetch([load_task(task_path)], cache)
    (failed,) = first.failed
    assert failed.file.url.endswith("/files/slides.pptx")
    assert "100000 of 300000 bytes" in failed.message and "run again to continue" in failed.message
    assert f"deck/{failed.file.name}" not in CacheManifest(cache).entries
    assert not (cache / "deck" / failed.file.name).exists()

    second = prefetch([load_task(task_path)], cache)
    assert [o.status for o in second.outcomes].count("fetched") == 1 and not second.failed
    assert server.requests[-1] == ("/files/slides.pptx", "bytes=100000-")
    assert (cache / "deck" / failed.file.name).read_bytes() == SLIDES
    assert CacheManifest(cache).entries[f"deck/{failed.file.name}"].sha256 == sha(SLIDES)


def test_a_size_that_differs_from_the_declared_one_is_an_error_and_nothing_is_recorded(tmp_path, server):
    task_path = write_task(tmp_path, "deck", server.url)
    cache = tmp_path / "cache"
    server.declared["/files/gold_b.pptx"] = len(GOLD_B) + 50
    report = prefetch([load_task(task_path)], cache)
    (failed,) = report.failed
    assert failed.file.field == "evaluator.expected[1].path[1]"
    assert f"{server.url}/files/gold_b.pptx" in failed.message
    assert f"{len(GOLD_B)} of {len(GOLD_B) + 50}" in failed.message
    assert "deck/gold_b.pptx" not in CacheManifest(cache).entries and not (cache / "deck" / "gold_b.pptx").exists()


def test_prefetching_again_fetches_only_what_is_missing_or_changed(tmp_path, server):
    task_path = write_task(tmp_path, "deck", server.url)
    cache = tmp_path / "cache"
    prefetch([load_task(task_path)], cache)
    asked = len(server.requests)
    assert {o.status for o in prefetch([load_task(task_path)], cache).outcomes} == {"cached"}
    assert len(server.requests) == asked
    (cache / "deck" / "gold.pptx").write_bytes(b"tampered")
    again = {o.file.name: o for o in prefetch([load_task(task_path)], cache).outcomes}
    assert again["gold.pptx"].status == "fetched" and "has changed: 8 bytes" in again["gold.pptx"].message
    assert (cache / "deck" / "gold.pptx").read_bytes() == GOLD


def test_the_command_names_the_task_field_and_url_of_each_file_it_could_not_fetch(tmp_path, server):
    write_task(tmp_path, "deck", server.url)
    broken = write_task(tmp_path, "gone", server.url + "/nowhere", domain="multi_apps")
    (tmp_path / "test_all.json").write_text(json.dumps({"libreoffice_impress": ["deck"], "multi_apps": ["gone"]}))
    cache = tmp_path / "cache"
    outcome = CliRunner().invoke(cli, ["tasks", "prefetch", str(tmp_path / "test_all.json"), "--cache-dir", str(cache)])
    assert outcome.exit_code == TASK_ERRORS, outcome.output
    assert "2 task(s) name 12 file(s) by URL" in outcome.output
    assert f"failed {broken}: config[0].parameters.files[0].url: {server.url}/nowhere/files/slides.pptx: HTTP 404" \
        in " ".join(outcome.output.split())
    ok = CliRunner().invoke(cli, ["tasks", "prefetch", str(tmp_path / "examples" / "libreoffice_impress"),
                                  "--cache-dir", str(cache)])
    assert ok.exit_code == 0, ok.output
    assert "prefetch" in ok.output and "already in the cache" in ok.output


def test_a_name_that_would_leave_the_tasks_cache_folder_is_refused_and_nothing_is_fetched(tmp_path, server):
    path = tmp_path / "examples" / "os" / "escape.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"id": "escape", "instruction": "x", "config": [], "evaluator": {
        "func": "compare_text_file", "result": {"type": "vm_file", "path": "/home/user/a", "dest": "a"},
        "expected": {"type": "cloud_file", "path": f"{server.url}/files/gold.pptx", "dest": "../../outside.pptx"}}}))
    report = prefetch([load_task(path, check_paths=False)], tmp_path / "cache")
    assert report.outcomes == [] and "evaluator.expected.dest" in report.refused[0]
    assert server.requests == [] and not (tmp_path / "outside.pptx").exists()


def test_a_symlink_where_the_partial_file_goes_is_replaced_never_written_through(tmp_path, server):
    task_path = write_task(tmp_path, "deck", server.url)
    cache = tmp_path / "cache"
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"keep me")
    (cache / "deck").mkdir(parents=True)
    (cache / "deck" / ".gold.pptx.part").symlink_to(outside)
    assert not prefetch([load_task(task_path)], cache).failed
    assert outside.read_bytes() == b"keep me" and (cache / "deck" / "gold.pptx").read_bytes() == GOLD
