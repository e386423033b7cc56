"""OSWorld-Verified in one command: `osworld run --osworld CHECKOUT` selects the checkout's official tasks,
turns the network on for the tasks that need it, fetches downloads first, lifts the time budget, and records
it all so `summarize` can say whether the score is comparable with the leaderboard; `--dry-run` prints the
plan and its warnings first, `--strict` refuses an incomparable run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from osworld_cli.errors import CANNOT_START
from osworld_cli.main import cli
from osworld_harness.execution.preview import preview_run
from osworld_harness.execution.run import run_benchmark
from osworld_harness.execution.worker_pool import ThreadBackend
from osworld_harness.results.comparability import SETTING_CHECKS, plan_verdict
from osworld_harness.results.config import RunConfig, RunOptionError
from osworld_harness.results.suite import official_meta
from osworld_harness.results.task_folder import ErrorRecord, TaskStatus, write_score, write_status
from tests.file_server import FileServer
from tests.harness.execution.test_lib_run_single import Desktop

SHARED = Path("/work/shared/osworld_examples")
OSWORLD = Path("/work/OSWorld")
DOC = b"a document to edit" * 100


def task(root: Path, domain: str, task_id: str, config: list, evaluator: dict | None = None) -> None:
    path = root / "examples" / domain / f"{task_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": task_id, "instruction": f"do {task_id}", "config": config,
                                "evaluator": evaluator or {"func": "infeasible"}}))


def checkout(tmp_path: Path, url: str, nogdrive: bool = False) -> Path:
    """An OSWorld checkout in miniature: an offline task, one that downloads a file, one that opens a live
    website and one that needs OSWorld's Google Drive account."""
    root = tmp_path / "OSWorld"
    examples = root / "evaluation_examples"
    task(examples, "os", "offline", [])
    task(examples, "libreoffice_writer", "download",
         [{"type": "download", "parameters": {"files": [{"url": f"{url}/doc.docx", "path": "/home/user/doc.docx"}]}}])
    task(examples, "chrome", "web", [{"type": "chrome_open_tabs",
                                      "parameters": {"urls_to_open": ["https://www.example.com/shop"]}}])
    task(examples, "multi_apps", "gdrive", [{"type": "googledrive", "parameters": {"settings_file": "x"}}])
    index = {"os": ["offline"], "libreoffice_writer": ["download"], "chrome": ["web"], "multi_apps": ["gdrive"]}
    (examples / "test_all.json").write_text(json.dumps(index))
    if nogdrive:
        (examples / "test_nogdrive.json").write_text(json.dumps({k: v for k, v in index.items() if k != "multi_apps"}))
    return root


@pytest.fixture
def server():
    with FileServer({"/doc.docx": DOC}) as running:
        yield running


def dry_run(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(cli, ["run", "--agent", "noop", "--dry-run", *args])
    return done.exit_code, done.output


def test_the_checkouts_official_meta_file_or_test_all_less_google_drive(tmp_path, server):
    root = checkout(tmp_path, server.url)
    assert official_meta(root) == (root / "evaluation_examples" / "test_all.json").resolve()
    assert official_meta(root / "evaluation_examples") == official_meta(root)
    plan = preview_run(RunConfig(agent="noop", osworld=str(root), result_dir=str(tmp_path / "r"))).plan
    assert plan.left_out == {("multi_apps", "gdrive"): "needs OSWorld's Google Drive account (OSWorld-Verified "
                                                       "leaves it out)"}
    assert sorted(p.task_id for p in plan.to_run) == ["download", "offline", "web"] and plan.suite_tasks == 3
    nogdrive = checkout(tmp_path / "newer", server.url, nogdrive=True)
    assert official_meta(nogdrive).name == "test_nogdrive.json"
    with pytest.raises(RunOptionError, match="--osworld: .* is not an OSWorld checkout"):
        RunConfig(osworld=str(tmp_path))
    with pytest.raises(RunOptionError, match="give --tasks or --osworld, not both"):
        RunConfig(osworld=str(root), tasks=str(SHARED / "test_all.json"))


def test_the_dry_run_decides_the_network_from_the_tasks_and_warns_when_it_is_turned_off(tmp_path, server):
    root = checkout(tmp_path, server.url)
    base = ["--osworld", str(root), "--result-dir", str(tmp_path / "r")]
    status, out = dry_run(*base)
    assert status == 0, out
    assert "left out: 1 task(s) OSWorld-Verified does not score" in out
    assert "network: on (decided by the tasks); 1 task(s) to run need a live website or an account" in out
    assert "downloads: 1 task(s) need files fetched by URL, 0 of them all in the cache" in out
    assert "1 file(s) to fetch before the first desktop starts" in out
    assert "budgets: 15 steps per task; no limit on the agent's time" in out
    assert "agent: noop, model noop (the agent's name: it declares no model)" in out
    assert "comparable with OSWorld's leaderboard: no" in out
    assert "the checkout's OSWorld-Verified selection has 3 task(s), not the leaderboard's 361" in out
    status, out = dry_run(*base, "--no-network")
    assert "network: off (--no-network)" in out
    assert "warning: 1 task(s) need a live website or an account and the network is off" in out and "chrome/web" in out
    assert "the network was off while 1 task(s) need a live website or an account" in out
    assert not (tmp_path / "r").exists()  # a dry run writes nothing


def test_strict_refuses_an_incomparable_run_naming_why(tmp_path, server):
    root = checkout(tmp_path, server.url)
    status, out = dry_run("--osworld", str(root), "--max-steps", "20", "--strict", "--result-dir", str(tmp_path))
    assert status == CANNOT_START and "--strict: this run would be refused" in out
    assert "a step budget of 20: the leaderboard's are 15, 50, 100" in out
    done = CliRunner().invoke(cli, ["run", "--agent", "noop", "--osworld", str(root), "--max-steps", "20", "--strict",
                                    "--result-dir", str(tmp_path / "r")])
    assert done.exit_code == CANNOT_START and "--strict: the score would not be comparable" in done.output
    assert "a step budget of 20" in done.output and not (tmp_path / "r").exists()


def test_a_run_fetches_downloads_first_and_records_what_summarize_judges_it_by(tmp_path, server):
    root = checkout(tmp_path, server.url)
    config = RunConfig(agent="noop", osworld=str(root), max_steps=50, record=False, result_dir=str(tmp_path / "r"),
                       cache_dir=str(tmp_path / "cache"))
    notes: list[str] = []
    run_benchmark(config, report=lambda event: notes.append(getattr(event, "message", "")),
                  backend=ThreadBackend.with_env_factory(config, Desktop))
    assert [path for path, _ in server.requests] == ["/doc.docx"]
    assert json.loads((tmp_path / "cache" / "prefetch-manifest.json").read_text())
    assert any(n.startswith("fetching 1 file(s) of 1 task(s)") for n in notes)
    assert "comparable with OSWorld's leaderboard: no" in notes
    args = json.loads((config.layout.model_dir / "args.json").read_text())
    assert args["config"]["network"] is True and args["config"]["osworld"] == str(root.resolve())
    assert args["plan"] == args["runs"][-1]["plan"]
    assert args["plan"]["needs_network"] == 1 and args["plan"]["time_budget"] == 0 and args["plan"]["left_out"] == 1
    assert args["reproduce"].startswith(f"osworld run --osworld {root.resolve()} --agent noop --model noop")
    done = CliRunner().invoke(cli, ["summarize", str(tmp_path / "r")])
    assert "comparable with OSWorld's leaderboard: no" in done.output
    assert "selection has 3 task(s), not the leaderboard's 361" in done.output
    data = json.loads(CliRunner().invoke(cli, ["summarize", str(tmp_path / "r"), "--format", "json"]).output)
    assert data["runs"][0]["comparable"]["comparable"] is False


def test_summarize_finds_a_run_cut_short_by_the_time_budget_incomparable(tmp_path):
    run_dir = tmp_path / "pyautogui" / "screenshot" / "m"
    (run_dir / "os" / "a").mkdir(parents=True)
    write_score(run_dir / "os" / "a", 1.0)
    write_status(run_dir / "os" / "a", TaskStatus("ok", task_id="a"))
    (run_dir / "os" / "b").mkdir()
    write_status(run_dir / "os" / "b", TaskStatus("error", task_id="b", error=ErrorRecord("AgentOverBudget", "x")))
    (run_dir / "args.json").write_text(json.dumps({"config": {"osworld": "/x", "max_steps": 15, "network": True},
                                                   "plan": {"needs_network": 0}}))
    out = CliRunner().invoke(cli, ["summarize", str(tmp_path)]).output
    assert "1 task(s) ran out of the agent's time budget" in out
    (run_dir / "args.json").unlink()
    out = CliRunner().invoke(cli, ["summarize", str(tmp_path)]).output
    assert "comparable with OSWorld's leaderboard: not known" in out  # OSWorld's own folders say nothing


def test_each_check_is_a_row_and_a_field_not_recorded_is_not_checked():
    assert [c.field for c in SETTING_CHECKS].count("evaluator_fixes") == 1
    facts = {"tasks": 361, "suite_tasks": 361, "needs_network": 68}
    good = {"osworld": "/o", "domains": [], "task_ids": [], "max_steps": 50, "screen_size": [1920, 1080],
            "screenshot_scale": 1.0, "perturb": None, "network": True}
    assert plan_verdict(good, facts).comparable
    assert plan_verdict({**good, "evaluator_fixes": True}, facts).reasons == [
        "OSWorld's metrics were changed by the opt-in evaluator fixes (--evaluator-fixes)"]
    assert plan_verdict({k: v for k, v in good.items() if k != "max_steps"}, facts).comparable


@pytest.mark.skipif(not SHARED.is_dir(), reason="no OSWorld task files at /work/shared/osworld_examples")
def test_osworlds_task_files_with_and_without_the_network(tmp_path):
    base = ["--tasks", str(SHARED / "test_all.json"), "--result-dir", str(tmp_path)]
    status, out = dry_run(*base)
    assert status == 0 and "network: on (decided by the tasks); 55 task(s) to run need a live website" in out
    assert "cannot run here: 9 task(s) (Google Drive 8, a website login 8, a live scripted website 1)" in out
    assert "its tasks are not OSWorld-Verified's (run with --osworld CHECKOUT" in out
    status, out = dry_run(*base, "--no-network")
    assert "warning: 55 task(s) need a live website or an account and the network is off" in out
    status, out = dry_run(*base, "--network")
    assert "network: on (--network)" in out and "the network is off" not in out


@pytest.mark.skipif(not (OSWORLD / "evaluation_examples" / "test_nogdrive.json").is_file(),
                    reason="no OSWorld checkout at /work/OSWorld")
def test_osworld_verified_as_the_leaderboard_runs_it_is_comparable(tmp_path):
    status, out = dry_run("--osworld", str(OSWORLD), "--max-steps", "50", "--strict", "--result-dir", str(tmp_path))
    assert status == 0, out
    assert "plan: 361 task(s)" in out and "comparable with OSWorld's leaderboard: yes" in out
    assert "note: 1 task(s) cannot run here and count as 0 (at most 0.3 points)" in out


def test_domain_all_is_every_domain_for_the_verdict_and_in_args_json(tmp_path, server):
    root = checkout(tmp_path, server.url)
    base = ["--osworld", str(root), "--result-dir", str(tmp_path / "r")]
    status, out = dry_run(*base, "--domain", "all")
    assert status == 0, out
    assert "only some domains ran" not in out
    status, out = dry_run(*base, "--domain", "os")
    assert "only some domains ran (--domain os)" in out
    config = RunConfig(agent="noop", osworld=str(root), domains=["all"], record=False, result_dir=str(tmp_path / "r"),
                       cache_dir=str(tmp_path / "cache"))
    run_benchmark(config, backend=ThreadBackend.with_env_factory(config, Desktop))
    args = json.loads((config.layout.model_dir / "args.json").read_text())
    assert args["config"]["domains"] == [] and "--domain" not in args["reproduce"]
    done = CliRunner().invoke(cli, ["summarize", str(tmp_path / "r")])
    assert "only some domains ran" not in done.output


def test_a_run_recorded_with_domain_all_before_is_judged_as_every_domain():
    facts = {"tasks": 361, "suite_tasks": 361, "needs_network": 68}
    good = {"osworld": "/o", "task_ids": [], "max_steps": 50, "screen_size": [1920, 1080], "screenshot_scale": 1.0,
            "perturb": None, "network": True}
    assert plan_verdict({**good, "domains": ["all"]}, facts).comparable
    assert plan_verdict({**good, "domains": ["os"]}, facts).reasons == ["only some domains ran (--domain os)"]


def broken_checkout(tmp_path: Path, url: str) -> Path:
    """The miniature checkout with two broken task files (one cut short, one naming a metric no code has) and
    a sound one that needs a live scripted website, which cannot run offline."""
    root = checkout(tmp_path, url)
    examples = root / "evaluation_examples"
    (examples / "examples" / "os" / "truncated.json").write_text('{"id": "truncated", "instruction": "do it", "con')
    task(examples, "os", "typo", [], {"func": "exact_mach", "result": {"type": "vm_command_line", "command": "ls"},
                                      "expected": {"type": "rule", "rules": {"expected": "x"}}})
    task(examples, "chrome", "recreation", [], {"func": "exact_match", "result": {"type": "vm_command_line",
                                                                                 "command": "ls"},
                                                "expected": {"type": "gotoRecreationPage_and_get_html_content"}})
    index = json.loads((examples / "test_all.json").read_text())
    index["os"] += ["truncated", "typo"]
    index["chrome"].append("recreation")
    (examples / "test_all.json").write_text(json.dumps(index))
    return root


def test_broken_task_files_are_listed_apart_and_make_the_run_incomparable(tmp_path, server):
    root = broken_checkout(tmp_path, server.url)
    status, out = dry_run("--osworld", str(root), "--result-dir", str(tmp_path / "r"))
    assert status == 0, out
    lines = out.splitlines()
    assert "broken: 2 task file(s); each gets an error record, counted as 0, and the score is not comparable" in out
    at = lines.index("  os/typo:")
    assert lines[at + 1] == (f"    {root.resolve() / 'evaluation_examples/examples/os/typo.json'}: evaluator.func = "
                             "'exact_mach': unknown metric; did you mean exact_match?")
    at = lines.index("  os/truncated:")
    assert "truncated.json" in lines[at + 1] and "JSON" in lines[at + 1]
    cannot = next(line for line in lines if line.startswith("cannot run here:"))
    assert cannot.startswith("cannot run here: 1 task(s) (a live scripted website 1)")
    assert "  - 2 task file(s) are broken" in out
    assert "note: 1 task(s) cannot run here and count as 0" in out
    status, out = dry_run("--osworld", str(root), "--strict", "--result-dir", str(tmp_path / "r"))
    assert status == CANNOT_START and "2 task file(s) are broken" in out


def test_a_run_records_its_broken_task_files_and_summarize_says_so(tmp_path, server):
    root = broken_checkout(tmp_path, server.url)
    config = RunConfig(agent="noop", osworld=str(root), max_steps=50, record=False, result_dir=str(tmp_path / "r"),
                       cache_dir=str(tmp_path / "cache"))
    run_benchmark(config, backend=ThreadBackend.with_env_factory(config, Desktop))
    args = json.loads((config.layout.model_dir / "args.json").read_text())
    assert (args["plan"]["broken"], args["plan"]["cannot_run"]) == (2, 1)
    out = CliRunner().invoke(cli, ["summarize", str(tmp_path / "r")]).output
    assert "2 task file(s) are broken" in " ".join(out.split())
