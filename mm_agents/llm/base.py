"""One small interface to chat models: messages with text and images in, text and tool calls out.

Agents speak only this; `mm_agents.llm.create_client(model, ...)` picks the implementation
(OpenAI-compatible, Anthropic, Google) by the model name or an explicit provider.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass(frozen=True)
class TextPart:
    text: str


@dataclass(frozen=True)
class ImagePart:
    data: bytes                 # encoded image bytes
    mime_type: str = "image/png"


Part = TextPart | ImagePart


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]   # parsed JSON arguments; {} when the model sent none


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    name: str
    content: list[Part]
    is_error: bool = False


Role = Literal["system", "user", "assistant", "tool"]


@dataclass
class Message:
    role: Role
    content: list[Part] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)     # assistant turns that called tools
    tool_result: ToolResult | None = None                        # role "tool"

    @classmethod
    def text(cls, role: Role, text: str) -> Message:
        return cls(role=role, content=[TextPart(text)])


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments object


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


@dataclass
class Completion:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    model: str | None = None             # the model that answered, as the server named it
    sent: dict[str, Any] = field(default_factory=dict)  # the sampling settings the request carried (sampling_of)


# The fields of a request body that decide how the model samples its answer, as the APIs we speak
# name them; a client that drops one (a reasoning model takes no temperature) does not send it.
SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "presence_penalty",
                   "frequency_penalty", "seed", "max_tokens", "max_completion_tokens", "max_output_tokens", "thinking",
                   "reasoning")


def sampling_of(request: Mapping[str, Any]) -> dict[str, Any]:
    """The sampling settings a request body carries, as sent (for the reproducibility record)."""
    return {name: request[name] for name in SAMPLING_FIELDS if request.get(name) is not None}


@dataclass
class GenerationParams:
    max_tokens: int = 1500
    temperature: float | None = None
    top_p: float | None = None


# Failures that will fail the same way for every task until someone fixes something: the key, the
# model name, the URL, the server. The harness stops a run when they repeat (osworld_harness.execution.breaker).
FATAL_KINDS = ("auth", "not_found", "unreachable", "timeout")


def call_fatal_cause(kind: str | None, provider: str | None, model: str | None, url: str | None,
                     message: str) -> dict[str, str]:
    """The `fatal_cause` (osworld_harness.execution.breaker) of a model call that failed in a way every task will."""
    server = "server" if kind in ("unreachable", "timeout") else kind  # not answering is not answering
    return {"kind": str(kind), "signature": f"{server} {provider} {model} {url}", "message": message}


class LLMError(Exception):
    """A model call failed for good (after retries); the message names the provider, model, URL and cause.

    `kind` says what failed: "auth" (401/403, or no key), "not_found" (404), "unreachable" (no
    connection), "timeout" (no answer), "invalid_json" (an answer that is not the API's), "http"
    (another status), or None (not classified)."""

    def __init__(self, message: str, *, provider: str | None = None, model: str | None = None,
                 url: str | None = None, kind: str | None = None, status: int | None = None):
        super().__init__(message)
        self.provider, self.model, self.url, self.kind, self.status = provider, model, url, kind, status

    @property
    def fatal(self) -> bool:
        return self.kind in FATAL_KINDS

    @property
    def fatal_cause(self) -> dict[str, str] | None:
        """{kind, signature, message} when every task will fail alike (osworld_harness.execution.breaker)."""
        return call_fatal_cause(self.kind, self.provider, self.model, self.url, str(self)) if self.fatal else None

    def __reduce__(self):
        return _rebuild_llm_error, (type(self), str(self), self.provider, self.model, self.url, self.kind,
                                    self.status)


def _rebuild_llm_error(cls, message, provider, model, url, kind, status) -> LLMError:
    return cls(message, provider=provider, model=model, url=url, kind=kind, status=status)


class ContextTooLong(LLMError):
    """The request exceeded the model's context window; the caller may trim history and retry."""


class LLMClient(Protocol):
    provider: str
    model: str

    def complete(self, messages: list[Message], params: GenerationParams,
                 tools: list[ToolSpec] | None = None) -> Completion: ...
