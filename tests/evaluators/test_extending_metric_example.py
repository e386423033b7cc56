"""The metric of docs/EXTENDING.md, loaded as a plugin the way `--plugin` loads it, scoring small real files."""
from __future__ import annotations

from pathlib import Path

import pytest

from desktop_env.evaluators.outcome import MetricResult
from desktop_env.evaluators.registry import get_metric
from desktop_env.evaluators.scoring import EvaluationError, MetricCall, call_metric
from desktop_env.extensions import load_plugin

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "metric"


@pytest.fixture(scope="module")
def same_words():
    load_plugin(str(EXAMPLE / "same_words.py"))  # once: a name registers once
    return get_metric("example_same_words")


def test_the_same_words_score_one_whatever_the_line_breaks(same_words):
    outcome = same_words(str(EXAMPLE / "expected.txt"), str(EXAMPLE / "expected.txt"))
    assert outcome == MetricResult(1.0, "both files hold the same 3 words")


def test_a_typo_scores_zero_and_names_the_first_differing_word(same_words):
    outcome = same_words(str(EXAMPLE / "typo.txt"), str(EXAMPLE / "expected.txt"))
    assert outcome == MetricResult(0.0, "word 2 differs: expected 'bread', got 'bred'")


def test_ignore_case_is_a_declared_option_and_a_misspelled_one_is_an_error(same_words):
    shopping, expected = str(EXAMPLE / "shopping.txt"), str(EXAMPLE / "expected.txt")
    assert same_words(shopping, expected).explanation == "word 1 differs: expected 'eggs', got 'Eggs'"
    assert call_metric(MetricCall("example_same_words", {"type": "vm_file"}, {"type": "cloud_file"},
                                  {"ignore_case": True}), shopping, expected).score == 1.0
    with pytest.raises(EvaluationError, match="ignore_cases"):
        call_metric(MetricCall("example_same_words", {"type": "vm_file"}, {"type": "cloud_file"},
                               {"ignore_cases": True}), shopping, expected)


def test_a_missing_result_file_scores_zero_and_says_so(same_words):
    assert same_words(None, str(EXAMPLE / "expected.txt")) == MetricResult(0.0, "there is no result file to compare")
