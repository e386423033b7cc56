"""On a real desktop: the agent's file never lands outside the cache, whatever `dest` a task gives."""
from __future__ import annotations

import pytest

from desktop_env.desktop_env import DesktopEnv
from desktop_env.evaluators.context import LiveContext
from desktop_env.evaluators.registry import get_getter
from desktop_env.safe_paths import UnsafeTaskPath

pytestmark = pytest.mark.desktop


def test_vm_file_with_an_escaping_dest_is_an_error_and_a_plain_one_is_scored(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    task_dir = tmp_path / "tasks"
    task_dir.mkdir()
    setup = [{"type": "execute", "parameters": {"command": "printf 'from the desktop' > ~/agent.txt", "shell": True}}]
    with DesktopEnv(screen_size=(1024, 768), require_a11y_tree=False, cache_dir=str(tmp_path / "cache")) as env:
        for dest in (str(outside / "cron.x"), "../../outside/cron.x"):
            task = {"id": "escape", "instruction": "", "config": setup, "evaluator": {
                "func": "exact_match",
                "result": {"type": "vm_file", "path": "/home/user/agent.txt", "dest": dest},
                "expected": {"type": "rule", "rules": {"expected": "from the desktop"}}}}
            env.reset(task, options={"task_dir": str(task_dir)})
            with pytest.raises(UnsafeTaskPath) as info:
                env.evaluate()
            assert "evaluator.result.dest" in str(info.value) and repr(dest) in str(info.value)
            assert not (outside / "cron.x").exists()
        task["evaluator"]["result"]["dest"] = "agent.txt"
        env.reset(task, options={"task_dir": str(task_dir)})
        assert env.controller.get_file("/home/user/agent.txt") == b"from the desktop"
        local = get_getter("vm_file")(LiveContext(env), task["evaluator"]["result"])
        assert open(local, "rb").read() == b"from the desktop"
        assert local.startswith(str(tmp_path / "cache" / "escape"))
