"""osworld_harness/results/stats.py against cases worked out by hand and against scipy and numpy computing the same
thing
their own way: means and clustered intervals, pass@k and pass^k, flips, and the paired comparison."""
from __future__ import annotations

import itertools
import math
import subprocess
import sys
from dataclasses import astuple

import numpy as np
import pytest
from scipy import stats as scipy_stats

from osworld_harness.results.stats import (
    BOOTSTRAP,
    NEWCOMBE,
    WILSON,
    Interval,
    bootstrap_interval,
    compare,
    estimate,
    flip_share,
    mcnemar_exact,
    newcombe_paired,
    pass_all,
    pass_at,
    pass_at_k,
    pass_hat_k,
    task_means,
    wilson_interval,
)


def wilson(successes, n, confidence=0.95):
    """scipy's own Wilson interval, the reference (to the last few bits: ours is the same formula in closed
    form, with the standard library's normal quantile)."""
    ci = scipy_stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return pytest.approx((float(ci.low), float(ci.high)), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
def test_wilsons_interval_is_scipys_for_every_count_up_to_osworlds_size(confidence):
    for n in [*range(1, 40), 361, 369]:
        for successes in range(n + 1):
            ours = astuple(wilson_interval(successes, n, confidence))
            assert ours == wilson(successes, n, confidence), (successes, n)


def test_the_cli_summary_path_does_not_import_scipy():
    """scipy.stats costs about a CPU-second to import; a run's summary of binary scores needs none of it."""
    code = ("import sys; from osworld_harness.results.stats import estimate; "
            "estimate({'a': [1.0], 'b': [0.0]}); print('scipy.stats' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


def test_every_task_solved_in_every_trial():
    scores = {f"t{i}": [1.0, 1.0, 1.0] for i in range(10)}
    result = estimate(scores)
    assert (result.mean, result.tasks, result.trials) == (1.0, 10, 30) and astuple(result.interval) == wilson(10, 10)
    assert result.interval.low == pytest.approx(0.7225, abs=1e-4) and result.method == WILSON
    assert (pass_at(scores, 3), pass_all(scores, 3), flip_share(scores)) == (1.0, 1.0, 0.0)


def test_every_task_failed():
    scores = {f"t{i}": [0.0] for i in range(10)}
    result = estimate(scores)
    assert result.mean == 0.0 and astuple(result.interval) == wilson(0, 10)
    assert result.interval.high == pytest.approx(0.2775, abs=1e-4)
    assert (pass_at(scores, 1), pass_all(scores, 1)) == (0.0, 0.0)
    assert flip_share(scores) is None  # one trial each: nothing can flip


def test_one_task_flipping_between_trials():
    scores = {"always": [1.0, 1.0, 1.0], "never": [0.0, 0.0, 0.0], "flips": [1.0, 0.0, 1.0]}
    assert estimate(scores).mean == pytest.approx((1 + 0 + 2 / 3) / 3)
    assert flip_share(scores) == pytest.approx(1 / 3)
    # "flips" solved 2 of 3: any 2 of its trials include a solved one; both solved in 1 of the 3 pairs.
    assert pass_at(scores, 2) == pytest.approx((1 + 0 + 1) / 3)
    assert pass_all(scores, 2) == pytest.approx((1 + 0 + 1 / 3) / 3)
    assert pass_at(scores, 3) == pytest.approx(2 / 3) and pass_all(scores, 3) == pytest.approx(1 / 3)
    assert pass_at(scores, 4) is None  # no task has 4 trials


def test_partial_scores_count_in_means_but_only_a_full_score_solves_a_task():
    scores = {"half": [0.5, 0.5], "full": [1.0, 0.0]}
    assert estimate(scores).mean == pytest.approx(0.5)
    assert pass_at(scores, 1) == pytest.approx((0 + 0.5) / 2) and flip_share(scores) == 0.5


@pytest.mark.parametrize("n, c, k", [(5, 2, 2), (3, 1, 1), (4, 4, 3), (6, 0, 2), (6, 3, 6)])
def test_pass_at_k_and_pass_hat_k_are_the_shares_of_all_k_subsets(n, c, k):
    trials = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(trials, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


def test_pass_at_k_by_hand():
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10) and pass_hat_k(5, 2, 2) == pytest.approx(1 / 10)
    with pytest.raises(ValueError, match="n=2, c=3, k=1"):
        pass_at_k(2, 3, 1)


def test_the_interval_is_scipys_bootstrap_of_the_task_means_from_the_fixed_seed():
    rng = np.random.default_rng(7)
    scores = {f"t{i}": list(rng.integers(0, 2, size=3).astype(float)) for i in range(40)}
    means = list(task_means(scores).values())
    theirs = scipy_stats.bootstrap((np.array(means),), np.mean, n_resamples=9999, confidence_level=0.95,
                                   method="BCa", rng=np.random.default_rng(0)).confidence_interval
    ours = estimate(scores).interval
    assert (ours.low, ours.high) == pytest.approx((theirs.low, theirs.high), abs=1e-12)
    assert estimate(scores) == estimate(scores)  # the same results print the same figures


def test_the_bootstrap_resamples_tasks_with_their_trials_together():
    """The same interval as resampling whole tasks (all their trials) by hand with numpy."""
    rng = np.random.default_rng(3)
    scores = {i: list(rng.integers(0, 2, size=rng.integers(1, 4)).astype(float)) for i in range(60)}
    per_task = np.array([np.mean(trials) for trials in scores.values()])
    draws = np.random.default_rng(11).integers(0, len(per_task), size=(20000, len(per_task)))
    low, high = np.percentile(per_task[draws].mean(axis=1), [2.5, 97.5])
    ours = estimate(scores).interval
    assert ours.low == pytest.approx(low, abs=0.015) and ours.high == pytest.approx(high, abs=0.015)


def test_one_run_over_360_tasks_carries_about_five_points():
    """The arithmetic of the issue: a single run over ~360 tasks at ~40% is known to about +-5 points."""
    scores = {i: [1.0 if i < 144 else 0.0] for i in range(360)}
    interval = estimate(scores).interval
    half_width = 1.96 * math.sqrt(0.4 * 0.6 / 360)
    assert interval.width / 2 == pytest.approx(half_width, abs=0.003)
    assert interval.low < 0.4 < interval.high


def test_a_single_task_has_no_interval_and_a_task_without_trials_is_refused():
    assert estimate({"t": [1.0, 0.0]}).interval is None and estimate({}) is None
    assert bootstrap_interval([0.3]) is None
    with pytest.raises(ValueError, match="task 'empty' has no trial scores"):
        estimate({"empty": [], "t": [1.0]})


@pytest.mark.parametrize("solved_tasks, low, high", [(9, 0.7009, 1.0), (8, 0.5650, 0.9801), (0, 0.0, 0.2991)])
def test_nine_binary_tasks_get_wilsons_interval_not_a_collapsed_one(solved_tasks, low, high):
    """A domain of OSWorld's size, all solved or all failed, is not known to the point; 8 of 9 is not 44%-100%."""
    result = estimate({f"t{i}": [1.0 if i < solved_tasks else 0.0] for i in range(9)})
    assert astuple(result.interval) == wilson(solved_tasks, 9) and result.method == WILSON
    assert (result.interval.low, result.interval.high) == pytest.approx((low, high), abs=1e-4)
    assert astuple(wilson_interval(solved_tasks, 9)) == wilson(solved_tasks, 9)


def test_one_task_has_an_interval_when_its_score_is_binary():
    assert astuple(estimate({"t": [1.0]}).interval) == wilson(1, 1)


def test_partial_scores_keep_the_bootstrap():
    result = estimate({"a": [0.5], "b": [1.0], "c": [0.0], "d": [1.0]})
    assert result.method == BOOTSTRAP and result.interval.low < result.mean < result.interval.high


# Newcombe (1998), "Improved confidence intervals for the difference between binomial proportions based on
# paired data", Table II: (both, first only, second only, neither) and the published 95% limits of method 10.
NEWCOMBE_TABLE_II = [((36, 12, 2, 0), (0.0569, 0.3404)), ((18, 12, 2, 18), (0.0562, 0.3290)),
                     ((53, 0, 0, 1), (-0.0729, 0.0729)), ((0, 30, 0, 0), (0.8395, 1.0))]


@pytest.mark.parametrize("table, published", NEWCOMBE_TABLE_II)
def test_the_paired_interval_is_newcombes_published_one(table, published):
    interval = newcombe_paired(*table)
    assert (interval.low, interval.high) == pytest.approx(published, abs=1e-4)


def test_one_differing_task_of_nine_does_not_collapse_the_paired_interval():
    a = {f"t{i}": [1.0 if i < 5 else 0.0] for i in range(9)}   # solves t0..t4
    b = {f"t{i}": [1.0 if i < 4 else 0.0] for i in range(9)}   # solves t0..t3
    result = compare(a, b)
    assert result.method == NEWCOMBE and result.interval == newcombe_paired(4, 1, 0, 4)
    assert result.interval.low < 0 < result.interval.high and result.interval.high < 0.5
    same = compare(a, a)
    assert same.interval.low < 0 < same.interval.high  # identical runs over 9 tasks: not known to the point


def test_mcnemar_by_hand():
    # Of 4 tasks only one run solved, A solved 3: P(X >= 3) for X ~ Bin(4, 1/2) is 5/16, twice that two-sided.
    assert mcnemar_exact(3, 1) == pytest.approx(10 / 16)
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32) and mcnemar_exact(6, 0) == pytest.approx(2 / 64)
    assert mcnemar_exact(0, 0) == 1.0


def test_a_known_paired_difference_with_one_trial():
    a = {f"t{i}": [1.0 if i <= 6 else 0.0] for i in range(1, 11)}            # solves t1..t6
    b = {f"t{i}": [1.0 if i <= 3 or i == 7 else 0.0] for i in range(1, 11)}  # solves t1..t3 and t7
    result = compare(a, b)
    assert (result.tasks, result.mean_a, result.mean_b) == (10, 0.6, 0.4)
    assert result.difference == pytest.approx(0.2)
    assert (result.test, result.a_only, result.b_only) == ("exact McNemar", 3, 1)
    assert result.p_value == pytest.approx(mcnemar_exact(3, 1)) and not result.significant
    assert (result.won, result.lost) == (["t4", "t5", "t6"], ["t7"])
    assert result.interval == newcombe_paired(3, 3, 1, 3) and result.interval.low < 0.2 < result.interval.high


def test_the_paired_interval_is_scipys_paired_bootstrap():
    rng = np.random.default_rng(5)
    a = {i: list(rng.integers(0, 2, size=2).astype(float)) for i in range(50)}
    b = {i: list(rng.integers(0, 2, size=2).astype(float)) for i in range(50)}
    ma, mb = (np.array(list(task_means(x).values())) for x in (a, b))
    theirs = scipy_stats.bootstrap((ma, mb), lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis),
                                   paired=True, n_resamples=9999, method="BCa",
                                   rng=np.random.default_rng(0)).confidence_interval
    of_differences = scipy_stats.bootstrap((ma - mb,), np.mean, n_resamples=9999, method="BCa",
                                           rng=np.random.default_rng(0)).confidence_interval
    result = compare(a, b)
    assert result.test == "paired bootstrap" and result.p_value is None and result.a_only is None
    interval = (result.interval.low, result.interval.high)
    assert interval == pytest.approx((of_differences.low, of_differences.high), abs=1e-12)
    # scipy's paired=True draws its resamples from the seed in another order: the same interval to a grid step.
    assert interval == pytest.approx((theirs.low, theirs.high), abs=0.02)


def test_a_clear_difference_over_trials_is_significant_and_a_tie_is_not():
    a = {i: [1.0, 1.0] for i in range(40)}
    b = {i: [1.0, 0.0] if i % 2 else [0.0, 0.0] for i in range(40)}
    result = compare(a, b)
    assert result.difference == pytest.approx(0.75) and result.significant and result.lost == []
    assert not compare(a, a).significant and compare(a, a).interval == Interval(0.0, 0.0)


def test_runs_over_different_tasks_are_not_paired():
    with pytest.raises(ValueError, match="same tasks in both runs; 2 differ"):
        compare({"t1": [1.0], "t2": [0.0]}, {"t1": [1.0], "t3": [0.0]})
