"""Maximum one-to-one matching of a boolean compatibility matrix (gold rows, predicted columns).

The number of matches of a maximum matching is unique, so any exact algorithm gives the same count:

* trivial shapes (one row or column left, at most one candidate per row and column) are counted directly;
* when every row's candidates are one contiguous run of columns (numbers: the predictions a gold accepts
  are an interval of values, and the columns are sorted by value), the classic interval greedy is exact:
  rows by the right end of their run, each taking the leftmost free column of its run. Rows and columns
  may carry multiplicities (equal values counted once);
* otherwise ``scipy.optimize.linear_sum_assignment`` on the matrix.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _runs(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(rows with a candidate, first column, last column) when each row's candidates are contiguous."""
    has = m.any(axis=1)
    rows = np.nonzero(has)[0]
    if not len(rows):
        return rows, rows, rows
    sub = m[rows]
    first = sub.argmax(axis=1)
    last = sub.shape[1] - 1 - sub[:, ::-1].argmax(axis=1)
    if not np.array_equal(sub.sum(axis=1), last - first + 1):
        return None
    return rows, first, last


def interval_matching(
    m: np.ndarray, row_counts: np.ndarray | None = None, col_counts: np.ndarray | None = None
) -> int | None:
    """Maximum matching of ``m`` (each row ``row_counts[i]`` times, each column ``col_counts[j]`` times)
    when every row's candidates are contiguous; None when some row's are not."""
    if m.size == 0:
        return 0
    runs = _runs(m)
    if runs is None:
        return None
    rows, first, last = runs
    return runs_matching(
        first, last, m.shape[1], None if row_counts is None else row_counts[rows], col_counts
    )


def runs_matching(
    first: np.ndarray,
    last: np.ndarray,
    n_cols: int,
    row_counts: np.ndarray | None = None,
    col_counts: np.ndarray | None = None,
) -> int:
    """Maximum matching of rows that each accept the columns ``first[i]..last[i]`` (inclusive; none when
    ``first[i] > last[i]``): rows by the right end of their run, each taking the leftmost free column."""
    keep = first <= last
    if not keep.all():
        first, last = first[keep], last[keep]
        row_counts = None if row_counts is None else row_counts[keep]
    if not len(first):
        return 0
    order = np.lexsort((first, last)).tolist()
    first_l, last_l = first.tolist(), last.tolist()
    avail = [1] * n_cols if col_counts is None else col_counts.tolist()
    need_of = None if row_counts is None else row_counts.tolist()
    nxt = list(range(n_cols + 1))  # nxt[j]: a column >= j that may still be free (path-compressed)

    def find(j: int) -> int:
        root = j
        while nxt[root] != root:
            root = nxt[root]
        while nxt[j] != root:
            nxt[j], j = root, nxt[j]
        return root

    total = 0
    for k in order:
        need = 1 if need_of is None else need_of[k]
        hi = last_l[k]
        j = find(first_l[k])
        while need and j <= hi:
            take = min(need, avail[j])
            avail[j] -= take
            need -= take
            total += take
            if not avail[j]:
                nxt[j] = j + 1
                j = find(j + 1)
    return total


def first_true(n_rows: int, n_cols: int, pred: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """For each row ``i``, the first column ``j`` where ``pred(i, j)`` holds (``n_cols`` when none), for a
    predicate that is monotone along each row (False... then True...): a bisection of all rows at once,
    ``pred`` evaluated on index arrays."""
    lo = np.zeros(n_rows, dtype=np.int64)
    hi = np.full(n_rows, n_cols, dtype=np.int64)
    rows = np.arange(n_rows)
    active = lo < hi
    while active.any():
        r = rows[active]
        mid = (lo[r] + hi[r]) // 2
        ok = pred(r, mid)
        hi[r[ok]] = mid[ok]
        lo[r[~ok]] = mid[~ok] + 1
        active = lo < hi
    return lo


def max_matching(m: np.ndarray) -> int:
    """The number of pairs of a maximum one-to-one matching of the boolean matrix ``m``."""
    if m.size == 0:
        return 0
    rows = m.any(axis=1)
    cols = m.any(axis=0)
    if not rows.any():
        return 0
    sub = m[rows][:, cols]
    if sub.shape[0] == 1 or sub.shape[1] == 1:
        return 1
    row_sums = sub.sum(axis=1)
    col_sums = sub.sum(axis=0)
    if (row_sums <= 1).all() and (col_sums <= 1).all():
        return int(row_sums.sum())
    k = interval_matching(sub)
    if k is not None:
        return k
    from scipy.optimize import linear_sum_assignment  # heavy import: only when a real assignment is needed

    r, c = linear_sum_assignment(sub, maximize=True)
    return int(sub[r, c].sum())


__all__ = ["first_true", "interval_matching", "max_matching", "runs_matching"]
