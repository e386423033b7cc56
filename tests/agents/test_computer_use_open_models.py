"""ui-tars and qwen-vl: their text grammars parsed from answers as the models write them, and the
agents through the OpenAI SDK against a local server as strict as vLLM about top-level fields."""
from __future__ import annotations

import json

import openai
import pytest

from mm_agents.computer_use import qwen, ui_tars
from mm_agents.computer_use.planner_grounder import read_point
from mm_agents.loader import build_agent
from tests.agents.cu_helpers import decode, obs, png, red_centre
from tests.agents.wire_servers import reply_text, reply_tool_calls

TARGET = (1200, 700, 1260, 760)
SHOT = png(target=TARGET)


def kinds(calls) -> list:
    return [(c.command.kind if c.command else None, c.error is not None) for c in calls]


# --- the UI-TARS grammar ---------------------------------------------------------------------------

def test_ui_tars_thought_and_one_click():
    calls, final = ui_tars.parse("Thought: The Save button is at the top left of the dialog. I'll click it.\n"
                                 "Action: click(start_box='<|box_start|>(235,512)<|box_end|>')")
    (call,) = calls
    assert final is None and call.command.kind == "click" and call.command.points == ((235, 512),)


def test_ui_tars_point_formats_and_boxes():
    assert ui_tars.parse("Action: click(start_box='(10,20)')")[0][0].command.points == ((10, 20),)
    assert ui_tars.parse("Action: click(point='<point>33 44</point>')")[0][0].command.points == ((33, 44),)
    assert ui_tars.parse("Action: left_double(start_box='(10,20,30,40)')")[0][0].command.points == ((20, 30),)
    assert ui_tars.parse("Action: right_single(start_box='[5, 6]')")[0][0].command.button == "right"


def test_ui_tars_type_with_quotes_escapes_and_a_trailing_newline_presses_enter():
    calls, _ = ui_tars.parse("Thought: Type the name and submit.\n"
                             "Action: type(content='Bob\\'s \"report\"\\n')")
    assert [c.command.kind for c in calls] == ["type", "key"]
    assert calls[0].command.text == 'Bob\'s "report"' and calls[1].command.chords == (("enter",),)


def test_ui_tars_a_raw_newline_inside_content_is_kept():
    (call,) = ui_tars.parse("Action: type(content='line one\nline two')")[0]
    assert call.command.text == "line one\nline two"


def test_ui_tars_several_actions_in_one_answer():
    text = ("Thought: Select all, then copy.\nAction: hotkey(key='ctrl a')\n\nhotkey(key='ctrl c')\n\n"
            "scroll(start_box='(500,400)', direction='down')\n\ndrag(start_box='(1,2)', end_box='(3,4)')")
    calls, final = ui_tars.parse(text)
    assert [c.command.kind for c in calls] == ["key", "key", "scroll", "drag"] and final is None
    assert calls[0].command.chords == (("ctrl", "a"),) and calls[2].command.scroll == (0, 5)


@pytest.mark.parametrize("text, final", [
    ("Thought: All the cells are filled.\nAction: finished(content='The sheet is sorted.')", "DONE"),
    ("Thought: I need the user's password.\nAction: call_user()", "FAIL"),
])
def test_ui_tars_ends(text, final):
    assert ui_tars.parse(text) == ([], final)


@pytest.mark.parametrize("text, message", [
    ("I think the button is somewhere on the left.", "no 'Action:' line"),
    ("Thought: x\nAction: click(start_box='(12,)')", "cannot read a point"),
    ("Thought: x\nAction: click(start_box='(1,2)'", "not closed"),
    ("Thought: x\nAction: teleport(start_box='(1,2)')", "unknown action 'teleport'"),
    ("Thought: x\nAction: hotkey(key='ctrl hyperdrive')", "unknown key 'hyperdrive'"),
])
def test_ui_tars_malformed_answers_are_invalid_calls_never_exceptions(text, message):
    calls, final = ui_tars.parse(text)
    assert final is None and calls[-1].error and message in calls[-1].error


# --- the Qwen grammar ------------------------------------------------------------------------------

def test_qwen_one_tool_call():
    calls, final = qwen.parse('I will click the File menu.\n<tool_call>\n{"name": "computer_use", "arguments": '
                              '{"action": "left_click", "coordinate": [120, 45]}}\n</tool_call>')
    assert final is None and calls[0].command.points == ((120, 45),) and calls[0].arguments["action"] == "left_click"


def test_qwen_several_calls_with_quotes_and_unicode():
    text = ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "type", "text": "Zoë said \\"hi\\"\\n"}}'
            '\n</tool_call>\n<tool_call>\n{"name": "computer_use", "arguments": {"action": "key", '
            '"keys": ["ctrl", "s"]}}\n</tool_call>')
    calls, _ = qwen.parse(text)
    assert calls[0].command.text == 'Zoë said "hi"\n' and calls[1].command.chords == (("ctrl", "s"),)


def test_qwen_scrolls_drags_and_ends():
    calls, _ = qwen.parse('<tool_call>{"name": "computer_use", "arguments": {"action": "scroll", "pixels": -3, '
                          '"coordinate": [10, 10]}}</tool_call><tool_call>{"name": "computer_use", "arguments": '
                          '{"action": "left_click_drag", "coordinate": [50, 60]}}</tool_call>')
    assert calls[0].command.scroll == (0, 3) and calls[1].command.points == ((50, 60),)
    assert qwen.parse('<tool_call>{"name": "computer_use", "arguments": {"action": "terminate", '
                      '"status": "failure"}}</tool_call>') == ([], "FAIL")
    assert qwen.parse('<tool_call>{"name": "computer_use", "arguments": {"action": "terminate", '
                      '"status": "success"}}</tool_call>')[1] == "DONE"


@pytest.mark.parametrize("text, message", [
    ("The task looks done to me.", "no <tool_call> found"),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1, 2]</tool_call>',
     "not valid JSON"),
    ('<tool_call>{"name": "browser", "arguments": {"action": "open"}}</tool_call>', "no function 'browser'"),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "fly"}}</tool_call>', "unknown action 'fly'"),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1]}}</tool_call>',
     "coordinate must be [x, y]"),
])
def test_qwen_malformed_answers_are_invalid_calls(text, message):
    calls, final = qwen.parse(text)
    assert final is None and message in calls[-1].error


# --- on the wire -----------------------------------------------------------------------------------

def sent_images(body) -> list:
    return [decode(part["image_url"]["url"]) for message in body["messages"]
            if isinstance(message["content"], list) for part in message["content"] if part["type"] == "image_url"]


def build(name, model, server, **kwargs):
    return build_agent(name, model=model, base_url=server.base_url, screen_size=(1920, 1080), max_retries=0,
                       **kwargs)


def ui_tars_pixels(request):
    x, y = red_centre(sent_images(request.body)[-1])
    return reply_text("Thought: The red box.\n"
                      f"Action: click(start_box='<|box_start|>({round(x)},{round(y)})<|box_end|>')")


def ui_tars_1_grid(request):
    image = sent_images(request.body)[-1]
    x, y = red_centre(image)
    return reply_text(f"Thought: The red box.\nAction: click(start_box='({int(x / image.width * 1000)},"
                      f"{int(y / image.height * 1000)})')")


def qwen_call(arguments) -> str:
    return f"<tool_call>\n{json.dumps({'name': 'computer_use', 'arguments': arguments})}\n</tool_call>"


def qwen25_pixels(request):
    x, y = red_centre(sent_images(request.body)[-1])
    return reply_text(qwen_call({"action": "left_click", "coordinate": [round(x), round(y)]}))


def qwen3_grid(request):
    image = sent_images(request.body)[-1]
    x, y = red_centre(image)
    return reply_text(qwen_call({"action": "left_click", "coordinate": [int(x / image.width * 1000),
                                                                        int(y / image.height * 1000)]}))


@pytest.mark.parametrize("name, model, answer, sent", [
    ("ui-tars", "ByteDance-Seed/UI-TARS-1.5-7B", ui_tars_pixels, (1932, 1092)),
    ("ui-tars", "bytedance-research/UI-TARS-7B-DPO", ui_tars_1_grid, (1932, 1092)),
    ("qwen-vl", "Qwen/Qwen2.5-VL-72B-Instruct", qwen25_pixels, (1932, 1092)),
    ("qwen-vl", "Qwen/Qwen3-VL-235B-A22B-Instruct", qwen3_grid, (1920, 1088)),
])
def test_each_model_convention_lands_the_click_on_the_target(vllm_server, name, model, answer, sent):
    vllm_server.script(answer)
    _, actions = build(name, model, vllm_server).predict("Click the red box", obs(SHOT))
    assert sent_images(vllm_server.requests[0].body)[0].size == sent
    (action,) = actions
    x, y = (int(v.split("=")[1]) for v in action.removesuffix(")").split(", ")[1:])
    assert TARGET[0] <= x <= TARGET[2] and TARGET[1] <= y <= TARGET[3]


def test_vllm_sampling_fields_go_as_extra_body_and_unknown_fields_are_refused(vllm_server):
    vllm_server.script(reply_text("Thought: wait\nAction: wait()"))
    agent = build("ui-tars", "UI-TARS-1.5-7B", vllm_server, temperature=0.0, top_k=1, repetition_penalty=1.05)
    assert agent.predict("t", obs(SHOT))[1] == ["time.sleep(5.0)"]
    body = vllm_server.requests[0].body
    assert body["top_k"] == 1 and body["repetition_penalty"] == 1.05 and body["temperature"] == 0.0
    assert vllm_server.rejections == []
    assert agent.model_calls["sent"] == [{"max_tokens": body["max_tokens"], "temperature": 0.0, "top_k": 1,
                                          "repetition_penalty": 1.05}]
    client = openai.OpenAI(base_url=vllm_server.base_url, api_key="x", max_retries=0)
    with pytest.raises(openai.BadRequestError, match="Extra inputs are not permitted"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                       extra_body={"reasoning": {"effort": "low"}})


def test_ui_tars_keeps_the_last_screenshots_and_every_answer(vllm_server):
    vllm_server.always(reply_text("Thought: next\nAction: hotkey(key='tab')"))
    agent = build("ui-tars", "UI-TARS-1.5-7B", vllm_server, history=2)
    for index in range(4):
        assert agent.predict("t", obs(png(colour=(index * 60, 0, 0))))[1] == ["pyautogui.press('tab')"]
    body = vllm_server.requests[-1].body
    assert [image.getpixel((0, 0)) for image in sent_images(body)] == [(120, 0, 0), (180, 0, 0)]
    assert len([m for m in body["messages"] if m["role"] == "assistant"]) == 3
    assert "Linux desktop" in body["messages"][0]["content"][0]["text"] and "User Instruction\nt" in \
        body["messages"][0]["content"][0]["text"]


def test_a_malformed_answer_is_a_recorded_invalid_action_and_the_model_is_told(vllm_server):
    vllm_server.script(reply_text("Let me think about where the menu is."),
                       reply_text(qwen_call({"action": "terminate", "status": "success"})))
    agent = build("qwen-vl", "Qwen3-VL-8B-Instruct", vllm_server)
    response, actions = agent.predict("t", obs(SHOT))
    assert actions == [] and response["no_action"] and "no <tool_call> found" in response["invalid"][0]["error"]
    json.dumps(response)
    assert agent.predict("t", obs(SHOT))[1] == ["DONE"]
    note = vllm_server.requests[1].body["messages"][-1]["content"][0]["text"]
    assert "could not be carried out" in note and "no <tool_call> found" in note
    system = vllm_server.requests[0].body["messages"][0]["content"]
    assert "<tools>" in system and "resolution is 1000x1000" in system


def test_qwen_2_5_is_told_the_size_of_its_image(vllm_server):
    vllm_server.script(reply_text(qwen_call({"action": "wait", "time": 1})))
    build("qwen-vl", "Qwen2.5-VL-7B-Instruct", vllm_server).predict("t", obs(SHOT))
    assert "resolution is 1932x1092" in vllm_server.requests[0].body["messages"][0]["content"]


# --- planner and grounder --------------------------------------------------------------------------

def test_read_point_understands_the_usual_notations():
    assert read_point("(120,45)") == (120, 45)
    assert read_point("click(start_box='<|box_start|>(12, 34)<|box_end|>')") == (12, 34)
    assert read_point("<point>7 8</point>") == (7, 8)
    assert read_point("The button is at [10, 20, 30, 40].") == (20, 30)
    assert read_point("x=5, y=6") == (5, 6)
    with pytest.raises(Exception, match="no point"):
        read_point("I cannot see it")


def grounder_pixels(request):
    image = sent_images(request.body)[-1]
    question = request.body["messages"][-1]["content"][-1]["text"]
    assert "the red box" in question and f"{image.width}x{image.height}" in question
    x, y = red_centre(image)
    return reply_text(f"({round(x)},{round(y)})", input_tokens=500, output_tokens=6)


def test_the_planner_names_the_target_and_the_grounder_points_at_it(openai_server, vllm_server):
    openai_server.script(reply_tool_calls(("act", {"action": "click", "target": "the red box"}),
                                          input_tokens=1000, output_tokens=30),
                         reply_tool_calls(("act", {"action": "done"})))
    vllm_server.script(grounder_pixels)
    agent = build_agent("planner-grounder", model="gpt-4o", base_url=openai_server.base_url, api_key="k",
                        screen_size=(1920, 1080), max_retries=0, grounder_model="GTA1-7B",
                        grounder_base_url=vllm_server.base_url)
    response, actions = agent.predict("Click the red box", obs(SHOT))
    (action,) = actions
    x, y = (int(v.split("=")[1]) for v in action.removesuffix(")").split(", ")[1:])
    assert TARGET[0] <= x <= TARGET[2] and TARGET[1] <= y <= TARGET[3]
    assert response["calls"][0]["arguments"]["target"] == "the red box"
    assert agent.last_usage["input_tokens"] == 1500
    assert agent.last_usage["cost_usd"] is None   # the grounder's price is unknown
    assert agent.model_calls["calls"] == 2 and agent.model_calls["served"] == ["gpt-4o", "GTA1-7B"]
    assert {"max_tokens": 128, "temperature": 0.0} in agent.model_calls["sent"]
    assert agent.predict("Click the red box", obs(SHOT))[1] == ["DONE"]
    tool_results = [m for m in openai_server.requests[1].body["messages"] if m["role"] == "tool"]
    assert tool_results and tool_results[0]["content"] == "Done."
    assert vllm_server.rejections == []


def test_planner_grounder_needs_a_grounder(openai_server):
    with pytest.raises(Exception, match="grounder_model"):
        build_agent("planner-grounder", model="gpt-4o", base_url=openai_server.base_url, api_key="k")
