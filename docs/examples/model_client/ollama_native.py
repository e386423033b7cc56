"""A model client for an API osworld does not ship: Ollama's own chat API (POST /api/chat).

Ollama also serves the OpenAI API (the built-in "ollama" client speaks that one); its own API is
what older servers and some proxies offer. Registered as "ollama-native", it serves any agent that
takes `model_provider`:

    osworld run --plugin docs/examples/model_client/ollama_native.py --model llava:13b \
        --agent-arg model_provider=ollama-native --agent-arg base_url=http://gpu-box:11434
"""
from __future__ import annotations

import base64
from typing import Any

import requests

from mm_agents.llm import (
    Completion,
    GenerationParams,
    ImagePart,
    LLMError,
    Message,
    RetryPolicy,
    TextPart,
    ToolSpec,
    Usage,
    model_client,
)
from mm_agents.llm.retry import Failure, call_with_retries, mentions_context_overflow, parse_retry_after

DEFAULT_URL = "http://127.0.0.1:11434"


@model_client("ollama-native")
class OllamaNativeClient:
    provider = "ollama-native"

    def __init__(self, model: str, *, api_key: str | None = None, base_url: str | None = None,
                 max_retries: int = 5, timeout: float = 120, retry_policy: RetryPolicy | None = None):
        self.model = model
        self.url = (base_url or DEFAULT_URL).rstrip("/")
        self.timeout = timeout
        self.retry_policy = retry_policy or RetryPolicy(max_retries=max_retries)
        self.session = requests.Session()
        if api_key:  # Ollama itself takes none; a proxy in front of it may
            self.session.headers["Authorization"] = f"Bearer {api_key}"

    def complete(self, messages: list[Message], params: GenerationParams,
                 tools: list[ToolSpec] | None = None) -> Completion:
        if tools:
            raise LLMError(f"{self.provider} model {self.model!r}: this client does not send tools; use an agent "
                           "that acts in text (--agent prompt)", provider=self.provider, model=self.model)
        body = {"model": self.model, "messages": [wire_message(m) for m in messages], "stream": False,
                "options": sampling(params)}
        answer = call_with_retries(lambda: self._post(body), classify, self.retry_policy, self.provider,
                                   self.model, self.url)
        return Completion(text=answer["message"].get("content") or "",
                          usage=Usage(answer.get("prompt_eval_count", 0), answer.get("eval_count", 0)),
                          stop_reason=answer.get("done_reason"), model=answer.get("model", self.model))

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        response = self.session.post(f"{self.url}/api/chat", json=body, timeout=self.timeout)
        response.raise_for_status()
        return response.json()  # a body that is not JSON raises JSONDecodeError: call_with_retries names it


def wire_message(message: Message) -> dict[str, Any]:
    if message.role == "tool" or message.tool_calls:
        raise LLMError(f"the {message.role} message carries tool calls or results, which this client does not send")
    text = "\n".join(part.text for part in message.content if isinstance(part, TextPart))
    images = [base64.b64encode(part.data).decode() for part in message.content if isinstance(part, ImagePart)]
    return {"role": message.role, "content": text, **({"images": images} if images else {})}


def sampling(params: GenerationParams) -> dict[str, Any]:
    options: dict[str, Any] = {"num_predict": params.max_tokens}
    if params.temperature is not None:
        options["temperature"] = params.temperature
    if params.top_p is not None:
        options["top_p"] = params.top_p
    return options


def classify(exc: BaseException) -> Failure | None:
    """A failed call as the retry loop understands it; None for anything that is not the server's doing."""
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        try:
            error = exc.response.json()
        except ValueError:
            error = None
        message = str(error.get("error") if isinstance(error, dict) else exc.response.text[:200] or exc.response.reason)
        return Failure(message, exc.response.status_code, parse_retry_after(exc.response.headers),
                       mentions_context_overflow(message))
    if isinstance(exc, (requests.ConnectionError, requests.Timeout)):
        return Failure(str(exc))
    return None
