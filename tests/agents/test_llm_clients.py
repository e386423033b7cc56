"""The three model clients, driven through the official SDKs against local wire servers."""
from __future__ import annotations

import base64
import json
import socket
from datetime import datetime, timezone

import pytest
from google.genai import errors

from mm_agents.llm import (
    ContextTooLong,
    GenerationParams,
    ImagePart,
    LLMError,
    Message,
    RetryPolicy,
    TextPart,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
    cost_usd,
    create_client,
    price_for,
    provider_for,
)
from mm_agents.llm.anthropic_client import AnthropicClient
from mm_agents.llm.calls import ModelCalls
from mm_agents.llm.google_client import GoogleClient
from mm_agents.llm.google_client import classify as classify_google
from mm_agents.llm.openai_client import OpenAIClient
from mm_agents.llm.pricing import PRICES_AS_OF, PriceTableError
from mm_agents.llm.retry import Failure, call_with_retries, parse_retry_after
from tests.agents.wire_servers import reply_context_too_long, reply_error, reply_text, reply_tool_calls

PNG = b"\x89PNG\r\n\x1a\n fake screenshot bytes"
PNG_B64 = base64.b64encode(PNG).decode()

CLICK = ToolSpec(name="click", description="Click at a screen position.",
                 parameters={"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                             "required": ["x", "y"]})

MODELS = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4-6", "google": "gemini-2.5-pro"}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "GEMINI_API_KEY",
                 "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "OSWORLD_PRICES"):
        monkeypatch.delenv(name, raising=False)


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps():
    return Sleeps()


def policy(sleeps: Sleeps, max_retries: int = 3) -> RetryPolicy:
    return RetryPolicy(max_retries=max_retries, base_delay=1.0, sleep=sleeps, jitter=lambda: 1.0)


@pytest.fixture
def servers(openai_server, anthropic_server, gemini_server):
    return {"openai": openai_server, "anthropic": anthropic_server, "google": gemini_server}


def client_for(provider, server, sleeps=None, max_retries=3):
    return create_client(MODELS[provider], base_url=server.base_url, api_key="test-key",
                         retry_policy=policy(sleeps if sleeps is not None else Sleeps(), max_retries))


def pick(mapping, *names):
    """The SDKs choose camelCase or snake_case per field; tests accept either."""
    for name in names:
        if name in mapping:
            return mapping[name]
    raise KeyError(f"none of {names} in {sorted(mapping)}")


def screenshot_turn() -> list[Message]:
    return [Message.text("system", "You operate a desktop."),
            Message(role="user", content=[TextPart("What is on screen?"), ImagePart(PNG)])]


def tool_history(call: ToolCall) -> list[Message]:
    """A conversation where the model called `call` and the tool answered with text and a screenshot."""
    return [*screenshot_turn(),
            Message(role="assistant", content=[TextPart("Clicking.")], tool_calls=[call]),
            Message(role="tool", tool_result=ToolResult(call_id=call.id, name=call.name,
                                                        content=[TextPart("clicked"), ImagePart(PNG)])),
            Message.text("user", "Go on.")]


# --- OpenAI -----------------------------------------------------------------------------------

def test_openai_text_and_image(openai_server):
    openai_server.script(reply_text("A terminal.", input_tokens=120, output_tokens=9))
    client = client_for("openai", openai_server)
    completion = client.complete(screenshot_turn(), GenerationParams(max_tokens=50, temperature=0.2, top_p=0.9))

    assert completion.text == "A terminal."
    assert completion.tool_calls == []
    assert completion.usage == Usage(120, 9)
    assert completion.stop_reason == "stop"
    request = openai_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test-key"
    body = request.body
    assert body["model"] == "gpt-4o"
    assert (body["max_tokens"], body["temperature"], body["top_p"]) == (50, 0.2, 0.9)
    assert body["messages"][0] == {"role": "system", "content": "You operate a desktop."}
    user = body["messages"][1]
    assert user["role"] == "user"
    assert user["content"][0] == {"type": "text", "text": "What is on screen?"}
    assert user["content"][1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}
    assert "tools" not in body


def test_openai_tool_call_and_result(openai_server):
    openai_server.script(reply_tool_calls(("click", {"x": 5, "y": 6})), reply_text("Done."))
    client = client_for("openai", openai_server)
    first = client.complete(screenshot_turn(), GenerationParams(), tools=[CLICK])

    assert first.stop_reason == "tool_calls"
    [call] = first.tool_calls
    assert (call.name, call.arguments) == ("click", {"x": 5, "y": 6})
    assert openai_server.requests[0].body["tools"] == [
        {"type": "function", "function": {"name": "click", "description": CLICK.description,
                                          "parameters": CLICK.parameters}}]

    second = client.complete(tool_history(call), GenerationParams(), tools=[CLICK])
    assert second.text == "Done."
    messages = openai_server.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user", "user"]
    assistant, tool, tool_images = messages[2], messages[3], messages[4]
    assert assistant["content"] == "Clicking."
    assert assistant["tool_calls"][0]["id"] == call.id
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"x": 5, "y": 6}
    assert tool == {"role": "tool", "tool_call_id": call.id, "content": "clicked"}
    # Tool messages are text-only on this API: the screenshot follows in a user turn.
    assert tool_images["content"][-1]["image_url"]["url"] == f"data:image/png;base64,{PNG_B64}"


def test_openai_parallel_tool_results_come_before_their_images(openai_server):
    openai_server.script(reply_text("ok"))
    calls = [ToolCall("call_a", "click", {"x": 1, "y": 1}), ToolCall("call_b", "click", {"x": 2, "y": 2})]
    history = [*screenshot_turn(), Message(role="assistant", tool_calls=calls),
               *[Message(role="tool", tool_result=ToolResult(c.id, c.name, [ImagePart(PNG)], is_error=True))
                 for c in calls]]
    client_for("openai", openai_server).complete(history, GenerationParams(), tools=[CLICK])
    messages = openai_server.requests[0].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert messages[2]["content"] is None
    assert messages[3] == {"role": "tool", "tool_call_id": "call_a", "content": "ERROR: (no output)"}
    assert sum(part["type"] == "image_url" for part in messages[5]["content"]) == 2


def test_openai_invalid_json_arguments_are_kept_raw(openai_server):
    openai_server.script(reply_tool_calls(("click", '{"x": 5,'), ("wait", "")))
    completion = client_for("openai", openai_server).complete(screenshot_turn(), GenerationParams(), tools=[CLICK])
    assert [c.arguments for c in completion.tool_calls] == [{"__invalid_json__": '{"x": 5,'}, {}]


def test_openai_reasoning_models_use_max_completion_tokens(openai_server):
    openai_server.script(reply_text("ok"))
    client = create_client("o3", base_url=openai_server.base_url, api_key="k")
    client.complete(screenshot_turn(), GenerationParams(max_tokens=300, temperature=0.7, top_p=0.9))
    body = openai_server.requests[0].body
    assert body["max_completion_tokens"] == 300
    assert not {"max_tokens", "temperature", "top_p"} & set(body)


def test_openai_compatible_server_needs_no_key(openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.script(reply_text("local"))
    client = create_client("qwen2.5-vl-7b", provider="vllm")
    assert isinstance(client, OpenAIClient)
    assert client.complete(screenshot_turn(), GenerationParams()).text == "local"
    assert openai_server.requests[0].headers["authorization"].startswith("Bearer ")


# --- Anthropic --------------------------------------------------------------------------------

def test_anthropic_text_and_image(anthropic_server):
    anthropic_server.script(reply_text("A browser.", input_tokens=1500, output_tokens=12))
    client = client_for("anthropic", anthropic_server)
    completion = client.complete(screenshot_turn(), GenerationParams(max_tokens=64, temperature=0.5, top_p=0.9))

    assert (completion.text, completion.usage, completion.stop_reason) == ("A browser.", Usage(1500, 12), "end_turn")
    request = anthropic_server.requests[0]
    assert request.path.startswith("/v1/messages")
    # SDK 2.x sends the key as a bearer token; older ones used x-api-key.
    assert "test-key" in request.headers.get("authorization", "") + request.headers.get("x-api-key", "")
    body = request.body
    assert body["system"] == "You operate a desktop."
    assert body["max_tokens"] == 64
    assert not {"temperature", "top_p"} & set(body)   # the current API version refuses sampling parameters
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "What is on screen?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}]}]


def test_anthropic_tool_use_and_result(anthropic_server):
    anthropic_server.script(reply_tool_calls(("click", {"x": 1, "y": 2}), text="Let me click."), reply_text("Done."))
    client = client_for("anthropic", anthropic_server)
    first = client.complete(screenshot_turn(), GenerationParams(), tools=[CLICK])

    assert first.text == "Let me click."
    assert first.stop_reason == "tool_use"
    [call] = first.tool_calls
    assert (call.name, call.arguments) == ("click", {"x": 1, "y": 2})
    assert anthropic_server.requests[0].body["tools"] == [
        {"name": "click", "description": CLICK.description, "input_schema": CLICK.parameters}]

    assert client.complete(tool_history(call), GenerationParams(), tools=[CLICK]).text == "Done."
    messages = anthropic_server.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [{"type": "text", "text": "Clicking."},
                                      {"type": "tool_use", "id": call.id, "name": "click", "input": {"x": 1, "y": 2}}]
    # The tool result and the next user text share one user turn, the result first.
    result, follow_up = messages[2]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == call.id
    assert result["content"][0] == {"type": "text", "text": "clicked"}
    assert result["content"][1]["source"]["data"] == PNG_B64
    assert follow_up == {"type": "text", "text": "Go on."}


# --- Google -----------------------------------------------------------------------------------

def test_gemini_text_and_image(gemini_server):
    gemini_server.script(reply_text("A spreadsheet.", input_tokens=300, output_tokens=4))
    client = client_for("google", gemini_server)
    completion = client.complete(screenshot_turn(), GenerationParams(max_tokens=80, temperature=0.1))

    assert (completion.text, completion.usage, completion.stop_reason) == ("A spreadsheet.", Usage(300, 4), "STOP")
    request = gemini_server.requests[0]
    assert request.path.endswith("/models/gemini-2.5-pro:generateContent")
    assert request.headers["x-goog-api-key"] == "test-key"
    body = request.body
    assert pick(body, "systemInstruction", "system_instruction")["parts"] == [{"text": "You operate a desktop."}]
    config = pick(body, "generationConfig", "generation_config")
    assert pick(config, "maxOutputTokens", "max_output_tokens") == 80
    assert config["temperature"] == 0.1
    [content] = body["contents"]
    assert content["role"] == "user"
    text, image = content["parts"]
    assert text == {"text": "What is on screen?"}
    blob = pick(image, "inlineData", "inline_data")
    assert pick(blob, "mimeType", "mime_type") == "image/png"
    assert blob["data"] == PNG_B64


def test_gemini_function_call_and_response(gemini_server):
    gemini_server.script(reply_tool_calls(("click", {"x": 3, "y": 4})), reply_text("Done."))
    client = client_for("google", gemini_server)
    first = client.complete(screenshot_turn(), GenerationParams(), tools=[CLICK])

    [call] = first.tool_calls
    assert (call.name, call.arguments) == ("click", {"x": 3, "y": 4})
    assert call.id  # the API may omit ids; the client makes one up
    [tool] = gemini_server.requests[0].body["tools"]
    [declaration] = pick(tool, "functionDeclarations", "function_declarations")
    assert declaration["name"] == "click"
    assert pick(declaration, "parametersJsonSchema", "parameters_json_schema") == CLICK.parameters

    assert client.complete(tool_history(call), GenerationParams(), tools=[CLICK]).text == "Done."
    contents = gemini_server.requests[1].body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    said, called = contents[1]["parts"]
    assert said == {"text": "Clicking."}
    function_call = pick(called, "functionCall", "function_call")
    assert function_call["name"] == "click" and function_call["args"] == {"x": 3, "y": 4}
    assert "id" not in function_call   # a made-up id never goes back to the API
    signature = pick(called, "thoughtSignature", "thought_signature")
    assert base64.b64decode(signature).startswith(b"signature-")
    response_part, image_part, follow_up = contents[2]["parts"]
    response = pick(response_part, "functionResponse", "function_response")
    assert response["name"] == "click" and response["response"] == {"output": "clicked"}
    assert pick(image_part, "inlineData", "inline_data")["data"] == PNG_B64
    assert follow_up == {"text": "Go on."}


def test_system_messages_refuse_images():
    messages = [Message(role="system", content=[TextPart("look"), ImagePart(PNG)]), Message.text("user", "hi")]
    for model in MODELS.values():
        with pytest.raises(LLMError, match="system messages carry text only"):
            create_client(model, api_key="k", base_url="http://127.0.0.1:1").complete(messages, GenerationParams())


def test_gemini_parallel_function_responses_come_before_their_images():
    calls = [ToolCall("a", "click", {"x": 1, "y": 1}), ToolCall("b", "click", {"x": 2, "y": 2})]
    history = [*screenshot_turn(), Message(role="assistant", tool_calls=calls),
               *[Message(role="tool", tool_result=ToolResult(c.id, c.name, [TextPart("ok"), ImagePart(PNG)]))
                 for c in calls]]
    contents = create_client("gemini-2.5-pro", api_key="k").to_contents(history)
    assert [c.role for c in contents] == ["user", "model", "user"]
    answers = contents[2].parts
    assert [p.function_response.id for p in answers[:2]] == ["a", "b"]
    assert [p.inline_data.data for p in answers[2:]] == [PNG, PNG]


def test_gemini_retry_info_in_error_body_is_honoured():
    error = errors.ClientError(429, {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED",
                                               "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                                            "retryDelay": "37s"}]}})
    assert classify_google(error) == Failure(message="quota", status=429, retry_after=37.0)


# --- Retries and errors, every provider -------------------------------------------------------

@pytest.mark.parametrize("provider", MODELS)
def test_rate_limit_is_retried_after_retry_after(provider, servers, sleeps):
    server = servers[provider]
    server.script(reply_error(429, "slow down", retry_after="7"), reply_text("ok"))
    completion = client_for(provider, server, sleeps).complete(screenshot_turn(), GenerationParams())
    assert completion.text == "ok"
    assert len(server.requests) == 2
    assert sleeps == [7.0]


@pytest.mark.parametrize("provider", MODELS)
def test_server_error_forever_gives_up_with_llm_error(provider, servers, sleeps):
    server = servers[provider]
    server.always(reply_error(500, "the backend is on fire"))
    with pytest.raises(LLMError) as raised:
        client_for(provider, server, sleeps, max_retries=3).complete(screenshot_turn(), GenerationParams())
    assert not isinstance(raised.value, ContextTooLong)
    assert len(server.requests) == 4            # the first attempt and 3 retries
    assert sleeps == [1.0, 2.0, 4.0]            # exponential (jitter pinned at its top)
    message = str(raised.value)
    for fragment in (provider, MODELS[provider], "500", "the backend is on fire", "4 attempts"):
        assert fragment in message


@pytest.mark.parametrize("provider", MODELS)
def test_context_too_long_is_not_retried(provider, servers, sleeps):
    server = servers[provider]
    server.script(reply_context_too_long())
    with pytest.raises(ContextTooLong) as raised:
        client_for(provider, server, sleeps).complete(screenshot_turn(), GenerationParams())
    assert len(server.requests) == 1 and sleeps == []
    assert MODELS[provider] in str(raised.value)


@pytest.mark.parametrize("provider", MODELS)
def test_client_errors_fail_at_once(provider, servers, sleeps):
    server = servers[provider]
    server.script(reply_error(401, "invalid api key"))
    with pytest.raises(LLMError, match="invalid api key"):
        client_for(provider, server, sleeps).complete(screenshot_turn(), GenerationParams())
    assert len(server.requests) == 1 and sleeps == []


@pytest.mark.parametrize("provider", MODELS)
def test_connection_errors_are_retried(provider, sleeps):
    with socket.socket() as probe:   # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = create_client(MODELS[provider], base_url=f"http://127.0.0.1:{port}", api_key="k",
                           retry_policy=policy(sleeps, max_retries=2))
    with pytest.raises(LLMError, match=f"at http://127.0.0.1:{port}.*gave up after 3 attempts; last error: "
                                       "cannot connect .*Connection refused"):
        client.complete(screenshot_turn(), GenerationParams())
    assert len(sleeps) == 2


def test_retry_after_forms():
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert parse_retry_after({"Retry-After": "12"}, now) == 12.0
    assert parse_retry_after({"retry-after": "Wed, 01 Jan 2025 12:00:30 GMT"}, now) == 30.0
    assert parse_retry_after({"retry-after": "Wed, 01 Jan 2025 11:00:00 GMT"}, now) == 0.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}, now) == 1.5
    assert parse_retry_after({"retry-after": "soon"}, now) is None
    assert parse_retry_after({}, now) is None


def test_retry_after_is_capped(sleeps):
    failures = iter([Failure("busy", status=503, retry_after=86400.0)])

    def call():
        failure = next(failures, None)
        if failure:
            raise RuntimeError(failure)
        return "ok"

    capped = RetryPolicy(max_retries=1, max_retry_after=30.0, sleep=sleeps)
    assert call_with_retries(call, lambda exc: exc.args[0], capped, "test", "m") == "ok"
    assert sleeps == [30.0]


def test_unrecognised_exceptions_propagate():
    def call():
        raise KeyError("bug")
    with pytest.raises(KeyError):
        call_with_retries(call, lambda exc: None, RetryPolicy(sleep=Sleeps()), "test", "m")


# --- create_client ----------------------------------------------------------------------------

@pytest.mark.parametrize("model, provider", [
    ("gpt-4o", "openai"), ("o3-mini", "openai"), ("o4-mini", "openai"), ("o1", "openai"),
    ("claude-3-5-sonnet-20241022", "anthropic"), ("claude-sonnet-4-20250514", "anthropic"),
    ("gemini-2.0-flash", "google"), ("models/gemini-2.5-flash", "google"),
])
def test_provider_from_model_name(model, provider):
    assert provider_for(model) == provider


def test_create_client_picks_the_family():
    assert isinstance(create_client("gpt-4.1", api_key="k"), OpenAIClient)
    assert isinstance(create_client("claude-3-5-haiku-latest", api_key="k"), AnthropicClient)
    assert isinstance(create_client("gemini-2.5-flash", api_key="k"), GoogleClient)
    # An explicit provider wins over the name; an unknown name with a base_url is OpenAI-compatible.
    assert isinstance(create_client("gpt-4o", provider="anthropic", api_key="k"), AnthropicClient)
    assert isinstance(create_client("llava:13b", base_url="http://127.0.0.1:1/v1"), OpenAIClient)
    with pytest.raises(LLMError, match="provider"):
        create_client("llava:13b")
    with pytest.raises(LLMError, match="unknown model provider"):
        create_client("gpt-4o", provider="acme", api_key="k")


def test_create_client_honours_base_url_for_every_provider(servers):
    for provider, server in servers.items():
        server.script(reply_text(f"hello from {provider}"))
        client = create_client(MODELS[provider], base_url=server.base_url, api_key="k")
        assert client.provider == provider
        assert client.complete(screenshot_turn(), GenerationParams()).text == f"hello from {provider}"


@pytest.mark.parametrize("model, variable", [
    ("gpt-4o", "OPENAI_API_KEY"), ("claude-sonnet-4", "ANTHROPIC_API_KEY"), ("gemini-2.5-pro", "GEMINI_API_KEY"),
])
def test_missing_key_names_the_variable(model, variable):
    with pytest.raises(LLMError, match=variable):
        create_client(model)


def test_keys_come_from_the_environment(monkeypatch, gemini_server):
    monkeypatch.setenv("GOOGLE_API_KEY", "from-env")
    gemini_server.script(reply_text("ok"))
    create_client("gemini-2.5-pro", base_url=gemini_server.base_url).complete(screenshot_turn(), GenerationParams())
    assert gemini_server.requests[0].headers["x-goog-api-key"] == "from-env"


# --- what a call was sent with and answered by ------------------------------------------------------

def test_each_client_reports_the_sampling_settings_its_request_carried(openai_server, anthropic_server,
                                                                         gemini_server):
    params = GenerationParams(max_tokens=64, temperature=0.3, top_p=0.8)
    for server in (openai_server, anthropic_server, gemini_server):
        server.script(reply_text("ok"), reply_text("ok"))
    openai = client_for("openai", openai_server).complete(screenshot_turn(), params)
    body = openai_server.requests[0].body
    assert openai.sent == {"max_tokens": 64, "temperature": 0.3, "top_p": 0.8} == {k: body[k] for k in openai.sent}
    assert openai.model == "gpt-4o"  # as the server named it
    reasoning = OpenAIClient("o3", api_key="k", base_url=openai_server.base_url).complete(screenshot_turn(), params)
    assert reasoning.sent == {"max_completion_tokens": 64}  # a reasoning model takes no temperature: none sent
    anthropic = client_for("anthropic", anthropic_server).complete(screenshot_turn(), params)
    assert anthropic.sent == {"max_tokens": 64} and "temperature" not in anthropic_server.requests[0].body
    gemini = client_for("google", gemini_server).complete(screenshot_turn(), params)
    config = pick(gemini_server.requests[0].body, "generationConfig", "generation_config")
    assert gemini.sent == {"max_output_tokens": 64, "temperature": 0.3, "top_p": 0.8}
    assert (pick(config, "maxOutputTokens", "max_output_tokens"), config["temperature"]) == (64, 0.3)


def test_model_calls_keep_each_distinct_setting_and_served_model_once():
    calls = ModelCalls()
    calls.add({"max_tokens": 64, "temperature": 0.3}, "gpt-4o-2024-08-06")
    calls.add({"max_tokens": 64, "temperature": 0.3}, "gpt-4o-2024-08-06")
    calls.add({"max_tokens": 128, "temperature": 0.0}, None)
    assert calls.to_json() == {"calls": 3, "sent": [{"max_tokens": 64, "temperature": 0.3},
                                                    {"max_tokens": 128, "temperature": 0.0}],
                               "served": ["gpt-4o-2024-08-06"]}


# --- pricing ----------------------------------------------------------------------------------

def test_cost_from_the_table():
    million = Usage(1_000_000, 1_000_000)
    assert cost_usd("gpt-4o-2024-08-06", million) == pytest.approx(12.50)
    assert cost_usd("gpt-4o-mini", million) == pytest.approx(0.75)          # longest prefix wins
    assert cost_usd("claude-sonnet-4-20250514", Usage(2000, 500)) == pytest.approx(0.0135)
    assert cost_usd("models/gemini-2.5-flash", Usage(1_000_000, 0)) == pytest.approx(0.30)
    assert cost_usd("llava:13b", million) is None
    assert cost_usd("claude-opus-4-1-20250805", million) == pytest.approx(90.0)
    assert cost_usd("claude-opus-9-0", million) is None                    # newer than the table: unknown
    assert cost_usd("gpt-5.2", million) is None                             # not "gpt-5" with a suffix
    assert price_for("my-finetune") is None


def test_price_overrides_from_file(tmp_path, monkeypatch):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"gpt-4o": [1, 2], "llava": [0, 0]}))
    monkeypatch.setenv("OSWORLD_PRICES", str(prices))
    assert cost_usd("gpt-4o", Usage(1_000_000, 1_000_000)) == pytest.approx(3.0)
    assert cost_usd("llava:13b", Usage(5000, 5000)) == 0.0                   # known and free, not unknown
    assert cost_usd("gpt-4o-mini", Usage(1_000_000, 0)) == pytest.approx(0.15)
    prices.write_text(json.dumps({"gpt-4o": "cheap"}))
    with pytest.raises(PriceTableError, match="gpt-4o"):
        cost_usd("gpt-4o", Usage())


def test_every_price_carries_its_date_and_source(tmp_path, monkeypatch):
    assert price_for("gpt-4o").record("gpt-4o") == {"model": "gpt-4o", "input_usd_per_1m": 2.5,
                                                    "output_usd_per_1m": 10.0, "as_of": PRICES_AS_OF,
                                                    "source": "the built-in price table"}
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"as_of": "2026-01-15", "gpt-4o": [1, 2]}))
    monkeypatch.setenv("OSWORLD_PRICES", str(prices))
    price = price_for("gpt-4o")
    assert (price.as_of, price.source) == ("2026-01-15", f"OSWORLD_PRICES={prices}")
    assert price_for("gpt-4o-mini").as_of == PRICES_AS_OF  # the built-in table's price, with its own date
    prices.write_text(json.dumps({"as_of": 20260115, "gpt-4o": [1, 2]}))
    with pytest.raises(PriceTableError, match='"as_of" must be the date of the prices as text'):
        price_for("gpt-4o")
