"""status.json is one typed record (osworld_harness.results.task_folder.TaskStatus): it reads every older folder, keeps
what it does not know, and docs/RESULTS.md's field table names exactly its fields."""
from __future__ import annotations

import json
import re
import typing
from dataclasses import fields, is_dataclass
from pathlib import Path

from osworld_harness.results.task_folder import (
    FORMAT_VERSION,
    ErrorRecord,
    PreviousError,
    TaskState,
    TaskStatus,
    error_text,
    read_status,
    read_task,
    task_state,
)

RESULTS_MD = Path(__file__).resolve().parents[3] / "docs" / "RESULTS.md"

# A record as the episode writes it (format 1): every field there is.
FORMAT_1 = {
    "format": 1, "status": "error", "task_id": "t1", "attempt": 2,
    "started": "2026-01-01T10:00:00.000+00:00", "finished": "2026-01-01T10:01:00.000+00:00", "steps": 3,
    "durations": {"reset": 1.6, "agent": 12.0, "env": 2.1, "evaluate": 0.0},
    "usage": {"input_tokens": 1200, "output_tokens": 80, "cost_usd": 0.004},
    "warnings": [{"field": "config[1]", "type": "execute", "message": "'pkill x' exited with code 1",
                  "returncode": 1}],
    "perturbation": {"kind": "layout", "seed": 0, "moved": ["gedit"]},
    "error": {"type": "LLMError", "message": "openai model 'm': HTTP 401", "traceback": "Traceback ...",
              "fatal": {"kind": "auth", "signature": "auth openai m http://x", "message": "HTTP 401"}},
    "previous_errors": [{"error": {"type": "Interrupted", "message": "the run was killed while this task ran"},
                         "finished": None},
                        {"error": {"type": "InvalidTask", "message": "the task cannot run: …", "traceback": "",
                                   "problems": [{"file": "t1.json", "field": "evaluator.func", "value": "nope",
                                                 "kind": "metric", "reason": "no metric has this name"}]},
                         "finished": "2025-12-31T09:00:00.000+00:00"}],
    "ray_worker": {"host": "node-b", "ray_node_id": "abc", "pid": 7},
}
SCORED = {"format": 1, "status": "ok", "task_id": "t2", "started": "2026-01-01T10:00:00.000+00:00",
          "finished": "2026-01-01T10:00:30.500+00:00", "steps": 2,
          "durations": {"reset": 1.0, "agent": 3.0, "env": 1.0, "evaluate": 0.5},
          "evaluation": {"score": 0.0, "explanation": "Regions!D2 is 4, expected 5",
                         "metrics": [{"func": "compare_table", "score": 0.0, "explanation": "Regions!D2 is 4",
                                      "skipped": False}]}}


def test_a_format_1_record_reads_into_typed_fields_and_writes_back_the_same():
    status = TaskStatus.from_json(FORMAT_1)
    assert status.error.fatal["kind"] == "auth" and status.error.text() == "LLMError: openai model 'm': HTTP 401"
    assert [p.error.type for p in status.previous_errors] == ["Interrupted", "InvalidTask"]
    assert status.previous_errors[1].error.problems[0]["field"] == "evaluator.func"
    assert status.extra == {} and status.to_json() == {**FORMAT_1, "format": FORMAT_VERSION}
    scored = TaskStatus.from_json(SCORED)
    assert scored.evaluation.parts[0].func == "compare_table" and scored.to_json() == {**SCORED, "format": 2}


def test_a_format_2_record_says_which_trial_of_which_task_file_it_is():
    record = {**SCORED, "format": 2, "trial": 3, "task_sha256": "ab" * 32}
    status = TaskStatus.from_json(record)
    assert (status.trial, status.task_sha256) == (3, "ab" * 32) and status.to_json() == record


def test_a_record_older_than_the_format_reads_the_same_and_is_written_with_it(tmp_path):
    older = {k: v for k, v in SCORED.items() if k not in ("format", "evaluation")}
    (tmp_path / "status.json").write_text(json.dumps(older))
    (tmp_path / "result.txt").write_text("1.0\n")
    status = read_status(tmp_path)
    assert status.format is None and status.evaluation is None
    assert status.to_json() == {"format": FORMAT_VERSION, **older}
    record = read_task(tmp_path)
    assert (record.status, record.score, record.steps, record.seconds) == ("ok", 1.0, 2, 30.5)


def test_an_osworld_folder_has_no_record_but_reads_as_done(tmp_path):
    (tmp_path / "result.txt").write_text("0.5\n")
    (tmp_path / "traj.jsonl").write_text(json.dumps({"step_num": 1, "action": "DONE"}) + "\n")
    assert read_status(tmp_path) is None
    assert (read_task(tmp_path).score, read_task(tmp_path).steps) == (0.5, 1)
    assert task_state(tmp_path) is TaskState.DONE


def test_what_this_version_does_not_know_is_kept_as_read():
    newer = {**SCORED, "format": 3, "trials": [1, 0], "steps": "three",
             "error": {"type": "X", "message": "m", "hint": "retry"}, "status": "ok"}
    status = TaskStatus.from_json(newer)
    assert status.extra == {"trials": [1, 0], "steps": "three"} and status.steps is None
    assert status.error.extra == {"hint": "retry"}
    assert status.to_json() == {**newer, "format": FORMAT_VERSION}


def test_an_error_without_a_record_still_reads():
    assert error_text(None) == error_text(TaskStatus("error")) == "the task ended in an error (no error recorded)"
    assert TaskStatus.from_json({"status": "error", "error": "disk full"}).error_text() == "Error: disk full"
    assert ErrorRecord.from_json({"message": "m"}).text() == "Error: m"


def record_fields(cls: type, prefix: str = "", seen: set | None = None) -> set[str]:
    """The JSON fields of a record of osworld_harness.results.task_folder, nested records (ErrorRecord, a list of
    PreviousError) spelled
    as `error.type` and `previous_errors[].error`; a record type is spelled out where it first appears."""
    seen = set() if seen is None else seen
    seen.add(cls)
    found = set()
    hints = typing.get_type_hints(cls)
    for f in fields(cls):
        if "read" not in f.metadata:
            continue
        found.add(prefix + f.name)
        hint = hints[f.name]
        inner = [a for a in typing.get_args(hint) if isinstance(a, type) and is_dataclass(a)]
        inner = inner or ([hint] if isinstance(hint, type) and is_dataclass(hint) else [])
        nested = [t for t in inner if t not in seen and any("read" in g.metadata for g in fields(t))]
        for t in nested:
            listed = typing.get_origin(hint) is list
            found |= record_fields(t, f"{prefix}{f.name}{'[]' if listed else ''}.", seen)
    return found


def documented_fields() -> set[str]:
    text = RESULTS_MD.read_text()
    section = text[text.index("## status.json"):text.index("## What a folder means")]
    return set(re.findall(r"^\| `([^`]+)` \|", section, flags=re.M))


def test_results_md_documents_exactly_the_fields_of_the_record():
    assert "error.type" in record_fields(TaskStatus) and "previous_errors[].finished" in record_fields(TaskStatus)
    assert documented_fields() == record_fields(TaskStatus)
    assert record_fields(PreviousError) == {"error", "finished", "error.type", "error.message", "error.traceback",
                                            "error.fatal", "error.problems"}
