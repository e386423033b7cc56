"""The env server speaks OSWorld's protocol over TCP: paths, request encodings, response shapes.

Requests are built the way OSWorld's client builds them (requests library, JSON for most
calls, a form for /file and /window_size, multipart for uploads).
"""
from __future__ import annotations

import io
import shlex
import uuid

import pytest
from PIL import Image

pytestmark = pytest.mark.desktop


def unique(name: str) -> str:
    return f"{uuid.uuid4().hex[:8]}-{name}"


def test_platform_is_linux(desktop):
    response = desktop.get("/platform")
    assert response.status_code == 200
    assert response.text == "Linux"


def test_health_reports_ready_desktop(desktop):
    health = desktop.get("/health").json()
    assert health["ready"] is True
    assert health["window_manager"] is True
    assert health["dead_processes"] == []


def test_desktop_path_is_in_the_sandbox_home(desktop):
    assert desktop.post("/desktop_path").json() == {"desktop_path": "/home/user/Desktop"}


def test_upload_then_fetch_file_round_trips_bytes(desktop):
    path = f"~/Documents/{unique('data.bin')}"
    payload = bytes(range(256)) * 100
    upload = desktop.post("/setup/upload", data={"file_path": path}, files={"file_data": ("data.bin", payload)})
    assert upload.status_code == 200, upload.text
    fetched = desktop.post("/file", data={"file_path": path})
    assert fetched.status_code == 200
    assert fetched.content == payload


def test_upload_creates_missing_parent_folders(desktop):
    path = f"/home/user/{unique('deep')}/a/b/c.txt"
    response = desktop.post("/setup/upload", data={"file_path": path}, files={"file_data": ("c.txt", b"hello")})
    assert response.status_code == 200, response.text
    assert desktop.post("/file", data={"file_path": path}).content == b"hello"


def test_missing_file_is_404_with_message(desktop):
    response = desktop.post("/file", data={"file_path": "/home/user/no-such-file.txt"})
    assert response.status_code == 404
    assert "no-such-file.txt" in response.json()["message"]


def test_list_directory_returns_a_recursive_tree(desktop):
    folder = f"/home/user/{unique('tree')}"
    desktop.post("/setup/upload", data={"file_path": f"{folder}/sub/x.txt"}, files={"file_data": ("x.txt", b"x")})
    tree = desktop.post("/list_directory", json={"path": folder}).json()["directory_tree"]
    assert tree["type"] == "directory"
    (sub,) = tree["children"]
    assert sub == {"type": "directory", "name": "sub", "children": [{"type": "file", "name": "x.txt"}]}


def test_execute_runs_plain_commands_with_output_and_returncode(desktop):
    ok = desktop.post("/execute", json={"command": ["echo", "hi"], "shell": False}).json()
    assert ok == {"status": "success", "output": "hi\n", "error": "", "returncode": 0}
    failing = desktop.post("/execute", json={"command": "exit 3", "shell": True}).json()
    assert failing["returncode"] == 3


def test_execute_expands_home_in_arguments(desktop):
    result = desktop.post("/execute", json={"command": ["ls", "-d", "~/Desktop"], "shell": False}).json()
    assert result["output"].strip() == "/home/user/Desktop"


def test_setup_execute_is_an_alias(desktop):
    result = desktop.post("/setup/execute", json={"command": "echo $HOME", "shell": True}).json()
    assert result["output"] == "/home/user\n"


def test_run_bash_script_works_and_honours_working_dir(desktop):
    result = desktop.post("/run_bash_script",
                          json={"script": "pwd; echo err >&2; exit 0", "working_dir": "/tmp"}).json()
    assert result == {"status": "success", "output": "/tmp\n", "error": "err\n", "returncode": 0}


def test_run_bash_script_times_out_with_an_error_record(desktop):
    result = desktop.post("/run_bash_script", json={"script": "sleep 30", "timeout": 1}).json()
    assert result["status"] == "error"
    assert "timed out" in result["error"]


def test_run_python_reports_output_and_failures(desktop):
    ok = desktop.post("/run_python", json={"code": "print(6 * 7)"}).json()
    assert ok["status"] == "success" and ok["output"] == "42\n" and ok["return_code"] == 0
    bad = desktop.post("/run_python", json={"code": "raise ValueError('nope')"}).json()
    assert bad["status"] == "error" and "ValueError: nope" in bad["error"] and bad["return_code"] == 1


def test_launch_starts_a_program_without_waiting(desktop):
    marker = f"/home/user/{unique('launched')}"
    response = desktop.post("/setup/launch", json={"command": f"sleep 0.2 && touch {marker}", "shell": True})
    assert response.status_code == 200
    desktop.wait_for(lambda: desktop.post("/file", data={"file_path": marker}).status_code == 200,
                     timeout=10, what="the launched command's file")


def test_launch_of_a_program_that_is_not_there_is_refused(desktop):
    # OSWorld's status (500); its text for a program started directly, the shell's exit code otherwise
    for command, shell, text in (("no_such_program --start", True, "program not found (shell exit 127)"),
                                 (["no_such_program", "--start"], False, "No such file or directory")):
        response = desktop.post("/setup/launch", json={"command": command, "shell": shell})
        assert response.status_code == 500 and text in response.json()["message"], response.text


def test_change_wallpaper_then_read_it_back(desktop):
    # The session's desktop is shared: the VM's wallpaper goes back for the tests that check it
    # (tests/desktop/test_initial_state.py), whichever runs first on this worker.
    keys = ("picture-uri", "picture-uri-dark")
    before = {key: desktop.shell(f"gsettings get org.gnome.desktop.background {key}")["output"].strip() for key in keys}
    image = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 30, 30)).save(image, "PNG")
    path = f"/home/user/Pictures/{unique('wall.png')}"
    try:
        desktop.post("/setup/upload", data={"file_path": path}, files={"file_data": ("wall.png", image.getvalue())})
        assert desktop.post("/setup/change_wallpaper", json={"path": path}).status_code == 200
        assert desktop.post("/wallpaper").content == image.getvalue()
    finally:
        for key, value in before.items():
            desktop.shell(f"gsettings set org.gnome.desktop.background {key} {shlex.quote(value)}")


@pytest.mark.parametrize("method, path, kwargs, status", [
    ("post", "/execute", {"data": b"{not json", "headers": {"Content-Type": "application/json"}}, 400),
    ("post", "/execute", {"json": {"shell": False}}, 400),
    ("post", "/execute", {"json": {"command": [1, 2]}}, 400),
    ("post", "/file", {"data": {}}, 400),
    # a form where multipart is due: 415 on the public listener the fixture uses, 400 on a private one
    ("post", "/setup/upload", {"data": {"file_path": "/home/user/x"}}, (400, 415)),
    ("post", "/list_directory", {"json": {"path": "/home/user/nope"}}, 400),
    ("post", "/setup/open_file", {"json": {"path": "/home/user/nope.txt"}}, 404),
    ("post", "/window_size", {"data": {"app_class_name": "NoSuchAppClass"}}, 404),
    ("post", "/run_bash_script", {"json": {"script": "true", "working_dir": "/nope"}}, 400),
    ("get", "/no/such/endpoint", {}, 404),
    ("get", "/execute", {}, 405),
])
def test_bad_requests_get_a_4xx_json_message_not_a_traceback(desktop, method, path, kwargs, status):
    response = getattr(desktop, method)(path, **kwargs)
    assert response.status_code in (status if isinstance(status, tuple) else (status,))
    body = response.json()
    assert body["status"] == "error"
    assert body["message"] and "Traceback" not in body["message"]


def test_server_keeps_serving_after_bad_requests(desktop):
    desktop.post("/execute", data=b"\xff\xfe", headers={"Content-Type": "application/json"})
    assert desktop.get("/platform").text == "Linux"
