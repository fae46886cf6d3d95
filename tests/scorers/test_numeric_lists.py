"""The array fast path of list scoring gives exactly the item-by-item result."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kramabench.scorers.lists as lists
from kramabench.scorers.lists import list_approximate, list_exact
from kramabench.scorers.numeric_lists import numeric_array, pair_identical

NUMBERS = st.one_of(
    st.integers(-50, 50),
    st.sampled_from(
        [
            0.0,
            -0.0,
            1.5,
            2.25,
            0.1,
            0.47368421052631576,
            0.4737,
            1950.0,
            12.0,
            float("nan"),
            float("inf"),
            1e-05,
            100.0,
            0.015,
        ]
    ),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 3)),
)


def _both(scorer, gold, pred):
    fast = scorer(gold, pred)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(lists, "numeric_array", lambda values: None)
        m.setattr(lists, "_GOLD_CACHE", {})
        slow = scorer(gold, pred)
    return fast, slow


@settings(max_examples=300, deadline=None)
@given(gold=st.lists(NUMBERS, min_size=1, max_size=25), pred=st.lists(NUMBERS, min_size=1, max_size=25))
def test_fast_path_equals_items(gold, pred):
    for scorer in (list_exact, list_approximate):
        fast, slow = _both(scorer, gold, pred)
        assert fast.model_dump() == slow.model_dump(), (scorer.__name__, gold, pred)


@pytest.mark.parametrize("scorer", [list_exact, list_approximate])
def test_fast_path_equals_items_on_long_lists(scorer):
    rng = random.Random(5)
    gold = [rng.choice([rng.randint(-6000, 2000), round(rng.uniform(0, 1e4), 4)]) for _ in range(2500)]
    variants = [
        gold,
        gold[::-1],
        gold[:1200],
        [x * 1.01 for x in gold],
        [x * 100 for x in gold[:900]],
        [x + 1 for x in gold],
    ]
    for pred in variants:
        fast, slow = _both(scorer, gold, pred)
        assert fast.model_dump() == slow.model_dump()


def test_numeric_array_accepts_plain_numbers_only():
    assert numeric_array([1, 2.5]).tolist() == [1.0, 2.5]
    assert numeric_array([1, True]) is None
    assert numeric_array([1, "2"]) is None
    assert numeric_array([]) is None
    assert numeric_array([2**1023]) is None  # read as infinity by the item rules
    assert numeric_array([2**2000]) is None


def test_pair_identical_leaves_what_the_item_pairing_leaves():
    import numpy as np

    g = np.array([1.0, 2.0, 1.0, float("nan"), 0.0])
    p = np.array([1.0, float("nan"), -0.0, 3.0, 1.0, 1.0])
    pairs, gl, pl = pair_identical(g, p)
    assert pairs == 4  # 1, 1, nan, 0
    assert gl.tolist() == [1]  # 2.0
    assert pl.tolist() == [0, 3]  # the first 1.0 (the later ones are paired, as pop() does) and 3.0


def test_gold_is_parsed_once_per_gold_object(monkeypatch):
    calls = []
    real = lists.parse_list

    def counting(value, **kw):
        if kw.get("lenient"):
            calls.append(value)
        return real(value, **kw)

    monkeypatch.setattr(lists, "parse_list", counting)
    monkeypatch.setattr(lists, "_GOLD_CACHE", {})
    gold = [1, 2, 3, 4]
    for pred in ([1, 2], [4, 3, 2, 1], "[1, 2, 3]", ["a"]):
        list_exact(gold, pred)
    assert len(calls) == 1
    list_exact(list(gold), [1])  # another (equal) gold object is read again
    assert len(calls) == 2


def _pair_identical_reference(gold, pred):
    """The item pairing as first written (per key: first gold occurrences, last predicted ones)."""
    from collections import defaultdict

    by_key = defaultdict(list)
    for it in pred:
        by_key[it.key].append(it)
    pairs, rest_gold = 0, []
    for it in gold:
        bucket = by_key.get(it.key)
        if bucket:
            bucket.pop()
            pairs += 1
        else:
            rest_gold.append(it)
    return pairs, rest_gold, [it for bucket in by_key.values() for it in bucket]


ITEMS = st.one_of(
    st.integers(-3, 3), st.sampled_from(["a", "b", "A ", "1", "nan", float("nan"), -0.0, 0.0, 2.0])
)


@settings(max_examples=300, deadline=None)
@given(gold=st.lists(ITEMS, max_size=12), pred=st.lists(ITEMS, max_size=12))
def test_pair_identical_of_items_keeps_the_pairing_and_its_order(gold, pred):
    from kramabench.scorers.parse import to_item

    g, p = [to_item(x) for x in gold], [to_item(x) for x in pred]
    got = lists._pair_identical(g, p)
    want = _pair_identical_reference(g, p)
    assert got[0] == want[0]
    assert [id(x) for x in got[1]] == [id(x) for x in want[1]]
    assert [id(x) for x in got[2]] == [id(x) for x in want[2]]


def test_max_matching_equals_the_assignment_count():
    """The matching count (Hopcroft-Karp) equals the optimal assignment's on random boolean matrices."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    rng = np.random.default_rng(1)
    for _ in range(300):
        a, b = rng.integers(1, 30, 2)
        m = rng.random((a, b)) < rng.random()
        r, c = linear_sum_assignment(m, maximize=True)
        assert lists._max_matching(m) == int(m[r, c].sum()), m


def _greedy_values_by_deletion(g, tol, p, approximate):
    """The interval greedy as first written: golds by upper end, each taking the smallest free value."""
    import bisect

    import numpy as np

    vals = np.sort(p[~np.isnan(p)]).tolist()
    count = min(int(np.isnan(p).sum()), int(np.isnan(g).sum()))
    keep = ~np.isnan(g)
    y = g[keep]
    # an infinite gold: only the same infinity (tests/scorers/test_infinite_gold.py)
    half = (
        np.where(np.isinf(y), 0.0, np.where(y != 0, np.abs(y), 1.0) / 9.0 * (1 - 1e-12))
        if approximate
        else tol[keep]
    )
    with np.errstate(invalid="ignore"):
        lo, hi = y - half, y + half
    for k in np.lexsort((lo, hi)).tolist():
        j = bisect.bisect_left(vals, lo[k])
        if j < len(vals) and vals[j] <= hi[k]:
            del vals[j]
            count += 1
    return count


def test_greedy_values_counts_what_the_greedy_by_deletion_counts():
    import numpy as np

    from kramabench.scorers.numeric_lists import greedy_values

    rng = np.random.default_rng(12)
    pool = np.array([0.0, 1.0, -1.0, 2.0, 1.05, 0.9, 10.0, 11.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5.5])
    for _ in range(2000):
        g = rng.choice(pool, int(rng.integers(0, 20)))
        p = rng.choice(pool, int(rng.integers(0, 20))) * rng.choice([1.0, 1.01, 0.95])
        if rng.random() < 0.5:
            g = np.concatenate([g, rng.normal(0, 5, int(rng.integers(0, 20))).round(1)])
            p = np.concatenate([p, rng.normal(0, 5, int(rng.integers(0, 20))).round(1)])
        tol = np.where(np.isfinite(g), np.abs(g) * rng.choice([1e-9, 0.05, 0.5]), np.inf)
        for approximate in (True, False):
            assert greedy_values(g, tol, p, approximate) == _greedy_values_by_deletion(
                g, tol, p, approximate
            ), (
                g,
                p,
                approximate,
            )
