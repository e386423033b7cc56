"""The agent's time budget per task, and the breaker that stops a run failing the same fatal way task after task."""
from __future__ import annotations

import pickle
import threading
import time

import pytest

from desktop_env.errors import MissingDependency
from mm_agents.llm import LLMError, RetryPolicy
from mm_agents.llm.retry import Failure, call_with_retries
from mm_agents.loader import AgentLoadError
from osworld_harness.execution.breaker import FatalErrorBreaker
from osworld_harness.execution.episode import AgentOverBudget, predict_within
from osworld_harness.execution.plan import RunSummary
from osworld_harness.execution.run import run_benchmark
from osworld_harness.execution.task_result import TaskResult
from osworld_harness.results.config import RunConfig, RunOptionError
from osworld_harness.results.task_folder import fatal_cause

UNAUTHORIZED = LLMError("openai model 'm' at http://x/v1: request failed: HTTP 401: bad key", provider="openai",
                        model="m", url="http://x/v1", kind="auth", status=401)


def failed(exc: BaseException) -> TaskResult:
    return TaskResult.failed(str(exc), fatal_cause(exc))


def wrapped(cause: BaseException) -> BaseException:
    try:
        try:
            raise cause
        except Exception as e:
            raise RuntimeError("the agent's own wrapper") from e
    except RuntimeError as outer:
        return outer


def test_fatal_causes_are_found_behind_the_agents_own_exceptions():
    assert fatal_cause(wrapped(UNAUTHORIZED))["signature"] == "auth openai m http://x/v1"
    assert fatal_cause(AgentLoadError("constructing prompt failed: no API key"))["kind"] == "agent"
    assert fatal_cause(LLMError("400 bad request", kind="http", status=400)) is None
    assert fatal_cause(MissingDependency("Xvfb is not installed: apt-get install xvfb"))["kind"] == "desktop"
    assert fatal_cause(RuntimeError("the agent's bug")) is None


def test_the_breaker_trips_on_the_same_fatal_error_in_a_row_only():
    breaker = FatalErrorBreaker(2)
    ok = TaskResult("ok", 1.0, steps=1)
    assert breaker.observe(failed(UNAUTHORIZED)) is None
    assert breaker.observe(ok) is None                      # a success in between starts over
    assert breaker.observe(failed(UNAUTHORIZED)) is None
    other = LLMError("anthropic ...", provider="anthropic", model="c", url="http://y", kind="auth", status=401)
    assert breaker.observe(failed(other)) is None           # another fatal error starts over too
    assert breaker.observe(failed(UNAUTHORIZED)) is None
    reason = breaker.observe(failed(UNAUTHORIZED))
    assert reason.startswith("2 tasks in a row failed the same way") and "HTTP 401: bad key" in reason
    assert FatalErrorBreaker(0).observe(failed(UNAUTHORIZED)) is None


def test_a_server_that_refuses_and_one_that_does_not_answer_are_the_same_fatal_error():
    refused = LLMError("...", provider="openai", model="m", url="http://x", kind="unreachable")
    silent = LLMError("...", provider="openai", model="m", url="http://x", kind="timeout")
    assert fatal_cause(refused)["signature"] == fatal_cause(silent)["signature"]


def test_the_summary_stops_the_run_once_tripped():
    summary = RunSummary(planned=3, skipped_done=0, skipped_errors=0, breaker=FatalErrorBreaker(2))
    summary.count(failed(UNAUTHORIZED))
    assert summary.stopped is None
    summary.count(failed(UNAUTHORIZED))
    assert "HTTP 401" in summary.stopped and summary.errors == 2


def test_options_are_checked():
    for field, value, option in (("agent_time_budget", -1, "--agent-time-budget"),
                                 ("stop_after_fatal", -1, "--stop-after-fatal")):
        with pytest.raises(RunOptionError) as info:
            RunConfig(**{field: value})
        assert info.value.option == option


class StuckOnAModel:
    """An agent whose model call keeps failing to connect and being retried."""

    def __init__(self):
        self.attempts = 0

    def predict(self, instruction, obs):
        def call():
            self.attempts += 1
            time.sleep(0.05)
            raise ConnectionRefusedError("refused")

        policy = RetryPolicy(max_retries=10_000, sleep=lambda s: None)
        return call_with_retries(call, lambda e: Failure(message=str(e)), policy, "openai", "gpt-4o",
                                 "http://127.0.0.1:9/v1")


def test_an_agent_over_its_budget_is_an_error_naming_what_it_waited_on_and_its_calls_stop():
    agent = StuckOnAModel()
    started = time.monotonic()
    with pytest.raises(AgentOverBudget) as info:
        predict_within(agent, "do it", {}, 0.5)
    assert 0.5 <= time.monotonic() - started < 2
    message = str(info.value)
    assert "used up its time budget" in message and "--agent-time-budget" in message
    assert "waiting for openai model 'gpt-4o' at http://127.0.0.1:9/v1: attempt" in message
    assert "last error: cannot connect (refused)" in message
    assert info.value.fatal_cause["kind"] == "unreachable"  # a server that cannot be reached: the breaker counts it
    attempts = agent.attempts
    time.sleep(0.3)
    assert agent.attempts <= attempts + 1  # the call left behind gives up at its next attempt


def test_an_agent_over_its_budget_in_its_own_code_and_one_within_it():
    class Slow:
        def predict(self, instruction, obs):
            time.sleep(1)
            return "late", ["DONE"]

    with pytest.raises(AgentOverBudget, match="in its own code, not in a model call") as info:
        predict_within(Slow(), "do it", {}, 0.2)
    assert info.value.fatal_cause is None

    class Quick:
        def predict(self, instruction, obs):
            assert threading.current_thread().name == "agent-predict"
            return "ok", ["DONE"]

    assert predict_within(Quick(), "do it", {}, 5) == ("ok", ["DONE"])

    class Raising:
        def predict(self, instruction, obs):
            raise ValueError("the agent's bug")

    with pytest.raises(ValueError, match="the agent's bug"):
        predict_within(Raising(), "do it", {}, 5)


def test_workers_that_die_before_their_first_task_stop_the_run_instead_of_being_replaced_forever(tmp_path):
    plugin = tmp_path / "plugin.py"
    plugin.write_text("import multiprocessing, os\n"
                      "if multiprocessing.current_process().name.startswith('osworld-worker'):\n"
                      "    os._exit(5)\n")
    summary = run_benchmark(RunConfig(agent="noop", model="m", observation_type="screenshot", plugins=[str(plugin)],
                                      task_ids=["os-organize-invoices"], result_dir=str(tmp_path / "results")))
    assert summary.ran == 0
    assert summary.stopped.startswith("3 worker processes in a row died before running a task (last exit code 5)")


def test_a_task_result_with_its_fatal_cause_crosses_a_process_boundary_unchanged():
    result = failed(UNAUTHORIZED)
    assert pickle.loads(pickle.dumps(result)) == result and result.fatal["kind"] == "auth"
