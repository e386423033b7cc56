"""Output that survives terminals and pipes, and runs that can be told apart: ids, groups and scores are
never cut; a terminal too narrow gets one block per row; a pipe gets every line whole; `--label`, labels
from args.json, or the results folder tell two runs of one model apart; `--rescored` uses rescore.json;
unfinished folders count as unfinished."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

import osworld_cli.output
import osworld_cli.run_commands
from desktop_env.tasks import load_task_set
from osworld_cli.main import cli
from osworld_harness.results.summary import find_runs, runs_under
from osworld_harness.results.task_folder import TaskStatus, write_score, write_status

ROOT = Path(__file__).resolve().parents[3]
DOMAINS = ("chrome", "libreoffice_calc", "libreoffice_writer", "libreoffice_impress", "multi_apps")


def results(root: Path, model: str = "gpt-4o", solved: int = 9, tasks: int = 9, domains=DOMAINS) -> Path:
    run_dir = root / "pyautogui" / "screenshot" / model
    for domain in domains:
        for i in range(tasks):
            folder = run_dir / domain / f"{domain}-task-{i}"
            folder.mkdir(parents=True)
            write_score(folder, 1.0 if i < solved else 0.0)
            write_status(folder, TaskStatus("ok", task_id=folder.name))
    return run_dir


def printed(monkeypatch, width: int, *args: str) -> str:
    """What `osworld` prints on a terminal `width` columns wide."""
    buffer = io.StringIO()
    terminal = Console(file=buffer, width=width, color_system=None)
    monkeypatch.setattr(osworld_cli.output, "console", terminal)
    monkeypatch.setattr(osworld_cli.run_commands, "console", terminal)
    done = CliRunner().invoke(cli, list(args))
    assert done.exit_code == 0, done.output
    return buffer.getvalue()


@pytest.mark.parametrize("width", [80, 120])
def test_summaries_on_narrow_terminals_keep_groups_and_scores_whole(tmp_path, monkeypatch, width):
    results(tmp_path, solved=8)
    out = printed(monkeypatch, width, "summarize", str(tmp_path))
    assert "…" not in out
    for domain in DOMAINS:
        assert domain in out
    assert "88.9%" in out and "56.5%–98.0%" in out  # 8 of 9: Wilson's interval, whole
    assert max((len(line) for line in out.splitlines() if "│" in line), default=0) <= width  # the rest: whole lines


def test_a_terminal_too_narrow_for_the_table_gets_one_block_per_row(tmp_path, monkeypatch):
    results(tmp_path)
    out = printed(monkeypatch, 80, "summarize", str(tmp_path))
    assert "- group: libreoffice_impress  tasks: 9" in out and "score: 100.0%  95% CI: 70.1%–100.0%" in out


def test_a_piped_task_list_has_every_id_whole():
    done = subprocess.run([sys.executable, "-m", "osworld_cli.main", "tasks", "list"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    ids = [task_id for _, task_id in load_task_set(None).select()]
    assert "…" not in done.stdout and [line.split("\t")[1] for line in done.stdout.splitlines()[2:]] == ids
    # neither padded to the widest row nor cut: each line is as long as what it says
    assert all(line == line.rstrip() for line in done.stdout.splitlines())
    tsv = CliRunner().invoke(cli, ["tasks", "list", "--format", "tsv"]).output.splitlines()
    assert tsv[0] == "domain\tid\tinstruction" and [line.split("\t")[1] for line in tsv[1:]] == ids
    listed = json.loads(CliRunner().invoke(cli, ["tasks", "list", "--format", "json"]).output)
    assert [t["id"] for t in listed] == ids


def test_plugins_keep_class_names_on_one_line(monkeypatch):
    out = printed(monkeypatch, 80, "plugins", "--kind", "agent")
    assert "mm_agents.computer_use.agents:ClaudeComputerUseAgent" in out
    rows = CliRunner().invoke(cli, ["plugins", "--kind", "agent", "--format", "tsv"]).output.splitlines()
    assert "agent\tprompt\tbuilt-in\tmm_agents.prompt_agent:PromptAgent" in rows
    data = json.loads(CliRunner().invoke(cli, ["plugins", "--kind", "metric", "--format", "json"]).output)
    assert any(entry["name"] == "compare_table" for entry in data["metric"])


def test_two_runs_of_one_model_are_told_apart(tmp_path):
    a, b = results(tmp_path / "results-a", solved=9), results(tmp_path / "results-b", solved=3)
    assert sorted(run.label for run in runs_under([tmp_path / "results-a", tmp_path / "results-b"])) == [
        "results-a:pyautogui/screenshot/gpt-4o", "results-b:pyautogui/screenshot/gpt-4o"]
    out = CliRunner().invoke(cli, ["summarize", str(a), str(b), "--label", f"baseline={a}", "--label",
                                   f"new prompt={b}"]).output
    assert "baseline  (" in out and "new prompt  (" in out and "│ baseline" not in out.split("side by side")[0]
    (b / "args.json").write_text(json.dumps({"config": {"label": "recorded", "max_steps": 15}}))
    assert {run.label for run in find_runs(tmp_path)} == {"pyautogui/screenshot/gpt-4o", "recorded"}
    compared = CliRunner().invoke(cli, ["compare", str(a), str(b), "--label", f"A-side={a}"]).output
    assert "A: A-side (" in compared and "B: recorded (" in compared
    wrong = CliRunner().invoke(cli, ["summarize", str(a), "--label", f"x={tmp_path / 'elsewhere'}"])
    assert wrong.exit_code == 2 and "not one of the folders given" in wrong.output


def test_rescored_scores_are_used_where_asked(tmp_path):
    run_dir = results(tmp_path, solved=0, tasks=2, domains=("os",))
    (run_dir / "os" / "os-task-0" / "rescore.json").write_text(json.dumps({"old_score": 0.0, "new_score": 1.0,
                                                                           "changed": True, "rescorable": True}))
    (run_dir / "os" / "os-task-1" / "rescore.json").write_text(json.dumps({"rescorable": False, "new_score": None}))
    plain = json.loads(CliRunner().invoke(cli, ["summarize", str(tmp_path), "--format", "json"]).output)
    rescored = json.loads(CliRunner().invoke(cli, ["summarize", str(tmp_path), "--format", "json",
                                                   "--rescored"]).output)
    assert plain["runs"][0]["groups"][-1]["score"] == 0.0 and rescored["runs"][0]["groups"][-1]["score"] == 0.5
    out = CliRunner().invoke(cli, ["summarize", str(tmp_path), "--rescored"]).output
    assert "scores as rescored (rescore.json) for 1 trial(s), result.txt for the rest" in out
    other = results(tmp_path / "other", solved=0, tasks=2, domains=("os",))
    compared = json.loads(CliRunner().invoke(cli, ["compare", str(run_dir), str(other), "--rescored", "--format",
                                                   "json"]).output)
    assert compared["overall"]["mean_a"] == 0.5 and compared["overall"]["won"] == ["os/os-task-0"]
    report = tmp_path / "report.html"
    assert CliRunner().invoke(cli, ["report", str(run_dir), "-o", str(report), "--rescored"]).exit_code == 0
    assert "(rescored; was 0)" in report.read_text()


def test_an_unfinished_osworld_folder_counts_as_unfinished(tmp_path):
    run_dir = results(tmp_path, tasks=1, domains=("os",))
    cut = run_dir / "os" / "cut-off"
    cut.mkdir()
    (cut / "traj.jsonl").write_text(json.dumps({"Error": "Time limit exceeded in os/cut-off"}) + "\n")
    (run,) = find_runs(tmp_path)
    assert {(r.task_id, r.status) for r in run.records} == {("os-task-0", "ok"), ("cut-off", "incomplete")}
    data = json.loads(CliRunner().invoke(cli, ["summarize", str(tmp_path), "--format", "json"]).output)
    assert data["runs"][0]["groups"][-1]["incomplete"] == 1


def test_the_report_shows_each_tasks_instruction(tmp_path):
    ours = results(tmp_path / "ours", tasks=1, domains=("os",)) / "os" / "os-task-0"
    write_status(ours, TaskStatus("ok", task_id="os-task-0", instruction="Tidy the <Downloads> folder."))
    theirs = tmp_path / "theirs" / "pyautogui" / "screenshot" / "m" / "os" / "os-find-copy-lease"
    theirs.mkdir(parents=True)
    write_score(theirs, 0.0)  # OSWorld's own folder: no status.json, its instruction is in the task file
    report = tmp_path / "report.html"
    done = CliRunner().invoke(cli, ["report", str(tmp_path / "ours"), str(tmp_path / "theirs"), "-o", str(report),
                                    "--tasks", str(ROOT / "evaluation_examples" / "test_all.json")])
    assert done.exit_code == 0, done.output
    page = report.read_text()
    assert "Tidy the &lt;Downloads&gt; folder." in page  # escaped, as every text of the files
    assert load_task_set(None).load("os", "os-find-copy-lease").instruction.split(",")[0] in page
