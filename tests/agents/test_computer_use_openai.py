"""openai-computer-use through the real OpenAI SDK against a local Responses API server that checks
that every computer_call is answered with a screenshot and its safety checks acknowledged."""
from __future__ import annotations

import json

import openai
import pytest

from mm_agents.loader import build_agent
from tests.agents.cu_helpers import decode, obs, png, red_centre
from tests.agents.wire_servers import Reply, ScriptedCall, reply_text

TARGET = (300, 800, 380, 850)
SHOT = png(target=TARGET)


def computer_call(action=None, actions=None, safety=(), **usage) -> Reply:
    arguments = {"action": action} if action is not None else {"actions": actions}
    if safety:
        arguments["pending_safety_checks"] = list(safety)
    return Reply("tool_calls", calls=(ScriptedCall("computer_call", arguments),), **usage)


def agent(server, model="computer-use-preview", **kwargs):
    return build_agent("openai-computer-use", model=model, base_url=server.base_url, api_key="test",
                       screen_size=(1920, 1080), max_retries=0, **kwargs)


def sent_images(body) -> list:
    found = []
    for item in body["input"]:
        if item.get("type") == "computer_call_output":
            found.append(decode(item["output"]["image_url"]))
        for part in item.get("content", []) if isinstance(item.get("content"), list) else []:
            if part["type"] == "input_image":
                found.append(decode(part["image_url"]))
    return found


def click_the_target(request):
    x, y = red_centre(sent_images(request.body)[-1])
    return computer_call({"type": "click", "button": "left", "x": round(x), "y": round(y)})


def test_the_display_is_the_image_sent_and_the_click_lands_on_the_target(responses_server):
    responses_server.script(click_the_target)
    _, actions = agent(responses_server).predict("Click the red box", obs(SHOT))
    body = responses_server.requests[0].body
    assert body["tools"] == [{"type": "computer_use_preview", "display_width": 1280, "display_height": 720,
                              "environment": "linux"}]
    assert body["truncation"] == "auto" and "previous_response_id" not in body
    assert sent_images(body)[0].size == (1280, 720)
    (action,) = actions
    x, y = (int(v.split("=")[1]) for v in action.removesuffix(")").split(", ")[1:])
    assert TARGET[0] <= x <= TARGET[2] and TARGET[1] <= y <= TARGET[3]


def test_each_computer_call_is_answered_with_a_screenshot_on_the_previous_response(responses_server):
    responses_server.script(computer_call({"type": "keypress", "keys": ["CTRL", "S"]}),
                            computer_call({"type": "type", "text": "hi"}),
                            reply_text("Saved the file."))
    cua = agent(responses_server)
    assert cua.predict("t", obs(SHOT))[1] == ["pyautogui.hotkey('ctrl', 's')"]
    assert cua.predict("t", obs(png(colour=(0, 0, 200))))[1] == ["pyautogui.typewrite('hi')"]
    assert cua.predict("t", obs(SHOT))[1] == ["DONE"]
    assert responses_server.rejections == []
    second = responses_server.requests[1].body
    assert second["previous_response_id"] == "resp_3"
    (output,) = second["input"]
    assert output["type"] == "computer_call_output" and output["call_id"] == "call_2"
    assert decode(output["output"]["image_url"]).getpixel((0, 0)) == (0, 0, 200)


def test_safety_checks_are_acknowledged_and_recorded(responses_server):
    check = {"id": "cu_sc_1", "code": "malicious_instructions", "message": "The page contains instructions."}
    responses_server.script(computer_call({"type": "click", "button": "left", "x": 5, "y": 5}, safety=[check]),
                            reply_text("done"))
    cua = agent(responses_server)
    response, actions = cua.predict("t", obs(SHOT))
    assert actions == ["pyautogui.click(button='left', x=8, y=8)"]
    assert response["safety_checks"] == [{"call_id": "call_2", "checks": [check], "decision": "acknowledged"}]
    json.dumps(response)   # goes to traj.jsonl as it is
    cua.predict("t", obs(SHOT))
    (output,) = responses_server.requests[1].body["input"]
    assert output["acknowledged_safety_checks"] == [check]
    assert responses_server.rejections == []


def test_a_safety_check_can_end_the_task_as_fail(responses_server):
    check = {"id": "cu_sc_2", "code": "sensitive_domain", "message": "Banking site."}
    responses_server.script(computer_call({"type": "type", "text": "x"}, safety=[check]))
    response, actions = agent(responses_server, on_safety_check="fail").predict("t", obs(SHOT))
    assert actions == ["FAIL"] and response["safety_checks"][0]["decision"] == "declined"


def test_the_server_refuses_an_unacknowledged_safety_check(responses_server):
    """The wire server is as strict as the API: this is what the agent must not do."""
    check = {"id": "cu_sc_3", "code": "irrelevant_domain", "message": "?"}
    responses_server.script(computer_call({"type": "wait"}, safety=[check]))
    client = openai.OpenAI(base_url=responses_server.base_url, api_key="k", max_retries=0)
    first = client.responses.create(model="computer-use-preview", input="x", truncation="auto",
                                    tools=[{"type": "computer_use_preview", "display_width": 10,
                                            "display_height": 10, "environment": "linux"}])
    with pytest.raises(openai.BadRequestError, match="not acknowledged"):
        client.responses.create(model="computer-use-preview", previous_response_id=first.id, truncation="auto",
                                input=[{"type": "computer_call_output", "call_id": first.output[0].call_id,
                                        "output": {"type": "computer_screenshot",
                                                   "image_url": "data:image/png;base64,AA=="}}])


def test_the_computer_tool_batches_actions_in_one_call(responses_server):
    responses_server.script(computer_call(actions=[
        {"type": "click", "button": "left", "x": 640, "y": 360},
        {"type": "type", "text": "report"},
        {"type": "keypress", "keys": ["ENTER"]},
        {"type": "scroll", "x": 10, "y": 10, "scroll_x": 0, "scroll_y": 200}]),
        reply_text("ok"))
    cua = agent(responses_server, model="gpt-5.4")
    _, actions = cua.predict("t", obs(SHOT))
    assert actions == ["pyautogui.click(button='left', x=960, y=540)", "pyautogui.typewrite('report')",
                       "pyautogui.press('enter')", "pyautogui.moveTo(15, 15); pyautogui.vscroll(-6)"]
    assert responses_server.requests[0].body["tools"] == [{"type": "computer"}]
    cua.predict("t", obs(SHOT))
    outputs = responses_server.requests[1].body["input"]
    assert [o["call_id"] for o in outputs] == ["call_2"]      # one output for the whole batch
    assert responses_server.rejections == []


def test_actions_the_desktop_cannot_do_are_reported_and_cost_a_step(responses_server):
    responses_server.script(computer_call({"type": "click", "button": "back", "x": 5, "y": 5}),
                            computer_call({"type": "screenshot"}),
                            computer_call({"type": "wait"}))
    cua = agent(responses_server)
    response, actions = cua.predict("t", obs(SHOT))
    assert actions == [] and "no 'back' mouse button" in response["invalid"][0]["error"]
    # the next step: the error goes back, the screenshot request is answered at once, then a wait
    assert cua.predict("t", obs(SHOT))[1] == ["time.sleep(2.0)"]
    error_turn = responses_server.requests[1].body["input"]
    assert error_turn[0]["type"] == "computer_call_output"
    assert "no 'back' mouse button" in error_turn[1]["content"][0]["text"]
    assert len(responses_server.requests) == 3 and responses_server.rejections == []


def test_usage_and_cost(responses_server):
    responses_server.script(computer_call({"type": "wait"}, input_tokens=1000, output_tokens=100))
    cua = agent(responses_server)
    cua.predict("t", obs(SHOT))
    assert cua.usage["input_tokens"] == 1000 and cua.usage["cost_usd"] == pytest.approx(0.0042)
    body = responses_server.requests[0].body
    assert cua.model_calls["sent"] == [{"max_output_tokens": body["max_output_tokens"], "reasoning": body["reasoning"]}]
    assert cua.model_calls["served"] == ["computer-use-preview"]
