"""The OSWorld paper's baseline: one prompt per step, the model answers with code or JSON actions.

Each step sends the system prompt (with the task), the last `max_trajectory_length` steps'
observations and answers, and the current observation: a screenshot, the linearized
accessibility tree, both, or a set-of-marks screenshot with its table. The answer is parsed into
pyautogui code or computer_13 actions (mm_agents.parsing); an answer with no valid action gives
an empty action list, which costs the step.

`screenshot_scale` (default 1) resizes what the model sees, for the paper's resolution analysis:
the screenshot, the tree's positions and the screen size in the prompt are all scaled, and the
coordinates the model answers with are scaled back to the screen.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from desktop_env.desktop_defaults import DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE
from mm_agents.llm import (
    Completion,
    ContextTooLong,
    GenerationParams,
    ImagePart,
    Message,
    Part,
    TextPart,
    Usage,
    cost_usd,
    create_client,
)
from mm_agents.llm.calls import ModelCalls
from mm_agents.observations import DEFAULT_MAX_TOKENS, linearize, scale_screenshot, set_of_marks
from mm_agents.parsing import ParsedResponse, parse_computer_13, parse_pyautogui
from mm_agents.prompts import NO_ANSWER, observation_text, system_prompt

OBSERVATION_TYPES = ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som")
ACTION_SPACES = ("pyautogui", "computer_13")
TREE_UNAVAILABLE = "(the accessibility tree of this screen could not be read)"


@dataclass(frozen=True)
class _Step:
    observation: list[Part]
    response: str


class PromptAgent:
    """Options beyond the run's: model_provider and base_url pick the model server
    (mm_agents.llm.create_client), screenshot_scale the model's resolution, a11y_tree_max_tokens
    the tree's budget, max_retries and timeout the model calls'."""

    def __init__(self, model: str = "gpt-4o", action_space: str = "pyautogui",
                 observation_type: str = "screenshot_a11y_tree", max_tokens: int = 1500,
                 temperature: float | None = 1.0, top_p: float | None = 0.9, max_trajectory_length: int = 3,
                 client_password: str = DEFAULT_PASSWORD, screen_size: tuple[int, int] = DEFAULT_SCREEN_SIZE,
                 model_provider: str | None = None, base_url: str | None = None, screenshot_scale: float = 1.0,
                 a11y_tree_max_tokens: int | None = DEFAULT_MAX_TOKENS, max_retries: int = 5,
                 timeout: float = 120.0, **unknown: Any):
        # A mistyped --agent-arg would otherwise be dropped without a word, and the run would
        # measure something other than what its name says.
        if unknown:
            raise ValueError(f"the prompt agent has no argument(s) {', '.join(sorted(unknown))}; it takes "
                             "model_provider, base_url, screenshot_scale, a11y_tree_max_tokens, max_retries, timeout "
                             "besides the run options")
        if action_space not in ACTION_SPACES:
            raise ValueError(f"action_space must be one of {ACTION_SPACES}, got {action_space!r}")
        if observation_type not in OBSERVATION_TYPES:
            raise ValueError(f"observation_type must be one of {OBSERVATION_TYPES}, got {observation_type!r}")
        if isinstance(screenshot_scale, bool) or not isinstance(screenshot_scale, (int, float)) \
                or not 0 < screenshot_scale <= 1:
            raise ValueError(f"screenshot_scale must be a number in (0, 1], got {screenshot_scale!r}")
        if isinstance(max_trajectory_length, bool) or not isinstance(max_trajectory_length, int) \
                or max_trajectory_length < 0:
            raise ValueError(f"max_trajectory_length must be an integer >= 0, got {max_trajectory_length!r}")
        if a11y_tree_max_tokens is not None and (isinstance(a11y_tree_max_tokens, bool)
                                                 or not isinstance(a11y_tree_max_tokens, int)
                                                 or a11y_tree_max_tokens <= 0):
            raise ValueError(f"a11y_tree_max_tokens must be a positive integer or None, got {a11y_tree_max_tokens!r}")
        self.model = model
        self.action_space = action_space
        self.observation_type = observation_type
        self.params = GenerationParams(max_tokens=max_tokens, temperature=temperature, top_p=top_p)
        self.max_trajectory_length = max_trajectory_length
        self.client_password = client_password
        self.screen_size = (int(screen_size[0]), int(screen_size[1]))
        self.screenshot_scale = float(screenshot_scale)
        self.a11y_tree_max_tokens = a11y_tree_max_tokens
        self.client = create_client(model, provider=model_provider, base_url=base_url, max_retries=max_retries,
                                    timeout=timeout)
        self.logger = logging.getLogger("osworld.agent.prompt")
        self._history: list[_Step] = []
        self._total_usage = Usage()
        self.usage: dict[str, Any] = {}
        self.last_usage: dict[str, Any] = {}
        self.reset()

    def reset(self, logger: logging.Logger | None = None) -> None:
        if logger is not None:
            self.logger = logger
        self._history = []
        self._total_usage = Usage()
        self.usage = self._usage_dict(self._total_usage)
        self.last_usage = {}
        self._calls = ModelCalls()

    @property
    def model_calls(self) -> dict[str, Any]:
        return self._calls.to_json()

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[str, list[Any]]:
        observation, tag_centers = self._observe(obs)
        history = self._history[-self.max_trajectory_length:] if self.max_trajectory_length else []
        system = Message.text("system", system_prompt(self.action_space, self.observation_type,
                                                      self.model_screen_size, self.client_password, instruction))
        text = self._complete(system, history, observation).text
        parsed = self._parse(text, tag_centers)
        for problem in parsed.problems:
            self.logger.warning("model answer: %s", problem)
        if self.max_trajectory_length:
            self._history.append(_Step(observation, text or NO_ANSWER))
            del self._history[:-self.max_trajectory_length]
        return text, parsed.actions

    @property
    def model_screen_size(self) -> tuple[int, int]:
        """The screen size in the model's pixels (those of the resized screenshot)."""
        return round(self.screen_size[0] * self.screenshot_scale), round(self.screen_size[1] * self.screenshot_scale)

    # ------------------------------------------------------------------ internals

    def _observe(self, obs: dict[str, Any]) -> tuple[list[Part], dict[int, tuple[int, int]] | None]:
        """The parts of the user message for `obs`, and the set-of-marks tag centres (None without marks)."""
        kind = self.observation_type
        needs_screenshot = kind in ("screenshot", "screenshot_a11y_tree", "som")
        screenshot: bytes = obs.get("screenshot") or b""
        if needs_screenshot and not screenshot:
            raise ValueError(f"observation type {kind!r} needs a screenshot, but the observation has none")
        xml = obs.get("accessibility_tree")
        if kind != "screenshot" and xml is None:
            self.logger.warning("the observation has no accessibility tree")
        image, table, centers = None, None, None
        if kind == "som":
            if xml is None:
                image, table, centers = scale_screenshot(screenshot, self.screenshot_scale), TREE_UNAVAILABLE, {}
            else:
                marks = set_of_marks(screenshot, xml, self.screenshot_scale, self.a11y_tree_max_tokens)
                image, table, centers = marks.image, marks.table, marks.centers
        else:
            if needs_screenshot:
                image = scale_screenshot(screenshot, self.screenshot_scale)
            if kind != "screenshot":
                table = TREE_UNAVAILABLE if xml is None else linearize(xml, self.a11y_tree_max_tokens,
                                                                       self.screenshot_scale)
        parts: list[Part] = [TextPart(observation_text(kind, table))]
        if image is not None:
            parts.append(ImagePart(image, "image/png"))
        return parts, centers

    def _messages(self, system: Message, history: list[_Step], observation: list[Part]) -> list[Message]:
        messages = [system]
        for step in history:
            messages.append(Message(role="user", content=list(step.observation)))
            messages.append(Message.text("assistant", step.response))
        messages.append(Message(role="user", content=list(observation)))
        return messages

    def _complete(self, system: Message, history: list[_Step], observation: list[Part]) -> Completion:
        try:
            completion = self.client.complete(self._messages(system, history, observation), self.params)
        except ContextTooLong as e:
            if not history:
                raise
            # One retry with no past steps at all, as the paper's agent does: dropping them one
            # at a time could take as many failed calls as there are steps.
            self.logger.warning("context too long with %d past step(s) (%s); retrying with the current "
                                "observation only", len(history), e)
            try:
                completion = self.client.complete(self._messages(system, [], observation), self.params)
            except ContextTooLong as again:
                raise ContextTooLong(f"{again} (even after dropping all {len(history)} past step(s))") from again
        self._total_usage = self._total_usage + completion.usage
        self._calls.add(completion.sent, completion.model)
        self.last_usage = self._usage_dict(completion.usage)
        self.usage = self._usage_dict(self._total_usage)
        return completion

    def _usage_dict(self, usage: Usage) -> dict[str, Any]:
        # Cost is linear in the tokens, so the cost of the summed usage is the summed cost.
        return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                "cost_usd": cost_usd(self.model, usage)}

    def _parse(self, text: str, tag_centers: dict[int, tuple[int, int]] | None) -> ParsedResponse:
        factor = 1 / self.screenshot_scale
        if self.action_space == "pyautogui":
            return parse_pyautogui(text, coordinate_factor=factor, tag_centers=tag_centers)
        return parse_computer_13(text, screen_size=self.screen_size, coordinate_factor=factor, tag_centers=tag_centers)
