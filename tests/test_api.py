"""The documented Python API (docs/API.md), used as a user would: only names imported from `osworld_harness`.
What the page documents is exactly `__all__`, its examples run, importing the package loads none of the layers
it re-exports, and each name does what the page says: tasks loaded, a run previewed and run, a results folder
summarized, a metric registered."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import osworld_harness
from osworld_harness import (
    MetricResult,
    RunConfig,
    Task,
    TaskSet,
    load_task,
    load_task_set,
    lookup,
    metric,
    preview,
    run,
    summarize,
)

ROOT = Path(osworld_harness.__file__).resolve().parents[1]
API_DOC = ROOT / "docs" / "API.md"
BUILTIN_META = ROOT / "evaluation_examples" / "test_all.json"
OS_TASK = "os-organize-invoices"


def documented_names() -> list[str]:
    """The names the page's `### `name(...)`` headings document, in their order."""
    return re.findall(r"^### `(\w+)", API_DOC.read_text(), flags=re.MULTILINE)


def test_the_page_documents_exactly_the_packages_names():
    names = documented_names()
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(osworld_harness.__all__)
    assert set(osworld_harness.__all__) <= set(dir(osworld_harness))


def examples() -> dict[str, list[str]]:
    """The page's Python examples, by the name whose section holds them."""
    found: dict[str, list[str]] = {}
    for section in re.split(r"^### `", API_DOC.read_text(), flags=re.MULTILINE)[1:]:
        name = re.match(r"\w+", section)
        assert name, section[:40]
        found[name.group()] = re.findall(r"^```python\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)
    return found


# run: a desktop (the last test mirrors it); RunConfig: an OSWorld checkout.
NEEDS_MORE_THAN_A_TEST = {"run", "RunConfig"}


def test_the_pages_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # summarize's example reads results/, as a user's would
    write_task(tmp_path / "results" / "pyautogui" / "screenshot" / "gpt-4o", "os", "t1", 0.5)
    ran = []
    for name, blocks in examples().items():
        for code in blocks if name not in NEEDS_MORE_THAN_A_TEST else []:
            exec(compile(code, f"{API_DOC}:{name}", "exec"), {})
            ran.append(name)
    assert ran == ["preview", "summarize", "load_task_set", "load_task", "metric"]
    assert not (tmp_path / "results" / "pyautogui" / "screenshot" / "oracle").exists()  # preview wrote nothing


def test_every_name_resolves_and_others_are_no_attribute():
    assert all(getattr(osworld_harness, name) is not None for name in osworld_harness.__all__)
    with pytest.raises(AttributeError, match="no attribute 'run_benchmark'"):
        osworld_harness.run_benchmark  # noqa: B018  (the internal name stays internal)


def test_importing_the_package_loads_none_of_its_layers():
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, osworld_harness\n"
         "print('\\n'.join(m for m in sys.modules if m.split('.')[0] in "
         "('osworld_harness', 'desktop_env', 'mm_agents', 'osworld_cli')))"],
        capture_output=True, text=True, check=True, timeout=60).stdout.split()
    assert sorted(loaded) == ["osworld_harness", "osworld_harness.own_packages"]  # the path check: stdlib only


def test_a_checkout_earlier_on_the_path_does_not_lend_the_library_its_packages(tmp_path):
    checkout = tmp_path / "OSWorld"  # as OSWorld's checkout is laid out: its own desktop_env, mm_agents, lib_run_single
    for package in ("desktop_env", "mm_agents"):
        (checkout / package).mkdir(parents=True)
        (checkout / package / "__init__.py").write_text(f"raise ImportError('the checkout\\'s {package}')\n")
    (checkout / "lib_run_single.py").write_text("raise ImportError(\"the checkout's lib_run_single\")\n")
    script = ("import osworld_harness, desktop_env, mm_agents, lib_run_single\n"
              "from osworld_harness import RunConfig, load_task_set\n"
              "print(RunConfig(agent='noop').screen_size, load_task_set().load('os', 'os-organize-invoices').id)\n"
              "for module in (desktop_env, mm_agents, lib_run_single): print(module.__file__)\n")
    done = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(checkout)},
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    sizes, *files = done.stdout.splitlines()
    assert sizes == "(1920, 1080) os-organize-invoices"
    assert [Path(file).resolve() for file in files] == [
        ROOT / "desktop_env" / "__init__.py", ROOT / "mm_agents" / "__init__.py", ROOT / "lib_run_single.py"]


# -- tasks -----------------------------------------------------------------------------------------

def test_the_built_in_task_set_loads_with_every_task():
    tasks = load_task_set()
    assert isinstance(tasks, TaskSet) and tasks.meta_path == BUILTIN_META
    assert load_task_set(BUILTIN_META).index == tasks.index
    loaded = list(tasks)
    assert len(loaded) == len(tasks) == sum(map(len, tasks.index.values())) > 0
    assert all(isinstance(task, Task) for task in loaded)
    assert {task.domain for task in loaded} == set(tasks.index) >= {"os", "libreoffice_calc", "chrome"}
    task = tasks.load("os", OS_TASK)
    assert (task.id, task.domain) == (OS_TASK, "os") and "Invoices" in task.instruction
    again = load_task(tasks.task_path("os", OS_TASK))
    assert (again.id, again.domain, again.sha256) == (task.id, task.domain, task.sha256)


# -- a run's plan ----------------------------------------------------------------------------------

def test_preview_plans_the_built_in_task_and_writes_nothing(tmp_path):
    result_dir = tmp_path / "results"
    planned = preview(RunConfig(agent="oracle", task_ids=[OS_TASK], result_dir=str(result_dir), record=False))
    assert [(t.domain, t.task_id) for t in planned.plan.to_run] == [("os", OS_TASK)]
    assert planned.plan.skipped == [] and planned.plan.invalid == []
    assert list(planned.domains) == ["os"] and planned.domains["os"].to_run == 1
    assert planned.config.model == "oracle"  # the agent's name: the reference agent declares no model
    assert planned.config.network is False  # decided: no task to run needs the live web
    assert not planned.verdict.comparable and any("--task-id" in r for r in planned.verdict.reasons)
    assert planned.warnings() == []
    assert not result_dir.exists()


# -- summaries -------------------------------------------------------------------------------------

def write_task(run_dir: Path, domain: str, task_id: str, score: float | None) -> None:
    """A task folder as the harness leaves it: status.json, and result.txt when it scored."""
    folder = run_dir / domain / task_id
    folder.mkdir(parents=True)
    record: dict = {"format": 2, "status": "ok" if score is not None else "error", "task_id": task_id, "trial": 1,
                    "steps": 2, "started": "2026-01-01T10:00:00+00:00", "finished": "2026-01-01T10:00:30+00:00"}
    if score is None:
        record["error"] = {"type": "LLMError", "message": "HTTP 500 from the model"}
    else:
        (folder / "result.txt").write_text(f"{score}\n")
    (folder / "status.json").write_text(json.dumps(record))


def test_summarize_gives_each_domain_category_and_task(tmp_path):
    run_dir = tmp_path / "results" / "pyautogui" / "screenshot" / "gpt-4o"
    write_task(run_dir, "os", "t1", 1.0)
    write_task(run_dir, "os", "t2", 0.0)
    write_task(run_dir, "libreoffice_calc", "t3", 1.0)
    write_task(run_dir, "libreoffice_calc", "t4", None)
    (summary,) = summarize(tmp_path / "results")
    assert (summary.label, summary.path) == ("pyautogui/screenshot/gpt-4o", run_dir)
    assert [g.name for g in summary.groups] == ["libreoffice_calc", "os", "OS", "Office", "Overall"]
    calc = summary.group("libreoffice_calc")
    assert (calc.tasks, calc.finished, calc.errors) == (2, 1, 1)
    assert calc.success_rate_errors_as_zero == 0.5 and calc.success_rate == 1.0
    assert summary.overall.success_rate_errors_as_zero == 0.5 and summary.overall.score is not None
    assert summary.overall.score.interval is not None and summary.overall.score.interval.low < 0.5
    assert [(t.domain, t.task_id, t.trial, t.status, t.score) for t in summary.tasks] == [
        ("libreoffice_calc", "t3", 1, "ok", 1.0), ("libreoffice_calc", "t4", 1, "error", None),
        ("os", "t1", 1, "ok", 1.0), ("os", "t2", 1, "ok", 0.0)]
    with pytest.raises(KeyError, match="no group 'chrome'"):
        summary.group("chrome")
    assert summarize(run_dir) and summarize(run_dir)[0].tasks == summary.tasks  # any level of the layout


def test_summarize_finds_nothing_in_an_empty_folder_and_refuses_a_missing_one(tmp_path):
    assert summarize(tmp_path) == []
    with pytest.raises(FileNotFoundError, match="no results folder"):
        summarize(tmp_path / "not-there")


# -- plug-ins --------------------------------------------------------------------------------------

def test_a_metric_registered_with_the_decorator_is_found_by_its_name(tmp_path):
    @metric("api_test_ends_with_newline")
    def ends_with_newline(result: str | None) -> MetricResult:
        text = Path(result or "").read_text()
        if text.endswith("\n"):
            return MetricResult(1.0, "the file ends with a newline")
        return MetricResult(0.0, f"the file ends with {text[-1:]!r}, not a newline")

    assert lookup("metric", "api_test_ends_with_newline") is ends_with_newline
    (tmp_path / "good.txt").write_text("milk\n")
    (tmp_path / "bad.txt").write_text("milk")
    found = lookup("metric", "api_test_ends_with_newline")
    assert found(str(tmp_path / "good.txt")).score == 1.0
    assert found(str(tmp_path / "bad.txt")) == MetricResult(0.0, "the file ends with 'k', not a newline")
    assert lookup("metric", "compare_text_file")  # the built-ins are there beside it
    with pytest.raises(KeyError, match="api_test_ends_with_newlines"):
        lookup("metric", "api_test_ends_with_newlines")


# -- a real run ------------------------------------------------------------------------------------

@pytest.mark.desktop
def test_run_scores_the_built_in_os_task_with_the_reference_agent(tmp_path):
    result_dir = tmp_path / "results"
    config = RunConfig(agent="oracle", task_ids=[OS_TASK], result_dir=str(result_dir),
                       cache_dir=str(tmp_path / "cache"), record=False)
    summary = run(config)
    assert (summary.planned, summary.ran, summary.ok, summary.errors, summary.score_sum) == (1, 1, 1, 0, 1.0)
    assert summary.stopped is None and summary.invalid == []
    (results,) = summarize(result_dir)
    assert [(t.domain, t.task_id, t.status, t.score) for t in results.tasks] == [("os", OS_TASK, "ok", 1.0)]
    assert results.overall.success_rate_errors_as_zero == 1.0
    again = run(config)  # a finished task is not run twice
    assert (again.ran, again.skipped_done) == (0, 1)
