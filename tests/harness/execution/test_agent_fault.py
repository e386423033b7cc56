"""A desktop the agent's own actions broke scores 0 with the reason; what broke before its first action,
or outside the desktop, stays an error. Summaries count the 0, and a rescore keeps it."""
from __future__ import annotations

import io
import json

from PIL import Image

from desktop_env.errors import DesktopUnavailable, ResourceLimitExceeded, ServerRequestError
from desktop_env.evaluators.outcome import Evaluation
from osworld_harness.execution.episode import EpisodeConfig, run_episode
from osworld_harness.results.rescore import rescore_record
from osworld_harness.results.summary import find_runs, summarize_run

_png = io.BytesIO()
Image.new("RGB", (8, 8), "white").save(_png, format="PNG")
PNG = _png.getvalue()
LIMIT = "the desktop hit its process limit (1024) 3 times"
GONE = DesktopUnavailable("env server at unix:/x.sock unreachable for POST /execute after 1 attempt(s)")


class Screen:
    def __init__(self, env):
        self.env = env

    def get_screenshot(self):
        if self.env.dead:
            raise GONE
        return PNG

    def health(self):
        return {"ready": True, "dead_processes": self.env.dead_parts}


class Env:
    """A desktop that breaks in one way when `breaks_on` happens: during "reset", at "setup"'s end,
    in an action ("step"), in the screenshot after it ("observe") or in the evaluation. It raises
    `failure` then (None: it lives on), and from then on its limits say `limit`."""

    def __init__(self, breaks_on: str | None = None, limit: str = "", failure: Exception | None = GONE,
                 dead_parts: tuple[str, ...] = ()):
        self.controller = Screen(self)
        self.breaks_on, self.limit, self.failure = breaks_on, limit, failure
        self.dead_parts = list(dead_parts)
        self.dead = False
        self.limit_now = ""

    def _break(self, when: str) -> None:
        if self.breaks_on != when:
            return
        self.limit_now = self.limit
        self.dead = self.failure is GONE or when == "observe"
        if self.failure is not None and when != "observe":
            raise self.failure

    def reset(self, task_config, options=None):
        self._break("reset")
        self._break("setup")
        return {"screenshot": PNG}

    def step(self, action, pause=0):
        if action != "DONE":
            self._break("step")
            self._break("observe")
        return {"screenshot": self.controller.get_screenshot()}, 0.0, action == "DONE", {}

    def resource_limit_hit(self):
        return self.limit_now

    def evaluate_explained(self):
        if self.limit_now:
            raise ResourceLimitExceeded(f"{self.limit_now} during this task; its end state is not evaluated")
        self._break("evaluate")
        return Evaluation(1.0, "solved")


class Agent:
    def __init__(self, actions=("pyautogui.click(1, 1)",)):
        self.actions = list(actions)

    def reset(self, logger=None):
        pass

    def predict(self, instruction, obs):
        return "go", [self.actions.pop(0) if self.actions else "DONE"]


def run(task_dir, env, agent=None):
    outcome = run_episode(agent or Agent(), env, {"id": task_dir.name}, "do it", task_dir,
                          EpisodeConfig(record=False, settle_timeout=0))
    score = (task_dir / "result.txt").read_text().strip() if (task_dir / "result.txt").exists() else None
    return outcome, json.loads((task_dir / "status.json").read_text()), score


def test_a_limit_hit_during_the_agents_steps_scores_zero_with_the_limit(tmp_path):
    """A fork bomb refused at the process limit: the desktop lives on, and is not evaluated."""
    outcome, status, score = run(tmp_path / "fork", Env(breaks_on="step", limit=LIMIT, failure=None))
    assert (outcome.status, outcome.score, outcome.error, score) == ("ok", 0.0, None, "0.0")
    assert status["status"] == "ok" and "error" not in status
    assert status["agent_fault"] == {"kind": "resource_limit", "step": 2,
                                     "message": f"{LIMIT} during this task; its end state is not evaluated"}
    assert status["evaluation"]["score"] == 0.0 and LIMIT in status["evaluation"]["explanation"]
    assert "the agent's own actions broke the desktop" in status["evaluation"]["explanation"]


def test_a_desktop_that_stops_answering_after_an_action_scores_zero(tmp_path):
    for when in ("step", "observe"):
        outcome, status, score = run(tmp_path / when, Env(breaks_on=when))
        assert (outcome.status, score) == ("ok", "0.0"), when
        assert status["agent_fault"]["kind"] == "unresponsive" and status["agent_fault"]["step"] == 1
        assert "unreachable for POST /execute" in status["agent_fault"]["message"]


def test_a_desktop_error_while_a_limit_is_hit_is_the_limits_doing(tmp_path):
    """Xvfb OOM-killed: the screenshot fails with a 500, and the cause is the memory the agent took."""
    failure = ServerRequestError("GET", "/screenshot", 500, "cannot reach the X display")
    outcome, status, score = run(tmp_path / "oom", Env(breaks_on="step", limit="the desktop lost 1 process to an "
                                                       "OOM kill", failure=failure))
    assert (outcome.status, score, status["agent_fault"]["kind"]) == ("ok", "0.0", "resource_limit")
    message = status["agent_fault"]["message"]
    assert "OOM kill; then: ServerRequestError: GET /screenshot failed with HTTP 500" in message


def test_a_desktop_that_lost_a_part_of_its_session_after_an_action_scores_zero(tmp_path):
    """`pkill -9 Xvfb`: the server answers, with an error, and its /health names what died."""
    failure = ServerRequestError("GET", "/screenshot", 500, "lost the connection to X display ':0'")
    outcome, status, score = run(tmp_path / "x", Env(breaks_on="step", failure=failure, dead_parts=("Xvfb",)))
    assert (outcome.status, score, status["agent_fault"]["kind"]) == ("ok", "0.0", "unresponsive")
    assert status["agent_fault"]["message"].startswith("the desktop's Xvfb died; then: ServerRequestError")


def test_what_broke_before_the_agent_acted_or_outside_the_desktop_stays_an_error(tmp_path):
    outcome, status, score = run(tmp_path / "reset", Env(breaks_on="reset"))
    assert (outcome.status, score, status["error"]["type"]) == ("error", None, "DesktopUnavailable")
    assert "agent_fault" not in status
    outcome, status, score = run(tmp_path / "setup", Env(breaks_on="setup", limit=LIMIT, failure=None))
    assert (outcome.status, score, status["error"]["type"]) == ("error", None, "ResourceLimitExceeded")
    assert "during the task's setup, before the agent acted" in status["error"]["message"]
    assert status["steps"] == 0  # the agent was not asked
    # DONE reaches no desktop: a desktop that dies after it died of something else
    outcome, status, score = run(tmp_path / "done", Env(breaks_on="evaluate"), Agent(actions=["DONE"]))
    assert (outcome.status, status["error"]["type"]) == ("error", "DesktopUnavailable")
    # a server that answers with an error is a fault of the harness or the desktop, not the agent's
    failure = ServerRequestError("GET", "/screenshot", 500, "screenshot failed")
    outcome, status, score = run(tmp_path / "http500", Env(breaks_on="step", failure=failure))
    assert (outcome.status, status["error"]["type"]) == ("error", "ServerRequestError")


def test_summaries_count_the_zero_and_a_rescore_keeps_it(tmp_path):
    run_dir = tmp_path / "pyautogui" / "screenshot" / "m" / "os"
    run(run_dir / "solved", Env())
    run(run_dir / "sabotaged", Env(breaks_on="step"))
    [results] = find_runs(tmp_path)
    overall = summarize_run(results)[-1]
    assert (overall.tasks, overall.finished, overall.successes, overall.errors) == (2, 2, 1.0, 0)
    rescored = rescore_record(run_dir / "sabotaged", {"id": "sabotaged", "evaluator": {"func": "exact_match"}})
    assert (rescored["old_score"], rescored["new_score"], rescored["changed"]) == (0.0, 0.0, False)
    assert "the agent's own actions broke the desktop (unresponsive)" in rescored["evaluation"]["explanation"]
