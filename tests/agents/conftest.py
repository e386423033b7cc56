"""Fixtures for agent and model-client tests: local OpenAI / Anthropic / Gemini (and Ollama) wire servers."""
from tests.agents.wire_servers import (  # noqa: F401
                                      anthropic_server,
                                      gemini_server,
                                      ollama_server,
                                      openai_server,
                                      responses_server,
                                      vllm_server,
)
