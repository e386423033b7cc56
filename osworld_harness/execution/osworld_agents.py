"""OSWorld's agent kinds on our episode.

OSWorld has one runner per agent family (`lib_run_single.run_single_example_<kind>`), each calling its
agent its own way: another predict() signature, a third value returned, the agent executing its own
actions, an episode that ends when the agent returns nothing. Here each kind is an adapter that gives
its agent our protocol (mm_agents/base.py), so the episode itself stays ours: the desktop made ready by
polling, not by fixed sleeps; status.json, traj.jsonl and errors recorded as for any agent; the score
appended only when there is one. What a kind's runner does to the score (AutoGLM's FAIL on an unfinished
task, the state_correct rule of OpenAI's CUA agents, VLAA-GUI's verifier) is kept.

An adapter ends the episode without an action by setting `episode_over` (mm_agents/base.py). What the
runners do only for their own logs (metadata files, extra screenshots, fixed sleeps) is not copied.
"""
from __future__ import annotations

import inspect
import logging
from typing import Any

from .episode import AgentProtocolError

SPECIAL = ("DONE", "FAIL", "WAIT")
INFEASIBLE_WORDS = ("infeasible", "not possible", "impossible", "cannot be completed", "does not exist",
                    "not supported", "call fail", "bypassed")  # VLAA-GUI's verifier reasons that mean FAIL


class AgentStepFailed(RuntimeError):
    """An agent that runs its own steps (MobileAgent-V3) said its step failed: no score, as in OSWorld."""


def split_prediction(prediction: Any) -> tuple[Any, list[Any], Any]:
    """(response, actions, info) of a predict() that returns two values or three."""
    if isinstance(prediction, tuple) and len(prediction) in (2, 3):
        response, actions, *info = prediction
        return response, list(actions or []), info[0] if info else None
    raise AgentProtocolError(f"predict() must return (response, actions) or (response, actions, info), got "
                             f"{type(prediction).__name__}: {prediction!r:.200}")


def reset_agent(agent: Any, logger: logging.Logger | None, env: Any) -> None:
    """agent.reset as OSWorld's runners try it: with the desktop's address, with the logger, with nothing."""
    vm_ip = getattr(env, "vm_ip", None)
    ways: list[tuple[tuple[Any, ...], dict[str, Any]]] = [((logger,), {"vm_ip": vm_ip})] if vm_ip is not None else []
    ways += [((logger,), {}), ((), {})]
    try:
        signature = inspect.signature(agent.reset)
    except (TypeError, ValueError):  # no signature to read (a builtin): the plainest call
        signature = None
    for positional, named in ways:
        if signature is None and named:
            continue
        try:
            if signature is not None:
                signature.bind(*positional, **named)
        except TypeError:  # this agent's reset takes other arguments: the next way
            continue
        agent.reset(*positional, **named)
        return
    agent.reset()


class KindAdapter:
    """Our agent protocol around one of OSWorld's agents (the plain kind: predict(instruction, obs) ->
    (response, actions)); subclasses say what their kind does differently."""

    def __init__(self, agent: Any, env: Any, max_steps: int, args: Any, task_dir: str):
        self.agent, self.env, self.max_steps, self.args, self.task_dir = agent, env, max_steps, args, task_dir
        self.calls = 0              # predict calls so far in this episode
        self.episode_over = False

    def __getattr__(self, name: str) -> Any:  # usage, last_usage, model_calls: the agent's own
        if name == "agent":
            raise AttributeError(name)
        return getattr(self.agent, name)

    def episode_env(self) -> Any:
        """The env the episode steps (the agent's own for kinds that execute their actions themselves)."""
        return self.env

    def reset(self, logger: logging.Logger | None = None) -> None:
        self.calls, self.episode_over = 0, False
        reset_agent(self.agent, logger, self.env)

    def ask(self, instruction: str, obs: dict[str, Any]) -> Any:
        return self.agent.predict(instruction, obs)

    def ends(self, response: Any, actions: list[Any]) -> bool:
        """Whether the kind's runner stops here without acting on `actions`."""
        return False

    def shape(self, response: Any, actions: list[Any]) -> list[Any]:
        return actions

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[Any, list[Any]]:
        self.calls += 1
        response, actions, info = split_prediction(self.ask(instruction, obs))
        recorded = response if info is None else {"response": response, "agent_info": info}
        if self.ends(response, actions):
            self.episode_over = True
            return recorded, []
        return recorded, self.shape(response, actions)

    @property
    def last_step(self) -> bool:
        return self.calls >= self.max_steps


class StepIndexKind(KindAdapter):
    """cua: predict(instruction, obs, step_idx=...) -> (response, actions, info); no action ends it."""

    def ask(self, instruction: str, obs: dict[str, Any]) -> Any:
        return self.agent.predict(instruction, obs, step_idx=self.calls - 1)

    def ends(self, response: Any, actions: list[Any]) -> bool:
        return not actions


class ErrorActionKind(KindAdapter):
    """kimi, opencua: (response, actions, info); no action, an empty one or one starting "error" ends it."""

    def ends(self, response: Any, actions: list[Any]) -> bool:
        return not actions or actions[0] == "" or str(actions[0]).lower().startswith("error")


class EvoCUAKind(KindAdapter):
    """evocua: two values or three; nothing, or one empty or erroneous action that is not DONE/FAIL, ends it."""

    def ends(self, response: Any, actions: list[Any]) -> bool:
        if not actions:
            return True
        first = str(actions[0])
        return len(actions) == 1 and (first == "" or "error" in first.lower()) and first not in ("FAIL", "DONE")


class SelfSteppingKind(KindAdapter):
    """agi, openaicua, gpt54: the agent executes each action itself (agent.step(action) -> obs, reward,
    done, info, step_info); an answer whose response is not `state_correct` gets its first action only,
    then the episode ends."""

    def episode_env(self) -> Any:
        return AgentSteppedEnv(self.env, self.agent)

    def shape(self, response: Any, actions: list[Any]) -> list[Any]:
        if isinstance(response, dict) and response.get("state_correct", False):
            return actions
        self.episode_over = True
        return actions[:1]


class AgentSteppedEnv:
    """The desktop, with each step done by the agent's own step(action) (SelfSteppingKind)."""

    def __init__(self, env: Any, agent: Any):
        self._env, self._agent = env, agent

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._env, name)

    def step(self, action: Any, pause: float = 0) -> tuple[dict[str, Any], float, bool, dict[str, Any]]:
        obs, reward, done, info, _ = self._agent.step(action)
        return obs, reward, done, info


class FailIfUnfinishedKind(KindAdapter):
    """autoglm: a task not done within the step budget ends with FAIL (which scores infeasible tasks 1)."""

    def shape(self, response: Any, actions: list[Any]) -> list[Any]:
        return actions + ["FAIL"] if self.last_step else actions


class ModifierClickKind(KindAdapter):
    """mano: a modifier hotkey followed by a click becomes one click with the key held down."""

    def shape(self, response: Any, actions: list[Any]) -> list[Any]:
        if len(actions) > 1 and isinstance(actions[0], str) and isinstance(actions[1], str) \
                and "pyautogui.click" in actions[1]:
            for key in ("shift", "ctrl"):
                if f"pyautogui.hotkey('{key}')" in actions[0]:
                    return [f"pyautogui.keyDown('{key}')\n{actions[1]}\npyautogui.keyUp('{key}')"]
        return actions


class ArgsStepKind(KindAdapter):
    """uipath: predict(instruction, obs, args, step_idx)."""

    def ask(self, instruction: str, obs: dict[str, Any]) -> Any:
        return self.agent.predict(instruction, obs, self.args, self.calls - 1)


class LastStepKind(KindAdapter):
    """os_symphony: reset(result_dir=...), predict(instruction, obs, is_last_step)."""

    def reset(self, logger: logging.Logger | None = None) -> None:
        self.calls, self.episode_over = 0, False
        self.agent.reset(result_dir=self.task_dir)

    def ask(self, instruction: str, obs: dict[str, Any]) -> Any:
        return self.agent.predict(instruction, obs, self.last_step)


class StepsItselfKind(KindAdapter):
    """mobileagent_v3: agent.step(instruction, env, args) predicts and acts on the desktop itself and returns
    (global_state, action_code, step_status, reward, done); a failed step leaves the task without a score."""

    def ask(self, instruction: str, obs: dict[str, Any]) -> Any:
        global_state, action_code, step_status, reward, done = self.agent.step(instruction, self.env, self.args)
        if step_status is False:
            raise AgentStepFailed(f"the agent reported that its step {self.calls} failed: {action_code!r:.200}")
        if done:
            self.episode_over = True
        return {"global_state": global_state, "action_code": action_code, "reward": reward}, []


class VerifiedKind(KindAdapter):
    """vlaa_gui: the first action may be done/fail/next/wait; a verifier agent, if given, must accept DONE
    (3 rejections in a row end the task: FAIL if its reasons say the task cannot be done, else DONE)."""

    MAX_REJECTIONS = 3

    def __init__(self, *args: Any, verifier: Any = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.verifier = verifier
        self.rejections: list[str] = []
        self.history: list[str] = []
        self.instruction, self.obs = "", dict[str, Any]()   # of the answer being shaped, for the verifier

    def reset(self, logger: logging.Logger | None = None) -> None:
        super().reset(logger)
        self.rejections, self.history = [], []

    def ask(self, instruction: str, obs: dict[str, Any]) -> Any:
        if self.last_step:
            obs = {**obs, "is_last_step": True}
        self.obs = obs
        self.instruction = instruction
        return self.agent.predict(instruction, obs)

    def shape(self, response: Any, actions: list[Any]) -> list[Any]:
        first = str(actions[0]).strip().lower() if actions else ""
        if first == "done":
            return self.verified_done(response)
        if first == "fail":
            return ["FAIL"]
        if first == "next":
            return []
        if first == "wait":
            return ["WAIT"]
        self.rejections = []
        self.history += [f"Step {self.calls}: {action}" for action in actions]
        return actions

    def verified_done(self, response: Any) -> list[Any]:
        if self.verifier is None:
            return ["DONE"]
        plan = response.get("executor_plan") if isinstance(response, dict) else None
        verdict = self.verifier.verify_completion(instruction=self.instruction, observation=self.obs,
                                                  trajectory="\n".join([f"Task: {self.instruction}", *self.history]),
                                                  executor_plan=plan)
        if verdict.get("complete"):
            self.rejections = []
            return ["DONE"]
        reason, missing = verdict.get("reason", ""), verdict.get("missing_steps", "")
        self.rejections.append(f"{reason} {missing}".lower())
        self.history.append(f"Verifier rejected DONE: reason={reason}, missing_steps={missing}")
        if len(self.rejections) >= self.MAX_REJECTIONS:
            said = " ".join(self.rejections)
            return ["FAIL"] if any(word in said for word in INFEASIBLE_WORDS) else ["DONE"]
        self.agent.restart_after_failed_verification(reason=reason, missing_steps=missing)
        return []


class NoAgentKind(KindAdapter):
    """human: the desktop is set up and scored as it is, with no agent at all."""

    def reset(self, logger: logging.Logger | None = None) -> None:
        self.calls, self.episode_over = 0, True
