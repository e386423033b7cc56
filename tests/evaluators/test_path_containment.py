"""At run time, getters and setup steps never write or read host files outside the harness's folders.

What slips past validation (a task dict handed straight to DesktopEnv.reset, a placeholder, a
symlink that appeared in the cache) is refused where the path meets the host filesystem, with
UnsafeTaskPath naming the task file, the field and the value, and nothing is written outside:
each test checks that the would-be target does not exist afterwards. The desktop is a fake
controller behind a real DesktopEnv, so reset/evaluate and the harness's episode run as they do.
"""
from __future__ import annotations

import io
import json
import os
import pickle
import uuid
from pathlib import Path

import pytest
from PIL import Image

from desktop_env.controllers.python import PythonController
from desktop_env.controllers.setup import SetupError, run_steps
from desktop_env.controllers.transport import Endpoint
from desktop_env.desktop_env import DesktopEnv
from desktop_env.evaluators.context import LiveContext
from desktop_env.evaluators.registry import get_getter, load_builtins
from desktop_env.evaluators.scoring import score_task
from desktop_env.providers.base import Provider
from desktop_env.resources import cache_name
from desktop_env.safe_paths import UnsafeTaskPath, join_under, write_under
from osworld_harness.execution.episode import EpisodeConfig, run_episode

load_builtins()

_png = io.BytesIO()
Image.new("RGB", (8, 8), "white").save(_png, format="PNG")
PNG = _png.getvalue()


class FakeController(PythonController):
    """The desktop: files by path, commands that print, and a record of every call. A PythonController
    in type only (it is what DesktopEnv holds): it talks to no server, and a method it does not
    replace fails."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {"/home/user/a.txt": b"agent's file", "/home/user/b.txt": b"second"}
        self.calls: list[tuple] = []

    def get_file(self, path):
        self.calls.append(("get_file", path))
        return self.files.get(path)

    def upload_file(self, path, data):
        self.calls.append(("upload_file", path))
        self.files[path] = data

    def run_command(self, command, shell=False):
        self.calls.append(("run_command", command))
        return {"output": "out\n", "error": "err\n", "returncode": 0}

    def launch(self, command, shell=False):
        self.calls.append(("launch", command))

    def settle(self, timeout, hold=None):
        return None  # a server that cannot tell when its desktop is settled, as OSWorld's

    def get_vm_desktop_path(self):
        return "/home/user/Desktop"

    def get_vm_wallpaper(self):
        self.calls.append(("get_vm_wallpaper",))
        return PNG

    def get_screenshot(self):
        return PNG

    def get_accessibility_tree(self):
        return "<desktop/>"

    def get_terminal_output(self):
        return None

    def start_recording(self):
        pass

    def end_recording(self, path):
        pass

    def close(self):
        pass


class FakeProvider(Provider):
    def start_emulator(self, path_to_vm, headless, os_type):
        pass

    def get_ip_address(self, path_to_vm):
        return Endpoint(url="http://127.0.0.1:9")

    def save_state(self, path_to_vm, snapshot_name):
        pass

    def revert_to_snapshot(self, path_to_vm, snapshot_name):
        return None

    def stop_emulator(self, path_to_vm):
        pass


@pytest.fixture
def world(tmp_path):
    """cache/ (the harness's), tasks/ (a task set root), outside/ (the rest of the host)."""
    (tmp_path / "tasks" / "examples" / "os").mkdir(parents=True)
    (tmp_path / "tasks" / "files").mkdir()
    (tmp_path / "tasks" / "files" / "in.txt").write_text("inside the tree")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("host secret")
    (tmp_path / "tasks" / "files" / "leak.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    return tmp_path


def make_env(world: Path) -> DesktopEnv:
    env = DesktopEnv(provider=FakeProvider(), cache_dir=str(world / "cache"), require_a11y_tree=False)
    env.controller = FakeController()
    return env


def start(world: Path, task: dict) -> DesktopEnv:
    env = make_env(world)
    env.reset(task, options={"task_dir": str(world / "tasks" / "examples" / "os")})
    return env


def task(evaluator=None, config=None, task_id="t1") -> dict:
    return {"id": task_id, "instruction": "x", "config": config or [],
            "evaluator": evaluator or {"func": "exact_match", "result": {"type": "rule", "rules": {}}}}


def vm_file_eval(dest, **more) -> dict:
    return {"func": "exact_match", "result": {"type": "vm_file", "path": "/home/user/a.txt", "dest": dest, **more},
            "expected": {"type": "rule", "rules": {"expected": "x"}}}


def task_file(world: Path, task_id: str = "t1") -> str:
    return str(world / "tasks" / "examples" / "os" / f"{task_id}.json")


def assert_refused(info, world, field, value, task_id="t1"):
    error = info.value
    assert (error.field, error.value) == (field, value)
    message = str(error)
    assert task_file(world, task_id) in message and field in message and repr(value) in message


# -- getters -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dest_in", ["outside/cron.x", "outside/.bashrc"])
def test_vm_file_with_an_absolute_dest_writes_nothing_and_is_an_error(world, dest_in):
    target = world / dest_in
    env = start(world, task(vm_file_eval(str(target))))
    with pytest.raises(UnsafeTaskPath) as info:
        env.evaluate()  # an error, never a score of 0
    assert_refused(info, world, "evaluator.result.dest", str(target))
    assert not target.exists()
    assert ("get_file", "/home/user/a.txt") not in env.controller.calls  # refused before the desktop is asked


def test_vm_file_with_a_dotdot_dest(world):
    env = start(world, task(vm_file_eval("../../outside/x.txt")))
    with pytest.raises(UnsafeTaskPath) as info:
        score_task(env, env.task_config["evaluator"])
    assert_refused(info, world, "evaluator.result.dest", "../../outside/x.txt")
    assert not (world / "outside" / "x.txt").exists()


def test_vm_file_multi_checks_every_dest_before_writing_any(world):
    evaluator = {"func": ["exact_match", "exact_match"], "result": [
        {"type": "rule", "rules": {}},
        {"type": "vm_file", "multi": True, "path": ["/home/user/a.txt", "/home/user/b.txt"],
         "dest": ["a.txt", "../../outside/b.txt"], "gives": [0, 1]}], "expected": [None, None]}
    env = start(world, task(evaluator))
    with pytest.raises(UnsafeTaskPath) as info:
        get_getter("vm_file")(LiveContext(env), env.task_config["evaluator"]["result"][1])
    assert_refused(info, world, "evaluator.result[1].dest[1]", "../../outside/b.txt")
    assert not (Path(env.cache_dir) / "a.txt").exists() and not (world / "outside" / "b.txt").exists()


def test_a_symlink_in_the_cache_is_never_written_through(world):
    env = start(world, task(vm_file_eval("link.txt")))
    victim = world / "outside" / "secret.txt"
    (Path(env.cache_dir) / "link.txt").symlink_to(victim)
    with pytest.raises(UnsafeTaskPath, match="outside the task's cache folder"):
        env.evaluate()
    assert victim.read_text() == "host secret"
    # a symlink that stays inside the cache is not followed either (O_NOFOLLOW)
    inner = Path(env.cache_dir) / "inner.txt"
    inner.write_text("kept")
    (Path(env.cache_dir) / "link.txt").unlink()
    (Path(env.cache_dir) / "link.txt").symlink_to(inner)
    with pytest.raises(UnsafeTaskPath, match="symbolic link"):
        env.evaluate()
    assert inner.read_text() == "kept"


def test_a_symlinked_subfolder_in_the_cache_is_refused(world):
    env = start(world, task(vm_file_eval("sub/x.txt")))
    (Path(env.cache_dir) / "sub").symlink_to(world / "outside")
    with pytest.raises(UnsafeTaskPath, match="through a symbolic link"):
        env.evaluate()
    assert not (world / "outside" / "x.txt").exists()


def test_plain_dest_names_still_work(world):
    env = start(world, task(vm_file_eval("result.txt")))
    path = get_getter("vm_file")(LiveContext(env), env.task_config["evaluator"]["result"])
    assert path == str(Path(env.cache_dir) / "result.txt") and Path(path).read_bytes() == b"agent's file"
    sub = get_getter("vm_file")(LiveContext(env),
                                {"type": "vm_file", "path": "/home/user/b.txt", "dest": "nested/b.txt"})
    assert Path(sub).read_bytes() == b"second"
    assert get_getter("vm_file")(LiveContext(env), {"type": "vm_file", "path": "/nope", "dest": "nope.txt"}) is None


@pytest.mark.parametrize("url, why", [
    ("SECRET_URI", "outside the task's folder"),
    ("../../../outside/secret.txt", "outside the task's folder"),
    ("../../files/leak.txt", "outside the task's folder"),   # a symlink in the tree that points out
    ("/etc/passwd", "outside the task's folder"),
])
def test_cloud_file_reads_only_inside_the_task_tree(world, url, why):
    url = (world / "outside" / "secret.txt").as_uri() if url == "SECRET_URI" else url
    evaluator = {"func": "exact_match", "result": {"type": "rule", "rules": {}},
                 "expected": {"type": "cloud_file", "path": url, "dest": "gold.txt"}}
    env = start(world, task(evaluator))
    with pytest.raises(UnsafeTaskPath, match=why) as info:
        get_getter("cloud_file")(LiveContext(env), env.task_config["evaluator"]["expected"])
    assert_refused(info, world, "evaluator.expected.path", url)
    assert not (Path(env.cache_dir) / "gold.txt").exists()


def test_cloud_file_inside_the_tree_works(world):
    env = start(world, task())
    for url in ("../../files/in.txt", (world / "tasks" / "files" / "in.txt").as_uri()):
        local = get_getter("cloud_file")(LiveContext(env), {"type": "cloud_file", "path": url, "dest": "gold.txt"})
        assert Path(local).read_text() == "inside the tree"


def test_without_a_task_folder_relative_paths_are_refused_and_file_urls_taken_as_given(world):
    env = make_env(world)
    env.reset(task())  # a dict from the caller's own code: no task file, no folder to keep it in
    with pytest.raises(UnsafeTaskPath, match="task's folder is unknown"):
        get_getter("cloud_file")(LiveContext(env),
                                 {"type": "cloud_file", "path": "../../files/in.txt", "dest": "gold.txt"})
    local = get_getter("cloud_file")(LiveContext(env), {"type": "cloud_file",
                                                        "path": (world / "outside" / "secret.txt").as_uri(),
                                                        "dest": "gold.txt"})
    assert Path(local).read_text() == (world / "outside" / "secret.txt").read_text()


def test_cache_file_does_not_read_outside_the_cache(world):
    env = start(world, task({"func": "exact_match",
                             "result": {"type": "cache_file", "path": "../../outside/secret.txt"}}))
    with pytest.raises(UnsafeTaskPath) as info:
        env.evaluate()
    assert_refused(info, world, "evaluator.result.path", "../../outside/secret.txt")
    (Path(env.cache_dir) / "peek").symlink_to(world / "outside" / "secret.txt")
    with pytest.raises(UnsafeTaskPath, match="through a symbolic link"):
        get_getter("cache_file")(LiveContext(env), {"type": "cache_file", "path": "peek"})


@pytest.mark.parametrize("spec, field_suffix", [
    ({"type": "vm_wallpaper", "dest": "OUT/w.png"}, "dest"),
    ({"type": "gimp_config_file", "file_name": "gimprc", "dest": "OUT/gimprc"}, "dest"),
    ({"type": "vlc_config", "dest": "OUT/vlcrc"}, "dest"),
    ({"type": "vlc_playing_info", "dest": "OUT/status.xml"}, "dest"),
    ({"type": "cookie_data", "dest": "OUT/Cookies"}, "dest"),
    ({"type": "history", "dest": "OUT/History"}, "dest"),
    ({"type": "pdf_from_url", "path": "http://127.0.0.1:9/", "dest": "OUT/page.pdf"}, "dest"),
    ({"type": "audio_in_slide", "ppt_file_path": "/home/user/a.pptx", "slide_index": 0, "dest": "OUT/a.mp3"}, "dest"),
    ({"type": "background_image_in_slide", "ppt_file_path": "/home/user/..", "slide_index": 0, "dest": "b.png"},
     "ppt_file_path"),
    ({"type": "content_from_vm_file", "path": "/home/user/..", "file_type": "xlsx", "file_content": "last_row"},
     "path"),
])
def test_every_getter_that_writes_a_dest_refuses_to_leave_the_cache(world, spec, field_suffix):
    outside = world / "outside"
    spec = {k: v.replace("OUT", str(outside)) if isinstance(v, str) else v for k, v in spec.items()}
    env = start(world, task({"func": "exact_match", "result": spec}))
    before = sorted(p.name for p in outside.iterdir())
    with pytest.raises(UnsafeTaskPath) as info:
        env.evaluate()
    assert_refused(info, world, f"evaluator.result.{field_suffix}", spec[field_suffix])
    assert sorted(p.name for p in outside.iterdir()) == before
    assert not [c for c in env.controller.calls if c[0] in ("get_file", "get_vm_wallpaper")]


# -- setup steps ---------------------------------------------------------------------------------

def test_execute_stdout_with_dotdot_is_refused_before_the_command_runs(world):
    config = [{"type": "sleep", "parameters": {"seconds": 0}},
              {"type": "execute", "parameters": {"command": "id", "stdout": "../../outside/id.out"}}]
    env = make_env(world)
    with pytest.raises(UnsafeTaskPath) as info:
        env.reset(task(config=config), options={"task_dir": str(world / "tasks" / "examples" / "os")})
    assert_refused(info, world, "config[1].parameters.stdout", "../../outside/id.out")
    assert not (world / "outside" / "id.out").exists()
    assert not [c for c in env.controller.calls if c[0] == "run_command"]


def test_postconfig_stderr_is_refused_with_its_field(world):
    target = world / "outside" / "err.log"
    evaluator = {"func": "exact_match", "result": {"type": "rule", "rules": {}},
                 "postconfig": [{"type": "command", "parameters": {"command": "id", "stderr": str(target)}}]}
    env = start(world, task(evaluator))
    with pytest.raises(UnsafeTaskPath) as info:
        env.evaluate()
    assert_refused(info, world, "evaluator.postconfig[0].parameters.stderr", str(target))
    assert not target.exists()


def test_execute_stdout_plain_name_works(world):
    env = start(world, task(config=[{"type": "execute", "parameters": {"command": "id", "stdout": "id.out",
                                                                      "stderr": "logs/id.err"}}]))
    assert (Path(env.cache_dir) / "id.out").read_text() == "out\n"
    assert (Path(env.cache_dir) / "logs" / "id.err").read_text() == "err\n"
    assert get_getter("cache_file")(LiveContext(env), {"type": "cache_file", "path": "id.out"}) == \
        str(Path(env.cache_dir) / "id.out")


@pytest.mark.parametrize("url", [
    "SECRET_URI", "../../../outside/secret.txt", "../../files/leak.txt", "/etc/shadow",
    "file:///root/.ssh/id_rsa", "file:///etc/%00shadow",
])
def test_download_of_host_files_outside_the_tree_is_refused(world, url):
    url = (world / "outside" / "secret.txt").as_uri() if url == "SECRET_URI" else url
    env = make_env(world)
    with pytest.raises(UnsafeTaskPath) as info:
        env.reset(task(config=[{"type": "download", "parameters": {"files": [
            {"url": url, "path": "/home/user/x.txt"}]}}]),
            options={"task_dir": str(world / "tasks" / "examples" / "os")})
    assert_refused(info, world, "config[0].parameters.files[0].url", url)
    assert "/home/user/x.txt" not in env.controller.files


def test_upload_file_outside_the_tree_is_refused(world):
    env = make_env(world)
    local = str(world / "outside" / "secret.txt")
    with pytest.raises(UnsafeTaskPath) as info:
        env.reset(task(config=[{"type": "upload_file", "parameters": {"files": [
            {"local_path": local, "path": "/home/user/s"}]}}]),
            options={"task_dir": str(world / "tasks" / "examples" / "os")})
    assert_refused(info, world, "config[0].parameters.files[0].local_path", local)
    assert "/home/user/s" not in env.controller.files


def test_download_and_upload_inside_the_tree_work(world):
    env = start(world, task(config=[
        {"type": "download", "parameters": {"files": [{"url": "../../files/in.txt", "path": "/home/user/in.txt"}]}},
        {"type": "upload_file", "parameters": {"files": [{"local_path": "../../files/in.txt",
                                                          "path": "/home/user/u.txt"}]}}]))
    assert env.controller.files["/home/user/in.txt"] == env.controller.files["/home/user/u.txt"] == b"inside the tree"
    assert (Path(env.cache_dir) / cache_name("../../files/in.txt", "in.txt")).read_text() == "inside the tree"


@pytest.mark.parametrize("path", ["/home/user/..", "/home/user/", "/home/user/a\0b", "", "/home/user/."])
def test_hostile_download_basenames_are_refused(world, path):
    env = make_env(world)
    with pytest.raises(UnsafeTaskPath) as info:
        env.reset(task(config=[{"type": "download", "parameters": {"files": [
            {"url": "../../files/in.txt", "path": path}]}}]),
            options={"task_dir": str(world / "tasks" / "examples" / "os")})
    assert_refused(info, world, "config[0].parameters.files[0].path", path)
    assert sorted(p.name for p in (world / "cache").iterdir()) == ["t1"]
    assert list((world / "cache" / "t1").iterdir()) == []


@pytest.mark.parametrize("url", ["https://x/../../../etc/passwd", "https://x/a/b/", "http://x/\0", "", "file:///..",
                                 "https://x/" + "../" * 50])
@pytest.mark.parametrize("basename", ["a.txt", "..a", "a..", ".hidden"])
def test_cache_names_stay_in_the_cache_whatever_the_url(tmp_path, url, basename):
    name = cache_name(url, basename)
    assert name == f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_{basename}" and "/" not in name
    assert join_under(tmp_path, name).parent == tmp_path.resolve()


@pytest.mark.parametrize("basename", ["", ".", "..", "a/b", "../x", "/etc/x", "a\0b"])
def test_cache_name_refuses_what_is_not_a_plain_file_name(basename):
    with pytest.raises(UnsafeTaskPath):
        cache_name("https://example.com/f", basename)


@pytest.mark.parametrize("points_to", ["outside", "inside"])
def test_a_symlink_at_a_cache_name_is_not_served_as_the_cached_download(world, points_to):
    """A remote file already in the cache is served without the network, but never a symlink planted there."""
    url = "http://127.0.0.1:9/report.txt"  # nothing listens: only the cache could answer
    env = make_env(world)
    cache = world / "cache" / "t1"
    cache.mkdir(parents=True)
    other = cache / "other.txt"
    other.write_text("another cached file")
    victim = world / "outside" / "secret.txt" if points_to == "outside" else other
    (cache / cache_name(url, "report.txt")).symlink_to(victim)
    # outside: refused as a path; inside: not taken for the cached file, so the (offline) download is tried
    with pytest.raises(UnsafeTaskPath if points_to == "outside" else SetupError):
        env.reset(task(config=[{"type": "download", "parameters": {"files": [
            {"url": url, "path": "/home/user/report.txt"}]}}]),
            options={"task_dir": str(world / "tasks" / "examples" / "os")})
    assert "/home/user/report.txt" not in env.controller.files
    assert (world / "outside" / "secret.txt").read_text() == "host secret"


def test_a_task_id_that_leaves_the_cache_base_is_refused(world):
    env = make_env(world)
    with pytest.raises(UnsafeTaskPath) as info:
        env.reset(task(task_id="..", config=[{"type": "execute", "parameters": {"command": "id", "stdout": "x"}}]))
    assert info.value.field == "id"
    assert not (world / "x").exists()


def test_write_under_refuses_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(UnsafeTaskPath, match="not a regular file"):
        write_under(tmp_path, "pipe", b"x")


def test_unsafe_task_path_survives_pickling():
    error = UnsafeTaskPath("/etc/x", "is an absolute path", "evaluator.result.dest", "/t/t1.json")
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == str(error) and again.field == error.field


def test_run_steps_names_the_step_field_for_a_bare_env(world):
    """Library use without DesktopEnv: an env with only cache_dir still gets the field path."""
    env = type("Env", (), {})()
    env.cache_dir, env.controller, env.screen_size, env.client_password = \
        str(world / "c"), FakeController(), (8, 8), "p"
    with pytest.raises(UnsafeTaskPath, match=r"config\[0\]\.parameters\.stderr = '/tmp/x'"):
        run_steps(env, [{"type": "execute", "parameters": {"command": "id", "stderr": "/tmp/x"}}])


# -- the harness records it as an error, not as a score --------------------------------------------

class DoneAgent:
    def reset(self, logger=None):
        pass

    def predict(self, instruction, obs):
        return "done", ["DONE"]


@pytest.mark.parametrize("where", ["evaluation", "setup"])
def test_the_runner_records_an_escaping_path_as_an_error(world, where):
    target = world / "outside" / "cron.x"
    if where == "evaluation":
        config = task(vm_file_eval(str(target)))
    else:
        config = task(config=[{"type": "execute", "parameters": {"command": "id", "stdout": str(target)}}])
    env = make_env(world)
    out = world / "results" / "os" / "t1"
    outcome = run_episode(DoneAgent(), env, config, "x", out,
                          EpisodeConfig(record=False, settle_timeout=0, max_steps=2),
                          task_dir_for_files=str(world / "tasks" / "examples" / "os"))
    assert outcome.status == "error" and outcome.score is None
    status = json.loads((out / "status.json").read_text())
    assert status["status"] == "error" and status["error"]["type"] == "UnsafeTaskPath"
    assert str(target) in status["error"]["message"]
    assert not (out / "result.txt").exists()
    assert not target.exists()
