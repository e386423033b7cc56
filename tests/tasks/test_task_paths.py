"""Host paths in task files are checked before any desktop starts (issue 11, hostile task files).

A `dest`, an execute step's `stdout`/`stderr`, a download's cache name, a `file://` URL or a
task-relative path that would leave the harness's folders is refused by `load_task` (so a run
never starts the task) and reported by `validate_task` / `osworld tasks validate` as an error
that names the file, the field and the value. Plain names still load.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from desktop_env.safe_paths import UnsafeTaskPath
from desktop_env.tasks import TaskFileError, load_task, load_task_set, validate_task
from desktop_env.tasks.paths import unsafe_paths
from osworld_cli.main import cli
from osworld_harness.execution.run import RunConfig, plan_tasks

OSWORLD_EXAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "osworld_examples"


def write_task(root: Path, task_id: str = "t1", config=None, evaluator=None) -> Path:
    task = {"id": task_id, "instruction": "do it", "config": config or [],
            "evaluator": evaluator or {"func": "exact_match", "result": {"type": "rule", "rules": {}}}}
    path = root / "examples" / "os" / f"{task_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(task))
    return path


def vm_file(dest, **more):
    return {"func": "exact_match", "result": {"type": "vm_file", "path": "/home/user/a.txt", "dest": dest, **more}}


def download(url="https://example.com/a.txt", path="/home/user/a.txt"):
    return [{"type": "download", "parameters": {"files": [{"url": url, "path": path}]}}]


@pytest.fixture
def tree(tmp_path):
    """A task set root with a file inside, a secret beside it, and symlinks in and out."""
    root = tmp_path / "tasks"
    (root / "files").mkdir(parents=True)
    (root / "files" / "in.txt").write_text("inside")
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    (root / "files" / "leak.txt").symlink_to(secret)
    (root / "files" / "alias.txt").symlink_to(root / "files" / "in.txt")
    (root / "files" / "outdir").symlink_to(tmp_path)
    return root


# (what the task says, the field it is in, the value reported)
ESCAPING = {
    "absolute dest": (dict(evaluator=vm_file("/etc/cron.d/x")), "evaluator.result.dest", "/etc/cron.d/x"),
    "home dotfile dest": (dict(evaluator=vm_file("/root/.bashrc")), "evaluator.result.dest", "/root/.bashrc"),
    "../ dest": (dict(evaluator=vm_file("../../x")), "evaluator.result.dest", "../../x"),
    "NUL in dest": (dict(evaluator=vm_file("a\0b")), "evaluator.result.dest", "a\0b"),
    "empty dest": (dict(evaluator=vm_file("")), "evaluator.result.dest", ""),
    "multi dest": (dict(evaluator={"func": "exact_match", "result": {
        "type": "vm_file", "multi": True, "path": ["/a", "/b"], "dest": ["a.txt", "../b.txt"], "gives": [0, 1]}}),
        "evaluator.result.dest[1]", "../b.txt"),
    "expected list entry": (dict(evaluator={"func": ["exact_match", "exact_match"],
                                            "result": [None, None],
                                            "expected": [None, {"type": "cloud_file", "path": "file:///etc/passwd",
                                                                "dest": "p"}]}),
                            "evaluator.expected[1].path", "file:///etc/passwd"),
    "wallpaper dest": (dict(evaluator={"func": "exact_match",
                                       "result": {"type": "vm_wallpaper", "dest": "/tmp/w.png"}}),
                       "evaluator.result.dest", "/tmp/w.png"),
    "gimp dest": (dict(evaluator={"func": "exact_match", "result": {"type": "gimp_config_file", "file_name": "gimprc",
                                                                     "dest": "../gimprc"}}),
                  "evaluator.result.dest", "../gimprc"),
    "cache_file path": (dict(evaluator={"func": "exact_match", "result": {"type": "cache_file", "path": "../../x"}}),
                        "evaluator.result.path", "../../x"),
    "content_from_vm_file basename": (dict(evaluator={"func": "exact_match", "result": {
        "type": "content_from_vm_file", "path": "/home/user/..", "file_type": "xlsx", "file_content": "last_row"}}),
        "evaluator.result.path", "/home/user/.."),
    "../ stdout": (dict(config=[{"type": "sleep", "parameters": {"seconds": 0}},
                                {"type": "launch", "parameters": {"command": "true"}},
                                {"type": "execute", "parameters": {"command": "id", "stdout": "../id.out"}}]),
                   "config[2].parameters.stdout", "../id.out"),
    "absolute stderr in postconfig": (dict(evaluator={"func": "exact_match", "result": {"type": "rule", "rules": {}},
                                                      "postconfig": [{"type": "command", "parameters": {
                                                          "command": "id", "stderr": "/etc/profile.d/x.sh"}}]}),
                                      "evaluator.postconfig[0].parameters.stderr", "/etc/profile.d/x.sh"),
    "file:// outside the tree": (dict(config=download(url="file:///etc/shadow")),
                                 "config[0].parameters.files[0].url", "file:///etc/shadow"),
    "absolute path outside the tree": (dict(config=download(url="/root/.ssh/id_rsa")),
                                       "config[0].parameters.files[0].url", "/root/.ssh/id_rsa"),
    "relative path out of the tree": (dict(config=download(url="../../../secret.txt")),
                                      "config[0].parameters.files[0].url", "../../../secret.txt"),
    "symlink in the tree to outside": (dict(config=download(url="../../files/leak.txt")),
                                       "config[0].parameters.files[0].url", "../../files/leak.txt"),
    "symlinked folder to outside": (dict(config=download(url="../../files/outdir/secret.txt")),
                                    "config[0].parameters.files[0].url", "../../files/outdir/secret.txt"),
    "upload_file outside": (dict(config=[{"type": "upload_file", "parameters": {"files": [
        {"local_path": "/etc/shadow", "path": "/home/user/s"}]}}]),
        "config[0].parameters.files[0].local_path", "/etc/shadow"),
    "download path ending in ..": (dict(config=download(path="/home/user/..")),
                                   "config[0].parameters.files[0].path", "/home/user/.."),
    "download path ending in /": (dict(config=download(path="/home/user/")),
                                  "config[0].parameters.files[0].path", "/home/user/"),
    "download path with NUL": (dict(config=download(path="/home/user/a\0b")),
                               "config[0].parameters.files[0].path", "/home/user/a\0b"),
}


@pytest.mark.parametrize("case", list(ESCAPING))
def test_escaping_path_is_refused_at_load_naming_file_field_and_value(tree, case):
    fields, field, value = ESCAPING[case]
    path = write_task(tree, **fields)
    with pytest.raises(UnsafeTaskPath) as info:
        load_task(path)
    error = info.value
    assert isinstance(error, TaskFileError)
    assert (error.field, error.value) == (field, value)
    message = str(error)
    assert str(path) in message and field in message and repr(value) in message


@pytest.mark.parametrize("case", list(ESCAPING))
def test_escaping_path_is_a_validation_problem(tree, case):
    fields, field, value = ESCAPING[case]
    path = write_task(tree, **fields)
    problems = [p for p in validate_task(load_task(path, check_paths=False)) if p.unsafe_path]
    assert [(p.field, p.name) for p in problems] == [(field, value)]
    assert not problems[0].unsupported
    assert str(path) in str(problems[0]) and field in str(problems[0])


def test_plain_names_and_files_inside_the_tree_are_fine(tree):
    inside_uri = (tree / "files" / "in.txt").as_uri()
    path = write_task(tree, config=[
        {"type": "download", "parameters": {"files": [
            {"url": "../../files/in.txt", "path": "/home/user/in.txt"},
            {"url": "../../files/alias.txt", "path": "/home/user/alias.txt"},  # a symlink that stays inside
            {"url": inside_uri, "path": "/home/user/Desktop/in.txt"},
            {"url": "https://example.com/../../etc/passwd", "path": "/home/user/remote.txt"}]}},
        {"type": "upload_file", "parameters": {"files": [{"local_path": "../../files/in.txt", "path": "/tmp/x"}]}},
        {"type": "execute", "parameters": {"command": "ls", "stdout": "ls.out", "stderr": "logs/ls.err"}},
    ], evaluator={"func": ["compare_table", "exact_match"],
                  "result": [{"type": "vm_file", "path": "/home/user/a.xlsx", "dest": "a.xlsx"},
                             {"type": "cache_file", "path": "ls.out"}],
                  "expected": [{"type": "cloud_file", "path": "../../files/in.txt", "dest": "in_gold.txt"}, None]})
    task = load_task(path)
    assert [p for p in validate_task(task) if p.unsafe_path] == []


def test_every_escaping_path_of_a_file_is_listed(tree):
    path = write_task(tree, config=download(url="file:///etc/shadow"), evaluator=vm_file("/etc/x"))
    fields = [e.field for e in unsafe_paths(json.loads(path.read_text()), path, path.parent)]
    assert fields == ["config[0].parameters.files[0].url", "evaluator.result.dest"]
    with pytest.raises(UnsafeTaskPath, match="and 1 more: evaluator.result.dest = '/etc/x'"):
        load_task(path)


def test_a_task_id_that_names_a_parent_folder_is_refused(tmp_path):
    path = tmp_path / "...json"  # its stem is ".."
    path.write_text(json.dumps({"id": "..", "instruction": "x", "evaluator": {"func": "exact_match"}}))
    with pytest.raises(TaskFileError, match="names a parent folder"):
        load_task(path)


@pytest.mark.parametrize("index, field, value", [
    ({"../../etc": ["x"]}, "domain", "../../etc"),
    ({"os": ["a", "../../../../tmp/evil"]}, "os[1]", "../../../../tmp/evil"),
    ({"os": [".."]}, "os[0]", ".."),
])
def test_meta_file_domains_and_ids_must_be_plain_names(tmp_path, index, field, value):
    meta = tmp_path / "test_all.json"
    meta.write_text(json.dumps(index))
    with pytest.raises(UnsafeTaskPath) as info:
        load_task_set(meta)
    assert (info.value.field, info.value.value) == (field, value)
    assert str(info.value).startswith(f"meta file {meta}: ")


def test_run_planning_refuses_the_task_before_any_desktop(tree, tmp_path):
    """A run's plan checks every task first (osworld_harness.execution.run.plan_tasks): an escaping path makes the
    task
    one that cannot run; the others run."""
    write_task(tree, "good")
    write_task(tree, "bad", evaluator=vm_file("/etc/cron.d/x"))
    (tree / "test_all.json").write_text(json.dumps({"os": ["good", "bad"]}))
    config = RunConfig(tasks=str(tree / "test_all.json"), result_dir=str(tmp_path / "results"))
    plan = plan_tasks(config)
    assert [p.task_id for p in plan.to_run] == ["good"] and [p.task_id for p in plan.invalid] == ["bad"]
    assert "evaluator.result.dest = '/etc/cron.d/x'" in plan.invalid[0].error


def test_cli_validate_reports_escaping_paths_and_fails(tree):
    bad = write_task(tree, "bad", config=[{"type": "execute", "parameters": {"command": "id", "stdout": "../x"}}],
                     evaluator=vm_file("/etc/cron.d/x"))
    write_task(tree, "good", evaluator=vm_file("good.txt"))
    result = CliRunner().invoke(cli, ["tasks", "validate", str(tree)])
    assert result.exit_code == 1, result.output
    assert f"{bad}: config[0].parameters.stdout = '../x'" in result.output
    assert f"{bad}: evaluator.result.dest = '/etc/cron.d/x'" in result.output
    good_only = CliRunner().invoke(cli, ["tasks", "validate", str(tree / "examples" / "os" / "good.json")])
    assert good_only.exit_code == 0, good_only.output


@pytest.mark.skipif(not OSWORLD_EXAMPLES.is_dir(), reason="../shared/osworld_examples is not beside this checkout")
def test_no_upstream_osworld_task_file_is_refused_for_its_paths():
    task_set = load_task_set(OSWORLD_EXAMPLES / "test_all.json")
    assert len(task_set) > 0
    for domain, task_id in task_set.select():
        unchecked = task_set.load(domain, task_id, check_paths=False)
        assert unsafe_paths(unchecked.config, unchecked.path, unchecked.task_dir) == []
        checked = task_set.load(domain, task_id)  # does not raise
        assert checked.config == unchecked.config
        problems = validate_task(checked)
        assert [str(p) for p in problems if p.unsafe_path] == []
        assert [str(p) for p in problems if not p.unsupported] == []  # only the names listed as unsupported, as before
