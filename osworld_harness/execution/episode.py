"""One episode, phase by phase: reset, perturb, act (observe and act until DONE/FAIL or max steps),
score (after the screen settles), finish.

An EpisodeRecorder (osworld_harness/execution/recorder.py) owns the task folder meanwhile. Whatever fails (the agent,
its model API, the desktop, the evaluator) ends up in status.json as an error with its traceback,
unless it is the agent's own doing (osworld_harness/execution/fault.py): a desktop its actions broke scores 0, with
the reason. The recording is closed either way, and an error is never written as a score.
"""
from __future__ import annotations

import inspect
import io
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from PIL import Image, ImageChops

from desktop_env.controllers.setup_check import check_setup_took
from desktop_env.desktop_env import special_action
from desktop_env.errors import ResourceLimitExceeded
from desktop_env.evaluators.outcome import Evaluation
from desktop_env.live_view.desktop import show, view_url
from desktop_env.live_view.server import LiveViewUnavailable
from desktop_env.perturb import apply_perturbation
from mm_agents.llm.base import call_fatal_cause
from mm_agents.llm.retry import cancel, in_flight
from osworld_harness.results.rescore import save_rescore_inputs
from osworld_harness.results.task_folder import AgentFault, ErrorRecord, PreviousError

from .fault import agent_fault
from .recorder import EpisodeRecorder, timestamp


class AgentProtocolError(Exception):
    """The agent's predict() returned something other than (response, list of actions)."""


class AgentOverBudget(Exception):
    """The agent used up its time for the task; the message says what it was waiting on, if a model call."""

    def __init__(self, message: str, fatal_cause: dict[str, str] | None = None):
        super().__init__(message)
        self.fatal_cause = fatal_cause  # the model call it was stuck on failed in a way that will repeat


class Controller(Protocol):
    """What an episode asks of the desktop's controller directly (DesktopEnv's PythonController)."""

    def get_screenshot(self) -> bytes: ...

    def start_recording(self) -> Any: ...

    def end_recording(self, dest: str) -> Any: ...


class EpisodeEnv(Protocol):
    """What an episode needs of a desktop: OSWorld's API as DesktopEnv has it. `setup_warnings`, if
    there, goes into status.json; perturbing and rescoring reach the desktop through `controller`;
    `resource_limit_hit()`, if there, names the limits the desktop hit during the task."""
    controller: Controller

    def reset(self, task_config: dict[str, Any] | None = None, seed: int | None = None,
              options: dict[str, Any] | None = None) -> dict[str, Any]: ...

    def step(self, action: Any, pause: float = ...) -> tuple[dict[str, Any], float, bool, dict[str, Any]]: ...

    def observe(self) -> dict[str, Any]: ...

    def evaluate_explained(self) -> Evaluation: ...


@dataclass
class EpisodeConfig:
    max_steps: int = 15
    sleep_after_execution: float = 0.0
    record: bool = True
    wait_after_reset: float = 0.0       # for VMs that need it; the local desktop polls readiness
    settle_timeout: float = 10.0        # bounded wait for the screen to stop changing before scoring
    settle_interval: float = 0.5
    perturb: str | None = None          # "layout" / "clutter": disturb the desktop after setup, before the agent
    perturb_seed: int = 0
    agent_time_budget: float | None = None  # seconds of predict() per task; None: no limit
    check_setup: bool = True            # a setup that drove apps with keys must not leave the task solved
    watch: bool = False                 # show the desktop live in the browser (desktop_env/live_view/)


@dataclass
class EpisodeOutcome:
    status: str                          # "ok" or "error"
    score: float | None
    steps: int
    error: ErrorRecord | None = None
    durations: dict[str, float] = field(default_factory=dict)
    agent_fault: AgentFault | None = None  # the agent broke the desktop: scored 0


SETTLED_CHANGE = 0.002  # a blinking cursor or a ticking clock changes less than this share of the screen


def changed_share(a: bytes, b: bytes) -> float:
    """Share of pixels that differ between two PNG screenshots (compared at a quarter size)."""
    first, second = (Image.open(io.BytesIO(png)).convert("L").reduce(4) for png in (a, b))
    if first.size != second.size:
        return 1.0
    histogram = ImageChops.difference(first, second).point(lambda v: 255 if v > 8 else 0).histogram()
    return histogram[255] / (first.size[0] * first.size[1])


def settle(env: EpisodeEnv, config: EpisodeConfig) -> None:
    """Waits (bounded) until the screen stops changing: the apps finished reacting to the last action."""
    deadline = time.monotonic() + config.settle_timeout
    previous = env.controller.get_screenshot()
    while time.monotonic() < deadline:  # pauses before its first look, unlike wait_until: a screenshot needs one before
        time.sleep(config.settle_interval)
        current = env.controller.get_screenshot()
        if changed_share(previous, current) < SETTLED_CHANGE:
            return
        previous = current


def check_prediction(prediction: Any) -> tuple[Any, list[Any]]:
    if not isinstance(prediction, tuple) or len(prediction) != 2:
        raise AgentProtocolError(f"predict() must return (response, actions), got {type(prediction).__name__}: "
                                 f"{prediction!r:.200}")
    response, actions = prediction
    if actions is None:
        actions = []
    if not isinstance(actions, list):
        raise AgentProtocolError(f"predict() must return a list of actions, "
                                 f"got {type(actions).__name__}: {actions!r:.200}")
    return response, actions


def predict_within(agent: Any, instruction: str, obs: dict[str, Any], seconds: float | None) -> Any:
    """agent.predict(), given up on after `seconds` (AgentOverBudget). The call runs in a thread of its own,
    which is left behind if it overruns (its model calls are told to stop before their next attempt)."""
    if seconds is None:
        return agent.predict(instruction, obs)

    outcome: dict[str, Any] = {}

    def call() -> None:
        try:
            outcome["value"] = agent.predict(instruction, obs)
        except BaseException as e:  # handed to the episode's thread, traceback and all
            outcome["error"] = e

    thread = threading.Thread(target=call, name="agent-predict", daemon=True)
    thread.start()
    thread.join(max(seconds, 0.0))
    if thread.is_alive():
        waiting = in_flight(cast(int, thread.ident))  # set by start()
        cancel(thread)
        message = "the agent used up its time budget for the task (--agent-time-budget)"
        if waiting is None:
            raise AgentOverBudget(f"{message} in its own code, not in a model call")
        fatal = None
        if waiting.last_kind in ("unreachable", "timeout"):
            fatal = call_fatal_cause(waiting.last_kind, waiting.provider, waiting.model, waiting.url,
                                     f"{message} waiting for {waiting}")
        raise AgentOverBudget(f"{message} waiting for {waiting}", fatal)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def takes_argument(function: Callable[..., Any], name: str) -> bool:
    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):  # a builtin without a signature: called the plain way
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def call_problems(agent_class: type) -> list[str]:
    """How the calls Episode makes would fail on an agent of this class, said before any desktop starts:
    `reset(logger)`, `predict(instruction, obs)` and, when it has one, `start_task(task)` (with `trial=` when
    it names one); [] when they fit."""
    calls: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [("reset", ("logger",), ()),
                                                                  ("predict", ("instruction", "obs"), ())]
    start_task = getattr(agent_class, "start_task", None)
    if callable(start_task):
        trial = ("trial",) if takes_argument(start_task, "trial") else ()
        calls.append(("start_task", ("task",), trial))
    problems = []
    for name, positional, named in calls:
        method = getattr(agent_class, name)
        try:
            signature = inspect.signature(method)
        except (TypeError, ValueError):  # a builtin without a signature: nothing to say before calling it
            continue
        # A plain function is called on an instance: its first parameter is the agent itself.
        bound = inspect.isfunction(inspect.getattr_static(agent_class, name))
        try:
            signature.bind(*((None,) if bound else ()), *positional, **dict.fromkeys(named))
        except TypeError as e:
            shown = f"{name}({', '.join([*positional, *(f'{n}=...' for n in named)])})"
            problems.append(f"{agent_class.__qualname__}.{name}{signature} cannot be called as each task calls it, "
                            f"{shown}: {e}")
    return problems


class Episode:
    """One task on one desktop, as its phases; the recorder writes what each phase does."""

    def __init__(self, agent: Any, env: EpisodeEnv, config: EpisodeConfig, recorder: EpisodeRecorder,
                 on_step: Callable[[int], None] = lambda n: None) -> None:
        self.agent, self.env, self.config, self.recorder, self.on_step = agent, env, config, recorder, on_step
        self.log = recorder.log
        self.steps = 0
        self.acted = False  # an action of the agent (not DONE, FAIL or WAIT) was sent to the desktop

    def reset(self, task_config: dict[str, Any], instruction: str, task: Any = None,
              task_dir_for_files: str | None = None, trial: int = 1,
              another_reset_follows: bool = True) -> dict[str, Any]:
        """The agent and the desktop made ready for the task; returns the first observation."""
        with self.recorder.timed("reset"):
            self.agent.reset(self.log)
            start_task = getattr(self.agent, "start_task", None)
            if task is not None and callable(start_task):
                # An agent that seeds its sampling per trial asks for the trial by name (mm_agents/base.py).
                start_task(task, trial=trial) if takes_argument(start_task, "trial") else start_task(task)
            options: dict[str, Any] = {"task_dir": task_dir_for_files} if task_dir_for_files else {}
            if not another_reset_follows:  # only then: an env of a caller's own may not know the option
                options["another_reset_follows"] = False
            obs = self.env.reset(task_config, options=options or None)
            if self.config.wait_after_reset:
                time.sleep(self.config.wait_after_reset)
                obs = self.env.observe()
            if self.config.check_setup:
                check_setup_took(self.env, task_config)
        self.log.info("reset done in %.2fs; instruction: %s", self.recorder.durations["reset"], instruction)
        return obs

    def show_live(self, task_id: str, instruction: str) -> Any:
        """The desktop in the live view for this task, when the run watches or the agent is a person
        (`takes_the_desktop`, mm_agents/human_agent.py, who then gets it); None otherwise. A run that only
        watches goes on without the view when it cannot be had."""
        human = bool(getattr(self.agent, "takes_the_desktop", False))
        if not (human or self.config.watch):
            return None
        try:
            desktop = show(self.env, task_id, instruction, human=human)
        except LiveViewUnavailable as e:
            if human:
                raise
            self.log.warning("no live view: %s", e)
            return None
        self.log.info("live view: %s", view_url(desktop))  # without its token: the log is a result
        self.recorder.live_view(view_url(desktop))
        if human:
            self.agent.attach_view(desktop)
        return desktop

    def perturb(self, obs: dict[str, Any], task_id: str) -> dict[str, Any]:
        """The desktop disturbed as --perturb asks (if it does); returns the screen the agent starts from."""
        if self.config.perturb:
            self.recorder.perturbation(apply_perturbation(self.env, self.config.perturb, self.config.perturb_seed,
                                                          task_id))
            settle(self.env, self.config)  # moved windows repaint after the window manager has placed them
            obs = self.env.observe()
        return obs

    def act(self, instruction: str, obs: dict[str, Any]) -> None:
        """From the screen the agent starts from (step 0) and with the recording on: the agent's answers
        acted on until one says DONE or FAIL, or max_steps answers."""
        self.recorder.screenshot(0, obs["screenshot"])
        setup_limits = self.limit_hit()
        if setup_limits:  # before any action of the agent: the task's or the desktop's doing, not the agent's
            raise ResourceLimitExceeded(f"{setup_limits} during the task's setup, before the agent acted")
        self.recorder.screen(obs["screenshot"])
        if self.config.record:
            self.recorder.start_recording(self.env.controller)
        done = False
        # An agent ends the episode without an action by setting `episode_over` (mm_agents/base.py).
        while not done and self.steps < self.config.max_steps and not getattr(self.agent, "episode_over", False):
            budget = self.config.agent_time_budget
            with self.recorder.timed("agent"):
                left = None if budget is None else budget - self.recorder.durations["agent"]
                prediction = predict_within(self.agent, instruction, obs, left)
            response, actions = check_prediction(prediction)
            usage = getattr(self.agent, "last_usage", None) or None
            self.steps += 1
            self.on_step(self.steps)
            self.log.info("step %d response: %s", self.steps, response)
            if not actions:
                self.log.info("step %d: the agent gave no valid action", self.steps)
                self.recorder.step(self.steps, timestamp(), None, response, {"no_action": True}, usage)
            for action in actions:
                obs, done = self._take(action, response, usage)
                if done:
                    break

    def _take(self, action: Any, response: Any, usage: Any) -> tuple[dict[str, Any], bool]:
        stamp = timestamp()
        self.acted = self.acted or special_action(action) is None
        with self.recorder.timed("env"):
            try:
                obs, reward, done, info = self.env.step(action, self.config.sleep_after_execution)
            except Exception as e:  # the step counted has its line, saying how it ended
                self.recorder.step(self.steps, stamp, action, response, {"error": f"{type(e).__name__}: {e}"}, usage)
                raise
        shot = self.recorder.screenshot(self.steps, obs["screenshot"], stamp)
        self.recorder.step(self.steps, stamp, action, response, info, usage, reward, done, shot)
        self.log.info("step %d action %r -> done=%s info=%s", self.steps, action, done, info)
        return obs, done

    def score(self, task_config: dict[str, Any]) -> float:
        """The task's score once the screen settled, with the files a later `osworld rescore` needs."""
        with self.recorder.timed("evaluate"):
            settle(self.env, self.config)
            evaluation = self.env.evaluate_explained()
        try:  # what `osworld rescore` needs; a failure here must not cost the score
            save_rescore_inputs(self.env, task_config, self.recorder.task_dir)
        except Exception as e:
            self.log.warning("could not save the files for a later rescore: %s: %s", type(e).__name__, e)
        self.recorder.score(evaluation.score, evaluation)
        return evaluation.score

    def limit_hit(self) -> str:
        """The desktop's sentence on the limits it hit during this task; "" for none, or when it cannot tell."""
        limit_hit = getattr(self.env, "resource_limit_hit", None)
        if limit_hit is None:
            return ""
        try:
            return str(limit_hit())
        except Exception as e:  # what the limits say is a detail of the record, not worth its error
            self.log.warning("could not read the desktop's limits: %s: %s", type(e).__name__, e)
            return ""

    def save_desktop_logs(self) -> None:
        """desktop.log in the task folder, for a task that did not succeed: what the desktop's own parts
        said (a shortcut that opened nothing, an app that failed to start) while the agent worked."""
        logs = getattr(self.env, "desktop_logs", None)
        try:
            self.recorder.desktop_logs(logs() if logs is not None else {})
        except Exception as e:  # the logs explain a failure; they are not worth one of their own
            self.log.warning("could not save the desktop's logs: %s: %s", type(e).__name__, e)

    def dead_parts(self) -> list[str]:
        """The parts of the desktop's session that died (its /health), [] when it cannot tell."""
        health = getattr(self.env.controller, "health", None)
        try:
            dead = health().get("dead_processes") if health is not None else None
        except Exception as e:  # a desktop that cannot say is not taken to have lost a part
            self.log.warning("could not ask the desktop which of its parts died: %s: %s", type(e).__name__, e)
            return []
        return [str(name) for name in dead] if isinstance(dead, list) else []

    def fault_of(self, failure: Exception) -> AgentFault | None:
        """The agent's fault in `failure` (osworld_harness/execution/fault.py); None before any of its actions reached
        the desktop."""
        if not self.acted:
            return None
        return agent_fault(failure, self.steps, self.limit_hit(), self.dead_parts)

    def finish(self, failure: Exception | None, score: float | None) -> EpisodeOutcome:
        """The final record, with the agent's usage and the setup's warnings: the score, 0 for a desktop the
        agent broke, or the error."""
        error = fault = None
        if failure is not None:
            fault = self.fault_of(failure)
            if fault is not None:
                self.log.warning("scored 0: %s", fault.text())
                self.recorder.agent_fault(fault)
                score = 0.0
            else:
                error = ErrorRecord.from_exception(failure)
                self.log.error("task failed with an error:\n%s", error.traceback)
        if error is not None or score is None or score < 1.0:
            self.save_desktop_logs()
        status = self.recorder.finish(error, self.steps, usage=getattr(self.agent, "usage", None),
                                      warnings=getattr(self.env, "setup_warnings", None),
                                      model_calls=getattr(self.agent, "model_calls", None),
                                      recorded_score=getattr(self.agent, "recorded_score", None),
                                      readiness=getattr(self.env, "readiness", None))
        return EpisodeOutcome(status.status, None if error else score, self.steps, error, status.durations, fault)


def run_episode(agent: Any, env: EpisodeEnv, task_config: dict[str, Any], instruction: str, task_dir: Path,
                config: EpisodeConfig, task: Any = None, task_dir_for_files: str | None = None,
                previous_errors: list[PreviousError] | None = None,
                on_step: Callable[[int], None] = lambda n: None, trial: int = 1,
                another_reset_follows: bool = True) -> EpisodeOutcome:
    """Runs `task_config` (trial `trial` of it) with `agent` on `env` into `task_dir`; every failure is a
    recorded error, or a 0 when the agent broke its desktop. `another_reset_follows` is passed to the
    env's reset (DesktopEnv: whether to ready the next task's desktop meanwhile)."""
    recorder = EpisodeRecorder(task_dir, task_config.get("id"), previous_errors, trial=trial,
                               task_sha256=getattr(task, "sha256", None), instruction=instruction)
    episode = Episode(agent, env, config, recorder, on_step)
    score: float | None = None
    failure: Exception | None = None
    try:
        try:
            obs = episode.reset(task_config, instruction, task, task_dir_for_files, trial, another_reset_follows)
            obs = episode.perturb(obs, str(task_config.get("id")))
            live = episode.show_live(str(task_config.get("id")), instruction)
            try:
                episode.act(instruction, obs)
            finally:
                if live is not None:
                    live.end_task()  # the page takes no input until the next task
            score = episode.score(task_config)
        except Exception as e:
            failure = e
        finally:
            stopped = recorder.end_recording()
        return episode.finish(failure or stopped, score)
    finally:
        recorder.close_log()
