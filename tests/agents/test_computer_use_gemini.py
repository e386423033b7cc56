"""gemini-computer-use through the real google-genai SDK against a local generateContent server that
checks the ComputerUse tool, one function response per call, each carrying the screenshot, and
acknowledged confirmations."""
from __future__ import annotations

import pytest

from mm_agents.loader import build_agent
from tests.agents.cu_helpers import decode, obs, png, red_centre
from tests.agents.wire_servers import reply_text, reply_tool_calls

MODEL = "gemini-2.5-computer-use-preview-10-2025"
TARGET = (1600, 900, 1700, 960)
SHOT = png(target=TARGET)


def agent(server, **kwargs):
    return build_agent("gemini-computer-use", model=MODEL, base_url=server.base_url, api_key="test",
                       screen_size=(1920, 1080), max_retries=0, **kwargs)


def images(body) -> list:
    found = []
    for content in body["contents"]:
        for part in content["parts"]:
            blob = part.get("inlineData")
            if blob:
                found.append(decode(blob["data"]))
            for inner in (part.get("functionResponse") or {}).get("parts") or []:
                blob = inner.get("inlineData", inner.get("inline_data"))
                found.append(decode(blob["data"]))
    return found


def click_on_the_grid(request):
    """The model answers on its 0-999 grid, from the image it was sent."""
    image = images(request.body)[-1]
    x, y = red_centre(image)
    return reply_tool_calls(("click_at", {"x": int(x / image.width * 1000), "y": int(y / image.height * 1000)}))


def test_grid_coordinates_land_on_the_target_and_the_image_fits_the_model(gemini_server):
    gemini_server.script(click_on_the_grid)
    gemini_agent = agent(gemini_server)
    _, actions = gemini_agent.predict("Click the red box", obs(SHOT))
    body = gemini_server.requests[0].body
    (tool,) = body["tools"]
    computer = tool.get("computerUse", tool.get("computer_use"))
    assert computer["environment"] == "ENVIRONMENT_BROWSER"
    assert set(computer.get("excludedPredefinedFunctions", computer.get("excluded_predefined_functions"))) == \
        {"open_web_browser", "navigate", "search", "go_back", "go_forward"}
    assert images(body)[0].size == (1440, 810)
    assert gemini_agent.model_calls["calls"] == 1 and gemini_agent.model_calls["sent"][0]["max_output_tokens"] > 0
    (action,) = actions
    x, y = (int(v.split("=")[1]) for v in action.removesuffix(")").split(", ")[1:])
    assert TARGET[0] <= x <= TARGET[2] and TARGET[1] <= y <= TARGET[3]


def test_every_call_gets_a_function_response_with_the_screenshot(gemini_server):
    gemini_server.script(reply_tool_calls(("type_text_at", {"x": 500, "y": 500, "text": "notes", "press_enter": False}),
                                          ("key_combination", {"keys": "Control+S"})),
                         reply_tool_calls(("scroll_at", {"x": 500, "y": 500, "direction": "down", "magnitude": 500})),
                         reply_text("Saved."))
    gemini = agent(gemini_server)
    assert gemini.predict("t", obs(SHOT))[1] == [
        "pyautogui.click(button='left', x=960, y=540)", "pyautogui.hotkey('ctrl', 'a')", "pyautogui.press('backspace')",
        "pyautogui.typewrite('notes')", "pyautogui.hotkey('ctrl', 's')"]
    # 500 grid units of 1080 px = 540 px: about 11 wheel clicks down
    assert gemini.predict("t", obs(png(colour=(9, 9, 9))))[1] == ["pyautogui.moveTo(960, 540); pyautogui.vscroll(-11)"]
    assert gemini.predict("t", obs(SHOT))[1] == ["DONE"]
    assert gemini_server.rejections == []
    second = gemini_server.requests[1].body
    responses = [p["functionResponse"] for p in second["contents"][-1]["parts"]]
    assert [r["name"] for r in responses] == ["type_text_at", "key_combination"]
    assert images(second)[-1].getpixel((0, 0)) == (9, 9, 9)


def test_confirmations_are_acknowledged_and_recorded(gemini_server):
    decision = {"decision": "require_confirmation", "explanation": "This sends an email."}
    gemini_server.script(reply_tool_calls(("click_at", {"x": 10, "y": 10, "safety_decision": decision})),
                         reply_text("ok"))
    gemini = agent(gemini_server)
    response, actions = gemini.predict("t", obs(SHOT))
    assert actions == ["pyautogui.click(button='left', x=20, y=11)"]
    assert response["safety_checks"] == [{"call_id": "click_at#0", "checks": [decision], "decision": "acknowledged"}]
    gemini.predict("t", obs(SHOT))
    (part,) = gemini_server.requests[1].body["contents"][-1]["parts"]
    assert part["functionResponse"]["response"]["safety_acknowledgement"] == "true"
    assert gemini_server.rejections == []


def test_a_confirmation_can_end_the_task_as_fail(gemini_server):
    decision = {"decision": "require_confirmation", "explanation": "Purchase."}
    gemini_server.script(reply_tool_calls(("click_at", {"x": 10, "y": 10, "safety_decision": decision})))
    assert agent(gemini_server, on_safety_check="fail").predict("t", obs(SHOT))[1] == ["FAIL"]


def test_browser_only_functions_are_tool_errors(gemini_server):
    gemini_server.script(reply_tool_calls(("navigate", {"url": "https://example.com"})),
                         reply_tool_calls(("wait_5_seconds", {})))
    gemini = agent(gemini_server)
    response, actions = gemini.predict("t", obs(SHOT))
    assert actions == [] and "not a browser" in response["invalid"][0]["error"]
    assert gemini.predict("t", obs(SHOT))[1] == ["time.sleep(5.0)"]
    (part,) = gemini_server.requests[1].body["contents"][-1]["parts"]
    assert "not a browser" in part["functionResponse"]["response"]["error"]
    assert gemini_server.rejections == []


def test_only_the_last_screenshots_stay(gemini_server):
    gemini_server.always(reply_tool_calls(("wait_5_seconds", {})))
    gemini = agent(gemini_server, history=2)
    for index in range(4):
        gemini.predict("t", obs(png(colour=(index * 60, 0, 0))))
    body = gemini_server.requests[-1].body
    assert [image.getpixel((0, 0)) for image in images(body)] == [(120, 0, 0), (180, 0, 0)]
    assert gemini_server.rejections == []
    assert gemini.usage["input_tokens"] == 44 and gemini.usage["cost_usd"] == pytest.approx(44 * 1.25e-6 + 28 * 1e-5)
