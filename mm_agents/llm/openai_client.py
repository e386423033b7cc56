"""OpenAI Chat Completions, and any OpenAI-compatible server (vLLM, Ollama, LM Studio) via base_url."""
from __future__ import annotations

import base64
import json
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import openai

from mm_agents.llm.base import (
    Completion,
    GenerationParams,
    ImagePart,
    LLMError,
    Message,
    Part,
    TextPart,
    ToolCall,
    ToolSpec,
    Usage,
    sampling_of,
)
from mm_agents.llm.retry import Failure, RetryPolicy, call_with_retries, mentions_context_overflow, parse_retry_after

# Reasoning models take max_completion_tokens and reject non-default temperature/top_p.
REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")

# Local servers ignore the key but the SDK insists on one.
PLACEHOLDER_KEY = "no-key-needed"


def is_reasoning_model(model: str) -> bool:
    return model.rsplit("/", 1)[-1].startswith(REASONING_PREFIXES)


def parse_tool_arguments(raw: str | None) -> dict[str, Any]:
    """The model writes arguments as a JSON string; anything but a JSON object is kept raw under
    "__invalid_json__" so the agent can tell the model what went wrong."""
    if not raw or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {"__invalid_json__": raw}
    return value if isinstance(value, dict) else {"__invalid_json__": raw}


def _data_url(image: ImagePart) -> str:
    return f"data:{image.mime_type};base64,{base64.b64encode(image.data).decode('ascii')}"


def _content_parts(parts: Sequence[Part]) -> list[dict[str, Any]]:
    converted: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            converted.append({"type": "text", "text": part.text})
        else:
            converted.append({"type": "image_url", "image_url": {"url": _data_url(part)}})
    return converted


def _text(parts: Sequence[Part]) -> str:
    return "\n".join(p.text for p in parts if isinstance(p, TextPart))


def _system_text(message: Message) -> str:
    if any(isinstance(p, ImagePart) for p in message.content):
        raise LLMError("system messages carry text only; put images in a user message")
    return _text(message.content)


def to_wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    # Tool messages carry text only, so images a tool returned follow as a user turn; that turn
    # waits until the run of tool messages ends, as every call must be answered right after the
    # assistant turn that made it.
    tool_images: list[dict[str, Any]] = []
    for message in messages:
        if message.role != "tool" and tool_images:
            wire.append({"role": "user", "content": tool_images})
            tool_images = []
        if message.role == "system":
            wire.append({"role": "system", "content": _system_text(message)})
        elif message.role == "user":
            wire.append({"role": "user", "content": _content_parts(message.content)})
        elif message.role == "assistant":
            # content may be null only beside tool calls
            entry: dict[str, Any] = {"role": "assistant",
                                     "content": _text(message.content) or (None if message.tool_calls else "")}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {"id": call.id, "type": "function",
                     "function": {"name": call.name, "arguments": json.dumps(call.arguments)}}
                    for call in message.tool_calls]
            wire.append(entry)
        elif message.role == "tool":
            result = message.tool_result
            if result is None:
                raise LLMError("a 'tool' message needs a tool_result")
            text = _text(result.content) or "(no output)"
            wire.append({"role": "tool", "tool_call_id": result.call_id,
                         "content": f"ERROR: {text}" if result.is_error else text})
            images = [p for p in result.content if isinstance(p, ImagePart)]
            if images:
                tool_images += [{"type": "text", "text": f"Image(s) returned by tool call {result.call_id}:"},
                                *_content_parts(images)]
        else:
            raise LLMError(f"unknown message role {message.role!r}")
    if tool_images:
        wire.append({"role": "user", "content": tool_images})
    return wire


def to_wire_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"type": "function",
             "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in tools]


def classify(exc: BaseException) -> Failure | None:
    if isinstance(exc, openai.APIStatusError):
        message = _error_message(exc)
        context = exc.status_code == 413 or (
            exc.status_code == 400 and (exc.code == "context_length_exceeded" or mentions_context_overflow(message)))
        return Failure(message=message, status=exc.status_code,
                       retry_after=parse_retry_after(exc.response.headers), context_too_long=context)
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return Failure(message=f"{type(exc).__name__}: {exc}")
    return None


def _error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    if isinstance(body, str) and body.strip():   # servers that answer errors in plain text
        return body.strip()[:1000]
    return str(exc.message)


class OpenAIClient:
    provider = "openai"

    def __init__(self, model: str, api_key: str | None = None, base_url: str | None = None,
                 max_retries: int = 5, timeout: float = 120, retry_policy: RetryPolicy | None = None):
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if not self.base_url:
                raise LLMError(f"openai model {model!r}: no API key; set OPENAI_API_KEY "
                               "(or pass base_url for a local OpenAI-compatible server)",
                               provider="openai", model=model, kind="auth")
            key = PLACEHOLDER_KEY
        self.retry_policy = retry_policy or RetryPolicy(max_retries=max_retries)
        self._sdk = openai.OpenAI(api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0)
        self.url = str(self._sdk.base_url).rstrip("/")

    def request_body(self, messages: list[Message], params: GenerationParams,
                     tools: list[ToolSpec] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": to_wire_messages(messages)}
        if is_reasoning_model(self.model):
            body["max_completion_tokens"] = params.max_tokens
        else:
            # max_tokens, not max_completion_tokens: older OpenAI-compatible servers know only this one.
            body["max_tokens"] = params.max_tokens
            if params.temperature is not None:
                body["temperature"] = params.temperature
            if params.top_p is not None:
                body["top_p"] = params.top_p
        if tools:
            body["tools"] = to_wire_tools(tools)
        return body

    def complete(self, messages: list[Message], params: GenerationParams,
                 tools: list[ToolSpec] | None = None) -> Completion:
        body = self.request_body(messages, params, tools)
        return replace(self._completion(self.create_chat(body)), sent=sampling_of(body))

    def create_chat(self, body: dict[str, Any], extra_body: dict[str, Any] | None = None) -> Any:
        """One Chat Completions call with a body built by the caller; `extra_body` holds top-level fields
        the SDK does not know (vLLM's top_k, repetition_penalty), sent as they are."""
        kwargs = dict(body, extra_body=extra_body) if extra_body else body
        return call_with_retries(lambda: self._sdk.chat.completions.create(**kwargs), classify,
                                 self.retry_policy, self.provider, self.model, self.url)

    def create_response(self, body: dict[str, Any]) -> Any:
        """One Responses API call (computer-use tools, previous_response_id, truncation, reasoning)."""
        return call_with_retries(lambda: self._sdk.responses.create(**body), classify,
                                 self.retry_policy, self.provider, self.model, self.url)

    def _completion(self, response: Any) -> Completion:
        if not response.choices:
            raise LLMError(f"openai model {self.model!r}: the response has no choices")
        choice = response.choices[0]
        message = choice.message
        calls = [ToolCall(id=call.id, name=call.function.name, arguments=parse_tool_arguments(call.function.arguments))
                 for call in (message.tool_calls or []) if getattr(call, "function", None) is not None]
        usage = chat_usage(response)
        # A refusal is the model's answer too; keep it rather than return nothing.
        text = message.content or getattr(message, "refusal", None) or ""
        return Completion(text=text, tool_calls=calls, usage=usage, stop_reason=choice.finish_reason,
                          model=response.model or self.model)


def chat_usage(response: Any) -> Usage:
    usage = response.usage
    return Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0) if usage else Usage()


def responses_usage(response: Any) -> Usage:
    usage = response.usage
    return Usage(usage.input_tokens or 0, usage.output_tokens or 0) if usage else Usage()
