"""The interval greedy of kramabench.scorers.matching gives the optimal assignment's count."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from kramabench.scorers.matching import interval_matching, max_matching


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


def test_value_runs_by_bisection_equal_the_matrix(monkeypatch):
    """Numbers matched through the bisection of accepted runs give the matrix's maximum matching."""
    import kramabench.scorers.lists as lists
    from kramabench.scorers.numeric_lists import gold_facts

    monkeypatch.setattr(lists, "RUNS_MIN_CELLS", 0)
    rng = np.random.default_rng(9)
    pool = np.array(
        [0.0, -0.0, 1.0, -1.0, 0.5, 0.15, 15.0, 1950.0, 1e-05, 100.0, 0.111, 1 / 9, 10 / 9, 8 / 9, 2.0]
    )
    for _ in range(1500):
        n_g, n_p = int(rng.integers(1, 25)), int(rng.integers(1, 25))
        kind = rng.random()
        if kind < 0.4:
            raw = [float(x) for x in rng.choice(pool, n_g + n_p)]
        elif kind < 0.7:
            raw = [int(x) for x in rng.integers(-30, 30, n_g + n_p)]
        else:
            raw = [round(float(x), int(rng.integers(0, 4))) for x in rng.normal(0, 20, n_g + n_p)]
        g = np.array(raw[:n_g], dtype=float)
        p = np.sort(np.array(raw[n_g:], dtype=float) * rng.choice([1.0, 1.0000000001, 0.9, 1.1, 0.01, 100.0]))
        tol, unr = gold_facts(raw[:n_g], np.arange(n_g))
        for approximate in (True, False):
            for factor in (1.0, 0.01, 100.0):
                got = lists._sorted_values_matching(g, p, approximate, factor, None if approximate else tol)
                m = lists._value_matrix(g, p, None, approximate, factor, None if approximate else tol)
                assert got == max_matching(m), (g, p, approximate, factor)
        ug, cg = np.unique(g, return_counts=True)
        up, cp = np.unique(p, return_counts=True)
        got = lists._sorted_values_matching(ug, up, True, 1.0, None, cg, cp)
        assert got == max_matching(lists._value_matrix(g, p, None, True)), (g, p)
