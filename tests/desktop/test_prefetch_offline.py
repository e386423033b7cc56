"""A task prefetched from a real HTTP server runs on a real desktop after the server is gone: its setup's
download and its evaluator's expected file come from the cache; a changed cached file stops the task
with an error naming the task file and the URL."""
from __future__ import annotations

import json

import pytest

from desktop_env.controllers.setup import SetupError
from desktop_env.desktop_env import DesktopEnv
from desktop_env.tasks import load_task
from desktop_env.tasks.prefetch import prefetch
from tests.file_server import FileServer

pytestmark = pytest.mark.desktop

NOTES = b"Minutes of the meeting\n- budget approved\n"


def test_a_prefetched_task_is_set_up_and_scored_with_no_server_and_a_changed_file_is_an_error(tmp_path):
    cache = tmp_path / "cache"
    task_path = tmp_path / "examples" / "os" / "notes.json"
    task_path.parent.mkdir(parents=True)
    with FileServer({"/cache/notes.txt": NOTES}) as server:
        url = f"{server.url}/cache/notes.txt"
        task_path.write_text(json.dumps({
            "id": "notes", "instruction": "Leave the notes as they are.",
            "config": [{"type": "download", "parameters": {"files": [{"url": url, "path": "/home/user/notes.txt"}]}}],
            "evaluator": {"func": "compare_text_file",
                          "result": {"type": "vm_file", "path": "/home/user/notes.txt", "dest": "notes.txt"},
                          "expected": {"type": "cloud_file", "path": url, "dest": "notes_gold.txt"}}}))
        assert not prefetch([load_task(task_path)], cache).failed
    task = load_task(task_path)
    env = DesktopEnv(screen_size=(1024, 768), require_a11y_tree=False, cache_dir=str(cache))
    try:
        env.reset(task.config, options={"task_dir": str(task.task_dir)})
        assert env.controller.get_file("/home/user/notes.txt") == NOTES
        env.step("DONE", pause=0)
        assert env.evaluate() == 1.0

        gold_copy = next(p for p in (cache / "notes").iterdir() if p.name.endswith("_notes.txt"))
        gold_copy.write_bytes(NOTES.upper())
        with pytest.raises(SetupError) as changed:
            env.reset(task.config, options={"task_dir": str(task.task_dir)})
        message = str(changed.value)
        assert str(task_path) in message and url in message and "has changed" in message
    finally:
        env.close()
