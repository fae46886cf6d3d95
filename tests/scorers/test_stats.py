"""Aggregation: domain/overall means over main tasks, subtasks apart, bootstrap CIs, paired comparison."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kramabench.scorers.stats import ScoredItem, bootstrap_ci, mean_ci, paired_comparison, summarize


def item(domain, task, value, sub=None, unscored=False, reason=None, answer_type="numeric_exact"):
    return ScoredItem(
        domain=domain,
        task_id=task,
        subtask_id=sub,
        value=None if unscored else value,
        unscored=unscored,
        reason=reason,
        answer_type=answer_type,
    )


def test_domain_and_overall_means_follow_the_paper():
    items = [
        item("a", "a-1", 1.0),
        item("a", "a-2", 0.0),
        item("a", "a-3", 0.5),
        item("b", "b-1", 1.0),
        item("a", "a-1", 0.0, sub="a-1-1"),
        item("a", "a-1", 0.0, sub="a-1-2"),
        item("b", "b-1", 1.0, sub="b-1-1"),
    ]
    s = summarize(items, n_boot=2000)
    assert s.domains["a"].main.mean == pytest.approx(0.5)
    assert s.domains["b"].main.mean == pytest.approx(1.0)
    # overall is the mean over all main tasks (not the mean of domain means)
    assert s.overall.mean == pytest.approx(2.5 / 4)
    assert s.overall.n == 4
    # subtasks are apart and never mixed in
    assert s.domains["a"].subtasks.mean == 0.0 and s.domains["a"].subtasks.n == 2
    assert s.overall_subtasks.mean == pytest.approx(1 / 3)


def test_unscored_is_excluded_and_counted_missing_counts_as_zero():
    items = [
        item("a", "a-1", 1.0),
        item("a", "a-2", None, unscored=True, reason="judge_unparsable"),
        item("a", "a-3", 0.0, reason="missing"),
    ]
    s = summarize(items, n_boot=500)
    est = s.domains["a"].main
    assert est.mean == 0.5 and est.n == 2 and est.n_unscored == 1 and est.n_missing == 1


def test_by_answer_type():
    items = [
        item("a", "a-1", 1.0, answer_type="string_exact"),
        item("a", "a-2", 0.0, answer_type="list_exact"),
    ]
    s = summarize(items, n_boot=200)
    assert s.domains["a"].by_answer_type["string_exact"].mean == 1.0
    assert s.domains["a"].by_answer_type["list_exact"].mean == 0.0


def test_bootstrap_ci_is_seeded_and_sensible():
    rng = np.random.default_rng(1)
    values = rng.random(200)
    lo, hi = bootstrap_ci(values, seed=3)
    assert (lo, hi) == bootstrap_ci(values, seed=3)
    assert (lo, hi) != bootstrap_ci(values, seed=4)
    assert lo < values.mean() < hi
    # close to the normal approximation for a sample this large
    half = 1.96 * values.std(ddof=1) / math.sqrt(len(values))
    assert hi - lo == pytest.approx(2 * half, rel=0.15)


def test_bootstrap_ci_edge_cases():
    assert bootstrap_ci([]) == (None, None)
    assert bootstrap_ci([0.7]) == (0.7, 0.7)
    assert bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)
    lo, hi = bootstrap_ci([0.0, 1.0] * 50, n_boot=5000)
    assert 0.38 < lo < 0.45 and 0.55 < hi < 0.62


def test_bootstrap_large_input_is_chunked():
    values = np.linspace(0, 1, 20_000)
    lo, hi = bootstrap_ci(values, n_boot=2000)
    assert lo < 0.5 < hi and hi - lo < 0.02


def test_summary_is_json_serialisable():
    s = summarize([item("a", "a-1", 1.0), item("a", "a-2", None, unscored=True)], n_boot=100)
    again = type(s).model_validate_json(s.model_dump_json())
    assert again == s


def test_paired_comparison_identical_runs():
    a = [item("d", f"t{i}", v) for i, v in enumerate([0.1, 0.5, 1.0, 0.0])]
    c = paired_comparison(a, a, n_boot=1000)
    assert c.mean_diff == 0 and c.p_value == 1.0 and c.ties == 4 and c.n_common == 4


def test_paired_comparison_detects_a_better_run():
    rng = np.random.default_rng(0)
    base = rng.random(60)
    a = [item("d", f"t{i}", min(1.0, v + 0.2)) for i, v in enumerate(base)]
    b = [item("d", f"t{i}", v) for i, v in enumerate(base)]
    c = paired_comparison(a, b, n_boot=5000, seed=1)
    assert c.mean_diff > 0.1 and c.ci_low > 0 and c.p_value < 0.01
    assert c.wins_a > 40 and c.wins_b == 0
    # the reverse comparison is the mirror image
    r = paired_comparison(b, a, n_boot=5000, seed=1)
    assert r.mean_diff == pytest.approx(-c.mean_diff) and r.ci_high < 0


def test_paired_comparison_noise_is_not_significant():
    rng = np.random.default_rng(5)
    a = [item("d", f"t{i}", float(v)) for i, v in enumerate(rng.integers(0, 2, 80))]
    b = [item("d", f"t{i}", float(v)) for i, v in enumerate(rng.integers(0, 2, 80))]
    c = paired_comparison(a, b, n_boot=5000)
    assert c.ci_low < 0 < c.ci_high or c.p_value > 0.01


def test_paired_comparison_reports_tasks_on_one_side():
    a = [item("d", "t1", 1.0), item("d", "t2", 1.0), item("d", "t3", None, unscored=True)]
    b = [item("d", "t1", 0.0), item("d", "t3", 1.0), item("d", "t4", 1.0), item("d", "t1", 0.0, sub="t1-1")]
    c = paired_comparison(a, b, n_boot=200)
    assert c.only_in_a == ["t2"] and c.only_in_b == ["t4"]
    assert c.unscored_in_a == ["t3"] and c.n_common == 1 and c.mean_diff == 1.0
    s = paired_comparison(a, b, subtasks=True, n_boot=200)
    assert s.n_common == 0 and s.only_in_b == ["t1-1"] and s.mean_diff is None


def test_few_differing_tasks_never_look_significant():
    from kramabench.scorers.stats import ScoredItem, paired_comparison

    def run(values):
        return [ScoredItem(domain="d", task_id=f"t{i}", value=v) for i, v in enumerate(values)]

    # one task better: a sign-flip test cannot do better than p = 1 (bootstrap alone said 1/(B+1))
    assert paired_comparison(run([0.5]), run([0.2])).p_value == 1.0
    # two tasks better by different amounts: p >= 2/2**2
    assert paired_comparison(run([0.5, 0.9]), run([0.2, 0.4])).p_value >= 0.5
    # three better, many ties: the ties do not count as evidence
    c = paired_comparison(run([1, 1, 1] + [0.5] * 20), run([0, 0, 0] + [0.5] * 20))
    assert c.p_value >= 0.25 and c.wins_a == 3 and c.ties == 20
    # many consistent wins are still significant
    assert paired_comparison(run([1.0] * 30), run([0.0] * 30)).p_value < 0.001


def test_bootstrap_by_counts_has_the_distribution_of_index_resampling():
    """Few distinct scores: resamples drawn as multinomial counts, same distribution as drawn indices."""
    import numpy as np

    from kramabench.scorers.stats import _resampled_means

    values = np.array([0.0] * 300 + [1.0] * 150 + [0.5] * 40 + [0.25] * 10)
    by_counts = _resampled_means(values, 20_000, np.random.default_rng(1))
    idx = np.random.default_rng(2).integers(0, len(values), size=(20_000, len(values)))
    by_index = values[idx].mean(axis=1)
    assert abs(by_counts.mean() - values.mean()) < 1e-3
    assert abs(by_counts.std() / by_index.std() - 1) < 0.05
    for q in (0.025, 0.975):
        assert abs(np.quantile(by_counts, q) - np.quantile(by_index, q)) < 0.005


def _index_resampled_means(values: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """The textbook bootstrap: n indices drawn uniformly per resample (the reference distribution)."""
    rng = np.random.default_rng(seed)
    out = []
    for start in range(0, n_boot, 2_000):
        k = min(2_000, n_boot - start)
        out.append(values[rng.integers(0, len(values), size=(k, len(values)))].mean(axis=1))
    return np.concatenate(out)


@pytest.mark.parametrize(
    "values",
    [
        # real-looking subtask scores: two frequent values, a few medium ones, many values seen once or twice
        np.concatenate(
            [[0.0] * 400, [1.0] * 300, [0.5] * 60, [0.25] * 30, np.random.default_rng(5).random(210)]
        ),
        # one rare item: most resamples draw it 0 or 1 times (runs of length 0 in the drawn rare items)
        np.array([0.0] * 500 + [1.0] * 499 + [0.3]),
        # every value rare: plain index resampling
        np.random.default_rng(6).random(300),
        # every value frequent: multinomial counts alone
        np.array([0.0] * 100 + [1.0] * 60 + [0.5] * 40),
    ],
    ids=["mixed", "one-rare", "all-rare", "all-frequent"],
)
def test_bootstrap_draws_have_the_distribution_of_index_resampling(values):
    """Frequent values as multinomial counts plus rare items drawn as indices: the resampled means have the
    distribution of drawing n indices (two-sample KS test against the textbook bootstrap, the exact mean and
    variance of a resample mean), and a seed gives the same draws again."""
    from scipy.stats import ks_2samp

    from kramabench.scorers.stats import _resampled_means

    n_boot = 20_000
    fast = _resampled_means(values, n_boot, np.random.default_rng(1))
    ref = _index_resampled_means(values, n_boot, seed=2)
    assert ks_2samp(fast, ref).pvalue > 0.01
    # E[mean*] = mean, Var[mean*] = population variance / n, for the bootstrap of the mean
    se = math.sqrt(values.var() / len(values))
    assert abs(fast.mean() - values.mean()) < 4 * se / math.sqrt(n_boot)
    assert fast.std() / se == pytest.approx(1.0, abs=0.03)
    for q in (0.025, 0.975):
        assert abs(np.quantile(fast, q) - np.quantile(ref, q)) < 0.1 * se
    assert np.array_equal(fast, _resampled_means(values, n_boot, np.random.default_rng(1)))
    # the means are means of draws of these values: within their range
    assert values.min() - 1e-12 <= fast.min() and fast.max() <= values.max() + 1e-12


def test_bootstrap_counts_a_rare_item_as_often_as_index_resampling_does():
    """How many times a single rare item is drawn into a resample of n follows Binomial(n, 1/n): with a
    value large enough to read that count off each resampled mean, the shares of 0, 1 and 2 draws match."""
    from scipy.stats import binom

    from kramabench.scorers.stats import _resampled_means

    n, big = 1_000, 1e6
    values = np.array([0.0] * 600 + [1.0] * 399 + [big])
    means = _resampled_means(values, 20_000, np.random.default_rng(3))
    drawn = np.rint(means * n / big)  # the frequent values add at most 1,000 / big
    for k in (0, 1, 2):
        assert (drawn == k).mean() == pytest.approx(binom.pmf(k, n, 1 / n), abs=0.015)


def test_summarize_groups_items_like_filtering_each_group():
    """The one-pass grouping of summarize gives what filtering the items for each domain, level and answer
    type gives (random items: missing, unscored, None values, subtasks, unknown answer types)."""
    from kramabench.scorers.stats import estimate

    rng = np.random.default_rng(11)
    items = []
    for k in range(600):
        domain = str(rng.choice(["b", "a", "c"]))
        sub = None if rng.random() < 0.4 else f"t{k}-1"
        r = rng.random()
        items.append(
            ScoredItem(
                domain=domain,
                task_id=f"t{k}",
                subtask_id=sub,
                answer_type=rng.choice(["numeric_exact", "list_exact", None]),
                value=None if r < 0.1 else float(rng.choice([0.0, 1.0, 0.5, rng.random()])),
                unscored=bool(0.1 <= r < 0.15),
                reason="missing" if 0.15 <= r < 0.25 else None,
            )
        )
    kw = {"n_boot": 300, "confidence": 0.9, "seed": 4}
    s = summarize(items, **kw)
    main = [i for i in items if i.subtask_id is None]
    subs = [i for i in items if i.subtask_id is not None]
    assert s.overall == estimate(main, **kw) and s.overall_subtasks == estimate(subs, **kw)
    assert list(s.domains) == ["a", "b", "c"]
    for d, ds in s.domains.items():
        dm = [i for i in main if i.domain == d]
        assert ds.main == estimate(dm, **kw)
        assert ds.subtasks == estimate([i for i in subs if i.domain == d], **kw)
        types = sorted({i.answer_type or "unknown" for i in dm})
        assert list(ds.by_answer_type) == types
        for t in types:
            assert ds.by_answer_type[t] == estimate(
                [i for i in dm if (i.answer_type or "unknown") == t], **kw
            )
    # estimate's counts, computed apart
    e = s.overall
    assert e.n == sum(1 for i in main if not i.unscored and i.value is not None)
    assert e.n_unscored == sum(1 for i in main if i.unscored or i.value is None)
    assert e.n_missing == sum(1 for i in main if i.reason == "missing") > 0


def test_the_interval_does_not_depend_on_the_order_the_tasks_were_read_in():
    """Scores with many rare values (the part of a resample drawn as indices): any order, a dict or a list,
    gives the same interval and the same mean to the last bit; the old file-order draw did not."""
    rng = np.random.default_rng(7)
    values = [round(float(v), 3) for v in rng.random(40)] + [0.0] * 30 + [1.0] * 30
    keyed = {("d", f"d-easy-{i}"): v for i, v in enumerate(values)}
    ref = bootstrap_ci(keyed)
    for _ in range(5):
        order = list(rng.permutation(len(values)))
        shuffled = [values[i] for i in order]
        assert bootstrap_ci(shuffled) == ref
        assert bootstrap_ci({("d", f"t{i}"): values[i] for i in order}) == ref
        assert mean_ci(shuffled) == mean_ci(values)
    # the old draw, in the order given, differed between orders: the canonical order is what fixes it
    from kramabench.scorers.stats import _bootstrap

    raw = {
        _bootstrap(np.asarray(values[::-1]), n_boot=10_000, confidence=0.95, seed=0)[1:],
        _bootstrap(np.asarray(values), n_boot=10_000, confidence=0.95, seed=0)[1:],
    }
    assert len(raw) == 2


def test_mean_ci_of_a_mapping_counts_unscored_tasks_apart():
    c = mean_ci({("a", "a-1"): 1.0, ("a", "a-2"): None, ("a", "a-3"): 0.0})
    assert (c.mean, c.n, c.n_unscored) == (0.5, 2, 1)
    assert (c.lo, c.hi) == bootstrap_ci([0.0, 1.0])


def test_paired_comparison_does_not_depend_on_the_order_of_the_items():
    rng = np.random.default_rng(3)
    a = [item("a", f"a-{i}", round(float(rng.random()), 2)) for i in range(60)]
    b = [item("a", f"a-{i}", round(float(rng.random()), 2)) for i in range(60)]
    ref = paired_comparison(a, b, n_boot=2000)
    assert paired_comparison(a[::-1], b[7:] + b[:7], n_boot=2000) == ref
