"""claude-computer-use through the real Anthropic SDK against a local Messages server that checks
tool types, beta headers and tool_use/tool_result pairing as the API does."""
from __future__ import annotations

import pytest

from mm_agents.computer_use.agents import ClaudeComputerUseAgent
from mm_agents.llm.base import Usage
from mm_agents.llm.pricing import cost_usd
from mm_agents.loader import build_agent, load_agent_class
from tests.agents.cu_helpers import decode, obs, png, red_centre
from tests.agents.wire_servers import reply_context_too_long, reply_text, reply_tool_calls

TARGET = (1500, 200, 1560, 240)     # off-centre, in screen pixels
SHOT = png(target=TARGET)


def computer(**arguments):
    return ("computer", arguments)


def agent(server, model="claude-sonnet-4-6", **kwargs):
    return build_agent("claude-computer-use", model=model, base_url=server.base_url, api_key="test",
                       screen_size=(1920, 1080), max_retries=0, **kwargs)


def images(body) -> list:
    found = []
    for message in body["messages"]:
        for block in message["content"]:
            if block["type"] == "image":
                found.append(decode(block["source"]["data"]))
            for part in block.get("content", []) if block["type"] == "tool_result" else []:
                if part["type"] == "image":
                    found.append(decode(part["source"]["data"]))
    return found


def blocks(body, kind) -> list[dict]:
    return [b for m in body["messages"] for b in m["content"] if b["type"] == kind]


def click_the_target(request):
    """What a model does: find the target in the image it was sent and click it there."""
    x, y = red_centre(images(request.body)[-1])
    return reply_tool_calls(computer(action="left_click", coordinate=[round(x), round(y)]))


def test_a_1920x1080_screen_is_sent_at_1280x720_and_the_click_lands_on_the_target(anthropic_server):
    anthropic_server.script(click_the_target)
    response, actions = agent(anthropic_server).predict("Click the red box", obs(SHOT))
    request = anthropic_server.requests[0]
    assert request.headers["anthropic-beta"] == "computer-use-2025-11-24"
    (tool,) = request.body["tools"]
    assert tool == {"type": "computer_20251124", "name": "computer", "display_width_px": 1280,
                    "display_height_px": 720, "display_number": 1, "enable_zoom": True}
    assert images(request.body)[0].size == (1280, 720)
    (action,) = actions
    x, y = (int(v.split("=")[1]) for v in action.removesuffix(")").split(", ")[1:])
    assert TARGET[0] <= x <= TARGET[2] and TARGET[1] <= y <= TARGET[3]
    assert response["calls"][0]["arguments"]["action"] == "left_click"


def test_older_models_get_the_2025_01_24_tool_and_header(anthropic_server):
    anthropic_server.script(reply_text("done"))
    agent(anthropic_server, model="claude-sonnet-4-5").predict("t", obs(SHOT))
    request = anthropic_server.requests[0]
    assert request.headers["anthropic-beta"] == "computer-use-2025-01-24"
    assert request.body["tools"][0]["type"] == "computer_20250124" and "enable_zoom" not in request.body["tools"][0]
    assert anthropic_server.rejections == []


def test_every_tool_use_gets_a_tool_result_and_the_new_screen_follows_the_last(anthropic_server):
    anthropic_server.script(
        reply_tool_calls(computer(action="type", text="hello\n"), computer(action="key", text="ctrl+s"), text="Typing"),
        reply_tool_calls(computer(action="triple_click", coordinate=[10, 10], text="shift")),
        reply_text("The file is saved."))
    claude = agent(anthropic_server)
    assert claude.predict("t", obs(SHOT))[1] == ["pyautogui.typewrite('hello\\n')", "pyautogui.hotkey('ctrl', 's')"]
    assert claude.predict("t", obs(png(colour=(0, 90, 0))))[1] == [
        "pyautogui.keyDown('shift'); pyautogui.click(button='left', x=15, y=15, clicks=3); pyautogui.keyUp('shift')"]
    assert claude.predict("t", obs(SHOT))[1] == ["DONE"]
    assert anthropic_server.rejections == []
    second = anthropic_server.requests[1].body
    first_result, last_result = blocks(second, "tool_result")
    assert [p["type"] for p in first_result["content"]] == []
    assert [p["type"] for p in last_result["content"]] == ["image"]
    assert images(second)[-1].getpixel((5, 5)) == (0, 90, 0)


def test_zoom_and_screenshot_are_answered_without_a_desktop_step(anthropic_server):
    anthropic_server.script(reply_tool_calls(computer(action="zoom", region=[1000, 133, 1040, 160])),
                            reply_tool_calls(computer(action="screenshot")),
                            reply_tool_calls(computer(action="left_click", coordinate=[1020, 146])))
    _, actions = agent(anthropic_server).predict("t", obs(SHOT))
    assert actions == ["pyautogui.click(button='left', x=1530, y=219)"]
    assert len(anthropic_server.requests) == 3
    zoomed = images(anthropic_server.requests[1].body)[-1]
    assert zoomed.getpixel((zoomed.width // 2, zoomed.height // 2)) == (255, 0, 0)   # the target, enlarged
    assert zoomed.width > 600


def test_a_bad_action_is_a_tool_error_that_costs_a_step(anthropic_server):
    anthropic_server.script(
        reply_tool_calls(computer(action="key", text="ctrl+hyperdrive"),
                         computer(action="left_click", coordinate=[1, 1])),
        reply_tool_calls(computer(action="left_click", coordinate=[5000, 1])),
        reply_tool_calls(computer(action="open_browser")),
        reply_text("Stopping."))
    claude = agent(anthropic_server)
    response, actions = claude.predict("t", obs(SHOT))
    assert actions == [] and response["no_action"] and "hyperdrive" in response["invalid"][0]["error"]
    assert claude.predict("t", obs(SHOT))[1] == []
    errors = blocks(anthropic_server.requests[1].body, "tool_result")
    assert errors[0]["is_error"] and "unknown key 'hyperdrive'" in errors[0]["content"][0]["text"]
    assert errors[1]["is_error"] and "not executed" in errors[1]["content"][0]["text"]
    assert claude.predict("t", obs(SHOT))[1] == []
    assert "outside pixels of the 1280x720" in \
        blocks(anthropic_server.requests[2].body, "tool_result")[-1]["content"][0]["text"]
    assert claude.predict("t", obs(SHOT))[1] == ["DONE"]
    assert "unknown action 'open_browser'" in \
        blocks(anthropic_server.requests[3].body, "tool_result")[-1]["content"][0]["text"]
    assert anthropic_server.rejections == []


def test_the_infeasible_marker_ends_the_task_as_fail(anthropic_server):
    anthropic_server.script(reply_text("This needs a network connection. [INFEASIBLE]"))
    assert agent(anthropic_server).predict("t", obs(SHOT))[1] == ["FAIL"]


def test_only_the_last_screenshots_are_kept_and_the_prompt_is_cached(anthropic_server):
    anthropic_server.always(reply_tool_calls(computer(action="key", text="Tab")))
    claude = agent(anthropic_server, history=2)
    for index in range(4):
        claude.predict("t", obs(png(colour=(index * 50, 0, 0))))
    body = anthropic_server.requests[-1].body
    assert [image.getpixel((0, 0)) for image in images(body)] == [(100, 0, 0), (150, 0, 0)]
    assert "(an earlier screenshot" in str(body["messages"][0]["content"])
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sum("cache_control" in str(m) for m in body["messages"]) == 2
    assert anthropic_server.rejections == []


def test_the_ga_toolset_sends_no_beta_header_and_actions_are_tool_names(anthropic_server):
    anthropic_server.script(reply_tool_calls(("left_click", {"coordinate": [100, 100]}),
                                             ("scroll", {"coordinate": [5, 5], "scroll_direction": "down",
                                                         "scroll_amount": 3})))
    _, actions = agent(anthropic_server, variant="computer_toolset_20260801").predict("t", obs(SHOT))
    assert actions == ["pyautogui.click(button='left', x=150, y=150)", "pyautogui.moveTo(8, 8); pyautogui.vscroll(-3)"]
    request = anthropic_server.requests[0]
    assert "anthropic-beta" not in request.headers and request.body["tools"] == [{"type": "computer_toolset_20260801"}]


def test_usage_and_cost_per_step(anthropic_server):
    anthropic_server.script(reply_tool_calls(computer(action="wait", duration=1), input_tokens=1000, output_tokens=20),
                            reply_text("ok", input_tokens=2000, output_tokens=5))
    claude = agent(anthropic_server)
    assert claude.predict("t", obs(SHOT))[1] == ["time.sleep(1.0)"]
    assert claude.last_usage == {"input_tokens": 1000, "output_tokens": 20,
                                 "cost_usd": pytest.approx(cost_usd("claude-sonnet-4-6", Usage(1000, 20)))}
    claude.predict("t", obs(SHOT))
    assert claude.usage["input_tokens"] == 3000 and claude.usage["cost_usd"] > 0
    sent = {"max_tokens": anthropic_server.requests[0].body["max_tokens"]}  # no temperature: the API takes none
    assert claude.model_calls == {"calls": 2, "sent": [sent], "served": ["claude-sonnet-4-6"]}
    claude.reset()
    assert claude.usage["input_tokens"] == 0


def test_the_agent_is_built_in_and_refuses_unknown_arguments(anthropic_server):
    assert load_agent_class("claude-computer-use") is ClaudeComputerUseAgent
    with pytest.raises(Exception, match="no argument.*colour"):
        agent(anthropic_server, colour="red")
    with pytest.raises(Exception, match="observes screenshots"):
        agent(anthropic_server, observation_type="a11y_tree")


def test_a_context_overflow_halves_the_screenshots_kept_for_the_rest_of_the_task(anthropic_server):
    step = reply_tool_calls(computer(action="key", text="Tab"))
    anthropic_server.script(step, step, step, reply_context_too_long(), step, step)
    claude = agent(anthropic_server, history=4)
    for _ in range(5):
        assert claude.predict("t", obs(SHOT))[1] == ["pyautogui.press('tab')"]
    counts = [len(images(r.body)) for r in anthropic_server.requests]
    assert counts == [1, 2, 3, 4, 2, 2]
    assert anthropic_server.rejections == []
    claude.reset()
    anthropic_server.script(step)
    claude.predict("t", obs(SHOT))
    assert claude.wire.window.keep == 4      # a new task starts with the profile's number again
