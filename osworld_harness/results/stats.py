"""The statistics of scores: a mean with its 95% interval, pass@k and pass^k, tasks that flip between
trials, and the paired comparison of two runs over the same tasks.

Plain functions over plain data: a run is `{task: [score of each trial]}` (TaskScores), so everything
here is tested without a result folder. The unit of sampling is the task: a benchmark's score is the
mean over its tasks of each task's mean over its trials (pass@1 averaged over trials).

Which interval, when (docs/RESULTS.md says the same):
- every task's mean is 0 or 1 (one trial per task with binary scores, or trials that all agree): the
  score is a proportion of tasks, and its interval is Wilson's score interval (as scipy's
  `binomtest(...).proportion_ci(method="wilson")` gives it), which stays honest at 0% and 100% and on a dozen
  tasks (9 of 9 solved: 70.1% to 100%, not 100% to 100%);
- otherwise (partial scores, trials that disagree): a bootstrap over tasks that keeps each task's trials
  together (a clustered bootstrap, `scipy.stats.bootstrap`, BCa, from a fixed seed);
- the difference of two runs paired by task, with binary scores and one trial per task: Newcombe's
  hybrid score interval for paired proportions (his 1998 method 10, built from the two Wilson
  intervals), which keeps its width when few tasks differ (one differing task of 9 is not "+0 to
  +56"); the exact McNemar test (`scipy.stats.binomtest`) decides. Otherwise the paired bootstrap.

A task is *solved* by a trial that scored 1; pass@k, pass^k, flips and McNemar's test count solved
trials, while means use the scores as they are (OSWorld's partial scores included).
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import astuple, dataclass
from statistics import NormalDist
from typing import Generic, TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)
TaskScores = Mapping[K, Sequence[float]]   # task -> the score of each of its trials (one at least)

CONFIDENCE = 0.95
RESAMPLES = 9999
SEED = 0           # of every resampling: reproducible output, not a tuned value
SOLVED = 1.0 - 1e-9


@dataclass(frozen=True)
class Interval:
    low: float
    high: float

    @property
    def width(self) -> float:
        return self.high - self.low

    def excludes(self, value: float) -> bool:
        return value < self.low or value > self.high


WILSON, BOOTSTRAP, NEWCOMBE = "Wilson score", "bootstrap over tasks (BCa)", "Newcombe paired score"


@dataclass(frozen=True)
class Estimate:
    """A mean over tasks with its interval (`method`: WILSON or BOOTSTRAP; None when no interval: a
    bootstrap of one task has nothing to resample)."""
    mean: float
    interval: Interval | None
    tasks: int
    trials: int
    method: str | None = None


def solved(score: float) -> bool:
    return score >= SOLVED


def task_means(scores: TaskScores[K]) -> dict[K, float]:
    """Each task's mean over its trials."""
    empty = [task for task, trials in scores.items() if not trials]
    if empty:
        raise ValueError(f"task {empty[0]!r} has no trial scores")
    return {task: float(np.mean(trials)) for task, trials in scores.items()}


def bootstrap_interval(values: Sequence[float], confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                       seed: int = SEED) -> Interval | None:
    """The BCa bootstrap interval of the mean of `values` (one per task), by scipy.stats.bootstrap.

    Values that are all alike give a zero-width interval: no resample can differ, which says that no
    task varied, not that the mean is certain. BCa is undefined for some tiny samples (its jackknife
    is constant); the percentile interval stands in for it there."""
    from scipy import stats as scipy_stats  # 1.5 s at import: kept off the CLI's start-up path

    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None
    if np.all(data == data[0]):
        return Interval(float(data[0]), float(data[0]))
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=scipy_stats.DegenerateDataWarning)
            result = scipy_stats.bootstrap((data,), np.mean, n_resamples=resamples, confidence_level=confidence,
                                           method=method, vectorized=True, rng=np.random.default_rng(seed))
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if not (math.isnan(low) or math.isnan(high)):
            return Interval(low, high)
    raise AssertionError("the percentile bootstrap of a sample with two distinct values is always defined")


def wilson_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> Interval:
    """Wilson's score interval of the proportion successes/n, in closed form as scipy's
    `binomtest(successes, n).proportion_ci(method="wilson")` computes it (Newcombe 1998), bounds pinned
    to 0 and 1 at no and all successes. Written out because importing scipy.stats costs about a CPU-second,
    and every `osworld run` prints a summary with this interval."""
    z = NormalDist().inv_cdf(0.5 + 0.5 * confidence)
    p = successes / n
    denominator = 2 * (n + z * z)
    center = (2 * n * p + z * z) / denominator
    half_width = z / denominator * math.sqrt(4 * n * p * (1 - p) + z * z)
    return Interval(0.0 if successes == 0 else center - half_width, 1.0 if successes == n else center + half_width)


def binary(values: Sequence[float]) -> bool:
    """Whether every value is 0 or 1 (a task solved or not)."""
    return all(solved(v) or v <= 1 - SOLVED for v in values)


def estimate(scores: TaskScores[K], confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
             seed: int = SEED) -> Estimate | None:
    """The mean score over tasks (each task's trials averaged first) and its interval: Wilson's when
    every task's mean is 0 or 1, else the clustered bootstrap (see the module's doc); None when there
    is no task."""
    if not scores:
        return None
    means = list(task_means(scores).values())
    trials = sum(len(t) for t in scores.values())
    if binary(means):
        return Estimate(float(np.mean(means)), wilson_interval(sum(map(solved, means)), len(means), confidence),
                        len(means), trials, WILSON)
    interval = bootstrap_interval(means, confidence, resamples, seed)
    return Estimate(float(np.mean(means)), interval, len(means), trials, BOOTSTRAP if interval else None)


def newcombe_paired(both: int, a_only: int, b_only: int, neither: int, confidence: float = CONFIDENCE) -> Interval:
    """The interval of p_A - p_B for paired binary outcomes (tasks both runs solved, only A, only B,
    neither): Newcombe's (1998) method 10, the two marginal Wilson intervals combined with the
    correlation of the pairs (its phi, shrunk towards 0 as he prescribes)."""
    n = both + a_only + b_only + neither
    if n == 0:
        raise ValueError("a paired interval needs at least one task")
    p_a, p_b = (both + a_only) / n, (both + b_only) / n
    low_a, high_a = astuple(wilson_interval(both + a_only, n, confidence))
    low_b, high_b = astuple(wilson_interval(both + b_only, n, confidence))
    margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
    cross = both * neither - a_only * b_only
    shrunk = cross - n / 2 if cross > n / 2 else cross if cross < 0 else 0.0
    phi = shrunk / math.sqrt(margins) if margins > 0 else 0.0
    difference = p_a - p_b
    below = (p_a - low_a) ** 2 - 2 * phi * (p_a - low_a) * (high_b - p_b) + (high_b - p_b) ** 2
    above = (p_b - low_b) ** 2 - 2 * phi * (p_b - low_b) * (high_a - p_a) + (high_a - p_a) ** 2
    return Interval(difference - math.sqrt(max(below, 0.0)), difference + math.sqrt(max(above, 0.0)))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k trials drawn without replacement from n, c of them solved,
    is solved (the unbiased estimator of Chen et al., 2021)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all of k trials drawn without replacement from n, c of them solved, are solved
    (pass^k, as tau-bench defines it): how reliably the task is solved, not whether it can be."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass^k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    return math.comb(c, k) / math.comb(n, k)


def _over_tasks(scores: TaskScores[K], k: int, per_task: str) -> float | None:
    function = pass_at_k if per_task == "at" else pass_hat_k
    values = [function(len(trials), sum(map(solved, trials)), k) for trials in scores.values() if len(trials) >= k]
    return float(np.mean(values)) if values else None


def pass_at(scores: TaskScores[K], k: int) -> float | None:
    """pass@k averaged over the tasks with at least k trials (None if none has)."""
    return _over_tasks(scores, k, "at")


def pass_all(scores: TaskScores[K], k: int) -> float | None:
    """pass^k averaged over the tasks with at least k trials (None if none has)."""
    return _over_tasks(scores, k, "hat")


def flip_share(scores: TaskScores[K]) -> float | None:
    """The share of tasks with two trials or more that some trials solved and others did not
    (None when no task has two trials)."""
    repeated = [trials for trials in scores.values() if len(trials) >= 2]
    if not repeated:
        return None
    return sum(len({solved(score) for score in trials}) > 1 for trials in repeated) / len(repeated)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """The two-sided p-value of the exact McNemar test: of the tasks exactly one run solved (`a_only`
    by A, `b_only` by B), is either run more likely to be the one? (A binomial test of a_only out of
    a_only + b_only at 1/2.) 1.0 when no task tells the runs apart."""
    if a_only + b_only == 0:
        return 1.0
    from scipy import stats as scipy_stats

    return float(scipy_stats.binomtest(a_only, a_only + b_only, 0.5).pvalue)


@dataclass(frozen=True)
class Comparison(Generic[K]):
    """Run A against run B over the same tasks: `difference` is A's mean minus B's with its paired
    interval (`method`: NEWCOMBE for binary scores and one trial per task, else BOOTSTRAP). With one
    trial per task in both runs the test is the exact McNemar test on solved tasks (`p_value`); with
    more it is the paired bootstrap, whose interval excluding 0 is the verdict."""
    tasks: int
    mean_a: float
    mean_b: float
    difference: float
    interval: Interval | None
    test: str                  # "exact McNemar" or "paired bootstrap"
    p_value: float | None      # McNemar's; None for the paired bootstrap
    a_only: int | None         # McNemar's discordant tasks: solved by A and not by B (None with more trials)
    b_only: int | None         # solved by B and not by A
    won: list[K]               # tasks where A's mean is above B's
    lost: list[K]              # tasks where B's mean is above A's
    method: str | None = None  # of the interval

    @property
    def significant(self) -> bool:
        """Whether the data says the runs differ, at 1 - CONFIDENCE."""
        if self.p_value is not None:
            return self.p_value < 1 - CONFIDENCE
        return self.interval is not None and self.interval.excludes(0.0)


def compare(a: TaskScores[K], b: TaskScores[K], confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
            seed: int = SEED) -> Comparison[K]:
    """A against B, task by task; both must hold the same tasks (the caller decides what to do with
    tasks only one run has, and says so)."""
    if set(a) != set(b):
        only = sorted(map(str, set(a) ^ set(b)))
        raise ValueError(f"a paired comparison needs the same tasks in both runs; {len(only)} differ, "
                         f"e.g. {only[0]!r}")
    if not a:
        raise ValueError("a paired comparison needs at least one task")
    tasks = list(a)
    mean_a, mean_b = task_means(a), task_means(b)
    differences = [mean_a[t] - mean_b[t] for t in tasks]
    won = [t for t in tasks if mean_a[t] > mean_b[t]]
    lost = [t for t in tasks if mean_b[t] > mean_a[t]]
    a_only = b_only = p_value = None
    one_trial = all(len(a[t]) == 1 and len(b[t]) == 1 for t in tasks)
    interval = None
    if one_trial:
        a_only = sum(solved(a[t][0]) and not solved(b[t][0]) for t in tasks)
        b_only = sum(solved(b[t][0]) and not solved(a[t][0]) for t in tasks)
        p_value = mcnemar_exact(a_only, b_only)
        if binary([a[t][0] for t in tasks] + [b[t][0] for t in tasks]):
            both = sum(solved(a[t][0]) and solved(b[t][0]) for t in tasks)
            interval = newcombe_paired(both, a_only, b_only, len(tasks) - both - a_only - b_only, confidence)
    method = NEWCOMBE if interval is not None else None
    if interval is None:
        interval = bootstrap_interval(differences, confidence, resamples, seed)
        method = BOOTSTRAP if interval is not None else None
    return Comparison(
        tasks=len(tasks), mean_a=float(np.mean(list(mean_a.values()))), mean_b=float(np.mean(list(mean_b.values()))),
        difference=float(np.mean(differences)), interval=interval,
        test="exact McNemar" if one_trial else "paired bootstrap", p_value=p_value,
        a_only=a_only, b_only=b_only, won=won, lost=lost, method=method)
