"""The Ray backend's driver-side parts that need no cluster: token choice and writing results back."""
from __future__ import annotations

import json
import os

import pytest

from osworld_harness.execution.ray_backend import _use_token_auth_if_available
from osworld_harness.results.task_folder import (
    TaskState,
    clear_task_dir,
    record_worker_died,
    task_state,
    write_returned_files,
)


def test_a_token_on_disk_makes_the_driver_use_token_auth_as_ray_start_does(tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(tmp_path / "auth_token"))
    _use_token_auth_if_available()
    assert "RAY_AUTH_MODE" not in os.environ
    (tmp_path / "auth_token").write_text("0" * 64)
    _use_token_auth_if_available()
    assert os.environ["RAY_AUTH_MODE"] == "token"


def test_an_explicit_auth_mode_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setenv("RAY_AUTH_TOKEN", "f" * 64)
    _use_token_auth_if_available()
    assert os.environ["RAY_AUTH_MODE"] == "disabled"


def test_files_sent_back_land_in_the_task_folder_and_status_comes_last(tmp_path):
    task_dir = tmp_path / "os" / "t1"
    clear_task_dir(task_dir)
    files = {"result.txt": b"1.0\n", "traj.jsonl": b"{}\n", "rescore/a.txt": b"x",
             "status.json": json.dumps({"status": "ok", "task_id": "t1", "steps": 1}).encode()}
    write_returned_files(task_dir, files, ray_worker={"host": "node-b", "ray_node_id": "abc", "pid": 7})
    assert (task_dir / "rescore" / "a.txt").read_bytes() == b"x"
    status = json.loads((task_dir / "status.json").read_text())
    assert status["ray_worker"] == {"host": "node-b", "ray_node_id": "abc", "pid": 7}
    assert task_state(task_dir) is TaskState.DONE


def test_a_lost_worker_leaves_an_error_that_the_retry_keeps_in_its_history(tmp_path):
    task_dir = tmp_path / "os" / "t1"
    clear_task_dir(task_dir)
    (task_dir / "status.json").write_text(json.dumps({"status": "running", "task_id": "t1", "attempt": 1}))
    record_worker_died(task_dir, "t1", "the Ray worker running this task died (ActorDiedError: gone)", attempt=1)
    assert task_state(task_dir) is TaskState.ERROR
    history = clear_task_dir(task_dir)
    assert [h.error.type for h in history] == ["WorkerDied"]
    assert "ActorDiedError" in history[0].error.message


def test_a_file_sent_back_may_not_land_outside_its_task_folder(tmp_path):
    task_dir = tmp_path / "os" / "t1"
    clear_task_dir(task_dir)
    with pytest.raises(ValueError, match="outside the task folder: '../t2/result.txt'"):
        write_returned_files(task_dir, {"../t2/result.txt": b"1.0\n"})
    assert not (tmp_path / "os" / "t2").exists()
