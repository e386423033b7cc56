"""Wrong types and values in any field give a 4xx JSON message naming the field, never a 500;
and commands that leave background children still return when they exit."""
from __future__ import annotations

import os
import signal
import time

import pytest

from desktop_env.server.routes_exec import MAX_OUTPUT_BYTES
from desktop_env.server.routes_files import MAX_TREE_ENTRIES
from tests.server.serverproc import wait_until


@pytest.mark.parametrize("path, body, field", [
    ("/run_bash_script", {"script": "true", "timeout": "abc"}, "timeout"),
    ("/run_bash_script", {"script": "true", "timeout": -1}, "timeout"),
    ("/run_bash_script", {"script": "true", "timeout": None, "working_dir": [".."]}, "working_dir"),
    ("/run_bash_script", {"script": ["echo"]}, "script"),
    ("/run_bash_script", {"script": "true", "working_dir": "/nope"}, "working_dir"),
    ("/execute_with_verification", {"command": "true", "shell": True, "max_wait_time": "x"}, "max_wait_time"),
    ("/execute_with_verification", {"command": "true", "shell": True, "check_interval": "x"}, "check_interval"),
    ("/execute_with_verification", {"command": "true", "shell": True, "check_interval": [1]}, "check_interval"),
    ("/execute_with_verification", {"command": "true", "max_wait_time": 10 ** 400}, "max_wait_time"),
    ("/execute_with_verification", {"command": "true", "verification": "yes"}, "verification"),
    ("/execute_with_verification", {"command": "true", "verification": {"window_exists": 5}},
     "verification.window_exists"),
    ("/execute_with_verification", {"command": "true", "verification": {"command_success": ["true"]}},
     "verification.command_success"),
    ("/execute_with_verification", {"command": "true", "verification": {"command_success": {"command": 5}}},
     "verification.command_success.command"),
    ("/setup/execute_with_verification", {"command": "true", "max_wait_time": True}, "max_wait_time"),
    ("/execute", {"command": 5}, "command"),
    ("/execute", {"command": {"a": 1}}, "command"),
    ("/execute", {"command": ["echo", None]}, "command"),
    ("/execute", {"command": "echo 'unbalanced"}, "command"),
    ("/execute", {"command": "echo \u0000x", "shell": True}, "command"),
    ("/execute", {"command": ["true"], "shell": "maybe"}, "shell"),
    ("/execute", {"command": ["true"], "shell": [True]}, "shell"),
    ("/setup/execute", {"command": ""}, "command"),
    ("/setup/launch", {"command": ["true"], "shell": {}}, "shell"),
    ("/setup/launch", {"command": 1.5}, "command"),
    ("/run_python", {"code": 42}, "code"),
    ("/run_python", {}, "code"),
    ("/file", {"file_path": ["a"]}, "file_path"),
    ("/file", {"file_path": "x" * 5000}, "x" * 50),
    ("/list_directory", {"path": 7}, "path"),
    ("/list_directory", {"path": "\u0000"}, "path"),
    ("/setup/download_file", {"url": ["http://x"], "path": "a"}, "url"),
    ("/setup/download_file", {"url": "http://127.0.0.1:1/", "path": {}}, "path"),
    ("/setup/change_wallpaper", {"path": False}, "path"),
    ("/setup/open_file", {"path": "~/x.txt", "timeout": "soon"}, "timeout"),
    ("/setup/open_file", {"path": 3}, "path"),
    ("/setup/activate_window", {"window_name": ["w"]}, "window_name"),
    ("/setup/activate_window", {"window_name": "w", "strict": "sometimes"}, "strict"),
    ("/setup/close_window", {"window_name": "w", "by_class": 7}, "by_class"),
    ("/window_size", {"app_class_name": 12}, "app_class_name"),
])
def test_wrong_field_types_are_4xx_naming_the_field(server, path, body, field):
    response = server.post(path, json=body)
    if response.status_code == 404 and "no such endpoint" in response.text:
        pytest.skip("the window routes need python-xlib in the server's Python")
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    answer = response.json()
    assert answer["status"] == "error"
    assert field in answer["message"]
    assert "Traceback" not in answer["message"]


@pytest.mark.parametrize("body", [b"[1, 2]", b"\"text\"", b"{\"a\": ", b"\xff\xfe", b"[" * 100_000])
def test_a_body_that_is_not_a_json_object_is_400(server, body):
    response = server.post("/execute", data=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["status"] == "error"


def test_form_fields_are_typed_the_same_way(server):
    response = server.post("/run_bash_script", data={"script": "echo hi", "timeout": "5"})
    assert response.json()["output"] == "hi\n"
    response = server.post("/run_bash_script", data={"script": "echo hi", "timeout": "five"})
    assert response.status_code == 400 and "timeout" in response.json()["message"]


def test_list_directory_of_proc_is_bounded_and_the_server_lives_on(server):
    response = server.post("/list_directory", json={"path": "/proc"}, timeout=120)
    assert response.status_code in (200, 413), response.text
    if response.status_code == 413:
        assert "/proc" in response.json()["message"]
    assert server.get("/platform").text == "Linux"


def test_list_directory_refuses_a_tree_past_its_bound(server):
    big = server.home / "big"
    for i in range(4):
        (big / f"d{i}").mkdir(parents=True)
        for j in range(MAX_TREE_ENTRIES // 4 + 1):
            (big / f"d{i}" / f"f{j}").touch()
    response = server.post("/list_directory", json={"path": str(big)})
    assert response.status_code == 413
    assert str(MAX_TREE_ENTRIES) in response.json()["message"]
    (big / "d0" / "sub").mkdir()
    small = server.post("/list_directory", json={"path": str(big / "d0")}).json()["directory_tree"]
    assert small["name"] == "d0" and len(small["children"]) == MAX_TREE_ENTRIES // 4 + 2
    assert {"type": "directory", "name": "sub", "children": []} in small["children"]


def test_list_directory_lists_symlinks_without_following_them(server):
    (server.home / "tree" / "a").mkdir(parents=True)
    os.symlink("/", server.home / "tree" / "a" / "root")
    tree = server.post("/list_directory", json={"path": str(server.home / "tree")}).json()["directory_tree"]
    assert tree["children"] == [{"type": "directory", "name": "a", "children": [{"type": "file", "name": "root"}]}]


def background_pid(output: str) -> int:
    return int(output.strip().splitlines()[-1])


def assert_alive_then_kill(pid: int) -> None:
    try:
        os.kill(pid, 0)
    finally:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("path, body, output_key", [
    ("/execute", {"command": "sleep 150 & echo started; echo $!", "shell": True}, "output"),
    ("/setup/execute", {"command": ["bash", "-c", "sleep 150 & echo started; echo $!"]}, "output"),
    ("/execute_with_verification", {"command": "sleep 150 & echo started; echo $!", "shell": True,
                                    "verification": {"command_success": {"command": "sleep 150 & true",
                                                                         "shell": True}}}, "output"),
    ("/run_bash_script", {"script": "sleep 150 & echo started; echo $!"}, "output"),
    ("/run_python", {"code": "import subprocess; p = subprocess.Popen(['sleep', '150']); print('started'); "
                             "print(p.pid)"}, "output"),
])
def test_a_command_that_leaves_a_background_child_returns_when_it_exits(server, path, body, output_key):
    started = time.monotonic()
    response = server.post(path, json=body, timeout=60)
    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.text
    output = response.json()[output_key]
    assert output.startswith("started\n")
    assert elapsed < 10
    assert_alive_then_kill(background_pid(output))


def test_a_background_child_that_keeps_writing_is_not_killed_by_a_closed_pipe(server):
    script = "(for i in $(seq 1 400); do echo line $i; sleep 0.01; done; touch ~/child-finished) & echo $!"
    response = server.post("/run_bash_script", json={"script": script})
    assert response.json()["returncode"] == 0
    # It writes for seconds after the reply; a pipe closed under it would kill it with SIGPIPE.
    assert wait_until(lambda: (server.home / "child-finished").exists(), timeout=30)


def test_output_past_the_cap_is_cut_with_a_note(server):
    response = server.post("/execute", json={"command": f"head -c {MAX_OUTPUT_BYTES + 5000} /dev/zero | tr '\\0' a",
                                             "shell": True})
    output = response.json()["output"]
    assert output.startswith("a" * 1000)
    assert output.endswith("[5000 more bytes of output were dropped]\n")


def test_a_timeout_still_kills_the_command(server):
    started = time.monotonic()
    response = server.post("/run_bash_script", json={"script": "echo before; sleep 30", "timeout": 1})
    assert time.monotonic() - started < 10
    result = response.json()
    assert result["status"] == "error" and "timed out" in result["error"] and result["output"] == "before\n"
