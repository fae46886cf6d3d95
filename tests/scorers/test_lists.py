"""List matching internals: optimality, large lists, nested rows."""

from __future__ import annotations

import random

import pytest

from kramabench.scorers import score
from kramabench.scorers.lists import MAX_MATRIX, _greedy_numbers, _max_matching, _num_matrix
from kramabench.scorers.parse import to_item


@pytest.mark.parametrize("approximate", [False, True])
def test_interval_matching_equals_optimal_matrix_matching(approximate):
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 25)
        gold = [round(rng.uniform(-10, 10), rng.choice([0, 1, 2])) for _ in range(n)]
        pred = [x + rng.choice([0, 0.004, 0.01, 0.3, 1, -0.2]) for x in rng.sample(gold, k=rng.randint(0, n))]
        pred += [rng.uniform(-10, 10) for _ in range(rng.randint(0, 4))]
        g, p = [to_item(x) for x in gold], [to_item(x) for x in pred]
        expected = _max_matching(_num_matrix(g, p, approximate)) if p else 0
        assert _greedy_numbers(g, p, approximate) == expected, (gold, pred)


def test_matching_is_optimal_not_greedy():
    # 100 matches both golds, but 90.5 only matches 100: a greedy pairing of 100 with 100 loses one
    assert score([100, 109], [100, 90.5], "list_approximate").value == 1.0


def test_large_lists_use_interval_matching():
    n = int(MAX_MATRIX**0.5) + 100
    gold = [float(i) for i in range(1, n + 1)]
    pred = [x * 1.05 for x in reversed(gold)]
    s = score(gold, pred, "list_approximate")
    assert s.value == 1.0 and "interval_matching" in s.details["notes"]
    s = score(gold, [x + 0.4 for x in gold], "list_exact")
    assert s.value == 0.0 and "interval_matching" in s.details["notes"]


def test_nested_rows_with_duplicates_and_mixed_order():
    gold = [["Boston", 9.29], ["Boston", 9.29], ["Chatham", 8.71]]
    assert score(gold, [["Chatham", 8.71], ["Boston", 9.29]], "list_exact").value == pytest.approx(0.8)
    assert score(gold, [["boston", "9.29"], ["BOSTON", 9.290], ["Chatham", 8.71]], "list_exact").value == 1.0
    # rows of different length never match
    assert score([["Boston", 9.29]], [["Boston", 9.29, 1]], "list_exact").value == 0.0
    # deeper nesting
    assert score([[["a", 1], ["b", 2]]], [[["a", 1], ["b", 2]]], "list_exact").value == 1.0
    assert (
        score([[["a", 1], ["b", 2]]], [[["b", 2], ["a", 1]]], "list_exact").value == 0.0
    )  # rows are ordered


def test_approximate_rows():
    assert score([["Boston", 100.0]], [["boston", 105.0]], "list_approximate").value == 1.0
    assert score([["Boston", 100.0]], [["boston", 150.0]], "list_approximate").value == 0.0
