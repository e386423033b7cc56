"""Google Gemini generateContent, through the google-genai SDK (Gemini Developer API)."""
from __future__ import annotations

import importlib
import itertools
import os
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from google import genai
from google.genai import errors, types

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

KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
DEFAULT_URL = "https://generativelanguage.googleapis.com"

# Ids we make up for function calls the API sent without one; never sent back to the API.
SYNTHETIC_ID_PREFIX = "gemini-call-"


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Timeouts and connection failures of whichever httpx flavour the SDK runs on."""
    found = []
    for name in ("httpx2", "httpx"):
        try:
            found.append(importlib.import_module(name).TransportError)
        except (ImportError, AttributeError):
            continue
    return tuple(found)


TRANSPORT_ERRORS = _transport_errors()


def _parts(parts: Sequence[Part]) -> list[types.Part]:
    converted = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text:
                converted.append(types.Part(text=part.text))
        else:
            converted.append(types.Part(inline_data=types.Blob(mime_type=part.mime_type, data=part.data)))
    return converted


def _text(parts: Sequence[Part]) -> str:
    return "\n".join(p.text for p in parts if isinstance(p, TextPart))


def _retry_delay(details: Any) -> float | None:
    """Google APIs put the wait in the error body (google.rpc.RetryInfo retryDelay "37s")."""
    error = details.get("error", details) if isinstance(details, dict) else None
    for detail in (error or {}).get("details") or []:
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        match = re.fullmatch(r"\s*([0-9.]+)s\s*", delay or "")
        if match:
            return float(match.group(1))
    return None


def classify(exc: BaseException) -> Failure | None:
    if isinstance(exc, errors.APIError):
        message = exc.message or str(exc)
        headers = getattr(exc.response, "headers", None)
        retry_after = parse_retry_after(headers)
        if retry_after is None:
            retry_after = _retry_delay(exc.details)
        context = exc.code == 413 or (exc.code == 400 and mentions_context_overflow(message))
        return Failure(message=message, status=exc.code, retry_after=retry_after, context_too_long=context)
    if TRANSPORT_ERRORS and isinstance(exc, TRANSPORT_ERRORS):
        return Failure(message=f"{type(exc).__name__}: {exc}")
    return None


class GoogleClient:
    provider = "google"

    def __init__(self, model: str, api_key: str | None = None, base_url: str | None = None,
                 max_retries: int = 5, timeout: float = 120, retry_policy: RetryPolicy | None = None):
        self.model = model
        self.base_url = base_url
        self.url = (base_url or DEFAULT_URL).rstrip("/")
        key = api_key or next((os.environ[v] for v in KEY_VARIABLES if os.environ.get(v)), None)
        if not key:
            raise LLMError(f"google model {model!r}: no API key; set GEMINI_API_KEY (or GOOGLE_API_KEY)",
                           provider="google", model=model, kind="auth")
        self.retry_policy = retry_policy or RetryPolicy(max_retries=max_retries)
        http_options = types.HttpOptions(
            base_url=base_url, timeout=int(timeout * 1000),            # milliseconds
            retry_options=types.HttpRetryOptions(attempts=1))          # one attempt: retries are ours
        # vertexai=False: an API key means the Gemini Developer API, whatever GOOGLE_GENAI_USE_VERTEXAI says.
        self._sdk = genai.Client(vertexai=False, api_key=key, http_options=http_options)
        self._ids = itertools.count(1)
        # Gemini 3 wants each function call's thought_signature back in later turns; ToolCall has no
        # field for it, so the client remembers it by call id.
        self._signatures: dict[str, bytes] = {}

    def to_contents(self, messages: list[Message]) -> list[types.Content]:
        contents: list[types.Content] = []

        def add(role: str, parts: list[types.Part]) -> None:
            # Turns alternate; parallel function responses belong in one user turn.
            if not parts:
                return
            last = contents[-1] if contents else None
            if last is not None and last.role == role and last.parts is not None:  # (add() always sets parts)
                last.parts.extend(parts)
            else:
                contents.append(types.Content(role=role, parts=parts))

        # Images a tool returned travel as inline_data parts after the whole run of function
        # responses, which the API wants side by side, one for each call.
        tool_images: list[types.Part] = []
        for message in messages:
            if message.role != "tool" and tool_images:
                add("user", tool_images)
                tool_images = []
            if message.role == "user":
                role, parts = "user", _parts(message.content)
            elif message.role == "assistant":
                role, parts = "model", _parts(message.content)
                parts += [self._function_call_part(call) for call in message.tool_calls]
            elif message.role == "tool":
                result = message.tool_result
                if result is None:
                    raise LLMError("a 'tool' message needs a tool_result")
                text = _text(result.content)
                response = {"error": text} if result.is_error else {"output": text}
                call_id = None if result.call_id.startswith(SYNTHETIC_ID_PREFIX) else result.call_id
                role, parts = "user", [types.Part(function_response=types.FunctionResponse(
                    id=call_id, name=result.name, response=response))]
                tool_images += _parts([p for p in result.content if isinstance(p, ImagePart)])
            elif message.role == "system":
                continue  # goes to system_instruction
            else:
                raise LLMError(f"unknown message role {message.role!r}")
            add(role, parts)
        add("user", tool_images)
        return contents

    def _function_call_part(self, call: ToolCall) -> types.Part:
        call_id = None if call.id.startswith(SYNTHETIC_ID_PREFIX) else call.id
        return types.Part(function_call=types.FunctionCall(id=call_id, name=call.name, args=call.arguments),
                          thought_signature=self._signatures.get(call.id))

    def config(self, messages: list[Message], params: GenerationParams,
               tools: list[ToolSpec] | None = None) -> types.GenerateContentConfig:
        system_messages = [m for m in messages if m.role == "system"]
        if any(isinstance(p, ImagePart) for m in system_messages for p in m.content):
            raise LLMError("system messages carry text only; put images in a user message")
        system = "\n\n".join(_text(m.content) for m in system_messages)
        config = types.GenerateContentConfig(max_output_tokens=params.max_tokens, temperature=params.temperature,
                                             top_p=params.top_p, system_instruction=system or None)
        if tools:
            # parameters_json_schema takes JSON Schema as is (`parameters` wants the OpenAPI subset).
            config.tools = [types.Tool(function_declarations=[
                types.FunctionDeclaration(name=t.name, description=t.description, parameters_json_schema=t.parameters)
                for t in tools])]
        return config

    def complete(self, messages: list[Message], params: GenerationParams,
                 tools: list[ToolSpec] | None = None) -> Completion:
        contents = self.to_contents(messages)
        config = self.config(messages, params, tools)
        return replace(self._completion(self.generate(contents, config)), sent=config_sampling(config))

    def generate(self, contents: list[types.Content], config: types.GenerateContentConfig) -> Any:
        """One generateContent call with contents and config built by the caller (e.g. the ComputerUse tool)."""
        return call_with_retries(
            lambda: self._sdk.models.generate_content(model=self.model, contents=contents, config=config),
            classify, self.retry_policy, self.provider, self.model, self.url)

    def _completion(self, response: types.GenerateContentResponse) -> Completion:
        if not response.candidates:
            feedback = response.prompt_feedback
            reason = feedback.block_reason if feedback and feedback.block_reason else "no reason given"
            raise LLMError(f"google model {self.model!r}: no candidates in the response (prompt blocked: {reason})")
        candidate = response.candidates[0]
        texts: list[str] = []
        calls: list[ToolCall] = []
        for part in (candidate.content.parts if candidate.content and candidate.content.parts else []):
            if part.function_call is not None:
                fc = part.function_call
                call_id = fc.id or f"{SYNTHETIC_ID_PREFIX}{next(self._ids)}"
                if part.thought_signature:
                    self._signatures[call_id] = part.thought_signature
                args = fc.args if fc.args is not None else {}
                arguments = args if isinstance(args, dict) else {"__invalid_json__": str(args)}
                calls.append(ToolCall(id=call_id, name=fc.name or "", arguments=arguments))
            elif part.text and not part.thought:  # thought summaries are not the answer
                texts.append(part.text)
        usage = usage_of(response)
        finish = candidate.finish_reason
        stop_reason = getattr(finish, "value", finish) if finish is not None else None
        return Completion(text="".join(texts), tool_calls=calls, usage=usage, stop_reason=stop_reason,
                          model=response.model_version or self.model)


def usage_of(response: types.GenerateContentResponse) -> Usage:
    meta = response.usage_metadata
    if not meta:
        return Usage()
    # Thinking tokens are billed as output.
    return Usage(meta.prompt_token_count or 0, (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0))


def config_sampling(config: types.GenerateContentConfig) -> dict[str, Any]:
    """The sampling settings a generateContent config carries, named as the API names them."""
    return sampling_of(config.model_dump(exclude_none=True))
