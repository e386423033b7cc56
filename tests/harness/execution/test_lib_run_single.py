"""lib_run_single offers every entry point OSWorld's does, with its parameters, and each runs its agent
kind as OSWorld's runner of that name calls it, through our episode (status.json, traj.jsonl, errors).

The agents here have the shapes OSWorld's agent families have (their predict/step/reset signatures);
the desktop is a small stand-in that keeps OSWorld's action history and scores as OSWorld does (FAIL
decides an infeasible task), since what is pinned is how each runner drives its agent."""
from __future__ import annotations

import ast
import inspect
import io
import json
import re
import types

import pytest
from PIL import Image

import lib_run_single
from desktop_env.desktop_env import decided_by_last_action
from desktop_env.evaluators.outcome import Evaluation
from tests.osworld_reference import osworld_checkout

OSWORLD = osworld_checkout()
NO_CHECKOUT = f"no OSWorld checkout at {OSWORLD} (OSWORLD_CHECKOUT): lib_run_single.py and the runner scripts " \
              "are not in OSWorld's PyPI package"
_png = io.BytesIO()
Image.new("RGB", (8, 8), "white").save(_png, format="PNG")
PNG = _png.getvalue()
GOAL = "pyautogui.click(5, 5)"
ARGS = types.SimpleNamespace(sleep_after_execution=0.0, record=False, settle_timeout=0)


class Controller:
    def get_screenshot(self):
        return PNG


class Desktop:
    """OSWorld's env API as an episode uses it; the task is solved once GOAL was executed."""

    def __init__(self, vm_ip=None):
        self.controller = Controller()
        self.action_history: list = []
        self.task: dict = {}
        if vm_ip:
            self.vm_ip = vm_ip

    def reset(self, task_config=None, seed=None, options=None):
        self.task, self.action_history = task_config or {}, []
        return self.observe()

    def observe(self):
        return {"screenshot": PNG, "accessibility_tree": None, "terminal": None}

    def step(self, action, pause=0):
        self.action_history.append(action)
        return self.observe(), 0.0, action in ("DONE", "FAIL"), {}

    def evaluate_explained(self):
        evaluator = self.task.get("evaluator", {})
        decided = decided_by_last_action(evaluator, self.action_history[-1] if self.action_history else None)
        if decided is not None:
            return decided
        return Evaluation(1.0 if GOAL in self.action_history else 0.0, "goal clicked" if GOAL in self.action_history
                          else "goal not clicked")


FEASIBLE = {"id": "t", "instruction": "click it", "evaluator": {"func": "exact_match"}}
INFEASIBLE = {"id": "t", "instruction": "do the impossible", "evaluator": {"func": "infeasible"}}


def run(entry, agent, tmp_path, task=FEASIBLE, max_steps=5, env=None, **extra):
    env = env or Desktop()
    scores: list = []
    outcome = entry(agent, env, task, max_steps, task["instruction"], ARGS, str(tmp_path), scores, **extra)
    lines = [json.loads(line) for line in (tmp_path / "traj.jsonl").read_text().splitlines()] \
        if (tmp_path / "traj.jsonl").exists() else []
    return outcome, scores, env, lines


def osworld_entry_points() -> dict[str, list[str]]:
    tree = ast.parse((OSWORLD / "lib_run_single.py").read_text())
    return {node.name: [a.arg for a in node.args.args + node.args.kwonlyargs] for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("run_single_example")}


@pytest.mark.skipif(not (OSWORLD / "lib_run_single.py").is_file(), reason=NO_CHECKOUT)
def test_every_entry_point_of_osworlds_lib_run_single_is_here_with_its_parameters():
    theirs = osworld_entry_points()
    assert len(theirs) >= 15
    for name, parameters in theirs.items():
        ours = getattr(lib_run_single, name)
        assert list(inspect.signature(ours).parameters) == parameters, name


@pytest.mark.skipif(not (OSWORLD / "scripts").is_dir(), reason=NO_CHECKOUT)
def test_osworlds_runner_scripts_find_every_entry_point_they_call():
    called = {name for path in OSWORLD.rglob("*.py")
              for name in re.findall(r"lib_run_single\.(run_single_example\w*)", path.read_text(errors="replace"))}
    assert called and all(hasattr(lib_run_single, name) for name in called), called


class PlainAgent:
    def __init__(self, answers):
        self.answers, self.calls = list(answers), []

    def reset(self, logger=None):
        pass

    def predict(self, instruction, obs):
        self.calls.append(instruction)
        return self.answers.pop(0) if self.answers else ("nothing left", [])


def test_the_plain_entry_point_scores_and_appends(tmp_path):
    outcome, scores, _, lines = run(lib_run_single.run_single_example, PlainAgent([("go", [GOAL, "DONE"])]), tmp_path)
    assert (outcome.status, scores) == ("ok", [1.0]) and [line["action"] for line in lines] == [GOAL, "DONE"]


class CUAAgent:
    """OSWorld's CUA adapter shape: predict(instruction, obs, step_idx=...) -> (response, actions, info)."""

    def __init__(self):
        self.steps = []

    def reset(self, runtime_logger=None, vm_ip=None):
        self.vm_ip = vm_ip

    def predict(self, instruction, obs, step_idx):
        self.steps.append(step_idx)
        return ("thinking", [GOAL], {"tool": "click"}) if step_idx == 0 else ("done", [], {"tool": None})


def test_cua_gets_the_step_index_and_the_address_and_stops_on_no_action(tmp_path):
    agent = CUAAgent()
    outcome, scores, _, lines = run(lib_run_single.run_single_example_cua, agent, tmp_path,
                                    env=Desktop(vm_ip="127.0.0.9"))
    assert agent.steps == [0, 1] and agent.vm_ip == "127.0.0.9"  # not asked again after answering nothing
    assert scores == [1.0] and lines[0]["response"] == {"response": "thinking", "agent_info": {"tool": "click"}}


class ThreeValueAgent:
    def __init__(self, answers):
        self.answers = list(answers)

    def reset(self, runtime_logger):
        pass

    def predict(self, instruction, obs):
        return self.answers.pop(0)


@pytest.mark.parametrize("entry", [lib_run_single.run_single_example_kimi, lib_run_single.run_single_example_opencua])
def test_kimi_and_opencua_stop_at_an_error_action_without_acting(entry, tmp_path):
    agent = ThreeValueAgent([("r", ["Error: the model refused"], {"action": "none"}), ("r", [GOAL], {"action": "x"})])
    outcome, scores, env, _ = run(entry, agent, tmp_path)
    assert scores == [0.0] and env.action_history == [] and len(agent.answers) == 1


def test_evocua_takes_two_or_three_values_and_a_lone_done_is_not_an_error(tmp_path):
    agent = ThreeValueAgent([("r", [GOAL]), ("r", ["DONE"], {"action": "finish"})])
    _, scores, env, _ = run(lib_run_single.run_single_example_evocua, agent, tmp_path)
    assert env.action_history == [GOAL, "DONE"] and scores == [1.0]


class SelfSteppingAgent:
    """OSWorld's OpenAI CUA shape: the agent executes each action itself with step(action)."""

    def __init__(self, env, state_correct):
        self.env, self.state_correct, self.stepped = env, state_correct, []

    def reset(self, runtime_logger):
        pass

    def predict(self, instruction, obs):
        return {"state_correct": self.state_correct, "response": "ok"}, [{"action": GOAL}, {"action": "DONE"}]

    def step(self, action):
        self.stepped.append(action["action"])
        obs, reward, done, info = self.env.step(action["action"])
        return obs, reward, done, info, {}


@pytest.mark.parametrize("entry", [lib_run_single.run_single_example_openaicua, lib_run_single.run_single_example_agi,
                                   lib_run_single.run_single_example_gpt54])
def test_agents_that_step_themselves_and_the_state_correct_rule(entry, tmp_path):
    env = Desktop()
    agent = SelfSteppingAgent(env, state_correct=True)
    _, scores, _, lines = run(entry, agent, tmp_path / "correct", env=env)
    assert agent.stepped == [GOAL, "DONE"] and scores == [1.0] and len(lines) == 2
    agent = SelfSteppingAgent(env, state_correct=False)  # only the first action, then the episode ends
    _, scores, _, lines = run(entry, agent, tmp_path / "incorrect", env=env)
    assert agent.stepped == [GOAL] and len(lines) == 1 and scores == [1.0]


def test_autoglm_ends_an_unfinished_task_with_fail(tmp_path):
    agent = PlainAgent([("r", ["pyautogui.press('a')"])] * 3)
    _, scores, env, _ = run(lib_run_single.run_single_example_autoglm, agent, tmp_path, task=INFEASIBLE, max_steps=3)
    assert env.action_history[-1] == "FAIL" and scores == [1.0]  # as OSWorld's runner scores it


def test_mano_holds_the_modifier_through_the_click(tmp_path):
    agent = PlainAgent([("r", ["pyautogui.hotkey('shift')", GOAL]), ("r", ["DONE"])])
    _, _, env, _ = run(lib_run_single.run_single_example_mano, agent, tmp_path)
    assert env.action_history[0] == f"pyautogui.keyDown('shift')\n{GOAL}\npyautogui.keyUp('shift')"


def test_uipath_gets_the_args_and_the_step(tmp_path):
    seen = []

    class UiPath(PlainAgent):
        def predict(self, instruction, obs, args, step_idx):
            seen.append((args, step_idx))
            return ("r", [GOAL, "DONE"])

    run(lib_run_single.run_single_example_uipath, UiPath([]), tmp_path)
    assert seen == [(ARGS, 0)]


def test_os_symphony_resets_with_the_result_folder_and_is_told_its_last_step(tmp_path):
    class Symphony:
        def reset(self, result_dir):
            self.result_dir, self.last = result_dir, []

        def predict(self, instruction, obs, is_last_step):
            self.last.append(is_last_step)
            return ({"plan": "wait"}, ["WAIT"])

    agent = Symphony()
    run(lib_run_single.run_single_example_os_symphony, agent, tmp_path, max_steps=3)
    assert agent.result_dir == str(tmp_path) and agent.last == [False, False, True]


def test_mobileagent_v3_acts_itself_and_a_failed_step_leaves_no_score(tmp_path):
    class Mobile:
        def __init__(self, fail):
            self.fail = fail

        def reset(self, runtime_logger):
            pass

        def step(self, instruction, env, args):
            if self.fail:
                return {}, "tap", False, None, True
            env.step(GOAL)
            return {"screen": 1}, GOAL, True, 0, True

    _, scores, env, lines = run(lib_run_single.run_single_example_mobileagent_v3, Mobile(False), tmp_path / "ok")
    assert env.action_history == [GOAL] and scores == [1.0] and lines[0]["response"]["action_code"] == GOAL
    with pytest.raises(lib_run_single.EpisodeError, match="AgentStepFailed"):
        run(lib_run_single.run_single_example_mobileagent_v3, Mobile(True), tmp_path / "failed")
    status = json.loads((tmp_path / "failed" / "status.json").read_text())
    assert status["status"] == "error" and not (tmp_path / "failed" / "result.txt").exists()


class Verifier:
    def __init__(self, verdicts):
        self.verdicts = list(verdicts)

    def verify_completion(self, instruction, observation, trajectory, executor_plan):
        return self.verdicts.pop(0)


class VlaaAgent(PlainAgent):
    restarts = 0

    def reset(self):
        pass

    def restart_after_failed_verification(self, reason, missing_steps):
        self.restarts += 1


def test_vlaa_gui_asks_its_verifier_and_fails_a_task_it_keeps_calling_impossible(tmp_path):
    agent = VlaaAgent([({"executor_plan": "p"}, ["done"])] * 3)
    rejected = {"complete": False, "reason": "this is impossible", "missing_steps": ""}
    _, scores, env, _ = run(lib_run_single.run_single_example_vlaa_gui, agent, tmp_path / "fail", task=INFEASIBLE,
                            verifier_agent=Verifier([rejected] * 3))
    assert env.action_history == ["FAIL"] and agent.restarts == 2 and scores == [1.0]
    agent = VlaaAgent([({}, [GOAL]), ({}, ["done"])])
    _, scores, env, _ = run(lib_run_single.run_single_example_vlaa_gui, agent, tmp_path / "done",
                            verifier_agent=Verifier([{"complete": True}]))
    assert env.action_history == [GOAL, "DONE"] and scores == [1.0]


def test_human_scores_the_desktop_as_the_setup_left_it(tmp_path):
    env = Desktop()
    scores: list = []
    outcome = lib_run_single.run_single_example_human(env, FEASIBLE, 5, "click it", ARGS, str(tmp_path), scores)
    assert outcome.steps == 0 and scores == [0.0] and env.action_history == []


def test_the_black_box_cua_is_refused_with_why(tmp_path):
    with pytest.raises(NotImplementedError, match="osworld_cua_bridge"):
        lib_run_single.run_single_example_cua_blackbox(Desktop(), FEASIBLE, 5, "x", ARGS, str(tmp_path), [])
