"""The tool-calling agent end to end: the real OpenAI and Anthropic SDKs against local wire servers,
and one run on a real desktop."""
from __future__ import annotations

import base64
import io
import json
import time

import pytest
from PIL import Image

from desktop_env.a11y_namespaces import xmlns_declarations
from desktop_env.desktop_env import DesktopEnv
from mm_agents.desktop_tool import anthropic_tool_schema, openai_tool_schema
from mm_agents.llm.base import ContextTooLong, Usage
from mm_agents.llm.pricing import cost_usd
from mm_agents.loader import build_agent, load_agent_class
from mm_agents.tool_agent import ToolAgent
from tests.agents.wire_servers import reply_context_too_long, reply_text, reply_tool_calls

SCREEN = (1280, 720)
TREE = (f'<desktop-frame{xmlns_declarations("st", "cp")}>'
        '<push-button name="Save" st:showing="true" st:visible="true" st:enabled="true" '
        'cp:screencoord="(10, 20)" cp:size="(80, 30)"/></desktop-frame>')


def png(colour: tuple[int, int, int], size: tuple[int, int] = SCREEN) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


SHOTS = [png((200, 30 * i, 0)) for i in range(6)]


def obs(index: int, tree: str | None = None) -> dict:
    return {"screenshot": SHOTS[index], "accessibility_tree": tree, "terminal": None, "instruction": "task"}


def call(**arguments):
    return ("desktop_action", arguments)


# --- reading what each wire format carried ------------------------------------------------------

def openai_images(body: dict) -> list[bytes]:
    return [base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            for message in body["messages"] if isinstance(message.get("content"), list)
            for part in message["content"] if part["type"] == "image_url"]


def openai_tool_results(body: dict) -> list[dict]:
    return [message for message in body["messages"] if message["role"] == "tool"]


def anthropic_blocks(body: dict, kind: str) -> list[dict]:
    return [block for message in body["messages"] for block in message["content"] if block["type"] == kind]


def anthropic_images(body: dict) -> list[bytes]:
    return [base64.b64decode(block["source"]["data"]) for block in anthropic_blocks(body, "image")]


def anthropic_result_text(block: dict) -> str:
    return "\n".join(part["text"] for part in block["content"] if part["type"] == "text")


@pytest.fixture
def openai_agent(openai_server):
    return ToolAgent(model="gpt-4o", base_url=openai_server.base_url, api_key="test", screen_size=SCREEN,
                     max_retries=0, temperature=0.5, top_p=0.9)


@pytest.fixture
def anthropic_agent(anthropic_server):
    return ToolAgent(model="claude-haiku-4-5", base_url=anthropic_server.base_url, api_key="test",
                     screen_size=SCREEN, max_retries=0)


# --- OpenAI -------------------------------------------------------------------------------------

def test_openai_a_tool_call_becomes_the_action_and_its_result_comes_back_with_the_next_screen(openai_agent,
                                                                                              openai_server):
    openai_server.script(reply_tool_calls(call(action_type="type", text='it\'s "x"\n'), text="Typing."),
                         reply_tool_calls(call(action_type="DONE")))
    response, actions = openai_agent.predict("Write it", obs(0))
    assert actions == ["pyautogui.typewrite('it\\'s \"x\"\\n')"]
    assert "Typing." in response and "desktop_action" in response

    first = openai_server.requests[0].body
    assert first["tools"] == [openai_tool_schema()]
    assert first["messages"][0]["role"] == "system" and "1280x720" in first["messages"][0]["content"]
    assert first["temperature"] == 0.5 and first["top_p"] == 0.9
    assert "Write it" in json.dumps(first["messages"][1]) and openai_images(first) == [SHOTS[0]]

    _, actions = openai_agent.predict("Write it", obs(1))
    assert actions == ["DONE"]
    second = openai_server.requests[1].body
    call_id = second["messages"][2]["tool_calls"][0]["id"]
    (result,) = openai_tool_results(second)
    assert result["tool_call_id"] == call_id
    header, text = result["content"].split("\n", 1)
    assert json.loads(header) == {"done": False, "reward": 0.0,
                                  "info": {"action": "pyautogui.typewrite('it\\'s \"x\"\\n')"},
                                  "obs_summary": {"screenshot_size": [1280, 720]}}
    assert "executed" in text
    assert openai_images(second) == [SHOTS[0], SHOTS[1]]
    assert second["messages"][-1]["role"] == "user"   # the new screen comes after the tool result


def test_openai_a_bad_call_costs_a_step_and_the_model_gets_an_error_result(openai_agent, openai_server):
    openai_server.script(reply_tool_calls(call(action_type="click", coordinate=[1500, 10])),
                         reply_tool_calls(("desktop_action", '{"action_type": "click", ')),
                         reply_tool_calls(call(action_type="click", coordinate=[15, 10])))
    assert openai_agent.predict("Click", obs(0))[1] == []
    assert openai_agent.predict("Click", obs(1))[1] == []
    (error,) = openai_tool_results(openai_server.requests[1].body)
    assert error["content"].startswith("ERROR: ") and "off the 1280x720 screen" in error["content"]
    assert json.loads(error["content"].removeprefix("ERROR: ").split("\n")[0])["info"]["error"]

    assert openai_agent.predict("Click", obs(2))[1] == ["pyautogui.click(x=15, y=10)"]
    bad_json = openai_tool_results(openai_server.requests[2].body)[-1]
    assert "not a JSON object" in bad_json["content"]


def test_openai_text_without_a_tool_call_is_no_action_unless_it_says_done_or_fail(openai_agent, openai_server):
    openai_server.script(reply_text("Let me think about where the menu is."), reply_text("The task is DONE."),
                         reply_text("This cannot work: FAIL"))
    assert openai_agent.predict("t", obs(0))[1] == []
    assert openai_agent.predict("t", obs(1))[1] == ["DONE"]
    nudge = openai_server.requests[1].body["messages"][-1]
    assert "called no tool" in json.dumps(nudge) and openai_tool_results(openai_server.requests[1].body) == []
    assert openai_agent.predict("t", obs(2))[1] == ["FAIL"]


def test_only_the_last_screenshots_are_sent_but_every_step_stays(openai_server):
    agent = ToolAgent(model="gpt-4o", base_url=openai_server.base_url, api_key="test", screen_size=SCREEN,
                      max_trajectory_length=2, max_retries=0)
    openai_server.always(reply_tool_calls(call(action_type="key", key="tab"), text="step"))
    for index in range(5):
        assert agent.predict("t", obs(index))[1] == ["pyautogui.press('tab')"]
    last = openai_server.requests[-1].body
    assert openai_images(last) == [SHOTS[3], SHOTS[4]]
    assert len(openai_tool_results(last)) == 4 and len([m for m in last["messages"] if m["role"] == "assistant"]) == 4
    assert "Task: t" in json.dumps(last["messages"][1])   # the instruction outlives its screenshot


def test_usage_adds_up_per_call_and_per_task(openai_agent, openai_server):
    openai_server.script(reply_tool_calls(call(action_type="WAIT"), input_tokens=1000, output_tokens=50),
                         reply_tool_calls(call(action_type="DONE"), input_tokens=2000, output_tokens=20))
    openai_agent.predict("t", obs(0))
    assert openai_agent.last_usage == {"input_tokens": 1000, "output_tokens": 50,
                                       "cost_usd": pytest.approx(cost_usd("gpt-4o", Usage(1000, 50)))}
    openai_agent.predict("t", obs(1))
    assert openai_agent.last_usage["input_tokens"] == 2000
    assert openai_agent.usage == {"input_tokens": 3000, "output_tokens": 70,
                                  "cost_usd": pytest.approx(cost_usd("gpt-4o", Usage(3000, 70)))}
    assert openai_agent.model_calls["calls"] == 2 and openai_agent.model_calls["served"] == ["gpt-4o"]
    openai_agent.reset()
    assert openai_agent.usage == {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}


def test_a_model_without_a_price_has_unknown_cost(openai_server):
    agent = ToolAgent(model="my-local-model", base_url=openai_server.base_url, api_key="test", screen_size=SCREEN,
                      max_retries=0)
    openai_server.script(reply_tool_calls(call(action_type="DONE")))
    agent.predict("t", obs(0))
    assert agent.usage["input_tokens"] == 11 and agent.usage["cost_usd"] is None


def test_a_context_overflow_drops_the_older_steps_and_retries_once(openai_server):
    agent = ToolAgent(model="gpt-4o", base_url=openai_server.base_url, api_key="test", screen_size=SCREEN,
                      max_retries=0)
    step = reply_tool_calls(call(action_type="key", key="tab"))
    openai_server.script(step, step, step, step, reply_context_too_long(), step, step)
    for index in range(4):
        agent.predict("t", obs(index))
    assert agent.predict("t", obs(4))[1] == ["pyautogui.press('tab')"]
    overflowed, retried = openai_server.requests[4].body, openai_server.requests[5].body
    assert len(openai_tool_results(overflowed)) == 4 and len(openai_tool_results(retried)) == 2
    assert openai_images(retried) == [SHOTS[4]]
    assert "2 earlier steps were removed" in json.dumps(retried["messages"][1])
    # The trimmed history stays trimmed: the next step does not overflow again first.
    agent.predict("t", obs(5))
    assert len(openai_tool_results(openai_server.requests[6].body)) == 3


def test_a_second_overflow_is_an_error(openai_server):
    agent = ToolAgent(model="gpt-4o", base_url=openai_server.base_url, api_key="test", screen_size=SCREEN,
                      max_retries=0)
    openai_server.script(reply_tool_calls(call(action_type="WAIT")), reply_context_too_long(),
                         reply_context_too_long())
    agent.predict("t", obs(0))
    with pytest.raises(ContextTooLong):
        agent.predict("t", obs(1))
    assert len(openai_server.requests) == 3


def test_a_first_observation_too_long_for_the_model_is_an_error_at_once(openai_agent, openai_server):
    openai_server.script(reply_context_too_long())
    with pytest.raises(ContextTooLong):
        openai_agent.predict("t", obs(0))
    assert len(openai_server.requests) == 1


def test_the_accessibility_tree_is_sent_linearized(openai_server):
    agent = ToolAgent(model="gpt-4o", base_url=openai_server.base_url, api_key="test", screen_size=SCREEN,
                      observation_type="a11y_tree", max_retries=0)
    openai_server.script(reply_tool_calls(call(action_type="WAIT")), reply_tool_calls(call(action_type="DONE")))
    agent.predict("t", obs(0, TREE))
    first = openai_server.requests[0].body
    assert openai_images(first) == []
    assert "push-button\tSave\t" in json.dumps(first["messages"][1], ensure_ascii=False).replace("\\t", "\t")
    assert "accessibility tree" in first["messages"][0]["content"]
    agent.predict("t", obs(1, TREE))
    header = openai_tool_results(openai_server.requests[1].body)[0]["content"].split("\n")[0]
    assert json.loads(header)["obs_summary"] == {"screenshot_size": [1280, 720], "a11y_tree_chars": len(TREE)}


def test_calls_after_a_failed_one_in_the_same_turn_are_not_run(openai_agent, openai_server):
    openai_server.script(reply_tool_calls(call(action_type="key", key="tab"), call(action_type="key", key="nope"),
                                          call(action_type="key", key="enter"), ("open_browser", {})),
                         reply_tool_calls(call(action_type="DONE")))
    assert openai_agent.predict("t", obs(0))[1] == ["pyautogui.press('tab')"]
    openai_agent.predict("t", obs(1))
    results = [r["content"] for r in openai_tool_results(openai_server.requests[1].body)]
    assert not results[0].startswith("ERROR") and "'nope' is not a pyautogui key name" in results[1]
    assert "not executed" in results[2] and "not executed" in results[3]


# --- Anthropic ----------------------------------------------------------------------------------

def test_anthropic_a_tool_call_becomes_the_action_and_its_result_comes_back_with_the_next_screen(anthropic_agent,
                                                                                                  anthropic_server):
    anthropic_server.script(reply_tool_calls(call(action_type="hotkey", keys=["ctrl", "s"]), text="Saving."),
                            reply_tool_calls(call(action_type="click", coordinate=[10, 10])))
    response, actions = anthropic_agent.predict("Save it", obs(0))
    assert actions == ["pyautogui.hotkey('ctrl', 's')"]
    first = anthropic_server.requests[0].body
    assert first["tools"] == [anthropic_tool_schema()]
    assert "1280x720" in first["system"] and anthropic_images(first) == [SHOTS[0]]

    assert anthropic_agent.predict("Save it", obs(1))[1] == ["pyautogui.click(x=10, y=10)"]
    second = anthropic_server.requests[1].body
    (use,) = anthropic_blocks(second, "tool_use")
    (result,) = anthropic_blocks(second, "tool_result")
    assert result["tool_use_id"] == use["id"] and not result.get("is_error")
    header = json.loads(anthropic_result_text(result).split("\n")[0])
    assert header == {"done": False, "reward": 0.0, "info": {"action": "pyautogui.hotkey('ctrl', 's')"},
                      "obs_summary": {"screenshot_size": [1280, 720]}}
    assert anthropic_images(second) == [SHOTS[0], SHOTS[1]]
    # The result and the new screen share the user turn after the tool_use, result first.
    last_turn = second["messages"][-1]
    assert last_turn["role"] == "user" and last_turn["content"][0]["type"] == "tool_result"
    assert any(block["type"] == "image" for block in last_turn["content"][1:])


def test_anthropic_a_bad_call_gets_an_error_result(anthropic_agent, anthropic_server):
    anthropic_server.script(reply_tool_calls(call(action_type="scroll")),
                            reply_tool_calls(call(action_type="scroll", clicks=-3)))
    assert anthropic_agent.predict("Scroll", obs(0))[1] == []
    assert anthropic_agent.predict("Scroll", obs(1))[1] == ["pyautogui.vscroll(-3)"]
    (result,) = anthropic_blocks(anthropic_server.requests[1].body, "tool_result")
    assert result["is_error"] is True and "needs the argument 'clicks'" in anthropic_result_text(result)
    assert anthropic_agent.usage["input_tokens"] == 22 and anthropic_agent.usage["cost_usd"] > 0


# --- construction -------------------------------------------------------------------------------

def test_tool_is_a_builtin_agent_built_from_run_options(openai_server):
    assert load_agent_class("tool") is ToolAgent
    agent = build_agent("tool", model="gpt-4o", action_space="pyautogui", observation_type="screenshot",
                        max_tokens=500, temperature=1.0, top_p=0.9, max_trajectory_length=3,
                        client_password="pw", screen_size=SCREEN, base_url=openai_server.base_url, api_key="k")
    openai_server.script(reply_tool_calls(call(action_type="DONE")))
    agent.predict("t", obs(0))
    body = openai_server.requests[0].body
    assert body["max_tokens"] == 500 and '"pw"' in body["messages"][0]["content"]


@pytest.mark.parametrize("options, message", [
    ({"action_space": "computer_13"}, "pyautogui"),
    ({"observation_type": "som"}, "observation types"),
])
def test_unsupported_run_options_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        ToolAgent(model="gpt-4o", base_url="http://127.0.0.1:9", api_key="k", **options)


# --- a real desktop -----------------------------------------------------------------------------

@pytest.mark.desktop
def test_the_agent_types_quoted_text_into_an_editor_and_saves_it(openai_server):
    text = 'it\'s "quoted"'
    openai_server.script(reply_tool_calls(call(action_type="type", text=text)),
                         reply_tool_calls(call(action_type="hotkey", keys=["ctrl", "s"])),
                         reply_tool_calls(call(action_type="DONE")))
    agent = ToolAgent(model="gpt-4o", base_url=openai_server.base_url, api_key="test", screen_size=SCREEN,
                      max_retries=0)
    env = DesktopEnv(action_space="pyautogui", screen_size=SCREEN, require_a11y_tree=False)
    try:
        env.reset({"id": "t", "instruction": "type"})
        env.controller.upload_file("/home/user/t.txt", b"")
        env.controller.launch(["gedit", "/home/user/t.txt"])
        deadline = time.monotonic() + 30
        while env.controller.get_vm_window_size("gedit") is None:
            assert time.monotonic() < deadline, "no gedit window after 30 s"
            time.sleep(0.2)
        time.sleep(1.0)  # gedit maps its window before its text view takes keyboard focus
        observation = env.observe()
        done, steps = False, 0
        while not done:
            steps += 1
            assert steps <= 3, "the scripted agent should be done after three steps"
            _, actions = agent.predict("type", observation)
            assert len(actions) == 1
            observation, _, done, info = env.step(actions[0], pause=0.3)
            assert "action_error" not in info and "invalid_action" not in info, info
        deadline = time.monotonic() + 15
        while env.controller.get_file("/home/user/t.txt") != text.encode() + b"\n":  # gedit ends a file with a newline
            assert time.monotonic() < deadline, env.controller.get_file("/home/user/t.txt")
            time.sleep(0.2)
    finally:
        env.close()
    sent = [json.loads(r["content"].split("\n")[0]) for r in openai_tool_results(openai_server.requests[-1].body)]
    assert [s["info"]["action"] for s in sent] == ["pyautogui.typewrite('it\\'s \"quoted\"')",
                                                   "pyautogui.hotkey('ctrl', 's')"]
