"""The native computer-use agents: one loop, one wire adapter per vendor protocol or text grammar.

Per predict(): the screenshot is resized to what the model takes (profiles.py), the results of the
previous turn's calls go back with it, and the model's calls come out as vendor-neutral Commands
(commands.py), which become pyautogui code at screen pixels (geometry.Space). Calls that only
observe (screenshot, zoom, cursor_position) are answered at once, without a desktop step; a call
the desktop cannot do is answered with a tool error, which costs the step, never the episode.
Safety checks are acknowledged (or end the task as FAIL, with on_safety_check="fail"), and every
one is recorded in the step's response, which the harness writes to traj.jsonl.

An adapter (see `WireAdapter`) knows its wire format and nothing about the desktop: it sends the
shot and the results, and parses the answer into a `Turn`.
"""
from __future__ import annotations

import io
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from PIL import Image

from desktop_env.desktop_defaults import DEFAULT_PASSWORD, DEFAULT_SCREEN_SIZE

from ..llm.base import ContextTooLong, GenerationParams, Usage
from ..llm.calls import ModelCalls
from ..llm.pricing import cost_usd
from .commands import Command, to_action
from .errors import ToolError
from .geometry import Space, fit_size, png_size, resize_png
from .profiles import Profile, profile_for

SAFETY_POLICIES = ("acknowledge", "fail")
OBSERVATION_TYPES = ("screenshot", "screenshot_a11y_tree")
# Rounds of observe-only calls answered within one step before the step is given up as no action.
MAX_OBSERVE_ROUNDS = 4
INFEASIBLE = "[INFEASIBLE]"

BASE_PROMPT = """\
You are operating a Linux computer (Ubuntu's GNOME desktop) to carry out the user's task. \
Apps such as LibreOffice, GIMP, VLC, Thunderbird, Google Chrome, a terminal and a text editor are installed. \
There is no internet access. If a password is asked for (for example by sudo), it is "{password}". \
Work step by step, check the result of each action on the next screenshot, and prefer keyboard shortcuts \
where they are reliable. When the task is done, stop and say so. If the task cannot be done on this \
computer, say so and include the marker {infeasible} in your answer."""


def base_prompt(password: str) -> str:
    return BASE_PROMPT.format(password=password, infeasible=INFEASIBLE)


T = TypeVar("T")


class ScreenshotWindow:
    """How many screenshots an adapter keeps in its conversation: the profile's number, halved for good
    each time the model answers that the context is too long (down to one)."""

    def __init__(self, keep: int):
        self.keep = keep

    def send(self, request: Callable[[int], T]) -> T:
        """request(keep) -> the response; on ContextTooLong retried with fewer screenshots while any can go."""
        while True:
            try:
                return request(self.keep)
            except ContextTooLong:
                if self.keep <= 1:
                    raise
                self.keep = max(1, self.keep // 2)


@dataclass
class Shot:
    """One observation as the model sees it."""
    png: bytes                      # the image sent
    size: tuple[int, int]           # its size
    full: bytes                     # the screen's own screenshot (for zoom)
    screen: tuple[int, int]


@dataclass
class Call:
    """One action the model asked for, as its adapter understood it."""
    id: str
    name: str
    arguments: Any
    command: Command | None = None
    error: str | None = None        # set when the call could not be understood
    safety_checks: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Turn:
    text: str
    calls: list[Call]
    usage: Usage
    final: str | None = None        # "DONE" / "FAIL": the model ended the task its own way
    extra_usage: dict[str, Usage] = field(default_factory=dict)   # other models' tokens (a grounder's), by model
    # Each model request of the turn: the sampling settings it carried (llm.base.sampling_of) and the
    # model the server said answered (None when it does not say).
    requests: list[tuple[dict[str, Any], str | None]] = field(default_factory=list)


@dataclass
class CallResult:
    call: Call
    error: str | None = None
    image: bytes | None = None      # the answer of a screenshot or zoom call
    text: str | None = None         # the answer of cursor_position
    acknowledged: list[dict[str, Any]] = field(default_factory=list)


class WireAdapter(Protocol):
    """One vendor protocol. Constructed once per agent; `begin` starts a task's conversation."""

    def begin(self, instruction: str, shot: Shot, space: Space) -> None: ...

    def next_turn(self, shot: Shot, results: list[CallResult]) -> Turn:
        """Sends the results of the last turn's calls with the screen now, returns the model's turn."""
        ...


@dataclass(frozen=True)
class AgentSettings:
    """What every adapter is built from."""
    model: str
    profile: Profile
    params: GenerationParams
    password: str
    client: dict[str, Any]          # base_url, api_key, max_retries, timeout for mm_agents.llm clients
    options: dict[str, Any]         # the adapter's own --agent-args


class ComputerUseAgent:
    """Subclasses name their `agent` (its row in profiles.PROFILES) and `adapter` class."""
    agent = ""
    adapter: type = object

    def __init__(self, model: str, action_space: str = "pyautogui", observation_type: str = "screenshot",
                 max_tokens: int = 4096, temperature: float | None = None, top_p: float | None = None,
                 client_password: str = DEFAULT_PASSWORD, screen_size: tuple[int, int] = DEFAULT_SCREEN_SIZE,
                 base_url: str | None = None, api_key: str | None = None, max_retries: int = 5,
                 timeout: float = 120, on_safety_check: str = "acknowledge", coordinates: str | None = None,
                 image_size: str | None = None, history: int | None = None, variant: str | None = None,
                 max_trajectory_length: int | None = None, screenshot_scale: float = 1.0, **options: Any):
        if action_space != "pyautogui":
            raise ValueError(f"{self.agent} acts with pyautogui code; got action_space={action_space!r}")
        if observation_type not in OBSERVATION_TYPES:
            raise ValueError(f"{self.agent} observes screenshots; use --obs screenshot (got {observation_type!r})")
        if on_safety_check not in SAFETY_POLICIES:
            raise ValueError(f"on_safety_check must be one of {', '.join(SAFETY_POLICIES)}, got {on_safety_check!r}")
        if screenshot_scale != 1.0:
            raise ValueError(f"{self.agent} sizes its screenshots by the model's limits; "
                             "use --agent-arg image_size=WxH instead of --screenshot-scale")
        unknown = sorted(set(options) - set(getattr(self.adapter, "OPTIONS", ())))
        if unknown:
            known = ", ".join(sorted(getattr(self.adapter, "OPTIONS", ()))) or "none"
            raise ValueError(f"{self.agent} has no argument(s) {', '.join(unknown)}; besides base_url, api_key, "
                             "max_retries, timeout, on_safety_check, coordinates, image_size, history and variant "
                             f"it takes: {known}")
        self.model = model
        self.screen_size = (int(screen_size[0]), int(screen_size[1]))
        self.on_safety_check = on_safety_check
        self.profile = profile_for(self.agent, model, {"coordinates": coordinates, "image_size": image_size,
                                                       "history": history, "variant": variant})
        self.settings = AgentSettings(
            model=model, profile=self.profile,
            params=GenerationParams(max_tokens=max_tokens, temperature=temperature, top_p=top_p),
            password=client_password,
            client={"base_url": base_url, "api_key": api_key, "max_retries": max_retries, "timeout": timeout},
            options=options)
        self.wire = self.adapter(self.settings)
        self.logger = logging.getLogger(f"osworld.agent.{self.agent}")
        if observation_type != "screenshot":
            self.logger.info("%s sends screenshots only; the accessibility tree is not used", self.agent)
        self.reset()

    # -- the agent protocol -------------------------------------------------------------------------
    def reset(self, logger: logging.Logger | None = None) -> None:
        if logger is not None:
            self.logger = logger
        self._started = False
        self._pending: list[CallResult] = []
        self._cursor: tuple[int, int] | None = None
        self._total: dict[str, Usage] = {}
        self.usage = self._usage_dict({})
        self.last_usage = self._usage_dict({})
        self._calls = ModelCalls()

    @property
    def model_calls(self) -> dict[str, Any]:
        return self._calls.to_json()

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        shot = self.shot(obs)
        if not self._started:
            self.wire.begin(instruction, shot, self.space)
            self._started = True
        results, self._pending = self._pending, []
        record: dict[str, Any] = {"text": "", "calls": []}
        actions: list[str] = []
        step_usage: dict[str, Usage] = {}
        for _ in range(MAX_OBSERVE_ROUNDS):
            turn = self.wire.next_turn(shot, results)
            for sent, served in turn.requests:
                self._calls.add(sent, served)
            for model, usage in [(self.model, turn.usage), *turn.extra_usage.items()]:
                step_usage[model] = step_usage.get(model, Usage()) + usage
            record["text"] = "\n".join(t for t in (record["text"], turn.text) if t)
            # A call the adapter split into several commands (a batch, type_text_at) is recorded once.
            record["calls"] += [{"id": c.id, "name": c.name, "arguments": c.arguments}
                                for i, c in enumerate(turn.calls) if i == 0 or turn.calls[i - 1].id != c.id]
            results = self._run(turn.calls, shot, actions, record)
            if turn.final:
                # Actions written before the end of the answer still run; a failed one voids the end.
                if not any(r.error for r in results) and not (actions and actions[-1] in ("DONE", "FAIL")):
                    actions.append(turn.final)
                break
            observed_only = results and all(r.error is None and (r.image is not None or r.text is not None)
                                            for r in results)
            if actions or not observed_only:
                break
        self._pending = results
        for model, usage in step_usage.items():
            self._total[model] = self._total.get(model, Usage()) + usage
        self.last_usage = self._usage_dict(step_usage)
        self.usage = self._usage_dict(self._total)
        if not actions:
            record["no_action"] = True
        return record, actions

    # -- observations ---------------------------------------------------------------------------------
    def shot(self, obs: dict[str, Any]) -> Shot:
        png = obs.get("screenshot")
        if not png:
            raise ValueError(f"{self.agent} needs a screenshot, but the observation has none")
        screen = png_size(png)
        size = self.profile.image_size or fit_size(screen, self.profile.limits)
        self.space = Space.grid(screen) if self.profile.coordinates == "grid" else Space.image(size, screen)
        return Shot(resize_png(png, size), size, png, screen)

    # -- running a turn's calls -----------------------------------------------------------------------
    def _run(self, calls: list[Call], shot: Shot, actions: list[str], record: dict[str, Any]) -> list[CallResult]:
        results: list[CallResult] = []
        stopped: str | None = None
        for call in calls:
            result = CallResult(call)
            results.append(result)
            if stopped:
                result.error = f"not executed: {stopped}"
                continue
            if call.error is not None:
                result.error = call.error
            elif call.safety_checks and not self._safety(call, result, record):
                actions.append("FAIL")
                stopped = "the task was ended at a safety check"
                continue
            else:
                try:
                    self._perform(call.command, shot, result, actions)
                except ToolError as e:
                    result.error = str(e)
            if result.error is not None:
                record.setdefault("invalid", []).append({"call": call.name, "error": result.error})
                stopped = "an earlier call in the same turn failed"
            elif actions and actions[-1] in ("DONE", "FAIL"):
                stopped = "an earlier call ended the task"
        return results

    def _safety(self, call: Call, result: CallResult, record: dict[str, Any]) -> bool:
        decision = "acknowledged" if self.on_safety_check == "acknowledge" else "declined"
        record.setdefault("safety_checks", []).append({"call_id": call.id, "checks": call.safety_checks,
                                                       "decision": decision})
        self.logger.warning("safety check on %s: %s -> %s", call.name, call.safety_checks, decision)
        if decision == "declined":
            result.error = "declined at the safety check; the task ends here"
            return False
        result.acknowledged = list(call.safety_checks)
        return True

    def _perform(self, command: Command | None, shot: Shot, result: CallResult, actions: list[str]) -> None:
        if command is None:
            raise ToolError("the call names no action")
        action = to_action(command, self.space)
        if action is not None:
            actions.append(action)
            if command.points and command.kind in ("click", "move", "drag", "mouse_down", "mouse_up", "scroll"):
                self._cursor = self.space.to_screen(*command.points[-1])
            return
        if command.kind == "screenshot":
            result.image = shot.png
        elif command.kind == "zoom":
            result.image = self._zoom(command.region, shot)
        elif command.kind == "cursor_position":
            if self._cursor is None:
                raise ToolError("the cursor position is not known yet: no mouse action has been made")
            x, y = self.space.from_screen(*self._cursor)
            result.text = f"X={x},Y={y}"

    def _zoom(self, region: tuple[float, ...], shot: Shot) -> bytes:
        """The region of the full-resolution screen, scaled to fill a screenshot's size (aspect kept)."""
        if len(region) != 4:
            raise ToolError(f"zoom needs a region [x0, y0, x1, y1], got {list(region)!r:.60}")
        left, top = self.space.to_screen(region[0], region[1])
        right, bottom = self.space.to_screen(region[2], region[3])
        if right <= left or bottom <= top:
            raise ToolError(f"zoom region {list(region)!r} is empty: x1 must exceed x0 and y1 exceed y0")
        image = Image.open(io.BytesIO(shot.full)).convert("RGB").crop((left, top, right + 1, bottom + 1))
        scale = min(shot.size[0] / image.width, shot.size[1] / image.height)
        size = (max(1, int(image.width * scale)), max(1, int(image.height * scale)))
        buffer = io.BytesIO()
        image.resize(size, Image.Resampling.LANCZOS).save(buffer, format="PNG")
        return buffer.getvalue()

    def _usage_dict(self, by_model: dict[str, Usage]) -> dict[str, Any]:
        """Tokens of every model the agent called; the cost is unknown (None) if any one's price is."""
        costs = [cost_usd(model, usage) for model, usage in by_model.items()]
        return {"input_tokens": sum(u.input_tokens for u in by_model.values()),
                "output_tokens": sum(u.output_tokens for u in by_model.values()),
                "cost_usd": None if any(c is None for c in costs) else sum(costs)}
