"""Fixtures for agent and model-client tests: local OpenAI / Anthropic / Gemini wire servers."""
from tests.agents.wire_servers import (anthropic_server, gemini_server, openai_server,  # noqa: F401
                                      responses_server, vllm_server)
