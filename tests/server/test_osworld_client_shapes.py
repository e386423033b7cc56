"""Requests shaped as OSWorld's own client sends them, on a real desktop, and the status
codes and texts its server answers with: the same client must see the same thing here."""
from __future__ import annotations

import uuid

import pytest

from desktop_env.controllers.python import PythonController
from desktop_env.controllers.transport import Endpoint
from desktop_env.errors import ServerRequestError

pytestmark = pytest.mark.desktop


def unique(stem: str) -> str:
    return f"{stem}-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("path", ["/setup/execute_with_verification", "/execute_with_verification"])
def test_command_success_given_as_a_shell_string_is_run_by_the_shell(desktop, path):
    name = unique("verified")
    response = desktop.post(path, json={"command": f"touch ~/{name}", "shell": False,
                                        "verification": {"command_success": f"test -e ~/{name}"},
                                        "max_wait_time": 10, "check_interval": 0.2})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["status"], body["verification"], body["returncode"]) == ("success", "passed", 0)
    assert 0 <= body["wait_time"] < 10


def test_an_unmet_command_success_string_is_500_verification_failed(desktop):
    response = desktop.post("/setup/execute_with_verification",
                            json={"command": "echo ran", "shell": True,
                                  "verification": {"command_success": f"test -e ~/{unique('never')}"},
                                  "max_wait_time": 0.5, "check_interval": 0.1})
    assert response.status_code == 500
    body = response.json()
    assert (body["status"], body["verification"], body["output"]) == ("verification_failed", "failed", "ran\n")
    assert body["wait_time"] == 0.5


def test_window_exists_given_as_a_string_matches_a_title_in_any_case(desktop):
    name = unique("verify-window") + ".txt"
    desktop.post("/setup/upload", data={"file_path": f"/tmp/{name}"}, files={"file_data": (name, b"x\n")})
    try:
        response = desktop.post("/setup/execute_with_verification",
                                json={"command": f"gedit --standalone /tmp/{name} &", "shell": True,
                                      "verification": {"window_exists": name.upper()},
                                      "max_wait_time": 30, "check_interval": 0.2})
        assert response.status_code == 200, response.text
        assert response.json()["verification"] == "passed"
    finally:
        desktop.post("/setup/close_window", json={"window_name": name})


def test_the_object_shapes_still_carry_their_options(desktop):
    name = unique("verified")
    response = desktop.post("/execute_with_verification",
                            json={"command": ["touch", f"~/{name}"],
                                  "verification": {"command_success": {"command": ["cat", f"/home/user/{name}"],
                                                                       "expected_output": ""},
                                                   "window_exists": {"window_name": "no such window"}},
                                  "max_wait_time": 0.3, "check_interval": 0.1})
    assert response.status_code == 500 and response.json()["status"] == "verification_failed"


def test_nothing_to_verify_is_the_plain_execute_answer(desktop):
    response = desktop.post("/setup/execute_with_verification", json={"command": ["echo", "hi"]})
    assert response.status_code == 200
    assert response.json() == {"status": "success", "output": "hi\n", "error": "", "returncode": 0}


@pytest.mark.parametrize("path", ["/setup/launch", "/execute", "/setup/execute", "/setup/execute_with_verification"])
def test_a_missing_program_is_500_with_osworlds_text(desktop, path):
    response = desktop.post(path, json={"command": ["no-such-program-x"], "shell": False})
    assert response.status_code == 500
    assert response.json() == {"status": "error", "message": "[Errno 2] No such file or directory: 'no-such-program-x'"}


def test_launch_answers_with_the_command_it_started(desktop):
    response = desktop.post("/setup/launch", json={"command": "sleep 0.1", "shell": False})
    assert (response.status_code, response.text) == (200, "sleep 0.1 launched successfully")


@pytest.mark.parametrize("path", ["~", "~/Documents", "$HOME", "/home/user/no-such-folder", "/home/user/.bashrc"])
def test_list_directory_takes_the_path_as_written_and_refuses_what_is_no_directory(desktop, path):
    response = desktop.post("/list_directory", json={"path": path})
    assert response.status_code == 400
    assert response.json()["error"] == "The provided path is not a directory"


def test_list_directory_of_an_absolute_folder(desktop):
    response = desktop.post("/list_directory", json={"path": "/home/user/Documents"})
    assert response.status_code == 200
    assert response.json()["directory_tree"]["name"] == "Documents"


def test_our_controller_reads_no_directory_as_none_and_a_bad_request_as_an_error(desktop):
    controller = PythonController(Endpoint(url=desktop.base_url))
    try:
        assert controller.get_vm_directory_tree("~/Documents") is None
        assert controller.get_vm_directory_tree("/home/user/Documents")["name"] == "Documents"
        with pytest.raises(ServerRequestError, match="HTTP 400"):
            controller.get_vm_directory_tree("")
    finally:
        controller.close()
