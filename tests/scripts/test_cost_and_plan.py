"""The plan printed before running: tasks to run vs. done, and the cost ceiling priced from the price table."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from desktop_env.tasks.loader import BUILTIN_ROOT
from mm_agents.prompts import observation_text, system_prompt
from osworld_harness.experiments.paper_tables import (
    estimate_cost,
    image_tokens,
    main_cells,
    observation_tokens,
    plan_cells,
    render_plan,
)
from osworld_harness.results.config import RunConfig

REPO = Path(__file__).resolve().parents[2]
TEST_SMALL = str(BUILTIN_ROOT / "test_small.json")


def test_image_tokens_follow_openais_documented_examples():
    assert image_tokens(1024, 1024) == 765
    assert image_tokens(2048, 4096) == 1105
    assert image_tokens(1920, 1080) == 1105        # 1365x768: 3x2 tiles
    assert image_tokens(384, 216) == 255           # the screen at scale 0.2: one tile


def test_cost_ceiling_counts_every_step_with_its_history_and_a_full_answer():
    config = RunConfig(model="gpt-4o", observation_type="screenshot", max_steps=3, max_trajectory_length=1,
                       max_tokens=100, screenshot_scale=0.2)
    estimate = estimate_cost(config, ["Rename the file.", "Open the folder."])

    observation = math.ceil(len(observation_text("screenshot", "")) / 4) + 255
    systems = [math.ceil(len(system_prompt("pyautogui", "screenshot", (384, 216), "password", text)) / 4)
               for text in ("Rename the file.", "Open the folder.")]
    # steps 1, 2, 3 carry 0, 1, 1 past steps (history 1): 5 observations and 2 past answers per task
    assert observation_tokens(config) == observation
    assert estimate.input_tokens == sum(3 * system + 5 * observation + 2 * 100 for system in systems)
    assert (estimate.tasks, estimate.steps, estimate.output_tokens) == (2, 6, 600)
    assert estimate.cost_usd == estimate.input_tokens * 2.5e-6 + 600 * 10e-6  # gpt-4o: $2.50 / $10 per 1M


def test_the_accessibility_tree_costs_its_token_budget():
    tree_only = RunConfig(observation_type="a11y_tree", agent_args={"a11y_tree_max_tokens": 2000})
    both = RunConfig(observation_type="screenshot_a11y_tree", agent_args={"a11y_tree_max_tokens": 2000})
    assert observation_tokens(tree_only) == math.ceil(len(observation_text("a11y_tree", "")) / 4) + 2000
    assert observation_tokens(both) == math.ceil(len(observation_text("screenshot_a11y_tree", "")) / 4) + 2000 + 1105


def test_an_unknown_models_cost_is_unknown_not_zero():
    assert estimate_cost(RunConfig(model="my-local-model"), ["Do it."]).cost_usd is None


def test_plan_counts_tasks_to_run_and_done_and_prices_only_those_to_run(tmp_path):
    cells = main_cells(["gpt-4o", "my-local-model"], ["screenshot"], tmp_path,
                       {"tasks": TEST_SMALL, "domains": ["os", "gimp"]})
    done = cells[0].config.layout.task_dir("os", "os-organize-invoices")
    done.mkdir(parents=True)
    (done / "result.txt").write_text("1.0\n")
    (done / "status.json").write_text(json.dumps({"status": "ok"}))

    plans = plan_cells(cells)
    text = render_plan(plans)

    assert [(p.to_run, p.done, p.errored, p.estimate.tasks) for p in plans] == [(1, 1, 0, 1), (2, 0, 0, 2)]
    assert plans[1].estimate.cost_usd is None
    lines = text.splitlines()
    assert lines[2].startswith(f"| gpt-4o / Screenshot | {cells[0].config.layout.model_dir} | 1 | 1 | 0 | 15 | ")
    assert lines[3].endswith("| unknown |")
    assert f"cost at most ${plans[0].estimate.cost_usd:,.2f} + unknown for my-local-model" in text


def run_script(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "scripts" / name), *args], capture_output=True, text=True,
                          timeout=120, cwd=REPO)


def test_dry_run_prints_the_plan_and_runs_nothing(tmp_path):
    result = run_script("analysis_history_length.py", "--model", "gpt-4o", "--history", "0", "--history", "all",
                        "--tasks", TEST_SMALL, "--domain", "os", "--max-steps", "5", "--result-dir", str(tmp_path),
                        "--dry-run")
    assert result.returncode == 0, result.stderr
    assert f"| gpt-4o / Screenshot / 0 | {tmp_path}/history/0/pyautogui/screenshot/gpt-4o | 1 | 0 | 0 | 5 |" \
        in result.stdout
    assert f"| gpt-4o / Screenshot / all | {tmp_path}/history/all/pyautogui/screenshot/gpt-4o | 1 | 0 | 0 | 5 |" \
        in result.stdout
    assert not any(tmp_path.iterdir())


def test_a_folder_with_other_settings_stops_the_script_before_anything_runs(tmp_path):
    model_dir = tmp_path / "main" / "pyautogui" / "screenshot" / "gpt-4o"
    model_dir.mkdir(parents=True)
    settings = asdict(RunConfig(observation_type="screenshot", max_steps=50))
    (model_dir / "args.json").write_text(json.dumps({"config": settings}))
    result = run_script("reproduce_main_table.py", "--model", "gpt-4o", "--obs", "screenshot", "--tasks", TEST_SMALL,
                        "--result-dir", str(tmp_path), "--max-steps", "15")
    assert result.returncode == 1
    assert "max_steps recorded 50, requested 15" in result.stderr and "Traceback" not in result.stderr


def test_table_only_renders_what_is_there(tmp_path):
    task_dir = tmp_path / "main" / "pyautogui" / "som" / "gpt-4o" / "os" / "os-organize-invoices"
    task_dir.mkdir(parents=True)
    (task_dir / "result.txt").write_text("1.0\n")
    result = run_script("reproduce_main_table.py", "--model", "gpt-4o", "--obs", "som", "--tasks", TEST_SMALL,
                        "--result-dir", str(tmp_path), "--table-only", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    row = "| gpt-4o | Set-of-Mark | 100.0% (1) | - (0) · 3 missing | - (0) · 3 missing | - (0) · 1 missing | " \
          "- (0) · 1 missing | 100.0% (1) · 8 missing |"
    assert row in result.stdout and row in (tmp_path / "out" / "main.md").read_text()
    assert (tmp_path / "out" / "main.csv").read_text().splitlines()[1].startswith("gpt-4o,som,100.0,1,0,0,1,")
