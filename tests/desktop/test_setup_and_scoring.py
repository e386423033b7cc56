"""Setup steps and scoring against a real desktop: files arrive, commands run, results are scored."""
from __future__ import annotations

import time

import pytest

from desktop_env.controllers.setup import SetupError, SetupUnsupported
from desktop_env.desktop_env import DesktopEnv
from desktop_env.evaluators.context import LiveContext
from desktop_env.evaluators.getters.chrome import history
from desktop_env.evaluators.registry import metric
from desktop_env.evaluators.scoring import EvaluationError

pytestmark = pytest.mark.desktop


@metric("test_text_equals")
def text_equals(result, expected=None, **options) -> float:
    if result is None:
        return 0.0
    want = expected if expected is not None else options["text"]
    with open(result) as f:
        got = f.read()
    if expected is not None:
        with open(expected) as f:
            want = f.read()
    return float(got.strip() == want.strip())


@metric("test_crashes")
def crashes(result, **options) -> float:
    raise RuntimeError("metric bug")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    env = DesktopEnv(screen_size=(1024, 768), require_a11y_tree=False,
                     cache_dir=str(tmp_path_factory.mktemp("cache")))
    yield env
    env.close()


@pytest.fixture
def task_dir(tmp_path):
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "input.txt").write_text("hello from the task folder\n")
    (tmp_path / "expected.txt").write_text("HELLO FROM THE TASK FOLDER\n")
    return tmp_path


def test_download_from_the_task_folder_and_file_urls_and_execute_with_placeholders(env, task_dir):
    task = {"id": "setup-files", "instruction": "", "config": [
        {"type": "download", "parameters": {"files": [
            {"url": "files/input.txt", "path": "/home/user/Desktop/input.txt"},
            {"url": (task_dir / "expected.txt").as_uri(), "path": "/home/user/expected.txt"}]}},
        {"type": "execute", "parameters": {"command": "echo {SCREEN_WIDTH}x{SCREEN_HEIGHT} > ~/size.txt",
                                           "shell": True}},
        {"type": "command", "parameters": {"command": ["bash", "-c", "cat ~/size.txt"], "stdout": "size.out"}},
    ], "evaluator": {"func": "test_text_equals"}}
    env.reset(task, options={"task_dir": str(task_dir)})
    assert env.controller.get_file("/home/user/Desktop/input.txt") == b"hello from the task folder\n"
    assert env.controller.get_file("/home/user/expected.txt") == b"HELLO FROM THE TASK FOLDER\n"
    assert (env.cache_dir and open(f"{env.cache_dir}/size.out").read()) == "1024x768\n"


def test_open_waits_for_the_window_and_launch_and_activate_window(env, task_dir):
    task = {"id": "setup-open", "instruction": "", "config": [
        {"type": "download", "parameters": {"files": [{"url": "files/input.txt", "path": "/home/user/notes.txt"}]}},
        {"type": "open", "parameters": {"path": "/home/user/notes.txt"}},
        {"type": "activate_window", "parameters": {"window_name": "notes.txt"}},
    ], "evaluator": {"func": "test_text_equals"}}
    env.reset(task, options={"task_dir": str(task_dir)})
    assert env.controller.get_vm_window_size("gedit") is not None


def test_execute_until_polls_until_the_condition_holds(env):
    started = time.monotonic()
    env.reset({"id": "until", "instruction": "", "config": [
        {"type": "launch", "parameters": {"command": "sleep 1 && touch ~/ready", "shell": True}},
        {"type": "execute", "parameters": {"command": "test -f ~/ready && echo yes", "shell": True,
                                            "until": {"stdout": "yes"}}}],
        "evaluator": {"func": "test_text_equals"}})
    assert 1.0 <= time.monotonic() - started < 30


@pytest.mark.parametrize("step, error, message", [
    ({"type": "googledrive", "parameters": {}}, SetupUnsupported, "not supported offline"),
    ({"type": "no_such_step", "parameters": {}}, SetupUnsupported, "unknown type 'no_such_step'"),
    ({"type": "download", "parameters": {"files": [{"url": "missing.txt", "path": "/home/user/x"}]}}, SetupError,
     "missing.txt"),
    ({"type": "sleep", "parameters": {"secs": 1}}, SetupError, "bad parameters"),
])
def test_bad_setup_steps_raise_errors_naming_the_step(env, task_dir, step, error, message):
    with pytest.raises(error, match=message) as info:
        env.reset({"id": "bad", "instruction": "", "config": [step], "evaluator": {"func": "test_text_equals"}},
                  options={"task_dir": str(task_dir)})
    assert "step 0" in str(info.value)


def scored(env, task_dir, evaluator: dict, agent_output: str | None) -> float:
    env.reset({"id": "score", "instruction": "", "evaluator": evaluator}, options={"task_dir": str(task_dir)})
    if agent_output is not None:
        env.controller.upload_file("/home/user/out.txt", agent_output.encode())
    env.step("DONE", pause=0)
    return env.evaluate()


VM_OUT = {"type": "vm_file", "path": "/home/user/out.txt", "dest": "out.txt"}
EXPECTED = {"type": "cloud_file", "path": "expected.txt", "dest": "expected.txt"}


def test_result_file_compared_with_an_expected_file(env, task_dir):
    evaluator = {"func": "test_text_equals", "result": VM_OUT, "expected": EXPECTED}
    assert scored(env, task_dir, evaluator, "HELLO FROM THE TASK FOLDER") == 1.0
    assert scored(env, task_dir, evaluator, "something else") == 0.0
    assert scored(env, task_dir, evaluator, None) == 0.0  # the agent saved nothing


def test_metric_lists_with_and_or(env, task_dir):
    good = {"func": ["test_text_equals", "test_text_equals"], "result": [VM_OUT, VM_OUT],
            "expected": [EXPECTED, None], "options": [{}, {"text": "nope"}]}
    assert scored(env, task_dir, {**good, "conj": "and"}, "HELLO FROM THE TASK FOLDER") == 0.0
    assert scored(env, task_dir, {**good, "conj": "or"}, "HELLO FROM THE TASK FOLDER") == 1.0
    assert scored(env, task_dir, {**good, "conj": "or"}, "nope") == 1.0
    assert scored(env, task_dir, {**good, "conj": "or"}, "neither") == 0.0


def test_postconfig_runs_before_scoring(env, task_dir):
    evaluator = {"func": "test_text_equals", "result": VM_OUT, "options": {"text": "written by postconfig"},
                 "postconfig": [{"type": "execute", "parameters": {
                     "command": "echo written by postconfig > ~/out.txt", "shell": True}}]}
    assert scored(env, task_dir, evaluator, None) == 1.0


def test_a_crashing_metric_is_an_evaluation_error_not_a_zero(env, task_dir):
    with pytest.raises(EvaluationError, match="metric bug"):
        scored(env, task_dir, {"func": "test_crashes", "result": VM_OUT}, "anything")


def test_update_browse_history_on_a_fresh_profile_is_the_history_chromium_then_shows(env):
    visits = [{"url": "https://www.youtube.com/watch?v=1", "title": "Video one",
               "visit_time_from_now_in_seconds": 3600},
              {"url": "https://www.bbc.co.uk/", "title": "BBC", "visit_time_from_now_in_seconds": 300}]
    task = {"id": "browse-history", "instruction": "", "evaluator": {"func": "infeasible"},
            "config": [{"type": "update_browse_history", "parameters": {"history": visits}}]}
    assert env.controller.get_file("/home/user/.config/google-chrome/Default/History") is None  # a fresh desktop
    env.reset(task)
    env.controller.launch(["google-chrome", "about:blank"])
    # Chromium opens History before it shows a window, would replace one it cannot use, and
    # writes it back on exit: what the getter reads then is what Chromium made of the file.
    env.controller.run_command("until wmctrl -l | grep -q Chromium; do sleep 0.1; done; pkill chrome; "
                               "while pgrep -x chromium >/dev/null; do sleep 0.1; done", shell=True)
    rows = history(LiveContext(env), {"dest": "history.sqlite"})
    now_us = (time.time() + 11644473600) * 1_000_000
    assert sorted((url, title) for url, title, _ in rows) == [("https://www.bbc.co.uk/", "BBC"),
                                                             ("https://www.youtube.com/watch?v=1", "Video one")]
    ages = sorted(round((now_us - last_visit) / 1e6 / 60) for _, _, last_visit in rows)
    assert ages == [5, 60]  # minutes ago
