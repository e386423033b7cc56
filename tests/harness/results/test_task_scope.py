"""One run, one folder: a result folder's score is over the task set its args.json records (folders of other runs
are listed apart), `--limit` smoke runs and `--shard` parts go to folders of their own, the shards of one run are
summarized as that run, and the dry run says what the folder already holds. The runs here are real runs of the
built-in tasks, each trial written by a runner in this process (ThreadBackend) instead of a desktop."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from desktop_env.tasks import load_task_set
from osworld_cli.main import cli
from osworld_harness.execution.plan import plan_tasks
from osworld_harness.execution.run import run_benchmark
from osworld_harness.execution.task_result import TaskResult
from osworld_harness.execution.worker_pool import ThreadBackend
from osworld_harness.results.config import RunConfig
from osworld_harness.results.task_folder import TaskStatus, write_score, write_status

OS_TASKS = load_task_set(None).select(["os"])
ALL_TASKS = list(dict.fromkeys(load_task_set(None).select()))


class Scored:
    """Writes each trial as an episode does: 1, or 0 for a task whose id ends in a vowel."""

    def run_task(self, domain, task_id, task_dir: Path, previous_errors, on_step=lambda n: None, trial=1,
                 more_to_come=True):
        score = 0.0 if task_id[-1] in "aeiou" else 1.0
        write_score(task_dir, score)
        write_status(task_dir, TaskStatus("ok", task_id=task_id, trial=trial, steps=1))
        return TaskResult("ok", score, steps=1)

    def close(self):
        pass


def config(root: Path, **options) -> RunConfig:
    return RunConfig(agent="noop", model="m", observation_type="screenshot", result_dir=str(root), **options)


def ran(root: Path, **options) -> Path:
    made = config(root, **options)
    run_benchmark(made, backend=ThreadBackend(Scored))
    return made.layout.model_dir


def summary(*folders: Path) -> tuple[int, dict]:
    done = CliRunner().invoke(cli, ["summarize", "--format", "json", *map(str, folders)])
    return done.exit_code, json.loads(done.output) if done.exit_code == 0 else {"output": done.output}


def overall(run: dict) -> dict:
    return next(g for g in run["groups"] if g["name"] == "Overall")


def expected_score(pairs) -> float:
    return sum(0.0 if task_id[-1] in "aeiou" else 1.0 for _, task_id in pairs) / len(pairs)


def test_task_folders_of_another_run_copied_in_are_listed_apart_and_in_no_figure(tmp_path):
    folder = ran(tmp_path / "a", domains=["os"])
    other = ran(tmp_path / "b", domains=["chrome"])
    strays = sorted(p for p in (other / "chrome").iterdir())[:2]
    for stray in strays:
        shutil.copytree(stray, folder / "chrome" / stray.name)
    status, data = summary(folder)
    (run,) = data["runs"]
    assert status == 0 and overall(run)["tasks"] == len(OS_TASKS)
    assert overall(run)["score"] == expected_score(OS_TASKS)
    assert [g["name"] for g in run["groups"] if g["name"] == "chrome"] == []
    assert run["not_in_task_set"] == [f"chrome/{p.name}" for p in strays]
    shown = CliRunner().invoke(cli, ["summarize", str(folder)], terminal_width=200).output
    assert f"2 task folder(s) not in this run's task set, left out of every figure (another run's, or copied in): " \
           f"chrome/{strays[0].name}, chrome/{strays[1].name}" in " ".join(shown.split())


def test_a_domain_run_covered_by_the_full_run_leaves_the_folder_whole_in_either_order(tmp_path):
    for order in ([{"domains": ["chrome"]}, {}], [{}, {"domains": ["chrome"]}]):
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        for options in order:
            folder = ran(root, **options)
        status, data = summary(folder)
        (run,) = data["runs"]
        assert overall(run)["tasks"] == len(ALL_TASKS)
        assert not any("only some domains" in reason for reason in run["comparable"]["reasons"]), order
    alone = ran(tmp_path / "alone", domains=["chrome"])
    assert any("only some domains ran (--domain chrome)" in r for r in summary(alone)[1]["runs"][0]["comparable"]
               ["reasons"])


def test_a_task_of_the_set_without_a_folder_makes_the_score_incomparable_naming_it(tmp_path):
    folder = ran(tmp_path, domains=["os"])
    gone = OS_TASKS[0]
    shutil.rmtree(folder / gone[0] / gone[1])
    (run,) = summary(folder)[1]["runs"]
    assert overall(run)["tasks"] == len(OS_TASKS) - 1
    assert f"1 task(s) of its task set have no result (never started: run the same command again): " \
           f"{gone[0]}/{gone[1]}" in run["comparable"]["reasons"]


def test_limit_runs_the_first_tasks_into_a_folder_of_its_own_marked_a_smoke_run(tmp_path):
    folder = ran(tmp_path, domains=["os"], limit=2)
    assert folder.name == "m-limit-2" and not (folder.parent / "m").exists()
    assert sorted(p.name for p in (folder / "os").iterdir()) == sorted(t for _, t in OS_TASKS[:2])
    args = json.loads((folder / "args.json").read_text())
    assert args["config"]["limit"] == 2 and args["part"]["smoke_run"] and args["part"]["of_tasks"] == len(OS_TASKS)
    assert args["task_set"]["ids"] == [f"os/{t}" for _, t in OS_TASKS[:2]]
    assert "--limit 2" in args["reproduce"]
    (run,) = summary(tmp_path)[1]["runs"]
    assert run["comparable"]["comparable"] is False and "a smoke run of 2 task(s) (--limit 2)" in \
        run["comparable"]["reasons"]


def dry_run(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(cli, ["run", "--agent", "noop", "--model", "m", "--obs", "screenshot", "--dry-run",
                                    *args], terminal_width=300)
    return done.exit_code, " ".join(done.output.split())


def test_the_dry_run_of_a_limit_says_the_part_and_its_folder_and_writes_nothing(tmp_path):
    status, out = dry_run("--domain", "os", "--limit", "3", "--result-dir", str(tmp_path / "r"))
    assert status == 0, out
    assert f"plan: 3 task(s) from the built-in suite -> {tmp_path}/r/pyautogui/screenshot/m-limit-3" in out
    assert f"part: a smoke run of the first 3 of the {len(OS_TASKS)} selected task(s), in a folder of its own " \
           "(m-limit-3)" in out
    assert "a smoke run of 3 task(s) (--limit 3)" in out
    assert not (tmp_path / "r").exists()
    status, out = dry_run("--limit", "0")
    assert status == 2 and "--limit" in out


def test_shards_are_disjoint_cover_the_selection_and_each_dry_run_names_its_folder(tmp_path):
    parts = [plan_tasks(config(tmp_path, shard=(i, 3)).resolved()).selected for i in (1, 2, 3)]
    assert sorted(pair for part in parts for pair in part) == sorted(ALL_TASKS)
    assert [len(part) for part in parts] == [len(ALL_TASKS[i::3]) for i in range(3)]
    counts = []
    for index in (1, 2, 3):
        status, out = dry_run("--shard", f"{index}/3", "--result-dir", str(tmp_path / "r"))
        assert status == 0, out
        assert f"-> {tmp_path}/r/pyautogui/screenshot/m-shard-{index}-of-3" in out
        assert f"one shard ({index}/3) of the task set" in out
        counts.append(int(re.search(r"plan: (\d+) task\(s\)", out).group(1)))
    assert counts == [len(part) for part in parts]
    for wrong in ("4/3", "1/1", "two/3"):
        status, out = dry_run("--shard", wrong)
        assert status == 2 and "--shard" in out and "I/N" in out, (wrong, out)


def test_the_shards_folders_summarize_as_one_run_and_say_which_are_missing(tmp_path):
    shards = [ran(tmp_path / ("a" if i < 3 else "b"), domains=["os", "gimp"], shard=(i, 3)) for i in (1, 2, 3)]
    selection = load_task_set(None).select(["os", "gimp"])
    status, data = summary(tmp_path / "a", tmp_path / "b")
    assert status == 0, data
    (run,) = data["runs"]
    assert overall(run)["tasks"] == len(selection) and overall(run)["score"] == expected_score(selection)
    assert run["shards"] == {"count": 3, "present": [1, 2, 3], "missing": []}
    assert not any("shard" in reason for reason in run["comparable"]["reasons"])
    assert "--shard" not in run["reproducibility"]["command"]
    copied = tmp_path / "copied"
    for shard in shards:
        shutil.copytree(shard, copied / "pyautogui" / "screenshot" / shard.name)
    assert summary(copied)[1]["runs"][0]["shards"]["present"] == [1, 2, 3]

    (run,) = summary(tmp_path / "a")[1]["runs"]
    assert run["shards"] == {"count": 3, "present": [1, 2], "missing": [3]}
    assert run["comparable"]["comparable"] is False
    assert "shard(s) 3/3 of 3 are missing (give every shard's folder: osworld summarize DIR1 DIR2 ...)" in \
        run["comparable"]["reasons"]
    shown = CliRunner().invoke(cli, ["summarize", str(tmp_path / "a")], terminal_width=200).output
    assert "shards: 2 of 3 combined (1/3, 2/3); missing: 3/3" in shown


def test_shards_of_different_configurations_or_one_shard_twice_are_refused(tmp_path):
    ran(tmp_path / "a", domains=["os"], shard=(1, 2))
    other = ran(tmp_path / "b", domains=["os"], shard=(2, 2), max_steps=5)
    done = CliRunner().invoke(cli, ["summarize", str(tmp_path / "a"), str(tmp_path / "b")], terminal_width=300)
    assert done.exit_code == 2
    assert "cannot combine shard 1/2" in done.output and f"shard 2/2 ({other})" in " ".join(done.output.split())
    assert "--max-steps 15 against 5" in done.output
    twice = tmp_path / "twice" / "pyautogui" / "screenshot"
    shutil.copytree(tmp_path / "a" / "pyautogui" / "screenshot" / "m-shard-1-of-2", twice / "m-shard-1-of-2")
    done = CliRunner().invoke(cli, ["summarize", str(tmp_path / "a"), str(tmp_path / "twice")], terminal_width=300)
    assert done.exit_code == 2 and "is given twice" in done.output


def test_compare_takes_each_side_as_its_shards_folders_and_keeps_the_two_runs_apart(tmp_path):
    a_shards = [ran(tmp_path / f"a{i}", domains=["os"], shard=(i, 2)) for i in (1, 2)]  # one run, two machines
    b_shards = [ran(tmp_path / "b", domains=["os"], shard=(i, 2)) for i in (1, 2)]  # another, the same model's
    solved = next(pair for pair in OS_TASKS if pair[1][-1] not in "aeiou")  # 1 in both runs, but for this edit:
    (next(s for s in b_shards if (s / "os" / solved[1]).is_dir()) / "os" / solved[1] / "result.txt").write_text("0\n")

    def compare(*args: str) -> tuple[int, str]:
        done = CliRunner().invoke(cli, ["compare", *args], terminal_width=300)
        return done.exit_code, done.output

    status, out = compare(str(a_shards[0]), str(tmp_path / "b"), "-a", str(a_shards[1]))
    assert status == 0, out
    # the two runs share a layout's name: each is told apart by its folder's root
    assert f"A: a2:pyautogui/screenshot/m ({tmp_path}/a2/pyautogui/screenshot/m); shards: 2 of 2 combined (1/2, 2/2)" \
           "; all present" in out
    assert f"B: b:pyautogui/screenshot/m ({tmp_path}/b/pyautogui/screenshot/m); shards: 2 of 2" in out
    assert f"{len(OS_TASKS)} task(s) (task set" in out and f"A scored higher (1): os/{solved[1]}" in out
    status, out = compare("-a", str(a_shards[0]), "-a", str(a_shards[1]), "-b", str(b_shards[0]), "-b",
                          str(b_shards[1]), "--format", "json")
    sides = json.loads(out)
    assert status == 0 and [sides[s]["shards"] for s in "ab"] == [{"count": 2, "present": [1, 2], "missing": []}] * 2
    assert sides["overall"]["won"] == [f"os/{solved[1]}"]

    status, out = compare(str(a_shards[0]), str(tmp_path / "b"))  # A without its second shard: not the same tasks
    assert status == 2 and "only in B" in out and "(A lacks shard(s) 2/2 of its run: give each shard's folder)" in out
    status, out = compare(str(tmp_path / "b"), str(a_shards[1]), "-a", str(a_shards[0]))  # A: b's shards and a's 1
    assert status == 2 and "shard 1 of pyautogui/screenshot/m-shard-1-of-2 is given twice" in out
    assert compare(str(a_shards[0]))[0] == 2  # no B


def test_the_dry_run_says_what_the_folder_holds_of_this_run_of_other_task_sets_and_strays(tmp_path):
    folder = ran(tmp_path, domains=["os"])
    (folder / "chrome" / "copied-in").mkdir(parents=True)
    (folder / "chrome" / "copied-in" / "result.txt").write_text("1.0\n")
    status, out = dry_run("--domain", "os", "--result-dir", str(tmp_path))
    assert status == 0, out
    assert f"results folder: {folder} holds {len(OS_TASKS)} task(s) of this run's task set (to be resumed: " \
           f"{len(OS_TASKS)} done, 0 errored, 0 cut off)" in out
    assert "1 task folder(s) in no task set its args.json records (strays, left out of its score): " \
           "chrome/copied-in" in out
    status, out = dry_run("--domain", "gimp", "--result-dir", str(tmp_path))
    assert "holds 0 task(s) of this run's task set" in out
    assert f"{len(OS_TASKS)} task folder(s) of other task sets run into it" in out
    status, out = dry_run("--domain", "gimp", "--result-dir", str(tmp_path), "--max-steps", "5", "--force")
    assert "its results were made with other settings, which --force mixes in: --max-steps was 15, now 5" in out


def test_an_older_args_json_without_ids_is_read_by_re_selecting_the_meta_file_it_names(tmp_path):
    small = load_task_set(None).meta_path.parent / "test_small.json"
    folder = ran(tmp_path, tasks=str(small))
    args = json.loads((folder / "args.json").read_text())
    for record in [args, *args["runs"]]:
        del record["task_set"]  # as args.json was before it recorded the ids
    (folder / "args.json").write_text(json.dumps(args))
    (folder / "chrome" / "copied-in").mkdir(parents=True)
    (folder / "chrome" / "copied-in" / "result.txt").write_text("1.0\n")
    (run,) = summary(folder)[1]["runs"]
    assert overall(run)["tasks"] == len(load_task_set(str(small)).select())
    assert run["not_in_task_set"] == ["chrome/copied-in"]
