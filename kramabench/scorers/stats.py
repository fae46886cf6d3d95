"""The one statistics module: means with percentile-bootstrap CIs (:func:`bootstrap_ci`, :func:`mean_ci`),
domain and overall summaries, and the paired comparison; used by ``run``, ``score`` and ``report`` alike.

* A **task score** is the score of the task's main answer, in [0, 1].
* **Domain score** = mean over the domain's main tasks; **overall** = mean over all main tasks of all
  domains (the paper's formula: every task weighs the same, so larger domains weigh more).
* **Subtasks** are summarised separately and never mixed into the main means.
* **Unscored** answers (``unscored=True``: a judge verdict that could not be read, a gold defect) are
  left out of the means and counted apart (``n_unscored``). A task without a prediction is scored 0
  with reason ``missing`` by the caller, so it counts (``n_missing``).
* **Confidence intervals**: percentile bootstrap over tasks (resampled with replacement), 95% by
  default, 10,000 resamples, seed 0. :func:`bootstrap_ci` is the one function that draws them (the run's
  table, ``score``, the report, the viewer and the comparisons all call it, directly or through
  :func:`mean_ci`, :func:`estimate` and :func:`paired_comparison`): it puts the per-task scores in one
  canonical order before resampling (ascending value: tasks of equal score are interchangeable) and its
  seed never depends on the run's name or id, so identical per-task scores give the identical interval wherever it is printed, in
  whatever order the tasks were read.
* **Paired comparison** of two runs (:func:`paired_comparison`): over the tasks scored in both runs,
  the mean difference A - B, its paired-bootstrap CI and a two-sided p-value (the share of resampled
  mean differences, centred on the observed one, at least as far from 0 as the observed one); tasks
  present or scored on one side only are listed, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from kramabench.scorers.keys import AnswerKey

DEFAULT_BOOTSTRAP = 10_000
#: the most resamples a command accepts: 8 MB of means per interval (10**9 would ask for 7.5 GB)
MAX_BOOTSTRAP = 1_000_000
DEFAULT_CONFIDENCE = 0.95
#: cells (resamples x draws) drawn at once; larger problems are drawn in chunks (that stay in the CPU cache)
_CHUNK_CELLS = 1 << 20
#: a distinct value with at least this many items is counted by the multinomial of a resample (one binomial
#: draw, ~80 ns), rarer ones are drawn as indices (~3 ns per item drawn)
_MIN_COUNTED = 28


class ScoredItem(AnswerKey):
    """One scored answer: a task's main answer (``subtask_id`` None) or a subtask's."""

    answer_type: str | None = None
    value: float | None = None
    unscored: bool = False
    reason: str | None = None
    metric: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class Estimate(BaseModel):
    """A mean with its bootstrap CI; ``mean`` is None when nothing was scored."""

    model_config = ConfigDict(extra="forbid")

    mean: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = Field(0, description="answers in the mean")
    n_unscored: int = Field(0, description="answers left out of the mean (unscored)")
    n_missing: int = Field(0, description="answers without a prediction (scored 0, in the mean)")


class DomainSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str
    main: Estimate
    subtasks: Estimate
    by_answer_type: dict[str, Estimate] = Field(default_factory=dict, description="main tasks by answer type")


class Summary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    overall: Estimate
    overall_subtasks: Estimate
    domains: dict[str, DomainSummary] = Field(default_factory=dict)
    confidence: float = DEFAULT_CONFIDENCE
    n_bootstrap: int = DEFAULT_BOOTSTRAP
    seed: int = 0


class PairedComparison(BaseModel):
    model_config = ConfigDict(extra="forbid")

    level: str = Field(description="'tasks' (main answers) or 'subtasks'")
    n_common: int = 0
    mean_a: float | None = None
    mean_b: float | None = None
    mean_diff: float | None = Field(None, description="mean of A - B over the common tasks")
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = Field(None, description="two-sided paired-bootstrap p-value for mean_diff = 0")
    wins_a: int = 0
    wins_b: int = 0
    ties: int = 0
    only_in_a: list[str] = Field(default_factory=list)
    only_in_b: list[str] = Field(default_factory=list)
    unscored_in_a: list[str] = Field(default_factory=list)
    unscored_in_b: list[str] = Field(default_factory=list)
    confidence: float = DEFAULT_CONFIDENCE
    n_bootstrap: int = DEFAULT_BOOTSTRAP
    seed: int = 0


def _resampled_means(values: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``n_boot`` resamples (with replacement) of ``values``.

    Scores take few distinct values (0, 1, some F1 fractions), most of them rare. A resample is drawn as
    multinomial counts of the values drawn often (each costs one binomial draw per resample, whatever its
    count) plus one count for all the rare items together; that many rare items are then drawn as indices
    (each costs one draw). Given its count, the rare part of a resample is that many items drawn uniformly
    from the rare ones, so the resample has exactly the distribution of n indices drawn uniformly; which
    values count as rare (:data:`_MIN_COUNTED`) only decides the cost and the sequence a seed gives."""
    n = len(values)
    uniq, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    counted = counts >= _MIN_COUNTED
    out = np.empty(n_boot, dtype=float)
    if not counted.any():  # no value drawn often: n indices per resample
        per_chunk = max(1, _CHUNK_CELLS // max(n, 1))
        for start in range(0, n_boot, per_chunk):
            k = min(per_chunk, n_boot - start)
            out[start : start + k] = values.take(rng.integers(0, n, size=(k, n))).mean(axis=1)
        return out
    often = uniq[counted]
    rare = values[~counted[inverse]]
    m = len(rare)
    p = (np.append(counts[counted], m) if m else counts) / n
    per_chunk = max(1, _CHUNK_CELLS // (len(often) + 1 + m))
    for start in range(0, n_boot, per_chunk):
        k = min(per_chunk, n_boot - start)
        c = rng.multinomial(n, p, size=k)
        sums = c[:, : len(often)] @ often
        if m:
            t = c[:, -1]  # rare items in each resample
            total = int(t.sum())
            if total:
                drawn = np.append(rare.take(rng.integers(0, m, size=total)), 0.0)
                # the sum of each resample's run of drawn items (a run of length 0 sums to 0)
                sums += np.where(t > 0, np.add.reduceat(drawn, np.cumsum(t) - t), 0.0)
        out[start : start + k] = sums / n
    return out


#: the one bootstrap seed of every interval (a command may take another, the same for all its cells)
DEFAULT_SEED = 0


def canonical_values(values: Mapping[Any, float] | Iterable[float]) -> np.ndarray:
    """The per-task scores in the one order every interval resamples them in: ascending value (``values``:
    ``{task key: score}`` or the scores alone). Tasks with equal scores are interchangeable in a resample,
    so this order is one whatever order the caller read the tasks in (file order, task order, a dict's
    insertion order): it never changes an interval, and two runs with the same per-task scores get the
    same interval."""
    raw = values.values() if isinstance(values, Mapping) else values
    return np.sort(np.asarray(list(raw), dtype=float), kind="stable")


def canonical_mean(values: Mapping[Any, float] | Iterable[float]) -> float:
    """The mean of per-task scores summed in the canonical order (:func:`canonical_values`): the same scores
    read in another order give the same float to the last bit (a sum in file order can differ in its last
    bit, enough to make one of two equal runs look best)."""
    return float(np.mean(canonical_values(values)))


def _bootstrap(
    arr: np.ndarray, *, n_boot: int, confidence: float, seed: int
) -> tuple[np.ndarray, float, float]:
    """The resampled means of ``arr`` (already in canonical order) and their percentile interval."""
    means = _resampled_means(arr, n_boot, np.random.default_rng(seed))
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return means, float(lo), float(hi)


def bootstrap_ci(
    values: Mapping[Any, float] | Iterable[float],
    *,
    n_boot: int = DEFAULT_BOOTSTRAP,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap CI of the mean of per-task scores; (None, None) for no values; a point for one
    value. ``values``: ``{task key: score}`` or the scores alone. THE interval of kramabench: the scores are
    put in the canonical order of :func:`canonical_values` first and the seed is :data:`DEFAULT_SEED` unless
    a command was given another, so the same per-task scores give the same interval in every table, page
    and panel."""
    arr = canonical_values(values)
    if arr.size == 0:
        return None, None
    if arr.size == 1 or np.all(arr == arr[0]):
        return float(arr[0]), float(arr[0])
    _means, lo, hi = _bootstrap(arr, n_boot=n_boot, confidence=confidence, seed=seed)
    return lo, hi


def ratio_ci(
    parts: Iterable[tuple[float, float]],
    *,
    n_boot: int = DEFAULT_BOOTSTRAP,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap CI of a ratio of sums ``sum(num) / sum(den)`` over units ``(num, den)`` (e.g. correct
    data models / data models over pipelines), units resampled (in ascending order of their values, as
    :func:`bootstrap_ci` orders its scores: the order the units were read in never changes the interval);
    (None, None) for no units or no denominator."""
    arr = np.asarray(list(parts), dtype=float).reshape(-1, 2)
    if arr.shape[0] == 0 or arr[:, 1].sum() == 0:
        return None, None
    arr = arr[np.lexsort((arr[:, 1], arr[:, 0]))]
    point = float(arr[:, 0].sum() / arr[:, 1].sum())
    if arr.shape[0] == 1 or np.all(arr == arr[0]):
        return point, point
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.shape[0], size=(n_boot, arr.shape[0]))
    num, den = arr[idx, 0].sum(axis=1), arr[idx, 1].sum(axis=1)
    ratios = num[den > 0] / den[den > 0]
    if ratios.size == 0:
        return None, None
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(ratios, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


#: the label of the row pooling every task (the paper's formula: all tasks weigh the same)
TOTAL = "total"


def format_pct(x: float | None, digits: int = 1) -> str:
    """A score in [0, 1] as the paper prints it: ``63.2`` (percent); ``–`` when there is none. The one
    format of ``run``, ``score`` and ``report``."""
    return "–" if x is None else f"{100 * x:.{digits}f}"


def format_ci(lo: float | None, hi: float | None) -> str:
    """``[55.1, 71.0]`` (percent); ``–`` when there is no interval."""
    return "–" if lo is None or hi is None else f"[{format_pct(lo)}, {format_pct(hi)}]"


@dataclass(frozen=True)
class MeanCI:
    """A mean with its bootstrap interval (None when nothing was scored) and the counts behind it."""

    mean: float | None
    lo: float | None
    hi: float | None
    n: int
    n_unscored: int = 0

    @property
    def empty(self) -> bool:
        return self.n == 0


def mean_ci(
    values: Mapping[Any, float | None] | Sequence[float],
    *,
    n_unscored: int = 0,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_BOOTSTRAP,
) -> MeanCI:
    """Mean and 95% interval (:func:`bootstrap_ci`) of per-task scores: ``{task key: score}`` (None: the
    task is unscored, counted in ``n_unscored`` and never averaged in) or the scored values alone."""
    if isinstance(values, Mapping):
        scored = {k: float(v) for k, v in values.items() if v is not None}
        n_unscored += len(values) - len(scored)
        vals = list(scored.values())
        data: Mapping[Any, float] | Sequence[float] = scored
    else:
        vals = list(values)
        data = vals
    if len(vals) == 0:
        return MeanCI(None, None, None, 0, n_unscored)
    lo, hi = bootstrap_ci(data, seed=seed, n_boot=n_boot)
    return MeanCI(canonical_mean(vals), lo, hi, len(vals), n_unscored)


def estimate(items: list[ScoredItem], *, n_boot: int, confidence: float, seed: int) -> Estimate:
    scored: list[float] = []
    n_unscored = n_missing = 0
    for i in items:
        if i.unscored or i.value is None:
            n_unscored += 1
        else:
            scored.append(i.value)
        if i.reason == "missing":
            n_missing += 1
    lo, hi = bootstrap_ci(scored, n_boot=n_boot, confidence=confidence, seed=seed)
    return Estimate(
        mean=canonical_mean(scored) if scored else None,
        ci_low=lo,
        ci_high=hi,
        n=len(scored),
        n_unscored=n_unscored,
        n_missing=n_missing,
    )


def summarize(
    items: Iterable[ScoredItem],
    *,
    n_boot: int = DEFAULT_BOOTSTRAP,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> Summary:
    """Domain and overall means (main tasks), subtask means apart, each with a bootstrap CI."""

    def est(group: list[ScoredItem]) -> Estimate:
        return estimate(group, n_boot=n_boot, confidence=confidence, seed=seed)

    main: list[ScoredItem] = []
    subs: list[ScoredItem] = []
    # domain -> (main items, subtask items, main items by answer type), each in the order given
    groups: dict[str, tuple[list[ScoredItem], list[ScoredItem], dict[str, list[ScoredItem]]]] = {}
    for i in items:
        g = groups.get(i.domain)
        if g is None:
            g = groups[i.domain] = ([], [], {})
        if i.subtask_id is None:
            main.append(i)
            g[0].append(i)
            g[2].setdefault(i.answer_type or "unknown", []).append(i)
        else:
            subs.append(i)
            g[1].append(i)
    domains = {
        domain: DomainSummary(
            domain=domain,
            main=est(g[0]),
            subtasks=est(g[1]),
            by_answer_type={t: est(v) for t, v in sorted(g[2].items())},
        )
        for domain, g in sorted(groups.items())
    }
    return Summary(
        overall=est(main),
        overall_subtasks=est(subs),
        domains=domains,
        confidence=confidence,
        n_bootstrap=n_boot,
        seed=seed,
    )


def _label(key: tuple[str, str, str | None]) -> str:
    return key[2] or key[1]


def paired_comparison(
    a: Iterable[ScoredItem],
    b: Iterable[ScoredItem],
    *,
    subtasks: bool = False,
    n_boot: int = DEFAULT_BOOTSTRAP,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> PairedComparison:
    """Compare run A with run B over the same tasks (main answers, or subtasks with ``subtasks=True``)."""

    def pick(items: Iterable[ScoredItem]) -> dict[tuple[str, str, str | None], ScoredItem]:
        out: dict[tuple[str, str, str | None], ScoredItem] = {}
        for i in items:
            if (i.subtask_id is not None) == subtasks:
                out[i.key] = i
        return out

    da, db = pick(a), pick(b)
    only_a = sorted(_label(k) for k in da.keys() - db.keys())
    only_b = sorted(_label(k) for k in db.keys() - da.keys())
    common = sorted(da.keys() & db.keys(), key=lambda k: (k[0], k[1], k[2] or ""))
    uns_a = [_label(k) for k in common if da[k].unscored or da[k].value is None]
    uns_b = [_label(k) for k in common if db[k].unscored or db[k].value is None]
    both = [
        k
        for k in common
        if not (da[k].unscored or db[k].unscored or da[k].value is None or db[k].value is None)
    ]
    pairs = [(da[k].value, db[k].value) for k in both]
    result = PairedComparison(
        level="subtasks" if subtasks else "tasks",
        n_common=len(pairs),
        only_in_a=only_a,
        only_in_b=only_b,
        unscored_in_a=uns_a,
        unscored_in_b=uns_b,
        confidence=confidence,
        n_bootstrap=n_boot,
        seed=seed,
    )
    if not pairs:
        return result
    va = np.array([p[0] for p in pairs], dtype=float)
    vb = np.array([p[1] for p in pairs], dtype=float)
    d = va - vb
    observed = float(d.mean())
    result.mean_a, result.mean_b, result.mean_diff = float(va.mean()), float(vb.mean()), observed
    result.wins_a = int((d > 0).sum())
    result.wins_b = int((d < 0).sum())
    result.ties = int((d == 0).sum())
    # with m tasks that differ, no paired test can be surer than the exact sign-flip test when all m
    # differences have the same sign: two-sided p = 2 / 2**m. The bootstrap p-value is floored there, so
    # one differing task gives p = 1 and three give at least 0.25, never 1/(n_boot+1)
    m = int((d != 0).sum())
    floor = min(1.0, 2.0 * 0.5**m) if m < 1075 else 0.0
    if np.all(d == d[0]):
        result.ci_low = result.ci_high = observed
        result.p_value = 1.0 if observed == 0 else max(floor, 1.0 / (n_boot + 1))
        return result
    # the differences resampled as bootstrap_ci resamples scores: in canonical order, with the same seed
    means, lo, hi = _bootstrap(canonical_values(d), n_boot=n_boot, confidence=confidence, seed=seed)
    result.ci_low, result.ci_high = lo, hi
    extreme = np.abs(means - observed) >= abs(observed) - 1e-12
    result.p_value = max(floor, float((1 + extreme.sum()) / (n_boot + 1)))
    return result


__all__ = [
    "DEFAULT_SEED",
    "canonical_mean",
    "canonical_values",
    "ratio_ci",
    "DomainSummary",
    "Estimate",
    "MAX_BOOTSTRAP",
    "MeanCI",
    "PairedComparison",
    "ScoredItem",
    "Summary",
    "TOTAL",
    "bootstrap_ci",
    "estimate",
    "format_ci",
    "format_pct",
    "mean_ci",
    "paired_comparison",
    "summarize",
]
