"""Setup steps see a typed setup context, made once per task; steps written the old way, against the env, still run."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from desktop_env import extensions
from desktop_env.controllers.setup import run_steps
from desktop_env.controllers.setup_context import SetupContext, setup_context_for
from desktop_env.errors import UnsafeTaskPath


class Controller:
    def __init__(self):
        self.launched: list = []

    def launch(self, command, shell=False):
        self.launched.append(command)

    def run_command(self, command, shell=False):
        return {"output": "", "error": "no process found", "returncode": 1}


def env_at(tmp_path, **more) -> SimpleNamespace:
    return SimpleNamespace(controller=Controller(), screen_size=(1280, 720), client_password="secret",
                           cache_dir=str(tmp_path / "cache" / "t1"), cache_dir_base=str(tmp_path / "cache"),
                           task_config={"id": "t1"}, task_dir=str(tmp_path), **more)


def test_the_context_carries_what_steps_use_from_the_env(tmp_path):
    env = env_at(tmp_path)
    ctx = SetupContext.of(env)
    assert (ctx.screen_size, ctx.client_password, ctx.task_dir) == ((1280, 720), "secret", str(tmp_path))
    assert ctx.task_file == str(tmp_path / "t1.json") and ctx.cache_dir == tmp_path / "cache" / "t1"
    assert ctx.warnings is env.setup_warnings and ctx.settle_waits is env.settle_waits


def test_placeholders_are_filled_from_the_context(tmp_path):
    env = env_at(tmp_path)
    run_steps(env, [{"type": "launch", "parameters": {"command": ["xdotool", "mousemove", "{SCREEN_WIDTH_HALF}",
                                                                  "{SCREEN_HEIGHT_HALF}", "{CLIENT_PASSWORD}"]}}])
    assert env.controller.launched == [["xdotool", "mousemove", "640", "360", "secret"]]


def test_postconfig_steps_use_the_tasks_context_so_their_warnings_join_the_setups(tmp_path):
    env = env_at(tmp_path)
    env.setup_context = SetupContext.of(env)
    failing = {"type": "execute", "parameters": {"command": "pkill -f nothing", "shell": True}}
    run_steps(env, [failing])
    run_steps(env, [failing], phase="postconfig")
    assert setup_context_for(env) is env.setup_context
    assert [w["field"] for w in env.setup_warnings] == ["config[0]", "evaluator.postconfig[0]"]


def test_a_task_id_leaving_the_cache_is_refused_before_any_step_runs(tmp_path):
    env = env_at(tmp_path)
    env.task_config, env.cache_dir = {"id": ".."}, str(tmp_path)
    with pytest.raises(UnsafeTaskPath, match="not inside the cache"):
        run_steps(env, [{"type": "launch", "parameters": {"command": ["true"]}}])
    assert env.controller.launched == []


def test_a_step_written_against_the_env_still_runs_with_a_deprecation_warning(tmp_path):
    env = env_at(tmp_path, marks=[])

    def old_way(env, label):
        env.marks.append((label, env.task_config["id"], env.controller is not None))

    with extensions.replaced("setup_step", "sleep", old_way), \
            pytest.warns(DeprecationWarning, match="setup steps should use the setup context"):
        run_steps(env, [{"type": "sleep", "parameters": {"label": "x"}}])
    assert env.marks == [("x", "t1", True)]
