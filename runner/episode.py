"""One episode: reset -> observe/act until DONE/FAIL or max steps -> settle -> score -> files.

Every file goes through an atomic write. Whatever fails (the agent, its model API,
the desktop, the evaluator) ends up in status.json as an error with its traceback;
the recording is closed either way, and an error is never written as a score.
"""
from __future__ import annotations

import datetime as dt
import io
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from desktop_env.perturb import apply_perturbation

from .rescore import save_rescore_inputs
from .results import (ErrorRecord, PreviousError, TaskStatus, now_iso, remove_score, write_bytes_atomic,
                      write_json_atomic, write_score, write_status, write_trajectory)


class AgentProtocolError(Exception):
    """The agent's predict() returned something other than (response, list of actions)."""


class AgentOverBudget(Exception):
    """The agent used up its time for the task; the message says what it was waiting on, if a model call."""

    def __init__(self, message: str, fatal_cause: dict | None = None):
        super().__init__(message)
        self.fatal_cause = fatal_cause  # the model call it was stuck on failed in a way that will repeat


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


@dataclass
class EpisodeOutcome:
    status: str                          # "ok" or "error"
    score: float | None
    steps: int
    error: ErrorRecord | None = None
    durations: dict[str, float] = field(default_factory=dict)


def timestamp() -> str:
    return dt.datetime.now().strftime("%Y%m%d@%H%M%S%f")


def task_logger(task_dir: Path, task_id: str) -> logging.Logger:
    logger = logging.getLogger(f"osworld.task.{task_id}.{id(task_dir)}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    handler = logging.FileHandler(task_dir / "runtime.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    return logger


def close_logger(logger: logging.Logger) -> None:
    for handler in list(logger.handlers):
        handler.close()
        logger.removeHandler(handler)


SETTLED_CHANGE = 0.002  # a blinking cursor or a ticking clock changes less than this share of the screen


def changed_share(a: bytes, b: bytes) -> float:
    """Share of pixels that differ between two PNG screenshots (compared at a quarter size)."""
    from PIL import Image, ImageChops

    first, second = (Image.open(io.BytesIO(png)).convert("L").reduce(4) for png in (a, b))
    if first.size != second.size:
        return 1.0
    histogram = ImageChops.difference(first, second).point(lambda v: 255 if v > 8 else 0).histogram()
    return histogram[255] / (first.size[0] * first.size[1])


def settle(env: Any, config: EpisodeConfig) -> None:
    """Waits (bounded) until the screen stops changing: the apps finished reacting to the last action."""
    deadline = time.monotonic() + config.settle_timeout
    previous = env.controller.get_screenshot()
    while time.monotonic() < deadline:
        time.sleep(config.settle_interval)
        current = env.controller.get_screenshot()
        if changed_share(previous, current) < SETTLED_CHANGE:
            return
        previous = current


def check_prediction(prediction: Any) -> tuple[Any, list]:
    if not isinstance(prediction, tuple) or len(prediction) != 2:
        raise AgentProtocolError(f"predict() must return (response, actions), got {type(prediction).__name__}: "
                                 f"{prediction!r:.200}")
    response, actions = prediction
    if actions is None:
        actions = []
    if not isinstance(actions, list):
        raise AgentProtocolError(f"predict() must return a list of actions, got {type(actions).__name__}: {actions!r:.200}")
    return response, actions


def predict_within(agent: Any, instruction: str, obs: dict, seconds: float | None) -> Any:
    """agent.predict(), given up on after `seconds` (AgentOverBudget). The call runs in a thread of its own,
    which is left behind if it overruns (its model calls are told to stop before their next attempt)."""
    if seconds is None:
        return agent.predict(instruction, obs)
    from mm_agents.llm.retry import cancel, in_flight

    from .breaker import llm_fatal

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
        waiting = in_flight(thread.ident)
        cancel(thread)
        message = "the agent used up its time budget for the task (--agent-time-budget)"
        if waiting is None:
            raise AgentOverBudget(f"{message} in its own code, not in a model call")
        fatal = None
        if waiting.last_kind in ("unreachable", "timeout"):
            fatal = llm_fatal(waiting.last_kind, waiting.provider, waiting.model, waiting.url,
                              f"{message} waiting for {waiting}")
        raise AgentOverBudget(f"{message} waiting for {waiting}", fatal)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


def run_episode(agent: Any, env: Any, task_config: dict, instruction: str, task_dir: Path, config: EpisodeConfig,
                task: Any = None, task_dir_for_files: str | None = None,
                previous_errors: list[PreviousError] | None = None,
                on_step: Callable[[int], None] = lambda n: None) -> EpisodeOutcome:
    task_dir.mkdir(parents=True, exist_ok=True)
    # previous_errors from the start: a run killed mid-episode must not lose them
    status = TaskStatus("running", task_id=task_config.get("id"), started=now_iso(), steps=0,
                        previous_errors=list(previous_errors or []))
    write_status(task_dir, status)
    logger = task_logger(task_dir, str(task_config.get("id")))
    durations = {"reset": 0.0, "agent": 0.0, "env": 0.0, "evaluate": 0.0}
    trajectory: list[str] = []
    steps = 0
    score: float | None = None
    recording = False
    error: ErrorRecord | None = None
    try:
        started = time.monotonic()
        try:
            agent.reset(logger)
            if task is not None and callable(getattr(agent, "start_task", None)):
                agent.start_task(task)
            obs = env.reset(task_config, options={"task_dir": task_dir_for_files} if task_dir_for_files else None)
            if config.wait_after_reset:
                time.sleep(config.wait_after_reset)
                obs = env._get_obs()
        finally:  # a reset that failed took its time too
            durations["reset"] = time.monotonic() - started
        logger.info("reset done in %.2fs; instruction: %s", durations["reset"], instruction)
        if config.perturb:
            record = apply_perturbation(env, config.perturb, config.perturb_seed, str(task_config.get("id")))
            logger.info("perturbation: %s", json.dumps(record))
            status.perturbation = record
            write_status(task_dir, status)  # kept even if the episode fails later
            write_json_atomic(task_dir / "perturbation.json", record)
            settle(env, config)  # moved windows repaint after the window manager has placed them
            obs = env._get_obs()  # the agent starts from the perturbed screen
        write_bytes_atomic(task_dir / f"step_0_{timestamp()}.png", obs["screenshot"])
        if config.record:
            env.controller.start_recording()
            recording = True
        done = False

        def record_step(stamp: str, action: Any, info: dict, reward: float = 0, shot: str | None = None) -> None:
            trajectory.append(json.dumps({"step_num": steps, "action_timestamp": stamp, "action": jsonable(action),
                                          "response": jsonable(response), "reward": reward, "done": done,
                                          "info": jsonable(info), "screenshot_file": shot, "usage": step_usage},
                                         ensure_ascii=False))
            write_trajectory(task_dir, trajectory)

        while not done and steps < config.max_steps:
            started = time.monotonic()
            left = None if config.agent_time_budget is None else config.agent_time_budget - durations["agent"]
            try:
                prediction = predict_within(agent, instruction, obs, left)
            finally:
                durations["agent"] += time.monotonic() - started
            response, actions = check_prediction(prediction)
            step_usage = getattr(agent, "last_usage", None) or None
            steps += 1
            on_step(steps)
            logger.info("step %d response: %s", steps, response)
            if not actions:
                logger.info("step %d: the agent gave no valid action", steps)
                record_step(timestamp(), None, {"no_action": True})
            for action in actions:
                stamp = timestamp()
                started = time.monotonic()
                try:
                    obs, reward, done, info = env.step(action, config.sleep_after_execution)
                except Exception as e:  # the step counted has its line, saying how it ended
                    record_step(stamp, action, {"error": f"{type(e).__name__}: {e}"})
                    raise
                finally:
                    durations["env"] += time.monotonic() - started
                shot = f"step_{steps}_{stamp}.png"
                write_bytes_atomic(task_dir / shot, obs["screenshot"])
                record_step(stamp, action, info, reward, shot)
                logger.info("step %d action %r -> done=%s info=%s", steps, action, done, info)
                if done:
                    break
        started = time.monotonic()
        try:
            settle(env, config)
            evaluation = env.evaluate_explained()
            score = evaluation.score
        finally:
            durations["evaluate"] = time.monotonic() - started
        try:  # what `osworld rescore` needs; a failure here must not cost the score
            save_rescore_inputs(env, task_config, task_dir)
        except Exception as e:
            logger.warning("could not save the files for a later rescore: %s: %s", type(e).__name__, e)
        write_score(task_dir, score)
        status.evaluation = evaluation
        logger.info("score %s: %s", score, evaluation.explanation)
    except Exception as e:
        error = ErrorRecord.from_exception(e)
        logger.error("task failed with an error:\n%s", error.traceback)
    finally:
        if recording:
            try:
                env.controller.end_recording(str(task_dir / "recording.mp4"))
            except Exception as e:  # the episode's own error, if any, stays the one reported
                logger.error("closing the recording failed: %s: %s", type(e).__name__, e)
                if error is None:
                    error = ErrorRecord.from_exception(e, f"closing the recording failed: {e}")
        close_logger(logger)
    usage = getattr(agent, "usage", None)
    warnings = getattr(env, "setup_warnings", None)
    if warnings:
        status.warnings = jsonable(list(warnings))
    status.status, status.steps, status.finished = "error" if error else "ok", steps, now_iso()
    status.durations = {k: round(v, 3) for k, v in durations.items()}
    if error:
        status.error = error
        remove_score(task_dir)
        status.evaluation = None
        score = None
    if isinstance(usage, dict) and usage:
        status.usage = usage
    write_status(task_dir, status)
    return EpisodeOutcome(status.status, score, steps, error, status.durations)
