"""What status.json keeps of a getter's value: a file by its name, size and SHA-256, long text by its start,
length and SHA-256, the rest as it is, so two harnesses' getters can be compared without keeping their files."""
from __future__ import annotations

import hashlib
from contextlib import nullcontext

from desktop_env.evaluators.fingerprint import fingerprint
from desktop_env.evaluators.outcome import Evaluation, MetricPart
from desktop_env.evaluators.scoring import evaluate_task


def test_a_fetched_file_is_its_name_size_and_digest_wherever_it_was_cached(tmp_path):
    data = b"PK\x03\x04 the same bytes"
    for folder in ("ours", "theirs"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "Grades.xlsx").write_bytes(data)
    ours, theirs = (fingerprint(str(tmp_path / folder / "Grades.xlsx")) for folder in ("ours", "theirs"))
    assert ours == theirs == {"file": "Grades.xlsx", "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def test_long_text_is_kept_by_its_start_and_digest_and_short_values_as_they_are(tmp_path):
    page = "<html>" + "x" * 1000
    assert fingerprint(page) == {"text": page[:80], "chars": 1006, "sha256": hashlib.sha256(page.encode()).hexdigest()}
    assert fingerprint({"rules": {"expected": ["a", 1, None]}}) == {"rules": {"expected": ["a", 1, None]}}
    assert fingerprint("relative/path.txt") == "relative/path.txt"  # only an absolute path names a file
    assert fingerprint(list(range(60)))[-1] == {"more_items": 10}
    assert fingerprint(object())["repr"].startswith("<object object")


class Values:
    """An evaluation context for getters that read nothing from a desktop (the rule getter returns its rules)."""

    def getter_scope(self, what, config):
        return nullcontext()


def test_the_evaluation_keeps_what_each_metrics_getters_gave(tmp_path):
    note = tmp_path / "note.txt"
    note.write_text("hello\n")
    evaluator = {"func": "compare_text_file",
                 "result": {"type": "rule", "rules": str(note)},
                 "expected": {"type": "rule", "rules": str(note)}}
    evaluation = evaluate_task(Values(), evaluator)
    [part] = evaluation.parts
    digest = {"file": "note.txt", "bytes": 6, "sha256": hashlib.sha256(b"hello\n").hexdigest()}
    assert evaluation.score == 1.0 and part.values == {"result": digest, "expected": digest}
    assert Evaluation.from_json(evaluation.to_json()) == evaluation
    assert "values" not in Evaluation(0.0, "", (MetricPart("m", 0.0, "why"),)).to_json()["metrics"][0]
