"""Open GUI models served by vLLM (or any OpenAI-compatible server): Chat Completions, one text
grammar per model family.

The conversation is the grammar's prompt with the instruction, then per step the screenshot (with
a note of any action that could not be performed) and the model's answer; only the last `history`
screenshots stay, older ones become a line of text, while every answer stays. Sampling fields the
OpenAI SDK does not know (top_k, repetition_penalty, ...) go as `extra_body`; the rest is the
ordinary body, so a strict server sees nothing it does not know.
"""
from __future__ import annotations

import base64
from typing import Any

from ..llm import sdk_client
from ..llm.base import sampling_of
from ..llm.openai_client import OpenAIClient, chat_usage
from .agent import AgentSettings, Call, CallResult, ScreenshotWindow, Shot, Turn
from .geometry import Space

OMITTED = "(an earlier screenshot, no longer shown)"
# vLLM's sampling parameters beyond OpenAI's, accepted as --agent-args and sent as extra_body.
VLLM_SAMPLING = ("top_k", "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty", "seed",
                 "skip_special_tokens")


def image_part(png: bytes) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode("ascii")}}


class TextGrammarAdapter:
    """Subclasses give the prompt (`prompt`) and the parser (`parse`) of their grammar."""
    OPTIONS = VLLM_SAMPLING + ("system_prompt_language",)

    def __init__(self, settings: AgentSettings):
        self.settings = settings
        self.variant = settings.profile.variant
        self.extra_body = {k: v for k, v in settings.options.items() if k in VLLM_SAMPLING}
        self.language = settings.options.get("system_prompt_language", "English")
        self.client = sdk_client(OpenAIClient, settings.model, "openai", **settings.client)

    # -- the grammar ----------------------------------------------------------------------------------
    def prompt(self, instruction: str) -> list[dict[str, Any]]:
        """The messages that open the conversation (system and/or the first user text)."""
        raise NotImplementedError

    def parse(self, text: str) -> tuple[list[Call], str | None]:
        """The calls in an answer and the end it signals ("DONE"/"FAIL"), never raising: what cannot be
        read becomes a Call with an error."""
        raise NotImplementedError

    # -- the conversation -----------------------------------------------------------------------------
    def begin(self, instruction: str, shot: Shot, space: Space) -> None:
        self.space = space
        self.window = ScreenshotWindow(self.settings.profile.history)
        self.opening = self.prompt(instruction)
        self.steps: list[tuple[bytes, str, str | None]] = []    # (screenshot, note, answer)
        self.steps.append((shot.png, "", None))
        self.first = True

    def next_turn(self, shot: Shot, results: list[CallResult]) -> Turn:
        if not self.first:
            self.steps.append((shot.png, self.note(results), None))
        self.first = False
        sent: dict[str, Any] = {}

        def create(keep: int) -> Any:
            body = self.body(keep)
            sent.update(sampling_of(body), **self.extra_body)
            return self.client.create_chat(body, self.extra_body or None)

        response = self.window.send(create)
        text = response.choices[0].message.content or "" if response.choices else ""
        png, note, _ = self.steps[-1]
        self.steps[-1] = (png, note, text)
        calls, final = self.parse(text)
        return Turn(text, calls, chat_usage(response), final, requests=[(sent, response.model)])

    def body(self, keep: int) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.settings.model, "messages": self.messages(keep),
                                "max_tokens": self.settings.params.max_tokens}
        if self.settings.params.temperature is not None:
            body["temperature"] = self.settings.params.temperature
        if self.settings.params.top_p is not None:
            body["top_p"] = self.settings.params.top_p
        return body

    def messages(self, keep: int) -> list[dict[str, Any]]:
        messages = [dict(m) for m in self.opening]
        for index, (png, note, answer) in enumerate(self.steps):
            content: list[dict[str, Any]] = [{"type": "text", "text": note}] if note else []
            content.append(image_part(png) if index >= len(self.steps) - keep else {"type": "text", "text": OMITTED})
            if messages and messages[-1]["role"] == "user" and isinstance(messages[-1]["content"], list):
                messages[-1] = dict(messages[-1], content=messages[-1]["content"] + content)
            else:
                messages.append({"role": "user", "content": content})
            if answer is not None:
                messages.append({"role": "assistant", "content": answer})
        return messages

    @staticmethod
    def note(results: list[CallResult]) -> str:
        errors = [f"{r.call.name}: {r.error}" for r in results if r.error is not None]
        if not errors:
            return ""
        return "Your last answer could not be carried out in full: " + "; ".join(errors) + ". The screen now:"
