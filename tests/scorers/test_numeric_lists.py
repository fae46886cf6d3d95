"""The array fast path of list scoring gives exactly the item-by-item result."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scorers.lists as lists
from scorers.lists import list_approximate, list_exact
from scorers.numeric_lists import numeric_array, pair_identical

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
