"""Our retry loop around one model call: exponential backoff with jitter, Retry-After honoured.

The SDKs' own retries are switched off (max_retries=0 / one attempt) so that this is the only
policy in force: the same for every provider, and testable with an injected `sleep`.
Each client turns its SDK's exceptions into a `Failure`; this module decides what to do with it.
"""
from __future__ import annotations

import json
import random
import re
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import TypeVar

from mm_agents.llm.base import ContextTooLong, LLMError

T = TypeVar("T")

# Rate limits, request timeouts, conflicts and server errors are worth another try;
# other 4xx (bad request, auth, not found) will fail the same way again.
RETRYABLE_STATUSES = frozenset({408, 409, 429})

# Phrases providers and OpenAI-compatible servers use when the prompt does not fit the window.
_CONTEXT_PATTERNS = re.compile(
    r"context_length_exceeded|maximum context length|context length|context window"
    r"|prompt is too long|input token count|exceeds the maximum number of tokens"
    r"|too many tokens|input is too long|reduce the length of the messages",
    re.IGNORECASE,
)


def mentions_context_overflow(message: str) -> bool:
    return bool(_CONTEXT_PATTERNS.search(message or ""))


@dataclass(frozen=True)
class Failure:
    """A provider call that failed, as the client understood its SDK's exception."""
    message: str
    status: int | None = None            # HTTP status; None for timeouts and connection errors
    retry_after: float | None = None     # seconds the server asked us to wait
    context_too_long: bool = False

    @property
    def retryable(self) -> bool:
        if self.context_too_long:
            return False
        return self.status is None or self.status in RETRYABLE_STATUSES or self.status >= 500


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5                 # retries after the first attempt: max_retries + 1 requests at most
    base_delay: float = 1.0              # seconds before the first retry, doubled each time
    max_delay: float = 60.0              # cap of the exponential backoff
    max_retry_after: float = 120.0       # cap of a server's Retry-After, so one header cannot stall a run
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    jitter: Callable[[], float] = field(default=random.random, compare=False)  # uniform in [0, 1)

    def backoff(self, retry_number: int) -> float:
        """Delay before retry `retry_number` (0-based): full exponential step, then "equal jitter"
        (half fixed, half random) so parallel workers hitting one rate limit spread out."""
        step = min(self.max_delay, self.base_delay * (2 ** retry_number))
        return step / 2 + step / 2 * self.jitter()

    def delay(self, failure: Failure, retry_number: int) -> float:
        if failure.retry_after is not None:
            return min(max(failure.retry_after, 0.0), self.max_retry_after)
        return self.backoff(retry_number)


def parse_retry_after(headers: Mapping[str, str] | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` (OpenAI, Anthropic) or `Retry-After` (delta-seconds or
    an HTTP date, RFC 9110 §10.2.3); None when absent or unreadable."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    now = now or datetime.now(timezone.utc)
    return max((when - now).total_seconds(), 0.0)


# What each thread's model call is waiting on, so that whoever gave up waiting (the harness's time
# budget for the agent) can say what the agent was stuck on, and stop it from trying again.
@dataclass(frozen=True)
class InFlight:
    """A model call under way: where it goes, which attempt, and how the last one failed."""
    provider: str
    model: str
    url: str | None
    attempt: int
    last_error: str = ""
    last_kind: str | None = None

    def __str__(self) -> str:
        where = f"{self.provider} model {self.model!r}" + (f" at {self.url}" if self.url else "")
        return f"{where}: attempt {self.attempt}" + (f", last error: {self.last_error}" if self.last_error else "")


_IN_FLIGHT: dict[int, InFlight] = {}
_CANCELLED: weakref.WeakSet[threading.Thread] = weakref.WeakSet()  # thread objects: idents get reused
_REGISTRY_LOCK = threading.Lock()
_KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "google": "GEMINI_API_KEY"}


def in_flight(thread_id: int) -> InFlight | None:
    """The model call running in that thread, if any."""
    with _REGISTRY_LOCK:
        return _IN_FLIGHT.get(thread_id)


def cancel(thread: threading.Thread) -> None:
    """Makes the model calls of that thread give up before their next attempt (their caller stopped waiting)."""
    with _REGISTRY_LOCK:
        _CANCELLED.add(thread)


def _root_cause(exc: BaseException) -> BaseException:
    seen = {id(exc)}
    while (cause := exc.__cause__ or exc.__context__) is not None and id(cause) not in seen:
        exc = cause
        seen.add(id(exc))
    return exc


def _is_timeout(exc: BaseException) -> bool:
    current: BaseException | None = exc
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        if isinstance(current, TimeoutError) or "Timeout" in type(current).__name__:
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def failure_kind(failure: Failure, exc: BaseException) -> str:
    if failure.status in (401, 403):
        return "auth"
    if failure.status == 404:
        return "not_found"
    if failure.status is not None:
        return "http"
    return "timeout" if _is_timeout(exc) else "unreachable"


def describe(kind: str, failure: Failure, exc: BaseException, provider: str) -> str:
    """What went wrong, in words a user can act on."""
    status = f"HTTP {failure.status}: " if failure.status is not None else ""
    if kind == "auth":
        variable = _KEY_VARIABLES.get(provider, "the provider's API key variable")
        return f"{status}{failure.message}; check the API key ({variable} or --agent-arg api_key=...)"
    if kind == "not_found":
        return (f"{status}{failure.message}; check the model name and the URL (an OpenAI-compatible "
                "server's base_url ends in /v1)")
    if kind == "timeout":
        return f"no answer (timed out: {failure.message})"
    if kind == "unreachable":
        return f"cannot connect ({_root_cause(exc)})"
    return f"{status or 'no HTTP response: '}{failure.message}"


def call_with_retries(call: Callable[[], T], classify: Callable[[BaseException], Failure | None],
                      policy: RetryPolicy, provider: str, model: str, url: str | None = None) -> T:
    """Runs `call`, retrying what `classify` calls retryable. Exceptions `classify` does not
    recognise (None) are bugs, not provider failures, and propagate unchanged; an answer that is
    not JSON is the server's, not ours. Every error names the provider, the model and the URL."""
    where = f"{provider} model {model!r}" + (f" at {url}" if url else "")
    me, thread = threading.get_ident(), threading.current_thread()

    def error(cls: type[LLMError], message: str, kind: str | None, status: int | None) -> LLMError:
        return cls(f"{where}: {message}", provider=provider, model=model, url=url, kind=kind, status=status)

    retry_number = 0
    last, last_kind = "", None
    try:
        while True:
            with _REGISTRY_LOCK:
                if thread in _CANCELLED:
                    raise error(LLMError, f"stopped waiting after {retry_number} attempt(s)"
                                + (f"; last error: {last}" if last else ""), "cancelled", None)
                _IN_FLIGHT[me] = InFlight(provider, model, url, retry_number + 1, last, last_kind)
            try:
                return call()
            except json.JSONDecodeError as exc:  # a 200 whose body is not the API's (a proxy's page, another server)
                raise error(LLMError, f"the answer is not valid JSON ({exc}); is this URL the API's?",
                            "invalid_json", None) from exc
            except Exception as exc:  # classify() decides which of these are ours to handle
                failure = classify(exc)
                if failure is None:
                    raise
                kind = failure_kind(failure, exc)
                what = describe(kind, failure, exc, provider)
                if failure.context_too_long:
                    status = f"HTTP {failure.status}" if failure.status is not None else "no HTTP response"
                    raise error(ContextTooLong, f"context too long ({status}): {failure.message}", "context",
                                failure.status) from exc
                if not failure.retryable:
                    raise error(LLMError, f"request failed: {what}", kind, failure.status) from exc
                if retry_number >= policy.max_retries:
                    raise error(LLMError, f"gave up after {retry_number + 1} attempts; last error: {what}", kind,
                                failure.status) from exc
                last, last_kind = what, kind
                policy.sleep(policy.delay(failure, retry_number))
                retry_number += 1
    finally:
        with _REGISTRY_LOCK:
            _IN_FLIGHT.pop(me, None)
