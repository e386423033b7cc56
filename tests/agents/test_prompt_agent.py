"""The prompt agent end to end: real openai SDK against the local OpenAI wire server."""
from __future__ import annotations

import base64
import io
import logging

import pytest
from PIL import Image

from mm_agents.llm import ContextTooLong, LLMError
from mm_agents.loader import AgentLoadError, build_agent
from mm_agents.observations import MARKS_HEADER, TABLE_HEADER
from mm_agents.prompt_agent import PromptAgent
from tests.agents.test_observations import gedit_tree, png
from tests.agents.wire_servers import reply_context_too_long, reply_error, reply_text

SCREEN = (400, 300)
INSTRUCTION = "Save the document."
CLICK = "The Save button is at the top right.\n```python\npyautogui.click(340, 25)\n```"


def make_agent(server, **kwargs) -> PromptAgent:
    options = dict(model="gpt-4o", base_url=server.base_url, screen_size=SCREEN, client_password="s3cret",
                   observation_type="screenshot_a11y_tree", action_space="pyautogui", max_trajectory_length=3)
    options.update(kwargs)
    return PromptAgent(**options)


def observation(screenshot: bytes | None = None, tree: str | None = None) -> dict:
    return {"screenshot": screenshot or png(*SCREEN), "accessibility_tree": tree or gedit_tree(),
            "terminal": None, "instruction": INSTRUCTION}


def sent_messages(server, index: int = -1) -> list[dict]:
    return server.requests[index].body["messages"]


def text_of(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content if p["type"] == "text")


def images_of(message: dict) -> list[Image.Image]:
    content = message["content"]
    if isinstance(content, str):
        return []
    return [Image.open(io.BytesIO(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))).convert("RGB")
            for part in content if part["type"] == "image_url"]


# ------------------------------------------------------------------ what each observation type sends


def test_screenshot_only(openai_server):
    openai_server.script(reply_text(CLICK))
    agent = make_agent(openai_server, observation_type="screenshot")
    response, actions = agent.predict(INSTRUCTION, observation())
    assert response == CLICK
    assert actions == ["pyautogui.click(340, 25)"]
    system, user = sent_messages(openai_server)
    assert system["role"] == "system" and user["role"] == "user"
    assert [image.size for image in images_of(user)] == [SCREEN]
    assert TABLE_HEADER not in text_of(user)


def test_a11y_tree_only(openai_server):
    openai_server.script(reply_text(CLICK))
    agent = make_agent(openai_server, observation_type="a11y_tree")
    agent.predict(INSTRUCTION, observation())
    user = sent_messages(openai_server)[-1]
    assert images_of(user) == []
    assert TABLE_HEADER in text_of(user)
    assert 'push-button\tSave\t""\tsave-button\tSave the current file\t(300, 10)\t(80, 30)' in text_of(user)


def test_screenshot_and_a11y_tree(openai_server):
    openai_server.script(reply_text(CLICK))
    agent = make_agent(openai_server, observation_type="screenshot_a11y_tree")
    agent.predict(INSTRUCTION, observation())
    user = sent_messages(openai_server)[-1]
    assert len(images_of(user)) == 1
    assert TABLE_HEADER in text_of(user)


def test_set_of_marks_draws_tags_and_resolves_them(openai_server):
    openai_server.script(reply_text("Box 1 is Save.\n```python\npyautogui.click(tag_1)\n```"))
    agent = make_agent(openai_server, observation_type="som")
    response, actions = agent.predict(INSTRUCTION, observation())
    assert actions == ["pyautogui.click(340, 25)"]
    user = sent_messages(openai_server)[-1]
    assert MARKS_HEADER in text_of(user) and TABLE_HEADER not in text_of(user)
    assert '1\tpush-button\tSave\t""' in text_of(user)
    (image,) = images_of(user)
    assert image.getpixel((300, 25)) != (255, 255, 255)     # the box around Save
    assert image.getpixel((340, 32)) == (255, 255, 255)
    assert "tag_3" in text_of(sent_messages(openai_server)[0])  # the system prompt explains tags


def test_system_prompt_carries_the_rules_and_the_task(openai_server):
    openai_server.script(reply_text("DONE"))
    make_agent(openai_server).predict(INSTRUCTION, observation())
    system = text_of(sent_messages(openai_server)[0])
    for expected in ("pyautogui", "locateCenterOnScreen", "pyautogui.screenshot()", "'s3cret'", "WAIT", "DONE", "FAIL",
                     "400 pixels wide and 300 pixels high", "one step at a time", INSTRUCTION):
        assert expected in system


def test_generation_options_reach_the_request(openai_server):
    openai_server.script(reply_text("DONE"))
    agent = make_agent(openai_server, max_tokens=321, temperature=0.25, top_p=0.5)
    agent.predict(INSTRUCTION, observation())
    body = openai_server.requests[0].body
    assert (body["model"], body["max_tokens"], body["temperature"], body["top_p"]) == ("gpt-4o", 321, 0.25, 0.5)
    # What reproducing the score needs: the settings as sent and the model that answered.
    assert agent.model_calls == {"calls": 1, "sent": [{"max_tokens": 321, "temperature": 0.25, "top_p": 0.5}],
                                 "served": ["gpt-4o"]}
    agent.reset()
    assert agent.model_calls == {"calls": 0, "sent": [], "served": []}


# ------------------------------------------------------------------ history


@pytest.mark.parametrize("length, expected_past_steps", [(0, 0), (2, 2), (1000, 3)])
def test_history_length_is_honoured(openai_server, length, expected_past_steps):
    openai_server.script(*[reply_text(f"step {n}\n```python\npyautogui.press('tab')\n```") for n in range(4)])
    agent = make_agent(openai_server, max_trajectory_length=length)
    for _ in range(4):
        agent.predict(INSTRUCTION, observation())
    messages = sent_messages(openai_server)
    assert len(messages) == 1 + 2 * expected_past_steps + 1
    assert [m["role"] for m in messages[1:-1]] == ["user", "assistant"] * expected_past_steps
    answers = [text_of(m) for m in messages if m["role"] == "assistant"]
    assert [a.split("\n")[0] for a in answers] == [f"step {n}" for n in range(3 - expected_past_steps, 3)]
    assert all(len(images_of(m)) == 1 for m in messages if m["role"] == "user")


def test_reset_forgets_the_history_and_usage(openai_server):
    openai_server.script(reply_text("DONE"), reply_text("DONE"))
    agent = make_agent(openai_server)
    agent.predict(INSTRUCTION, observation())
    agent.reset(logging.getLogger("test"))
    assert agent.usage == {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    agent.predict(INSTRUCTION, observation())
    assert len(sent_messages(openai_server)) == 2


def test_an_empty_answer_is_kept_in_the_history_as_a_placeholder(openai_server):
    openai_server.script(reply_text(""), reply_text("DONE"))
    agent = make_agent(openai_server)
    assert agent.predict(INSTRUCTION, observation()) == ("", [])
    agent.predict(INSTRUCTION, observation())
    assert text_of(sent_messages(openai_server)[2]) == "(no answer)"


# ------------------------------------------------------------------ action spaces and parsing


def test_computer_13_answers_become_validated_action_dicts(openai_server):
    openai_server.script(reply_text('Click Save.\n```json\n'
                                    '{"action_type": "CLICK", "parameters": {"x": 340, "y": 25}}\n```\nDONE'))
    agent = make_agent(openai_server, action_space="computer_13")
    _, actions = agent.predict(INSTRUCTION, observation())
    assert actions == [{"action_type": "CLICK", "parameters": {"x": 340, "y": 25}}, "DONE"]
    assert "action_type" in text_of(sent_messages(openai_server)[0])


def test_computer_13_off_screen_click_is_no_action(openai_server, caplog):
    openai_server.script(reply_text('```json\n{"action_type": "CLICK", "parameters": {"x": 400, "y": 25}}\n```'))
    agent = make_agent(openai_server, action_space="computer_13")
    with caplog.at_level(logging.WARNING, logger="osworld.agent.prompt"):
        response, actions = agent.predict(INSTRUCTION, observation())
    assert actions == [] and "CLICK" in response
    assert "off the 400x300 screen" in caplog.text


def test_unparseable_answer_is_no_action_and_the_raw_text_is_the_response(openai_server):
    openai_server.script(reply_text("I am not sure."))
    assert make_agent(openai_server).predict(INSTRUCTION, observation()) == ("I am not sure.", [])


def test_screenshot_scale_shrinks_what_the_model_sees_and_scales_answers_back(openai_server):
    openai_server.script(reply_text("```python\npyautogui.click(170, 12)\n```"),
                         reply_text('```json\n{"action_type": "MOVE_TO", "parameters": {"x": 170, "y": 12}}\n```'))
    agent = make_agent(openai_server, screenshot_scale=0.5)
    assert agent.predict(INSTRUCTION, observation())[1] == ["pyautogui.click(340, 24)"]
    system, user = sent_messages(openai_server)
    assert [image.size for image in images_of(user)] == [(200, 150)]
    assert "200 pixels wide and 150 pixels high" in text_of(system)
    assert "(150, 5)\t(40, 15)" in text_of(user)          # the tree in the model's pixels too
    agent = make_agent(openai_server, screenshot_scale=0.5, action_space="computer_13")
    assert agent.predict(INSTRUCTION, observation())[1] == [
        {"action_type": "MOVE_TO", "parameters": {"x": 340, "y": 24}}]


def test_missing_accessibility_tree_is_said_not_hidden(openai_server):
    openai_server.script(reply_text("WAIT"))
    agent = make_agent(openai_server, observation_type="a11y_tree")
    obs = observation()
    obs["accessibility_tree"] = None
    assert agent.predict(INSTRUCTION, obs)[1] == ["WAIT"]
    assert "could not be read" in text_of(sent_messages(openai_server)[-1])


# ------------------------------------------------------------------ errors and usage


def test_context_too_long_drops_the_history_and_retries_once(openai_server):
    openai_server.script(reply_text("one"), reply_text("two"), reply_context_too_long(), reply_text(CLICK))
    agent = make_agent(openai_server)
    agent.predict(INSTRUCTION, observation())
    agent.predict(INSTRUCTION, observation())
    _, actions = agent.predict(INSTRUCTION, observation())
    assert actions == ["pyautogui.click(340, 25)"]
    assert [len(r.body["messages"]) for r in openai_server.requests] == [2, 4, 6, 2]


def test_context_too_long_twice_raises(openai_server):
    openai_server.script(reply_text("one"), reply_context_too_long(), reply_context_too_long())
    agent = make_agent(openai_server)
    agent.predict(INSTRUCTION, observation())
    with pytest.raises(ContextTooLong, match="even after dropping all 1 past step"):
        agent.predict(INSTRUCTION, observation())
    assert len(openai_server.requests) == 3


def test_context_too_long_without_history_raises_at_once(openai_server):
    openai_server.script(reply_context_too_long())
    with pytest.raises(ContextTooLong):
        make_agent(openai_server).predict(INSTRUCTION, observation())
    assert len(openai_server.requests) == 1


def test_model_errors_propagate(openai_server):
    openai_server.script(reply_error(401, "bad key"))
    with pytest.raises(LLMError, match="bad key"):
        make_agent(openai_server).predict(INSTRUCTION, observation())


def test_usage_is_counted_per_step_and_per_task_with_cost(openai_server):
    openai_server.script(reply_text("DONE", input_tokens=1000, output_tokens=100),
                         reply_text("DONE", input_tokens=2000, output_tokens=300))
    agent = make_agent(openai_server)
    agent.predict(INSTRUCTION, observation())
    agent.predict(INSTRUCTION, observation())
    assert agent.last_usage == {"input_tokens": 2000, "output_tokens": 300, "cost_usd": pytest.approx(0.008)}
    assert agent.usage == {"input_tokens": 3000, "output_tokens": 400, "cost_usd": pytest.approx(0.0115)}


def test_unpriced_model_has_unknown_cost(openai_server):
    openai_server.script(reply_text("DONE"))
    agent = make_agent(openai_server, model="my-local-model")
    agent.predict(INSTRUCTION, observation())
    assert agent.usage == {"input_tokens": 11, "output_tokens": 7, "cost_usd": None}


# ------------------------------------------------------------------ construction


def test_built_in_name_and_run_options(openai_server):
    openai_server.script(reply_text("DONE"))
    agent = build_agent("prompt", model="gpt-4o", action_space="pyautogui", observation_type="screenshot",
                        max_tokens=100, temperature=1.0, top_p=0.9, max_trajectory_length=3, client_password="pw",
                        screen_size=SCREEN, base_url=openai_server.base_url, screenshot_scale=1.0)
    assert isinstance(agent, PromptAgent)
    assert agent.predict(INSTRUCTION, observation()) == ("DONE", ["DONE"])


@pytest.mark.parametrize("kwargs, message", [
    ({"screenshot_scal": 0.5}, "no argument(s) screenshot_scal"),
    ({"screenshot_scale": 0}, "screenshot_scale must be"),
    ({"observation_type": "video"}, "observation_type must be"),
    ({"action_space": "mouse"}, "action_space must be"),
    ({"max_trajectory_length": -1}, "max_trajectory_length must be"),
])
def test_bad_options_fail_at_construction(openai_server, kwargs, message):
    with pytest.raises(AgentLoadError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_agent("prompt", model="gpt-4o", base_url=openai_server.base_url, **kwargs)
