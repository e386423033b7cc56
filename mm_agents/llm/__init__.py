"""Model clients behind one interface (see base.py); `create_client` picks one by model name or provider."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from desktop_env import extensions
from mm_agents.llm.base import (
    Completion,
    ContextTooLong,
    GenerationParams,
    ImagePart,
    LLMClient,
    LLMError,
    Message,
    Part,
    TextPart,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from mm_agents.llm.pricing import Price, cost_usd, price_for
from mm_agents.llm.retry import RetryPolicy

__all__ = [
    "Completion", "ContextTooLong", "GenerationParams", "ImagePart", "LLMClient", "LLMError", "Message", "Part",
    "TextPart", "ToolCall", "ToolResult", "ToolSpec", "Usage", "Price", "cost_usd", "price_for", "RetryPolicy",
    "BUILTIN_CLIENTS", "model_client", "provider_for", "create_client", "sdk_client",
]

# Model clients are a kind of the extension registry: the built-in ones under the names users reach
# for, and a plugin's under its own (`@model_client("name")`, or an `osworld.model_clients` entry point).
_OPENAI = "mm_agents.llm.openai_client:OpenAIClient"
_ANTHROPIC = "mm_agents.llm.anthropic_client:AnthropicClient"
_GOOGLE = "mm_agents.llm.google_client:GoogleClient"
BUILTIN_CLIENTS = {
    "openai": _OPENAI, "openai-compatible": _OPENAI, "vllm": _OPENAI, "ollama": _OPENAI,
    "anthropic": _ANTHROPIC, "claude": _ANTHROPIC,
    "google": _GOOGLE, "gemini": _GOOGLE, "genai": _GOOGLE,
}
for _name, _target in BUILTIN_CLIENTS.items():  # imported when first asked for: each pulls in its SDK
    extensions.register("model_client", _name, extensions.Lazy(_target))
_FAMILIES = (
    (("gpt-", "o1", "o3", "o4", "chatgpt-"), "openai"),
    (("claude-",), "anthropic"),
    (("gemini-",), "google"),
)
# Distributions to install for a missing SDK module, where they are named otherwise.
_SDK_PACKAGES = {"google": "google-genai", "google.genai": "google-genai"}

C = TypeVar("C", bound=type)
S = TypeVar("S")


def model_client(name: str) -> Callable[[C], C]:
    """Registers a model client class as `name`, which `provider=` (`--agent-arg model_provider=name`) picks.

    The class takes `(model, *, api_key, base_url, max_retries, timeout, retry_policy)` and implements
    LLMClient (base.py): `provider`, `model` and `complete(messages, params, tools)`."""
    return extensions.decorator("model_client", name)


def provider_for(model: str, provider: str | None = None, base_url: str | None = None) -> str:
    """The registered model client's name: `provider` if given; else the family of the model name;
    else, with a base_url, an OpenAI-compatible server (what vLLM, Ollama and most local servers speak)."""
    if provider:
        clients = extensions.KindView("model_client")
        for name in dict.fromkeys((provider.strip(), provider.strip().lower())):
            if name in clients:
                return name
        raise LLMError(f"unknown model provider {provider!r}; use one of {', '.join(extensions.names('model_client'))}")
    name = model.rsplit("/", 1)[-1].lower()
    for prefixes, family in _FAMILIES:
        if name.startswith(prefixes):
            return family
    if base_url:
        return "openai"
    raise LLMError(f"cannot tell the provider of model {model!r} from its name; pass a provider "
                   f"({', '.join(extensions.names('model_client'))}) or a base_url of an OpenAI-compatible server")


def create_client(model: str, provider: str | None = None, base_url: str | None = None, api_key: str | None = None,
                  max_retries: int = 5, timeout: float = 120, retry_policy: RetryPolicy | None = None) -> LLMClient:
    """A client for `model`. `retry_policy`, if given, replaces the default policy built from
    `max_retries` (tests pass one with an instant `sleep`)."""
    name = provider_for(model, provider, base_url)
    try:  # SDKs are imported on demand: a run with one provider does not need the others installed
        client_class = extensions.get("model_client", name)
    except extensions.ExtensionError as exc:
        missing = exc.__cause__.name if isinstance(exc.__cause__, ImportError) else None
        hint = f"; pip install {_SDK_PACKAGES.get(missing, missing)}" if missing else ""
        raise LLMError(f"model client {name!r} for model {model!r} cannot be loaded{hint} ({exc})",
                       provider=name, model=model) from exc
    return client_class(model, api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout,
                        retry_policy=retry_policy)


def sdk_client(client_class: type[S], model: str, provider: str, **settings: Any) -> S:
    """create_client for a built-in provider, typed as its class: for agents that speak the vendor's own
    API through it (its create, create_chat, create_response or generate), beyond LLMClient's complete."""
    client = create_client(model, provider=provider, **settings)
    if not isinstance(client, client_class):  # a built-in name is never a plugin's: not while it is registered
        raise LLMError(f"model client {provider!r} is {type(client).__name__}, not {client_class.__name__}",
                       provider=provider, model=model)
    return client
