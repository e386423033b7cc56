"""Anthropic Messages API."""
from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import anthropic

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


def _blocks(parts: Sequence[Part]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text:  # the API rejects empty text blocks
                blocks.append({"type": "text", "text": part.text})
        else:
            blocks.append({"type": "image", "source": {
                "type": "base64", "media_type": part.mime_type,
                "data": base64.b64encode(part.data).decode("ascii")}})
    return blocks


def _text(parts: Sequence[Part]) -> str:
    return "\n".join(p.text for p in parts if isinstance(p, TextPart))


def split_system(messages: list[Message]) -> tuple[str, list[Message]]:
    """The Messages API takes the system prompt as a top-level parameter, not as a turn."""
    system_messages = [m for m in messages if m.role == "system"]
    if any(isinstance(p, ImagePart) for m in system_messages for p in m.content):
        raise LLMError("system messages carry text only; put images in a user message")
    system = "\n\n".join(_text(m.content) for m in system_messages)
    return system, [m for m in messages if m.role != "system"]


def to_wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Roles must alternate and every tool_result must sit in the user turn right after the
    tool_use turn, so consecutive same-role turns (tool results, then the next user text) merge."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "user":
            role, blocks = "user", _blocks(message.content)
        elif message.role == "assistant":
            role, blocks = "assistant", _blocks(message.content)
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                       for c in message.tool_calls]
        elif message.role == "tool":
            result = message.tool_result
            if result is None:
                raise LLMError("a 'tool' message needs a tool_result")
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.call_id,
                                     "content": _blocks(result.content)}
            if result.is_error:
                block["is_error"] = True
            role, blocks = "user", [block]
        else:
            raise LLMError(f"unknown message role {message.role!r} (system prompts go separately)")
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    return wire


def to_wire_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


def classify(exc: BaseException) -> Failure | None:
    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body
        message = body.get("message") if isinstance(body, dict) else None
        if not isinstance(message, str):
            message = getattr(exc, "api_message", None) or str(exc.message)
        # 413: the request itself is too large (many screenshots); trimming history helps just the same.
        context = exc.status_code == 413 or (exc.status_code == 400 and mentions_context_overflow(message))
        return Failure(message=message, status=exc.status_code,
                       retry_after=parse_retry_after(exc.response.headers), context_too_long=context)
    if isinstance(exc, anthropic.APIConnectionError):  # includes APITimeoutError
        return Failure(message=f"{type(exc).__name__}: {exc}")
    return None


class AnthropicClient:
    provider = "anthropic"

    def __init__(self, model: str, api_key: str | None = None, base_url: str | None = None,
                 max_retries: int = 5, timeout: float = 120, retry_policy: RetryPolicy | None = None):
        self.model = model
        self.base_url = base_url
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise LLMError(f"anthropic model {model!r}: no API key; set ANTHROPIC_API_KEY",
                           provider="anthropic", model=model, kind="auth")
        self.retry_policy = retry_policy or RetryPolicy(max_retries=max_retries)
        self._sdk = anthropic.Anthropic(api_key=key, base_url=base_url, timeout=timeout, max_retries=0)
        self.url = str(self._sdk.base_url).rstrip("/")

    def request_body(self, messages: list[Message], params: GenerationParams,
                     tools: list[ToolSpec] | None = None) -> dict[str, Any]:
        system, turns = split_system(messages)
        body: dict[str, Any] = {"model": self.model, "max_tokens": params.max_tokens,
                                "messages": to_wire_messages(turns)}
        if system:
            body["system"] = system
        # No temperature / top_p: the API version the SDK speaks (anthropic-version 2026-10-21,
        # SDK 2.x) answers 400 to any sampling parameter, and the SDK no longer offers them.
        if tools:
            body["tools"] = to_wire_tools(tools)
        return body

    def complete(self, messages: list[Message], params: GenerationParams,
                 tools: list[ToolSpec] | None = None) -> Completion:
        body = self.request_body(messages, params, tools)
        return replace(self._completion(self.create(body)), sent=sampling_of(body))

    def create(self, body: dict[str, Any], betas: list[str] | None = None) -> Any:
        """One Messages call with a body built by the caller (vendor tool types, cache_control, thinking),
        under our retry policy; with `betas`, the beta endpoint sending those anthropic-beta headers."""
        if betas:
            return call_with_retries(lambda: self._sdk.beta.messages.create(**body, betas=betas), classify,
                                     self.retry_policy, self.provider, self.model, self.url)
        return call_with_retries(lambda: self._sdk.messages.create(**body), classify,
                                 self.retry_policy, self.provider, self.model, self.url)

    def _completion(self, response: Any) -> Completion:
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in response.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                arguments = block.input if isinstance(block.input, dict) else {"__invalid_json__": str(block.input)}
                calls.append(ToolCall(id=block.id, name=block.name, arguments=arguments))
        return Completion(text="\n".join(texts), tool_calls=calls, usage=usage_of(response),
                          stop_reason=response.stop_reason, model=response.model or self.model)


def usage_of(response: Any) -> Usage:
    usage = response.usage
    if usage is None:
        return Usage()
    # Cached prompt tokens are still prompt tokens (billed at other rates, counted here as input).
    input_tokens = (usage.input_tokens or 0) + (getattr(usage, "cache_creation_input_tokens", None) or 0) \
        + (getattr(usage, "cache_read_input_tokens", None) or 0)
    return Usage(input_tokens, usage.output_tokens or 0)
