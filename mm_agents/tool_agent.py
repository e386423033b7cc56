"""The tool-calling agent: the model acts through the `desktop_action` tool, one conversation per task.

The conversation is: our system prompt; the instruction with the first observation; then per
step the model's turn (text and tool calls), the results of those calls and the next
observation. predict() only sees observations, so the result of a call is sent at the start of
the next predict, once the observation after the action is known. Only the last
`max_trajectory_length` observations keep their screenshot and tree; older ones shrink to a
line of text, so a long task does not outgrow the context window.
"""
from __future__ import annotations

import io
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from desktop_env.desktop_defaults import DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE

from .desktop_tool import DESKTOP_TOOL, TOOL_NAME, ToolArgumentError, format_tool_result, to_action
from .llm import create_client
from .llm.base import (
    Completion,
    ContextTooLong,
    GenerationParams,
    ImagePart,
    LLMClient,
    Message,
    Part,
    TextPart,
    ToolCall,
    ToolResult,
    Usage,
)
from .llm.calls import ModelCalls
from .llm.pricing import cost_usd
from .observations import linearize

OBSERVATION_TYPES = ("screenshot", "a11y_tree", "screenshot_a11y_tree")

SYSTEM_PROMPT = """\
You control a Linux desktop to carry out a user's task. You act only through the desktop_action \
tool: each call performs one mouse or keyboard action. After your actions run you receive the \
result of each call and an observation of the screen as it is now.

{observation} The screen is {width}x{height} pixels. Coordinates are [x, y] pixels of the screenshot, \
counted from its top-left corner; aim at the centre of what you want to hit.

How to work:
- Look at the latest observation before every action; the screen may not have changed the way \
you expected. Act step by step and check each result.
- Prefer the keyboard where it is reliable (shortcuts, typing into a focused field).
- If something is still loading, call desktop_action with action_type WAIT.
- When the task is complete, call desktop_action with action_type DONE. If it cannot be done \
on this desktop, call it with action_type FAIL. Do not claim DONE before checking.
- If a password is asked for (for example by sudo), it is "{password}"."""

_OBSERVATION_SENTENCES = {
    "screenshot": "An observation is a screenshot.",
    "a11y_tree": ("An observation is the screen's accessibility tree as a tab-separated table: one row per "
                  "visible element with its tag, name, text, top-left position and size in pixels."),
    "screenshot_a11y_tree": ("An observation is a screenshot and the screen's accessibility tree as a "
                             "tab-separated table: one row per visible element with its tag, name, text, "
                             "top-left position and size in pixels."),
}

# Where the model clients put tool arguments that were not a JSON object.
INVALID_JSON_KEY = "__invalid_json__"

# A reply without a tool call may still end the task by saying so in capitals.
_SPECIAL_WORD = re.compile(r"\b(DONE|FAIL)\b")


@dataclass
class _Observation:
    """One observation turn; rendered in full only while it is among the latest ones."""
    intro: str
    screenshot: bytes | None
    tree: str | None            # linearized, when the observation type includes the tree

    def message(self, full: bool) -> Message:
        parts: list[Part] = [TextPart(self.intro)]
        if not full:
            parts.append(TextPart("(An earlier observation: its screenshot and tree are no longer shown.)"))
            return Message("user", parts)
        if self.screenshot is not None:
            parts.append(ImagePart(self.screenshot, "image/png"))
        if self.tree is not None:
            parts.append(TextPart("Accessibility tree of the screen (tab-separated):\n" + self.tree))
        return Message("user", parts)


@dataclass
class _CallOutcome:
    call: ToolCall
    action: str | None = None   # the action it became, when it was valid and ran
    error: str | None = None    # the message for the model, when it did not run


@dataclass
class _Exchange:
    """The model's turn, what became of its tool calls, and the observation that followed."""
    assistant: Message
    outcomes: list[_CallOutcome] = field(default_factory=list)
    results: list[Message] = field(default_factory=list)
    observation: _Observation | None = None


class ToolAgent:
    def __init__(self, model: str, action_space: str = "pyautogui", observation_type: str = "screenshot",
                 max_tokens: int = 1500, temperature: float | None = None, top_p: float | None = None,
                 max_trajectory_length: int = 3, client_password: str = DEFAULT_PASSWORD,
                 screen_size: tuple[int, int] = DEFAULT_SCREEN_SIZE, model_provider: str | None = None,
                 base_url: str | None = None, api_key: str | None = None, max_retries: int = 5,
                 timeout: float = 120, client: LLMClient | None = None, **unused: Any):
        if action_space != "pyautogui":
            raise ValueError(f"the tool agent turns tool calls into pyautogui code; got action_space={action_space!r}")
        if observation_type not in OBSERVATION_TYPES:
            raise ValueError(f"the tool agent supports observation types {', '.join(OBSERVATION_TYPES)}; "
                             f"got {observation_type!r}")
        self.model = model
        self.observation_type = observation_type
        self.params = GenerationParams(max_tokens=max_tokens, temperature=temperature, top_p=top_p)
        self.max_trajectory_length = max(1, int(max_trajectory_length))
        self.screen_size = (int(screen_size[0]), int(screen_size[1]))
        self.system = Message.text("system", SYSTEM_PROMPT.format(observation=_OBSERVATION_SENTENCES[observation_type],
                                                                  width=self.screen_size[0],
                                                                  height=self.screen_size[1],
                                                                  password=client_password))
        self.client = client or create_client(model, provider=model_provider, base_url=base_url, api_key=api_key,
                                              max_retries=max_retries, timeout=timeout)
        self.logger = logging.getLogger("osworld.agent.tool")
        if unused:
            # Not an error: other agents take other --agent-args, and a run may pass them all.
            self.logger.warning("the tool agent ignores these arguments: %s", ", ".join(sorted(unused)))
        self.reset()

    # -- the agent protocol -------------------------------------------------------------------------
    def reset(self, logger: logging.Logger | None = None) -> None:
        if logger is not None:
            self.logger = logger
        self._first: _Observation | None = None
        self._exchanges: list[_Exchange] = []
        self._dropped = 0           # exchanges removed because the context grew too long
        self.usage = _usage_dict(Usage(), 0.0)
        self.last_usage = _usage_dict(Usage(), 0.0)
        self._calls = ModelCalls()

    @property
    def model_calls(self) -> dict[str, Any]:
        return self._calls.to_json()

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[str, list[str]]:
        if self._first is None:
            self._first = self._observation(f"Task: {instruction}\n\nThe screen now:", obs)
        else:
            self._close_last_exchange(obs)
        completion = self._complete()
        return self._take_turn(completion)

    # -- building the conversation ------------------------------------------------------------------
    def _observation(self, intro: str, obs: dict[str, Any]) -> _Observation:
        screenshot = obs.get("screenshot") if self.observation_type != "a11y_tree" else None
        tree = None
        if self.observation_type != "screenshot":
            raw = obs.get("accessibility_tree")
            tree = linearize(raw) if raw else "(no accessibility tree was available)"
        return _Observation(intro, screenshot, tree)

    def _close_last_exchange(self, obs: dict[str, Any]) -> None:
        """Sends the results of the last turn's calls, then the observation that followed them."""
        exchange = self._exchanges[-1]
        summary = _summarize(obs)
        for outcome in exchange.outcomes:
            if outcome.error is not None:
                content = format_tool_result(False, 0.0, {"error": outcome.error}, None,
                                             f"Error: {outcome.error}. Nothing was done; fix the call and try again.")
            else:
                content = format_tool_result(False, 0.0, {"action": outcome.action}, summary,
                                             "The action was executed. The screen after it follows.")
            exchange.results.append(Message("tool", tool_result=ToolResult(
                outcome.call.id, outcome.call.name, [TextPart(content)], is_error=outcome.error is not None)))
        step = len(self._exchanges) + self._dropped
        if exchange.outcomes:
            intro = f"Observation after step {step}:"
        else:
            intro = (f"Observation after step {step}: your reply called no tool, so nothing was done. "
                     f"Act with {TOOL_NAME}.")
        exchange.observation = self._observation(intro, obs)

    def _messages(self, keep_full: int) -> list[Message]:
        # predict() observes before every request: the first observation and every exchange's are there.
        assert self._first is not None
        observations = [self._first]
        for exchange in self._exchanges:
            assert exchange.observation is not None
            observations.append(exchange.observation)
        full = {id(o) for o in observations[-keep_full:]}
        first = self._first.message(id(self._first) in full)
        if self._dropped:
            first.content.append(TextPart(f"({self._dropped} earlier steps were removed to fit the context.)"))
        messages = [self.system, first]
        for exchange, observation in zip(self._exchanges, observations[1:], strict=True):
            messages.append(exchange.assistant)
            messages.extend(exchange.results)
            messages.append(observation.message(id(observation) in full))
        return messages

    def _complete(self) -> Completion:
        try:
            completion = self.client.complete(self._messages(self.max_trajectory_length), self.params, [DESKTOP_TOOL])
        except ContextTooLong as e:
            if not self._exchanges:
                raise  # nothing to trim: the instruction and the first observation alone are too long
            # Drop the older half of the steps for good, so later predicts do not pay for the same error.
            drop = (len(self._exchanges) + 1) // 2
            self.logger.warning("context too long (%s); dropping the %d oldest steps and retrying", e, drop)
            del self._exchanges[:drop]
            self._dropped += drop
            completion = self.client.complete(self._messages(1), self.params, [DESKTOP_TOOL])
        self._count(completion.usage)
        self._calls.add(completion.sent, completion.model)
        return completion

    def _count(self, usage: Usage) -> None:
        cost = cost_usd(self.model, usage)
        self.last_usage = _usage_dict(usage, cost)
        total = Usage(self.usage["input_tokens"], self.usage["output_tokens"]) + usage
        previous = self.usage["cost_usd"]
        self.usage = _usage_dict(total, None if previous is None or cost is None else previous + cost)

    # -- the model's turn ---------------------------------------------------------------------------
    def _take_turn(self, completion: Completion) -> tuple[str, list[str]]:
        # Providers reject an assistant turn with neither text nor tool calls.
        text = completion.text or ("" if completion.tool_calls else "(empty reply)")
        assistant = Message("assistant", [TextPart(text)] if text else [], tool_calls=list(completion.tool_calls))
        exchange = _Exchange(assistant)
        self._exchanges.append(exchange)
        actions: list[str] = []
        for call in completion.tool_calls:
            outcome = _CallOutcome(call)
            exchange.outcomes.append(outcome)
            if any(o.error for o in exchange.outcomes[:-1]) or (actions and actions[-1] in ("DONE", "FAIL")):
                outcome.error = "not executed, because an earlier call in the same turn failed or ended the task"
            elif call.name != TOOL_NAME:
                outcome.error = f"there is no tool {call.name!r}; the only tool is {TOOL_NAME}"
            elif INVALID_JSON_KEY in call.arguments:
                outcome.error = (f"the arguments are not a JSON object: {call.arguments[INVALID_JSON_KEY]!r:.200}; "
                                 "send them as one JSON object")
            else:
                try:
                    outcome.action = to_action(call.arguments, self.screen_size)
                    actions.append(outcome.action)
                except ToolArgumentError as e:
                    outcome.error = str(e)
        if not completion.tool_calls:
            said = _SPECIAL_WORD.findall(completion.text or "")
            if said:
                actions.append(said[-1])
        return _response(completion), actions


def _response(completion: Completion) -> str:
    lines = [completion.text] if completion.text else []
    lines += [f"{call.name}({json.dumps(call.arguments, ensure_ascii=False)})" for call in completion.tool_calls]
    return "\n".join(lines)


def _summarize(obs: dict[str, Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    screenshot = obs.get("screenshot")
    if screenshot:
        with Image.open(io.BytesIO(screenshot)) as image:
            summary["screenshot_size"] = list(image.size)
    tree = obs.get("accessibility_tree")
    if tree is not None:
        summary["a11y_tree_chars"] = len(tree)
    return summary


def _usage_dict(usage: Usage, cost: float | None) -> dict[str, Any]:
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens, "cost_usd": cost}
