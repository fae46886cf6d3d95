"""The interval greedy of scorers.matching gives the optimal assignment's count."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from scorers.matching import interval_matching, max_matching


def _assignment(m: np.ndarray) -> int:
    r, c = linear_sum_assignment(m, maximize=True)
    return int(m[r, c].sum())


def _interval_rows(rng: np.random.Generator, n_rows: int, n_cols: int) -> np.ndarray:
    m = np.zeros((n_rows, n_cols), dtype=bool)
    for i in range(n_rows):
        if rng.random() < 0.85:
            a = int(rng.integers(0, n_cols))
            m[i, a : int(rng.integers(a, n_cols)) + 1] = True
    return m


def test_interval_greedy_equals_the_assignment_with_and_without_counts():
    rng = np.random.default_rng(3)
    for _ in range(3000):
        m = _interval_rows(rng, int(rng.integers(1, 9)), int(rng.integers(1, 9)))
        assert interval_matching(m) == _assignment(m), m
        rc, cc = rng.integers(1, 4, m.shape[0]), rng.integers(1, 4, m.shape[1])
        expanded = np.repeat(np.repeat(m, rc, axis=0), cc, axis=1)
        assert interval_matching(m, rc, cc) == _assignment(expanded), (m, rc, cc)


def test_interval_greedy_refuses_rows_with_gaps():
    m = np.array([[True, False, True], [False, True, False]])
    assert interval_matching(m) is None
    assert max_matching(m) == 2  # through the assignment


def test_max_matching_equals_the_assignment_on_random_matrices():
    rng = np.random.default_rng(4)
    for _ in range(1000):
        m = rng.random(tuple(rng.integers(1, 12, 2))) < rng.random()
        assert max_matching(m) == _assignment(m), m
        m = _interval_rows(rng, int(rng.integers(1, 12)), int(rng.integers(1, 12)))
        assert max_matching(m) == _assignment(m), m
