"""`osworld run` on real desktops: reference and no-op agents, errors kept, kill -9 and resume, parallel envs."""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from desktop_env.desktop_env import DesktopEnv
from desktop_env.providers.local.boot.env_dir import runtime_root
from desktop_env.tasks.loader import BUILTIN_ROOT
from desktop_env.waiting import poll_until
from osworld_cli.errors import RUN_STOPPED
from osworld_cli.main import cli
from osworld_harness.execution.events import Started
from osworld_harness.execution.run import run_benchmark
from osworld_harness.execution.worker_pool import ThreadBackend
from osworld_harness.results.config import ResumeMismatch, RunConfig
from tests.agents.wire_servers import reply_after, reply_error, reply_text
from tests.processes import child_pids, ended, what_it_is_doing

pytestmark = pytest.mark.desktop

OS_TASKS = ["os-organize-invoices", "os-install-photoshop"]


@pytest.fixture(scope="module")
def meta(tmp_path_factory) -> str:
    """A meta file with the built-in os tasks, in OSWorld's layout (examples/ beside it)."""
    root = tmp_path_factory.mktemp("tasks")
    for name in ("examples", "solutions", "files"):
        (root / name).symlink_to(BUILTIN_ROOT / name)
    (root / "test_os.json").write_text(json.dumps({"os": OS_TASKS}))
    return str(root / "test_os.json")


def results_of(result_dir: Path, model: str) -> dict[str, dict]:
    out = {}
    for task_id in OS_TASKS:
        folder = result_dir / "pyautogui" / "screenshot" / model / "os" / task_id
        status = json.loads((folder / "status.json").read_text())
        score = (folder / "result.txt").read_text().strip() if (folder / "result.txt").exists() else None
        out[task_id] = {"status": status["status"], "score": score, "folder": folder, "record": status}
    return out


def config(meta: str, result_dir: Path, **overrides) -> RunConfig:
    # No screen recording (its ffmpeg is a few percent of the CPU these tests use) but where a test looks at it.
    options: dict[str, Any] = dict(agent="oracle", model="reference", observation_type="screenshot", tasks=meta,
                                   result_dir=str(result_dir), cache_dir=str(result_dir / "cache"), record=False)
    options.update(overrides)
    return RunConfig(**options)


@pytest.fixture(scope="module")
def reference_run(meta, tmp_path_factory):
    result_dir = tmp_path_factory.mktemp("reference")
    summary = run_benchmark(config(meta, result_dir, record=True))
    return result_dir, summary


def test_reference_agent_scores_one_on_every_task(reference_run):
    result_dir, summary = reference_run
    results = results_of(result_dir, "reference")
    assert {t: (r["status"], r["score"]) for t, r in results.items()} == {t: ("ok", "1.0") for t in OS_TASKS}
    folder = results["os-organize-invoices"]["folder"]
    assert (folder / "recording.mp4").stat().st_size > 0 and (folder / "runtime.log").exists()
    steps = [json.loads(line) for line in (folder / "traj.jsonl").read_text().splitlines()]
    assert [s["step_num"] for s in steps] == [1, 2, 3, 4] and steps[-1]["done"] is True
    assert all((folder / s["screenshot_file"]).exists() for s in steps)
    assert list(folder.glob("step_0_*.png"))
    assert not (folder / "desktop.log").exists()  # kept only for a task that did not succeed
    args = json.loads((result_dir / "pyautogui" / "screenshot" / "reference" / "args.json").read_text())
    assert args["config"]["agent"] == "oracle" and "python" in args["versions"]


def test_noop_agent_scores_zero(meta, tmp_path):
    run_benchmark(config(meta, tmp_path, agent="noop", model="noop", num_envs=2))
    results = results_of(tmp_path, "noop")
    assert {t: r["score"] for t, r in results.items()} == {t: "0.0" for t in OS_TASKS}
    # A failed task keeps what the desktop's own parts said while it ran.
    desktop_log = (results[OS_TASKS[0]]["folder"] / "desktop.log").read_text()
    assert "===== gnome-shell.log =====" in desktop_log and "GNOME Shell started at" in desktop_log


def variants_of_a_task(root: Path, ids: list[str], **changes) -> str:
    """A task set with OS_TASKS[0] as it is and changed copies of it (id -> a function of its JSON),
    each with the reference solution; returns the meta file listing `ids`."""
    (root / "examples" / "os").mkdir(parents=True)
    (root / "solutions" / "os").mkdir(parents=True)
    shutil.copytree(BUILTIN_ROOT / "files" / "os" / OS_TASKS[0], root / "files" / "os" / OS_TASKS[0])
    original = json.loads((BUILTIN_ROOT / "examples" / "os" / f"{OS_TASKS[0]}.json").read_text())
    solution = (BUILTIN_ROOT / "solutions" / "os" / f"{OS_TASKS[0]}.json").read_text()
    for task_id, change in {OS_TASKS[0]: lambda task: task, **changes}.items():
        task = change({**json.loads(json.dumps(original)), "id": task_id})
        (root / "examples" / "os" / f"{task_id}.json").write_text(json.dumps(task))
        (root / "solutions" / "os" / f"{task_id}.json").write_text(solution)
    (root / "test_os.json").write_text(json.dumps({"os": ids}))
    return str(root / "test_os.json")


def test_tasks_that_cannot_run_get_error_records_and_the_others_run(tmp_path):
    meta = variants_of_a_task(tmp_path / "tasks", ["broken-metric", OS_TASKS[0], "no-file"], **{
        "broken-metric": lambda task: {**task, "evaluator": {**task["evaluator"], "func": "no_such_metric"}}})
    summary = run_benchmark(config(meta, tmp_path))
    assert (summary.ran, summary.ok, [p.task_id for p in summary.invalid]) == (1, 1, ["broken-metric", "no-file"])
    folder = tmp_path / "pyautogui" / "screenshot" / "reference" / "os"
    assert (folder / OS_TASKS[0] / "result.txt").read_text().strip() == "1.0"
    record = json.loads((folder / "broken-metric" / "status.json").read_text())
    assert record["error"]["problems"][0]["field"] == "evaluator.func"
    assert record["error"]["problems"][0]["value"] == "no_such_metric"


def with_setup_step(step: dict):
    return lambda task: {**task, "config": [step, *task["config"]]}


def test_a_setup_step_that_cannot_start_its_program_is_an_error_even_when_the_agent_does_the_work(tmp_path):
    """The reference agent solves each task; only the one whose non-zero setup exit is tolerated scores."""
    variants = ["missing-program", "missing-launch", "not-executable", "exits-1"]
    meta = variants_of_a_task(tmp_path / "tasks", variants, **{
        "missing-program": with_setup_step({"type": "execute", "parameters": {
            "command": "no_such_program --prepare", "shell": True}}),
        "missing-launch": with_setup_step({"type": "launch", "parameters": {
            "command": "no_such_app --start", "shell": True}}),
        "not-executable": with_setup_step({"type": "execute", "parameters": {
            "command": "touch ~/tool && ~/tool", "shell": True}}),
        "exits-1": with_setup_step({"type": "execute", "parameters": {"command": "grep -q needle /dev/null",
                                                                      "shell": True}})})
    summary = run_benchmark(config(meta, tmp_path, num_envs=2))
    results = {}
    for folder in (tmp_path / "pyautogui" / "screenshot" / "reference" / "os").iterdir():
        status = json.loads((folder / "status.json").read_text())
        results[folder.name] = status
        assert (status["status"] == "ok") == (folder / "result.txt").exists()
    assert (summary.ran, summary.ok, summary.errors) == (4, 1, 3), results
    assert "command not found (exit 127)" in results["missing-program"]["error"]["message"]
    assert "program not found (shell exit 127)" in results["missing-launch"]["error"]["message"]
    assert "cannot be executed (exit 126)" in results["not-executable"]["error"]["message"]
    assert results["exits-1"]["status"] == "ok"
    model_dir = tmp_path / "pyautogui" / "screenshot" / "reference"
    assert (model_dir / "os" / "exits-1" / "result.txt").read_text() == "1.0\n"
    assert results["exits-1"]["warnings"] == [{"message": "'grep -q needle /dev/null' exited with code 1",
                                                "returncode": 1, "field": "config[0]", "type": "execute"}]


def test_a_postconfig_step_osworld_logs_is_recorded_and_the_task_is_scored_as_osworld_scores_it(tmp_path):
    """OSWorld's controller logs an activate_window the server could not do and goes on to the getters: a task
    whose postconfig names a window that is not there scores what its evaluator gives (here 1, the reference
    agent having done the work), with the failed step in status.json; the same in the task's own setup."""
    missing_window = {"type": "activate_window", "parameters": {"window_name": "GNU Image Manipulation Program"}}
    meta = variants_of_a_task(tmp_path / "tasks", ["postconfig-missing-window", "setup-missing-window"], **{
        "postconfig-missing-window": lambda task: {**task, "evaluator": {**task["evaluator"],
                                                                         "postconfig": [missing_window]}},
        "setup-missing-window": with_setup_step(missing_window)})
    summary = run_benchmark(config(meta, tmp_path, num_envs=2))
    assert (summary.ran, summary.ok, summary.errors) == (2, 2, 0)
    folder = tmp_path / "pyautogui" / "screenshot" / "reference" / "os"
    for task_id, field, phase, waited in (("postconfig-missing-window", "evaluator.postconfig[0]", "postconfig", 5),
                                          ("setup-missing-window", "config[0]", "setup", 30)):
        assert (folder / task_id / "result.txt").read_text() == "1.0\n"
        status = json.loads((folder / task_id / "status.json").read_text())
        assert status["status"] == "ok" and status["warnings"] == [{
            "message": f"timed out after {waited} s waiting for a window matching 'GNU Image Manipulation Program'",
            "failed": True, "phase": phase, "field": field, "type": "activate_window"}]


def test_two_desktops_give_the_same_results_as_one(meta, tmp_path, reference_run):
    summary = run_benchmark(config(meta, tmp_path, num_envs=2))
    assert summary.ran == 2 and summary.errors == 0
    one = {t: r["score"] for t, r in results_of(reference_run[0], "reference").items()}
    assert {t: r["score"] for t, r in results_of(tmp_path, "reference").items()} == one


RAISING_AGENT = '''
class Agent:
    def __init__(self, **kwargs):
        self.calls = 0
    def reset(self, logger=None):
        self.calls = 0
    def predict(self, instruction, obs):
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("the model API returned HTTP 500")
        return "moving", ["pyautogui.moveTo(100, 100)"]
'''


def test_an_agent_that_raises_leaves_an_error_record_not_a_score(meta, tmp_path):
    agent_file = tmp_path / "raising_agent.py"
    agent_file.write_text(RAISING_AGENT)
    summary = run_benchmark(config(meta, tmp_path, agent=f"{agent_file}:Agent", model="raiser",
                                   task_ids=["os-organize-invoices"], record=True))
    assert summary.errors == 1 and summary.ok == 0
    folder = tmp_path / "pyautogui" / "screenshot" / "raiser" / "os" / "os-organize-invoices"
    status = json.loads((folder / "status.json").read_text())
    assert status["status"] == "error" and status["steps"] == 1  # one predict call completed
    assert "HTTP 500" in status["error"]["message"] and "RuntimeError" in status["error"]["traceback"]
    assert not (folder / "result.txt").exists()
    assert (folder / "recording.mp4").stat().st_size > 0  # closed despite the error
    # a resumed run keeps the record; --retry-errors runs it again and keeps the history
    again = run_benchmark(config(meta, tmp_path, agent=f"{agent_file}:Agent", model="raiser",
                                 task_ids=["os-organize-invoices"], record=True))
    assert again.ran == 0 and again.skipped_errors == 1
    retried = run_benchmark(config(meta, tmp_path, agent=f"{agent_file}:Agent", model="raiser",
                                   task_ids=["os-organize-invoices"], retry_errors=True, record=True))
    assert retried.ran == 1
    assert len(json.loads((folder / "status.json").read_text())["previous_errors"]) == 1


DYING_AGENT = '''
import os
from mm_agents.noop import NoopAgent

class Agent(NoopAgent):
    def predict(self, instruction, obs):
        if "Photoshop" in instruction:
            os._exit(3)  # the worker process dies mid-task, as on a crash or an OOM kill
        return super().predict(instruction, obs)
'''


def test_a_worker_process_that_dies_mid_task_leaves_an_error_record_and_the_run_goes_on(meta, tmp_path):
    agent_file = tmp_path / "dying_agent.py"
    agent_file.write_text(DYING_AGENT)
    summary = run_benchmark(config(meta, tmp_path, agent=f"{agent_file}:Agent", model="dying"))
    assert summary.ran == 2 and summary.errors == 1 and summary.ok == 1
    results = results_of(tmp_path, "dying")
    lost = results["os-install-photoshop"]
    assert lost["status"] == "error" and lost["score"] is None
    assert lost["record"]["error"]["type"] == "WorkerDied" and "exit code 3" in lost["record"]["error"]["message"]
    assert (results["os-organize-invoices"]["status"], results["os-organize-invoices"]["score"]) == ("ok", "0.0")


SLOW_ORACLE = '''
import time
from mm_agents.oracle import OracleAgent

class SlowOracle(OracleAgent):
    def predict(self, instruction, obs):
        time.sleep(3)
        return super().predict(instruction, obs)
'''


def test_a_run_killed_with_sigkill_resumes_without_losing_or_rerunning_finished_tasks(meta, tmp_path):
    agent_file = tmp_path / "slow_oracle.py"
    agent_file.write_text(SLOW_ORACLE)
    command = [sys.executable, "-m", "osworld_cli.main", "run", "--agent", f"{agent_file}:SlowOracle",
               "--model", "slow", "--obs", "screenshot", "--tasks", meta, "--result-dir", str(tmp_path),
               "--cache-dir", str(tmp_path / "cache")]
    first_dir = tmp_path / "pyautogui" / "screenshot" / "slow" / "os" / OS_TASKS[0]
    second_dir = tmp_path / "pyautogui" / "screenshot" / "slow" / "os" / OS_TASKS[1]
    runner = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while not (second_dir / "status.json").exists():  # the first task finished, the second started
        assert time.monotonic() < deadline and runner.poll() is None
        time.sleep(0.2)
    workers = child_pids(runner.pid)
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait()
    # Its worker process ends too, closing its desktop (within 1-7 s here, also beside 6 spinning loops; one
    # that was never told stays for good). A failure says what each process left was doing.
    assert workers
    assert poll_until(lambda: all(ended(pid) for pid in workers), 60, 0.2), \
        "the killed run's processes did not end within 60 s:\n" + "\n".join(
            what_it_is_doing(pid) for pid in workers if not ended(pid))
    assert json.loads((first_dir / "status.json").read_text())["status"] == "ok"
    assert json.loads((second_dir / "status.json").read_text())["status"] == "running"
    finished_at = (first_dir / "status.json").stat().st_mtime
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    results = results_of(tmp_path, "slow")
    assert {t: r["score"] for t, r in results.items()} == {t: "1.0" for t in OS_TASKS}
    assert (first_dir / "status.json").stat().st_mtime == finished_at  # not re-run
    assert results[OS_TASKS[1]]["record"]["previous_errors"][0]["error"]["type"] == "Interrupted"


def test_ctrl_c_cuts_off_the_running_task_leaves_no_worker_and_a_resume_finishes(meta, tmp_path):
    agent_file = tmp_path / "slow_oracle.py"
    agent_file.write_text(SLOW_ORACLE)
    command = [sys.executable, "-m", "osworld_cli.main", "run", "--agent", f"{agent_file}:SlowOracle",
               "--model", "slow", "--obs", "screenshot", "--tasks", meta, "--result-dir", str(tmp_path),
               "--cache-dir", str(tmp_path / "cache"), "--no-record"]
    first_dir, second_dir = (tmp_path / "pyautogui" / "screenshot" / "slow" / "os" / t for t in OS_TASKS)
    runner = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True)
    deadline = time.monotonic() + 180
    while not list(second_dir.glob("step_0_*.png")):  # the second task's desktop is set up: it is running
        assert time.monotonic() < deadline and runner.poll() is None
        time.sleep(0.2)
    os.killpg(runner.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    output, _ = runner.communicate(timeout=120)
    assert runner.returncode == 130, output

    def left_in_session() -> list[str]:  # a zombie has ended (this container's init may not reap it)
        session = subprocess.run(["ps", "-o", "stat=,pid=,args=", "-s", str(runner.pid)], capture_output=True,
                                 text=True).stdout.splitlines()
        return [line for line in session if not line.startswith("Z")]

    deadline = time.monotonic() + 30  # what dies with its parent (PR_SET_PDEATHSIG) goes a moment after it
    while left_in_session() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert left_in_session() == [], output  # no worker and no desktop left
    cut = json.loads((second_dir / "status.json").read_text())
    assert cut["status"] == "running", (cut, output)
    assert cut["cut_off"] == "the run was interrupted (Ctrl-C) while this task ran"
    assert json.loads((first_dir / "status.json").read_text())["status"] == "ok"

    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    results = results_of(tmp_path, "slow")
    assert {t: r["score"] for t, r in results.items()} == {t: "1.0" for t in OS_TASKS}
    assert results[OS_TASKS[1]]["record"]["previous_errors"][0]["error"]["message"] == cut["cut_off"]


def test_a_model_that_refuses_every_call_stops_the_run_with_one_message(openai_server, tmp_path):
    openai_server.always(reply_error(401, "Incorrect API key provided"))
    result = CliRunner().invoke(cli, [
        "run", "--agent", "prompt", "--model", "gpt-4o", "--obs", "screenshot", "--domain", "os",
        "--agent-arg", f"base_url={openai_server.base_url}", "--result-dir", str(tmp_path),
        "--cache-dir", str(tmp_path / "cache"), "--no-record"], terminal_width=300)
    assert result.exit_code == RUN_STOPPED, result.output
    assert result.output.count("stopped:") == 1 and result.output.count("error    os/") == 2, result.output
    assert f"openai model 'gpt-4o' at {openai_server.base_url}" in result.output
    assert "2 tasks in a row failed the same way" in result.output and "check the API key" in result.output
    folders = list((tmp_path / "pyautogui" / "screenshot" / "gpt-4o" / "os").iterdir())
    assert all((folder / "status.json").exists() for folder in folders)  # no empty folder left behind
    records = [json.loads((folder / "status.json").read_text()) for folder in folders]
    errors = [r for r in records if r["status"] == "error"]
    assert len(errors) == 2 and all(r["error"]["fatal"]["kind"] == "auth" for r in errors)
    # The rest of the os tasks never ran: a task goes to a worker only once one is free.
    assert len(records) == 2


def test_a_model_that_never_answers_costs_the_agent_time_budget_not_more(openai_server, tmp_path):
    openai_server.always(reply_after(60, reply_text("too late")))
    summary = run_benchmark(config(str(BUILTIN_ROOT / "test_all.json"), tmp_path, agent="prompt", model="gpt-4o",
                                   agent_args={"base_url": openai_server.base_url}, task_ids=[OS_TASKS[0]],
                                   agent_time_budget=3, record=False))
    assert summary.errors == 1
    status = json.loads((tmp_path / "pyautogui" / "screenshot" / "gpt-4o" / "os" / OS_TASKS[0] /
                         "status.json").read_text())
    assert status["error"]["type"] == "AgentOverBudget"
    assert f"waiting for openai model 'gpt-4o' at {openai_server.base_url}: attempt 1" in status["error"]["message"]
    assert 3 <= status["durations"]["agent"] < 6 and status["steps"] == 0


def test_a_clean_run_leaves_no_env_folder_behind(meta, tmp_path):
    workers: set[int] = set()

    def report(event):
        if isinstance(event, Started):
            workers.update(child.pid for child in multiprocessing.active_children())

    run_benchmark(config(meta, tmp_path, agent="noop", model="noop", task_ids=[OS_TASKS[0]]), report)
    assert workers
    left = [d for d in runtime_root().glob("env-*")
            if (d / "owner.pid").is_file() and int((d / "owner.pid").read_text()) in workers]
    assert left == []


def test_resuming_with_options_that_change_results_is_refused(meta, tmp_path):
    run_benchmark(config(meta, tmp_path, agent="noop", model="noop", task_ids=[OS_TASKS[0]]))
    with pytest.raises(ResumeMismatch, match="--max-steps was 15, now 1"):
        run_benchmark(config(meta, tmp_path, agent="noop", model="noop", task_ids=[OS_TASKS[0]], max_steps=1))


def test_a_python_caller_runs_tasks_on_its_own_environments_in_threads(meta, tmp_path):
    made = []

    def make_env():
        made.append(DesktopEnv(provider_name="local", action_space="pyautogui", screen_size=(1920, 1080),
                               require_a11y_tree=False, cache_dir=str(tmp_path / "cache")))
        return made[-1]

    run_config = config(meta, tmp_path)
    summary = run_benchmark(run_config, backend=ThreadBackend.with_env_factory(run_config, make_env))
    assert (summary.ran, summary.ok, summary.score_sum) == (2, 2, 2.0)
    assert len(made) == 1  # one worker, one desktop, both tasks
    assert {t: r["score"] for t, r in results_of(tmp_path, "reference").items()} == {t: "1.0" for t in OS_TASKS}


def test_a_limit_1_smoke_run_of_the_built_in_os_tasks_goes_to_a_folder_of_its_own(tmp_path):
    first = json.loads((BUILTIN_ROOT / "test_all.json").read_text())["os"][0]
    done = CliRunner().invoke(cli, ["run", "--agent", "oracle", "--obs", "screenshot", "--domain", "os", "--limit",
                                    "1", "--no-record", "--result-dir", str(tmp_path), "--cache-dir",
                                    str(tmp_path / "cache")], terminal_width=300)
    assert done.exit_code == 0, done.output
    screenshot = tmp_path / "pyautogui" / "screenshot"
    assert [p.name for p in screenshot.iterdir()] == ["oracle-limit-1"]  # never the full run's folder, oracle/
    folder = screenshot / "oracle-limit-1"
    assert [p.name for p in (folder / "os").iterdir()] == [first]
    assert (folder / "os" / first / "result.txt").read_text().strip() == "1.0"
    assert not (folder / "os" / first / "recording.mp4").exists()
    args = json.loads((folder / "args.json").read_text())
    assert args["part"]["smoke_run"] and args["task_set"]["ids"] == [f"os/{first}"]
    assert "a smoke run of 1 task(s) (--limit 1)" in " ".join(done.output.split())
