"""Every way a model endpoint fails says which provider, which model and which URL, and what to check;
the kinds that will fail the same way on every task are marked fatal (a run stops on them)."""
from __future__ import annotations

import pickle
import socket
import threading

import pytest

from mm_agents.llm import GenerationParams, LLMError, Message, RetryPolicy, create_client
from mm_agents.llm.retry import Failure, call_with_retries, cancel, in_flight
from tests.agents.wire_servers import reply_after, reply_error, reply_raw, reply_text

MODELS = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4-6", "google": "gemini-2.5-pro"}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def servers(openai_server, anthropic_server, gemini_server):
    return {"openai": openai_server, "anthropic": anthropic_server, "google": gemini_server}


def no_sleep(seconds: float) -> None:
    pass


def ask(provider: str, base_url: str, timeout: float = 120, max_retries: int = 2) -> LLMError:
    client = create_client(MODELS[provider], base_url=base_url, api_key="test-key", timeout=timeout,
                           retry_policy=RetryPolicy(max_retries=max_retries, sleep=no_sleep))
    with pytest.raises(LLMError) as info:
        client.complete([Message.text("user", "hi")], GenerationParams())
    error = info.value
    assert f"{provider} model {MODELS[provider]!r} at {base_url}" in str(error)
    assert (error.provider, error.model, error.url) == (provider, MODELS[provider], base_url)
    return error


@pytest.mark.parametrize("provider", MODELS)
@pytest.mark.parametrize("status, kind, hint", [(401, "auth", "check the API key"), (403, "auth", "check the API key"),
                                                (404, "not_found", "check the model name and the URL")])
def test_refusals_name_what_to_check_and_are_fatal(servers, provider, status, kind, hint):
    server = servers[provider]
    server.script(reply_error(status, "scripted refusal"))
    error = ask(provider, server.base_url)
    assert (error.kind, error.status, error.fatal) == (kind, status, True)
    assert f"HTTP {status}: scripted refusal; {hint}" in str(error)
    assert len(server.requests) == 1  # not retried


@pytest.mark.parametrize("provider", MODELS)
def test_a_refused_connection_is_unreachable_after_the_retries(provider):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}" + ("/v1" if provider == "openai" else "")
    error = ask(provider, url)
    assert (error.kind, error.fatal) == ("unreachable", True)
    assert "gave up after 3 attempts; last error: cannot connect" in str(error) and "Connection refused" in str(error)


@pytest.mark.parametrize("provider", MODELS)
def test_a_server_that_never_answers_times_out(servers, provider):
    server = servers[provider]
    server.always(reply_after(3, reply_text("too late")))
    error = ask(provider, server.base_url, timeout=0.3, max_retries=1)
    assert (error.kind, error.fatal) == ("timeout", True)
    assert "gave up after 2 attempts; last error: no answer (timed out" in str(error)


@pytest.mark.parametrize("provider", MODELS)
def test_an_answer_that_is_not_json_is_not_a_traceback_of_the_sdk(servers, provider):
    server = servers[provider]
    server.script(reply_raw("<html><body>502 Bad Gateway</body></html>"))
    error = ask(provider, server.base_url)
    assert (error.kind, error.fatal) == ("invalid_json", False)
    assert "the answer is not valid JSON" in str(error) and "is this URL the API's?" in str(error)


@pytest.mark.parametrize("provider", MODELS)
def test_a_missing_key_is_an_auth_error(provider):
    with pytest.raises(LLMError) as info:
        create_client(MODELS[provider])
    assert (info.value.kind, info.value.provider, info.value.fatal) == ("auth", provider, True)


def test_the_error_survives_pickling_with_what_it_knows():
    error = LLMError("openai model 'm' at http://x: cannot connect", provider="openai", model="m", url="http://x",
                     kind="unreachable")
    again = pickle.loads(pickle.dumps(error))
    assert (str(again), again.provider, again.url, again.kind, again.fatal) == \
        (str(error), "openai", "http://x", "unreachable", True)


def test_whoever_stops_waiting_sees_what_the_call_waits_on_and_stops_it():
    attempts = []
    second_attempt = threading.Event()
    release = threading.Event()
    outcome = {}

    def call():
        attempts.append(1)
        if len(attempts) == 2:
            second_attempt.set()
            release.wait(5)
        raise ConnectionRefusedError("refused")

    def classify(exc):
        return Failure(message=str(exc))

    def run():
        try:
            call_with_retries(call, classify, RetryPolicy(max_retries=10, sleep=no_sleep), "openai", "m", "http://x")
        except LLMError as e:
            outcome["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    assert second_attempt.wait(5)
    waiting = in_flight(thread.ident)
    assert str(waiting) == "openai model 'm' at http://x: attempt 2, last error: cannot connect (refused)"
    assert waiting.last_kind == "unreachable"
    cancel(thread)
    release.set()
    thread.join(5)
    assert len(attempts) == 2 and outcome["error"].kind == "cancelled"
    assert in_flight(thread.ident) is None
