"""Coordinate round trips on a real desktop: every native computer-use agent, driven by a scripted
model that finds an off-centre target in the image it was actually sent and answers with its
position in that model's own convention, must land the click (score 1).

One desktop serves all agents in turn (run_single_example: the harness's episode, so traj.jsonl and
status.json are written as in a run); `osworld run` itself is exercised once, with Claude.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop_env.desktop_env import DesktopEnv
from lib_run_single import run_single_example
from mm_agents.loader import build_agent
from tests.agents.cu_helpers import last_image, red_centre
from tests.agents.wire_servers import (
    AnthropicWireServer,
    GeminiWireServer,
    OpenAIResponsesServer,
    OpenAIWireServer,
    Reply,
    ScriptedCall,
    VLLMWireServer,
    reply_text,
    reply_tool_calls,
)

pytestmark = pytest.mark.desktop

SCREEN = (1920, 1080)
# The target's box as shares of the screen: right of centre and high up.
BOX = (0.78, 0.185, 0.81, 0.222)
TARGET_APP = f"""
import tkinter as tk
root = tk.Tk()
w, h = root.winfo_screenwidth(), root.winfo_screenheight()
# Full screen, so that it covers GNOME Shell's top bar and dock as well (they stay above
# ordinary and override-redirect windows).
root.attributes("-fullscreen", True)
root.attributes("-topmost", True)
canvas = tk.Canvas(root, width=w, height=h, bg="#282828", highlightthickness=0)
canvas.pack()
box = [round(s * (w if i % 2 == 0 else h)) for i, s in enumerate({list(BOX)!r})]
canvas.create_rectangle(*box, fill="#ff0000", outline="#ff0000")
def clicked(event):
    hit = box[0] <= event.x <= box[2] and box[1] <= event.y <= box[3]
    with open("/home/user/clicks.txt", "a") as f:
        f.write(("HIT" if hit else "MISS") + f" {{event.x}} {{event.y}}\\n")
canvas.bind("<Button-1>", clicked)
# Ready once it covers the screen (on a busy machine GNOME Shell takes a while to make it full
# screen, and the desktop's orange home icon would be the reddest thing in a screenshot before),
# plus GNOME Shell's window-opening animation (about a quarter second).
def ready_when_full_screen():
    if (root.winfo_rootx(), root.winfo_rooty(), root.winfo_width(), root.winfo_height()) == (0, 0, w, h):
        root.after(800, lambda: open("/tmp/target-ready", "w").close())
    else:
        root.after(100, ready_when_full_screen)
root.after(100, ready_when_full_screen)
root.mainloop()
"""

TASK: dict[str, Any] = {
    "id": "click-the-target", "snapshot": "os", "source": "osworld-test",
    "instruction": "Click the red box.",
    "config": [
        {"type": "launch", "parameters": {"command": ["python3", "-c", TARGET_APP]}},
        {"type": "execute", "parameters": {"command": ["test", "-f", "/tmp/target-ready"],
                                           "until": {"returncode": 0}}},
    ],
    "evaluator": {"func": "check_include_exclude",
                  "result": {"type": "vm_command_line", "command": "cat /home/user/clicks.txt", "shell": True},
                  "expected": {"type": "rule", "rules": {"include": ["HIT"], "exclude": ["MISS"]}}},
}


def target_in_sent_image(request) -> tuple[float, float, int, int]:
    image = last_image(request.body)
    x, y = red_centre(image)
    return x, y, image.width, image.height


def pixels(request) -> tuple[int, int]:
    x, y, _, _ = target_in_sent_image(request)
    return round(x), round(y)


def grid(request) -> tuple[int, int]:
    x, y, width, height = target_in_sent_image(request)
    return int(x / width * 1000), int(y / height * 1000)


def point_text(point: tuple[int, int]) -> str:
    """A point the way UI-TARS and grounding models write it: (x,y)."""
    x, y = point
    return f"({x},{y})"


def qwen_call(arguments) -> str:
    return f"<tool_call>\n{json.dumps({'name': 'computer_use', 'arguments': arguments})}\n</tool_call>"


# agent -> (model, server class, the click answer, the answer that ends the task)
AGENTS = {
    "claude-computer-use": ("claude-sonnet-4-6", AnthropicWireServer,
                            lambda r: reply_tool_calls(("computer", {"action": "left_click",
                                                                     "coordinate": list(pixels(r))})),
                            reply_text("I clicked the red box.")),
    # The OpenAI and Gemini clicks come with a safety check, which must be acknowledged and recorded.
    "openai-computer-use": ("computer-use-preview", OpenAIResponsesServer,
                            lambda r: Reply("tool_calls", calls=(ScriptedCall("computer_call", {
                                "action": dict(zip(("x", "y"), pixels(r), strict=True), type="click", button="left"),
                                "pending_safety_checks": [{"id": "cu_sc_1", "code": "malicious_instructions",
                                                           "message": "Check the page."}]}),)),
                            reply_text("Done.")),
    "gemini-computer-use": ("gemini-2.5-computer-use-preview-10-2025", GeminiWireServer,
                            lambda r: reply_tool_calls(("click_at", {
                                **dict(zip(("x", "y"), grid(r), strict=True)),
                                "safety_decision": {"decision": "require_confirmation", "explanation": "A click."}})),
                            reply_text("Done.")),
    "ui-tars": ("UI-TARS-1.5-7B", VLLMWireServer,
                lambda r: reply_text("Thought: The red box.\n"
                                     f"Action: click(start_box='<|box_start|>{point_text(pixels(r))}<|box_end|>')"),
                reply_text("Thought: Clicked.\nAction: finished(content='done')")),
    "qwen-vl": ("Qwen3-VL-8B-Instruct", VLLMWireServer,
                lambda r: reply_text(qwen_call({"action": "left_click", "coordinate": list(grid(r))})),
                reply_text(qwen_call({"action": "terminate", "status": "success"}))),
}


@pytest.fixture(scope="module")
def env():
    with DesktopEnv(action_space="pyautogui", screen_size=SCREEN, require_a11y_tree=False) as desktop:
        yield desktop


def run_one(env, agent, tmp_path: Path) -> tuple[float, list[dict], dict]:
    class Args:
        record = False

    scores: list = []
    run_single_example(agent, env, TASK, 4, TASK["instruction"], Args(), str(tmp_path), scores)
    steps = [json.loads(line) for line in (tmp_path / "traj.jsonl").read_text().splitlines()]
    return scores[0], steps, json.loads((tmp_path / "status.json").read_text())


@pytest.mark.parametrize("name", list(AGENTS))
def test_the_scripted_model_clicks_the_target_in_its_own_convention(env, name, tmp_path):
    model, server_class, click, end = AGENTS[name]
    server = server_class()
    try:
        server.script(click, end)
        agent = build_agent(name, model=model, base_url=server.base_url, api_key="test", screen_size=SCREEN,
                            max_retries=0, observation_type="screenshot")
        score, steps, status = run_one(env, agent, tmp_path)
        assert server.rejections == []
    finally:
        server.close()
    assert score == 1.0, steps
    assert [s["action"] for s in steps][-1] == "DONE" and steps[0]["action"].startswith("pyautogui.click(")
    assert steps[0]["usage"]["input_tokens"] > 0 and status["usage"]["input_tokens"] > 0
    if name in ("openai-computer-use", "gemini-computer-use"):
        (check,) = steps[0]["response"]["safety_checks"]
        assert check["decision"] == "acknowledged" and check["checks"]


def test_planner_and_grounder_click_the_target(env, tmp_path):
    planner, grounder = OpenAIWireServer(), VLLMWireServer()
    try:
        planner.script(reply_tool_calls(("act", {"action": "click", "target": "the red box"})),
                       reply_tool_calls(("act", {"action": "done"})))
        grounder.script(lambda r: reply_text(point_text(pixels(r))))
        agent = build_agent("planner-grounder", model="gpt-4o", base_url=planner.base_url, api_key="test",
                            screen_size=SCREEN, max_retries=0, observation_type="screenshot",
                            grounder_model="GTA1-7B", grounder_base_url=grounder.base_url)
        score, steps, _ = run_one(env, agent, tmp_path)
    finally:
        planner.close()
        grounder.close()
    assert score == 1.0, steps


def test_osworld_run_drives_claude_computer_use_end_to_end(tmp_path):
    root = tmp_path / "tasks"
    (root / "examples" / "os").mkdir(parents=True)
    (root / "examples" / "os" / "click-the-target.json").write_text(json.dumps(TASK))
    (root / "test_click.json").write_text(json.dumps({"os": ["click-the-target"]}))
    model, server_class, click, end = AGENTS["claude-computer-use"]
    server = server_class()
    server.script(click, end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "osworld_cli.main", "run", "--agent", "claude-computer-use", "--model", model,
             "--agent-arg", f"base_url={server.base_url}", "--obs", "screenshot",
             "--tasks", str(root / "test_click.json"),
             "--result-dir", str(tmp_path / "results"), "--max-steps", "4"],
            env={**os.environ, "ANTHROPIC_API_KEY": "test"}, capture_output=True, text=True, timeout=300)
    finally:
        server.close()
    assert result.returncode == 0, result.stdout + result.stderr
    folder = tmp_path / "results" / "pyautogui" / "screenshot" / model / "os" / "click-the-target"
    assert (folder / "result.txt").read_text().strip() == "1.0", (folder / "runtime.log").read_text()
    steps = [json.loads(line) for line in (folder / "traj.jsonl").read_text().splitlines()]
    assert steps[0]["response"]["calls"][0]["arguments"]["action"] == "left_click"
    assert steps[0]["usage"]["cost_usd"] > 0
    status = json.loads((folder / "status.json").read_text())
    assert status["status"] == "ok" and status["usage"]["input_tokens"] == 22
    assert [r.headers["anthropic-beta"] for r in server.requests] == ["computer-use-2025-11-24"] * 2
