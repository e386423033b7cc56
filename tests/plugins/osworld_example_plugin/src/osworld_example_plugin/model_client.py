"""The plugin's model client: an OpenAI-compatible service with an address and a key variable of its own."""
from __future__ import annotations

import os
from typing import Any

from mm_agents.llm.openai_client import OpenAIClient

DEFAULT_URL = "https://llm.example.com/v1"


class ExampleServiceClient(OpenAIClient):
    provider = "example-service"

    def __init__(self, model: str, *, api_key: str | None = None, base_url: str | None = None, **options: Any):
        super().__init__(model, api_key=api_key or os.environ.get("EXAMPLE_SERVICE_KEY"),
                         base_url=base_url or os.environ.get("EXAMPLE_SERVICE_URL") or DEFAULT_URL, **options)
