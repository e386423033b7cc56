"""The model client of docs/EXTENDING.md (Ollama's own chat API), loaded as `--plugin` loads it and picked
through the registry by `provider=`: by create_client, by the prompt agent, and listed by `osworld plugins`."""
from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

from desktop_env import extensions
from desktop_env.extensions import load_plugin
from mm_agents.llm import GenerationParams, ImagePart, LLMError, Message, RetryPolicy, TextPart, create_client
from mm_agents.loader import build_agent
from osworld_cli.main import cli
from tests.agents.wire_servers import reply_context_too_long, reply_error, reply_text

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "model_client" / "ollama_native.py"


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (30, 60, 90)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module", autouse=True)
def plugin():
    load_plugin(str(EXAMPLE))  # once: a name registers once


def test_the_registry_knows_it_by_name_and_place():
    entry = next(e for e in extensions.entries("model_client") if e.name == "ollama-native")
    assert entry.source == f"--plugin {EXAMPLE}"
    assert extensions.get("model_client", "ollama-native").__name__ == "OllamaNativeClient"


def test_create_client_picks_it_by_provider_and_it_speaks_ollamas_api(ollama_server):
    ollama_server.script(reply_text("A blue screen.", input_tokens=120, output_tokens=4))
    client = create_client("llava:13b", provider="ollama-native", base_url=ollama_server.base_url)
    assert type(client).__name__ == "OllamaNativeClient"
    image = png()
    completion = client.complete([Message.text("system", "You look at screens."),
                                  Message(role="user", content=[TextPart("What is shown?"), ImagePart(image)])],
                                 GenerationParams(max_tokens=50, temperature=0.0))
    assert completion.text == "A blue screen."
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (120, 4)
    sent = ollama_server.requests[0].body
    assert sent["model"] == "llava:13b" and sent["stream"] is False
    assert sent["options"] == {"num_predict": 50, "temperature": 0.0}
    assert sent["messages"][1] == {"role": "user", "content": "What is shown?",
                                   "images": [base64.b64encode(image).decode()]}


def test_its_failures_are_the_harness_own_llm_errors(ollama_server):
    ollama_server.script(reply_error(404, "model 'llava:99b' not found"), reply_context_too_long())
    client = create_client("llava:99b", provider="ollama-native", base_url=ollama_server.base_url,
                           retry_policy=RetryPolicy(sleep=lambda seconds: None))
    with pytest.raises(LLMError) as missing:
        client.complete([Message.text("user", "hi")], GenerationParams())
    assert (missing.value.kind, missing.value.fatal) == ("not_found", True)  # the breaker stops a run on it
    assert "model 'llava:99b' not found" in str(missing.value) and ollama_server.base_url in str(missing.value)
    with pytest.raises(LLMError, match="context too long"):
        client.complete([Message.text("user", "hi")], GenerationParams())


def test_the_prompt_agent_acts_through_it(ollama_server):
    ollama_server.script(reply_text("```python\npyautogui.click(10, 20)\n```"))
    agent = build_agent("prompt", model="llava:13b", observation_type="screenshot", screen_size=(64, 48),
                        model_provider="ollama-native", base_url=ollama_server.base_url)
    response, actions = agent.predict("Click the corner.", {"screenshot": png(), "accessibility_tree": None,
                                                             "terminal": None, "instruction": "Click the corner."})
    assert actions == ["pyautogui.click(10, 20)"]
    assert ollama_server.requests[0].body["messages"][-1]["images"]


def test_an_unknown_provider_lists_the_registered_clients():
    with pytest.raises(LLMError, match="unknown model provider 'olama-native'; use one of .*ollama-native"):
        create_client("llava:13b", provider="olama-native")


def test_osworld_plugins_lists_it_with_the_built_in_clients():
    listed = CliRunner().invoke(cli, ["plugins", "--kind", "model_client", "--plugin", str(EXAMPLE)],
                                terminal_width=250)
    assert listed.exit_code == 0, listed.output
    assert "osworld.model_clients" in listed.output
    for name in ("ollama-native", "openai", "anthropic", "google", "vllm"):
        assert name in listed.output, listed.output
