"""An agent of OSWorld's runs in a process of its own, whose `mm_agents` and `desktop_env` are its checkout's and
none of this harness's is on its path: its constructor, reset() and predict() called across a pipe
(mm_agents/agent_process.py). What it raises is recorded as an agent's exception is, traceback and all; a process
that dies is an error naming how it ended and its last words."""
from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from PIL import Image

from desktop_env.evaluators.outcome import Evaluation
from mm_agents.agent_process import AgentProcessDied, ProcessAgent
from mm_agents.loader import AgentLoadError, build_agent, declared_defaults, load_agent_class
from osworld_harness.execution.episode import EpisodeConfig, call_problems, run_episode
from osworld_harness.execution.run import RunConfig
from osworld_harness.execution.task_worker import DesktopWorker

_png = io.BytesIO()
Image.new("RGB", (16, 9), "red").save(_png, format="PNG")
PNG = _png.getvalue()
OBS = {"screenshot": PNG, "accessibility_tree": "<desktop-frame name='Desktop'/>", "terminal": None,
       "instruction": "do it"}

# Our mm_agents.prompts has no CHECKOUT_PROMPT (and OSWorld's has no NO_ANSWER): imported beside ours, one of the
# two would fail as the frictions do.
AGENT = '''
import importlib.util, logging, os, sys
from mm_agents.prompts import CHECKOUT_PROMPT
from desktop_env.checkout_marker import MARK
logger = None

class EchoAgent:
    def __init__(self, model="echo-1", temperature=0.5, action_space="pyautogui"):
        self.model, self.temperature = model, temperature
        print("loading the echo model", file=sys.stderr)

    def reset(self, _logger=None):
        global logger
        logger = _logger or logging.getLogger("desktopenv.agent")

    def predict(self, instruction, obs):
        import hashlib
        print("a print to stdout does not break the pipe")
        logger.info("predicting for %s", instruction)
        if instruction == "raise":
            raise ValueError("the model said nonsense")
        if instruction == "exit":
            print("giving up", file=sys.stderr, flush=True)
            os._exit(3)
        if instruction == "hang":
            import time; time.sleep(60)
        seen = {"prompt": CHECKOUT_PROMPT, "mark": MARK, "model": self.model, "temperature": self.temperature,
                "png_sha256": hashlib.sha256(obs["screenshot"]).hexdigest(), "tree": obs["accessibility_tree"],
                "first_on_path": sys.path[0], "cwd": os.getcwd(),
                "harness_importable": [n for n in ("osworld_harness", "osworld_cli", "lib_run_single")
                                       if importlib.util.find_spec(n) is not None]}
        return seen, ["pyautogui.click(1, 2)", "DONE"]
'''


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A folder laid out as OSWorld's checkout is: its own mm_agents and desktop_env packages."""
    root = tmp_path / "OSWorld"
    (root / "mm_agents").mkdir(parents=True)
    (root / "desktop_env").mkdir()
    (root / "mm_agents" / "__init__.py").write_text("")
    (root / "mm_agents" / "prompts.py").write_text('CHECKOUT_PROMPT = "You are an agent of the checkout."\n')
    (root / "mm_agents" / "agent.py").write_text(AGENT)
    (root / "desktop_env" / "__init__.py").write_text("")
    (root / "desktop_env" / "checkout_marker.py").write_text('MARK = "the checkout\'s desktop_env"\n')
    return root


def spec(checkout: Path) -> str:
    return f"{checkout}/mm_agents/agent.py:EchoAgent"


def built(checkout: Path, **kwargs) -> ProcessAgent:
    agent = build_agent(spec(checkout), **kwargs)
    assert isinstance(agent, ProcessAgent)
    agent.reset(logging.getLogger("test-agent-process"))
    return agent


def test_an_agent_file_of_a_checkout_runs_with_the_checkouts_packages_and_answers(checkout):
    agent = built(checkout, model="gpt-4o", temperature=0.0, not_taken="dropped")
    try:
        seen, actions = agent.predict("do it", OBS)
    finally:
        agent.close()
    assert actions == ["pyautogui.click(1, 2)", "DONE"]
    assert seen["prompt"] == "You are an agent of the checkout." and seen["mark"] == "the checkout's desktop_env"
    assert (seen["model"], seen["temperature"]) == ("gpt-4o", 0.0)
    assert seen["png_sha256"] == hashlib.sha256(PNG).hexdigest() and seen["tree"] == OBS["accessibility_tree"]
    assert seen["first_on_path"] == seen["cwd"] == str(checkout)
    assert seen["harness_importable"] == []  # even under this venv's Python, with its editable install


def test_the_class_is_described_by_its_process_for_the_checks_before_a_run(checkout):
    cls = load_agent_class(spec(checkout))
    assert cls.__qualname__ == "EchoAgent" and cls.__module__ == "mm_agents.agent"
    assert declared_defaults(spec(checkout)) == {"model": "echo-1", "temperature": 0.5, "action_space": "pyautogui"}
    assert call_problems(cls) == []


def test_the_episode_acts_on_its_answer_and_its_log_has_what_the_agent_logged(tmp_path, checkout):
    env = Env()
    outcome = run_episode(built(checkout), env, {"id": "t"}, "do it", tmp_path / "task",
                          EpisodeConfig(record=False, settle_timeout=0))
    assert outcome.status == "ok" and outcome.score == 1.0 and env.actions == ["pyautogui.click(1, 2)", "DONE"]
    steps = [json.loads(line) for line in (tmp_path / "task" / "traj.jsonl").read_text().splitlines()]
    assert steps[0]["action"] == "pyautogui.click(1, 2)" and steps[0]["response"]["prompt"].startswith("You are")
    log = next((tmp_path / "task").glob("*.log")).read_text()
    assert "predicting for do it" in log and "a print to stdout does not break the pipe" in log


def test_an_exception_in_the_agent_is_its_error_record_with_its_own_traceback(tmp_path, checkout):
    outcome = run_episode(built(checkout), Env(), {"id": "t"}, "raise", tmp_path,
                          EpisodeConfig(record=False, settle_timeout=0))
    error = json.loads((tmp_path / "status.json").read_text())["error"]
    assert outcome.status == "error" and outcome.score is None
    assert (error["type"], error["message"]) == ("ValueError", "the model said nonsense")
    assert f'File "{checkout}/mm_agents/agent.py"' in error["traceback"]
    assert 'raise ValueError("the model said nonsense")' in error["traceback"]
    assert error["traceback"].rstrip().endswith("ValueError: the model said nonsense")


def test_an_agent_process_that_exits_is_an_error_with_its_status_and_last_words(checkout):
    agent = built(checkout)
    with pytest.raises(AgentProcessDied, match=r"exited with status 3 while answering predict\(\)") as died:
        agent.predict("exit", OBS)
    assert "loading the echo model" in str(died.value) and "giving up" in str(died.value)
    with pytest.raises(AgentProcessDied):  # and so is every call after it
        agent.predict("do it", OBS)


def test_a_killed_agent_process_is_an_error_naming_the_signal(tmp_path, checkout):
    agent = built(checkout)
    os.kill(agent.process.process.pid, signal.SIGKILL)
    outcome = run_episode(agent, Env(), {"id": "t"}, "do it", tmp_path, EpisodeConfig(record=False, settle_timeout=0))
    error = json.loads((tmp_path / "status.json").read_text())["error"]
    assert outcome.status == "error" and error["type"] == "AgentProcessDied"
    assert f"(pid {agent.process.process.pid}, {sys.executable}) was killed by SIGKILL" in error["message"]


def test_the_agent_process_ends_with_the_agent_and_with_the_harness(checkout, tmp_path):
    agent = built(checkout)
    process = agent.process.process
    agent.close()
    assert process.poll() == -signal.SIGKILL
    harness = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        from mm_agents.loader import build_agent
        agent = build_agent({spec(checkout)!r})
        print(agent.process.process.pid, flush=True)
        agent.predict("hang", {{}})
        """)], stdout=subprocess.PIPE, text=True)
    assert harness.stdout is not None
    child = int(harness.stdout.readline())
    harness.kill()
    harness.wait()
    assert gone_within(child, 5)


def test_osworlds_module_path_runs_from_a_checkout_on_pythonpath_and_is_refused_clearly_without(checkout,
                                                                                                monkeypatch):
    with pytest.raises(AgentLoadError, match=r"mm_agents.agent is not a module of this harness.*--agent-python"):
        load_agent_class("mm_agents.agent:EchoAgent")
    monkeypatch.setenv("PYTHONPATH", str(checkout))
    agent = build_agent("mm_agents.agent:EchoAgent")
    try:
        agent.reset()
        seen, _ = agent.predict("do it", OBS)
    finally:
        agent.close()
    assert seen["prompt"] == "You are an agent of the checkout."
    assert not issubclass(load_agent_class("mm_agents.prompt_agent:PromptAgent"), ProcessAgent)  # ours: here


def test_an_agent_that_cannot_be_imported_there_says_what_is_missing(checkout):
    (checkout / "mm_agents" / "needy.py").write_text("import backoff_not_installed\nclass A: pass\n")
    with pytest.raises(AgentLoadError, match=r"No module named 'backoff_not_installed'; that Python .* lacks"):
        load_agent_class(f"{checkout}/mm_agents/needy.py:A")
    with pytest.raises(AgentLoadError, match=r"--agent-python .*: .* is not a Python interpreter"):
        load_agent_class("mm_agents.agent:PromptAgent", agent_python=str(checkout / "no-venv"))


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


class Controller:
    def get_screenshot(self):
        return PNG


class Env:
    """A desktop that takes every action and scores 1."""

    def __init__(self):
        self.controller = Controller()
        self.actions: list = []

    def reset(self, task_config, options=None):
        return dict(OBS)

    def step(self, action, pause=0):
        self.actions.append(action)
        return dict(OBS), 0.0, action == "DONE", {}

    def observe(self):
        return dict(OBS)

    def evaluate_explained(self):
        return Evaluation(1.0, "solved")

    def close(self):
        pass


def test_with_a_checkout_on_pythonpath_the_harness_is_its_own_and_the_checkouts_agent_runs_apart(checkout):
    env = {**os.environ, "PYTHONPATH": str(checkout), "OPENAI_API_KEY": "test"}
    for agent in ("prompt", "mm_agents.agent:EchoAgent"):  # ours imports NO_ANSWER from our mm_agents.prompts
        done = subprocess.run([sys.executable, "-m", "osworld_cli.main", "run", "--agent", agent, "--dry-run",
                               "--domain", "os"], env=env, cwd=checkout.parent,  # as the installed `osworld`
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"agent: {agent}" in done.stdout
    assert "model echo-1 (the agent's own default)" in done.stdout  # as the checkout's EchoAgent declares it


def test_a_worker_builds_the_agent_anew_after_its_process_died(tmp_path, checkout):
    worker = DesktopWorker(RunConfig(agent=spec(checkout), model="m", observation_type="screenshot",
                                     result_dir=str(tmp_path), record=False), env_factory=Env)
    try:
        results = [worker.run_task("os", "os-organize-invoices", tmp_path / "1", [])]
        first = worker.agent.process.process
        os.kill(first.pid, signal.SIGKILL)
        results += [worker.run_task("os", "os-organize-invoices", tmp_path / str(n), []) for n in (2, 3)]
        assert worker.agent.process.process.pid != first.pid
    finally:
        worker.close()
    assert [r.status for r in results] == ["ok", "error", "ok"] and "killed by SIGKILL" in results[1].error


def test_a_users_agent_without_osworlds_packages_runs_here_unless_given_another_python(tmp_path):
    (tmp_path / "desktop_env").mkdir()  # a folder of that name, not a package: not a checkout
    (tmp_path / "mine.py").write_text("import sys\nclass Mine:\n    def reset(self, logger=None): pass\n"
                                      "    def predict(self, instruction, obs): return sys.executable, ['DONE']\n")
    assert not issubclass(load_agent_class(f"{tmp_path}/mine.py:Mine"), ProcessAgent)
    apart = build_agent(f"{tmp_path}/mine.py:Mine", agent_python=str(Path(sys.executable).parent.parent))
    try:
        assert isinstance(apart, ProcessAgent) and apart.predict("do it", OBS) == (sys.executable, ["DONE"])
    finally:
        apart.close()
