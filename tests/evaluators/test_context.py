"""The evaluation context getters see: live answers from a real desktop, recorded, then replayed offline."""
from __future__ import annotations

import json
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from desktop_env.desktop_env import DesktopEnv
from desktop_env.evaluators.context import CommandResult, LiveContext, NotRecorded, ServiceUnavailable
from desktop_env.evaluators.recording import RecordingContext, ReplayContext
from desktop_env.evaluators.registry import getter, metric
from desktop_env.evaluators.scoring import evaluate_task


def replay(recording: RecordingContext, tmp_path: Path, task_config: dict | None = None) -> ReplayContext:
    """The recording as rescore reads it: through its JSON manifest and blob files."""
    recording.write_blobs(tmp_path / "files")
    manifest = json.loads(json.dumps(recording.manifest()))
    (tmp_path / "replay-cache").mkdir(exist_ok=True)
    return ReplayContext(manifest, tmp_path / "files", tmp_path / "replay-cache", None, task_config or {"id": "t"})


@pytest.mark.desktop
def test_every_operation_is_answered_live_recorded_and_replayed_the_same(tmp_path):
    env = DesktopEnv(screen_size=(1024, 768), require_a11y_tree=False, cache_dir=str(tmp_path / "cache"))
    try:
        env.reset({"id": "ctx"})
        env.controller.upload_file("/home/user/site/index.html", b"<p>served from the desktop</p>")
        env.controller.upload_file("/home/user/notes.txt", b"first")
        env.controller.launch(["python3", "-m", "http.server", "8080", "--directory", "/home/user/site"])
        deadline = time.monotonic() + 30
        while True:  # the server inside the desktop takes a moment to listen
            try:
                LiveContext(env).http("vlc_http", "/index.html")
                break
            except ServiceUnavailable:
                assert time.monotonic() < deadline, "the desktop's HTTP server never answered"
                time.sleep(0.3)
        ctx = RecordingContext(LiveContext(env))
        ctx.save_to_cache("setup.out", b"a setup step's output")
        page = ctx.http("vlc_http", "/index.html")
        live = {
            "first read": ctx.read_file("/home/user/notes.txt"),
            "missing": ctx.read_file("/home/user/nothing.txt"),
            "command": ctx.run_command("echo hi; echo oops >&2; exit 3", shell=True),
            "python": ctx.run_python("print(1 + 1)"),
            "terminal": ctx.terminal_output(),
            "screen": ctx.screen_size(),
            "window": ctx.window_size("no-such-window"),
            "wallpaper": ctx.wallpaper(),
            "tree": ctx.directory_tree("/home/user/site"),
            "desktop": ctx.desktop_path(),
            "page": page,
            "cached": Path(ctx.cached_file("setup.out")).read_bytes(),
            "no cache file": ctx.cached_file("never-written.out"),
        }
        env.controller.upload_file("/home/user/notes.txt", b"second")
        live["second read"] = ctx.read_file("/home/user/notes.txt")
        live["tree"] = ctx.directory_tree("/home/user/site")
        tabs = ctx.endpoint("chrome_devtools")
    finally:
        env.close()
    assert live["first read"] == b"first" and live["second read"] == b"second" and live["missing"] is None
    assert live["command"] == CommandResult("hi\n", "oops\n", 3)
    assert live["python"].output.strip() == "2"
    assert live["screen"] == {"width": 1024, "height": 768}
    assert live["page"].status == 200 and live["page"].text == "<p>served from the desktop</p>"
    assert live["tree"]["children"] == [{"name": "index.html", "type": "file"}]
    assert live["desktop"] == "/home/user/Desktop" and live["cached"] == b"a setup step's output"
    assert tabs.startswith("http://127.0.0.1:")

    offline = replay(ctx, tmp_path)
    again = {
        "first read": offline.read_file("/home/user/notes.txt"),
        "missing": offline.read_file("/home/user/nothing.txt"),
        "command": offline.run_command("echo hi; echo oops >&2; exit 3", shell=True),
        "python": offline.run_python("print(1 + 1)"),
        "terminal": offline.terminal_output(),
        "screen": offline.screen_size(),
        "window": offline.window_size("no-such-window"),
        "wallpaper": offline.wallpaper(),
        "tree": offline.directory_tree("/home/user/site"),
        "desktop": offline.desktop_path(),
        "page": offline.http("vlc_http", "/index.html"),
        "cached": Path(offline.cached_file("setup.out")).read_bytes(),
        "no cache file": offline.cached_file("never-written.out"),
        "second read": offline.read_file("/home/user/notes.txt"),  # the n-th identical call: the n-th answer
    }
    assert again == live
    assert offline.home() == Path("/home/user")
    assert offline.now() == ctx.now()
    with pytest.raises(NotRecorded, match="a getter asked for read_file\\(path='/home/user/other.txt'\\), which was "
                                          "not recorded"):
        offline.read_file("/home/user/other.txt")
    with pytest.raises(NotRecorded, match="chrome_devtools through endpoint\\(\\).*live only"):
        offline.endpoint("chrome_devtools")


def test_a_service_nothing_answers_on_is_recorded_unavailable_and_stays_so(tmp_path):
    class NoPorts:
        def service_endpoint(self, port):
            raise NotImplementedError(f"cannot forward port {port}")

    ctx = RecordingContext(LiveContext(SimpleNamespace(cache_dir=str(tmp_path), provider=NoPorts())))
    with pytest.raises(ServiceUnavailable, match="vlc_http \\(port 8080 of the desktop\\) is not reachable"):
        ctx.http("vlc_http", "/requests/status.xml", auth=("", "password"))
    with pytest.raises(ServiceUnavailable, match="vlc_http \\(port 8080"):
        replay(ctx, tmp_path).http("vlc_http", "/requests/status.xml", auth=("", "password"))


def test_an_old_style_getter_still_runs_live_but_its_task_cannot_be_replayed(tmp_path):
    """A plugin written as getter(env, config) reaching env.controller keeps working (deprecated); the
    recording notes it, and the replay says why it cannot answer."""
    @getter("test_ctx_old_style_read")
    def old_style(env, config):
        return env.controller.get_file(config["path"]).decode()

    @metric("test_ctx_text_is")
    def text_is(result, expected):
        return float(result == expected)

    class Files:
        def get_file(self, path):
            return {"/home/user/a.txt": b"abc"}.get(path)

    evaluator = {"func": "test_ctx_text_is", "result": {"type": "test_ctx_old_style_read", "path": "/home/user/a.txt"},
                 "expected": {"type": "rule", "rules": "abc"}}
    ctx = RecordingContext(LiveContext(SimpleNamespace(cache_dir=str(tmp_path), controller=Files())))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert evaluate_task(ctx, evaluator).score == 1.0
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    assert ctx.notes == ["result getter 'test_ctx_old_style_read' of metric 'test_ctx_text_is' reached the env "
                         "directly (ctx.env/controller/provider): what it asked is not recorded, so this task cannot "
                         "be rescored"]
    with pytest.raises(NotRecorded, match="'test_ctx_old_style_read'.*old getter\\(env, config\\) style"):
        evaluate_task(replay(ctx, tmp_path), evaluator)


def test_a_recording_naming_a_blob_outside_its_folder_is_refused(tmp_path):
    manifest = {"version": 2, "evaluated_at": "2025-01-01T00:00:00+00:00", "calls": [
        {"op": "read_file", "args": {"path": "/x"}, "answer": {"blob": "../../etc/passwd", "size": 1}}]}
    ctx = ReplayContext(manifest, tmp_path / "files", tmp_path, None, {})
    with pytest.raises(NotRecorded, match="not a saved answer's name"):
        ctx.read_file("/x")
