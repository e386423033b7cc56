"""What state a task folder is in decides what a resumed run does with it."""
import json
import subprocess
import sys

from osworld_harness.results.report import read_task_view
from osworld_harness.results.rescore import last_action
from osworld_harness.results.summary import find_runs
from osworld_harness.results.task_folder import (
    FORMAT_VERSION,
    TaskState,
    TaskStatus,
    clear_task_dir,
    read_status,
    read_task,
    record_cut_off,
    record_worker_died,
    start_task,
    task_state,
    write_status,
)


def make(folder, status=None, result=False, other=False):
    folder.mkdir(parents=True)
    if status:
        (folder / "status.json").write_text(json.dumps({"status": status, "error": {"type": "X", "message": "m"}}))
    if result:
        (folder / "result.txt").write_text("1.0\n")
    if other:
        (folder / "step_0.png").write_bytes(b"png")
    return folder


def test_states(tmp_path):
    assert task_state(tmp_path / "missing") is TaskState.NEW
    assert task_state(make(tmp_path / "done", "ok", result=True)) is TaskState.DONE
    assert task_state(make(tmp_path / "osworld", result=True)) is TaskState.DONE
    assert task_state(make(tmp_path / "err", "error")) is TaskState.ERROR
    assert task_state(make(tmp_path / "killed", "running", other=True)) is TaskState.INTERRUPTED
    assert task_state(make(tmp_path / "half", other=True)) is TaskState.INTERRUPTED
    assert task_state(make(tmp_path / "ok-without-result", "ok")) is TaskState.INTERRUPTED


def test_clearing_a_retried_task_keeps_its_error_history(tmp_path):
    folder = make(tmp_path / "err", "error", other=True)
    history = clear_task_dir(folder)
    assert history[0].error.message == "m"
    assert list(folder.iterdir()) == []


def test_result_files_get_the_users_umask_not_0600(tmp_path):
    code = ("import os, sys; os.umask(int(sys.argv[2], 8)); from pathlib import Path; "
            "from osworld_harness.results.task_folder import write_json_atomic, write_text_atomic; "
            "folder = Path(sys.argv[1]); "
            "write_json_atomic(folder / 'status.json', {}); write_text_atomic(folder / 'result.txt', '1')")
    for umask, mode in (("002", 0o664), ("022", 0o644), ("077", 0o600)):
        folder = tmp_path / umask
        subprocess.run([sys.executable, "-c", code, str(folder), umask], check=True)
        assert {p.name: p.stat().st_mode & 0o777 for p in folder.iterdir()} == {"status.json": mode, "result.txt": mode}


def test_resume_and_summaries_read_a_folder_alike(tmp_path):
    """An unreadable result.txt is an error for both, so --retry-errors runs it again; never a done task."""
    for name, status in (("ours", "ok"), ("osworld", None)):
        folder = make(tmp_path / name, status, result=True)
        (folder / "result.txt").write_text("not a number\n")
        assert read_task(folder).status == "error" and task_state(folder) is TaskState.ERROR


def test_status_json_carries_the_format_version(tmp_path):
    write_status(tmp_path, TaskStatus("running", format=0))
    assert json.loads((tmp_path / "status.json").read_text()) == {"format": FORMAT_VERSION, "status": "running"}
    record_worker_died(tmp_path, "t", "gone")
    assert read_status(tmp_path).format == FORMAT_VERSION


def test_an_osworld_folder_reads_with_its_steps_and_last_action(tmp_path):
    folder = tmp_path / "pyautogui" / "screenshot" / "gpt-4o" / "os" / "t1"
    folder.mkdir(parents=True)
    (folder / "result.txt").write_text("1.0\n")
    (folder / "step_1_20240101@000000000000.png").write_bytes(b"png")
    lines = [{"step_num": 1, "action": "pyautogui.click(1, 2)", "screenshot_file": "step_1_20240101@000000000000.png"},
             {"step_num": 2, "action": "DONE"}]
    # The last line was cut off mid-write, and a byte is not UTF-8: both skipped, neither fatal.
    (folder / "traj.jsonl").write_bytes(b"\n".join(json.dumps(line).encode() for line in lines)
                                        + b'\n{"step_num": 3, "act\xff')
    record = read_task(folder)
    assert (record.status, record.score, record.steps) == ("ok", 1.0, 2)
    assert last_action(folder) == "DONE"
    (run,) = find_runs(tmp_path)
    view = read_task_view(run, run.records[0])
    assert view.bad_lines == 1 and [s.screenshot.name if s.screenshot else None for s in view.steps] == [
        "step_1_20240101@000000000000.png", None]


def test_a_task_that_finished_before_the_run_heard_of_it_keeps_its_record_when_the_run_stops(tmp_path):
    """Ctrl-C after a worker wrote a task's final record and before the scheduler took its outcome: the
    task is done (a Ray run once lost a finished task's score this way, to a "running" record)."""
    for status in ("ok", "error"):
        folder = tmp_path / "os" / status
        start_task(folder, status)
        write_status(folder, TaskStatus(status, task_id=status, steps=1))
        if status == "ok":
            (folder / "result.txt").write_text("1.0\n")
        record_cut_off(folder, status, "the run was interrupted (Ctrl-C) while this task ran")
        assert read_status(folder).status == status and read_status(folder).cut_off is None
    assert task_state(tmp_path / "os" / "ok") is TaskState.DONE
    assert task_state(tmp_path / "os" / "error") is TaskState.ERROR


def test_a_cut_off_task_is_rerun_with_the_reason_in_its_history(tmp_path):
    folder = tmp_path / "os" / "t1"
    start_task(folder, "t1")
    record_cut_off(folder, "t1", "the run stopped while this task ran: 2 tasks in a row failed the same way")
    assert task_state(folder) is TaskState.INTERRUPTED
    assert read_status(folder).cut_off.startswith("the run stopped")
    history = start_task(folder, "t1", attempt=2)
    assert [h.to_json() for h in history] == [
        {"error": {"type": "Interrupted", "message": "the run stopped while this task ran: 2 tasks "
                   "in a row failed the same way"}, "finished": None}]
    assert read_status(folder).previous_errors == history and read_status(folder).attempt == 2
