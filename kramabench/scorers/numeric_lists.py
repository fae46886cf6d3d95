"""Lists of plain numbers as arrays: the fast path of list scoring.

Most long answers of the official workloads are lists of ``int``/``float`` values (thousands of years,
counts, coordinates). Read item by item (:func:`kramabench.scorers.parse.to_item`) each element costs a Python
object and a dictionary entry; here a list whose elements are all ``int``/``float`` (never ``bool``) is
one ``float64`` array, and the rules of :mod:`kramabench.scorers.lists` are applied to arrays:

* identical values are paired first (numeric_exact), with exactly the leftovers the item-by-item pairing
  leaves (the last occurrences of a gold value, the first ones of a predicted value);
* only the leftovers need per-element facts (a gold's tolerance from the decimals it is written with, a
  prediction's precision for an unrounded gold), computed for them alone.

The results are those of the item-by-item path (checked by tests over random lists).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kramabench.scorers.numeric import REL_TOL, exact_tolerance, is_unrounded, prediction_tolerance
from kramabench.scorers.parse import _BIG_INT, ParsedNumber, _decimals_of_float

_NUMERIC_TYPES = frozenset({int, float})


def numeric_array(values: list[Any]) -> np.ndarray | None:
    """``values`` as a float64 array when every element is an ``int`` or a ``float`` (not a ``bool``, not a
    subclass) and no integer is beyond the float range the item rules use; else None."""
    if not values:
        return None
    types = set(map(type, values))
    if not types <= _NUMERIC_TYPES:
        return None
    try:
        arr = np.array(values, dtype=float)
    except OverflowError:
        return None
    if int in types and arr.size and float(np.max(np.abs(arr), initial=0.0)) >= float(_BIG_INT):
        return None  # the item rules read such integers as infinities
    return arr


def _parsed(v: Any) -> ParsedNumber:
    if type(v) is int:
        return ParsedNumber(float(v))
    return ParsedNumber(float(v), _decimals_of_float(v) if math.isfinite(v) else 0)


#: (type, value) -> (exact tolerance, unrounded) of gold numbers seen (official lists repeat their values)
_FACTS: dict[tuple[type, Any], tuple[float, bool]] = {}
_FACTS_MAX = 200_000


def gold_facts(raw: list[Any], index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(exact tolerance, unrounded flag) of the gold elements at ``index``; an all-``int`` list at once
    (integral: a relative tolerance of the value, never unrounded), others per distinct value."""
    idx = index.tolist()
    vals = [raw[i] for i in idx]
    if set(map(type, vals)) <= {int}:
        y = np.abs(np.array(vals, dtype=float))
        return REL_TOL * np.maximum(1.0, y), np.zeros(len(idx), dtype=bool)
    tol = np.empty(len(idx), dtype=float)
    unr = np.zeros(len(idx), dtype=bool)
    memo = _FACTS
    for k, v in enumerate(vals):
        key = (type(v), v)
        f = memo.get(key)
        if f is None:
            pn = _parsed(v)
            f = (exact_tolerance(pn), is_unrounded(pn))
            if len(memo) >= _FACTS_MAX:
                memo.clear()
            memo[key] = f
        tol[k], unr[k] = f
    return tol, unr


def pred_tolerances(raw: list[Any], index: np.ndarray) -> np.ndarray:
    """Half a unit of the last decimal of each predicted element at ``index`` (for unrounded golds)."""
    out = np.empty(len(index), dtype=float)
    for k, i in enumerate(index.tolist()):
        pn = _parsed(raw[i])
        out[k] = prediction_tolerance(pn.value, pn.decimals)
    return out


def _ranks(keys: np.ndarray, n_keys: int) -> np.ndarray:
    """For each position, how many earlier positions hold the same key."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.searchsorted(sorted_keys, np.arange(n_keys))
    ranks = np.empty(len(keys), dtype=np.int64)
    ranks[order] = np.arange(len(keys)) - starts[sorted_keys]
    return ranks


def pair_identical(g: np.ndarray, p: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """Pair equal values (NaN with NaN, -0.0 with 0.0); returns (pairs, unpaired gold positions, unpaired
    predicted positions): the last occurrences of a gold value stay unpaired, the first of a predicted one,
    as in the item-by-item pairing."""
    keys = np.unique(np.concatenate([g, p]), return_inverse=True)[1].reshape(-1)
    gk, pk = keys[: len(g)], keys[len(g) :]
    n_keys = int(keys.max()) + 1 if keys.size else 0
    cg = np.bincount(gk, minlength=n_keys)
    cp = np.bincount(pk, minlength=n_keys)
    paired = np.minimum(cg, cp)
    g_left = np.nonzero(_ranks(gk, n_keys) >= paired[gk])[0]
    p_left = np.nonzero(_ranks(pk, n_keys) < (cp - paired)[pk])[0]
    return int(paired.sum()), g_left, p_left


def greedy_values(g: np.ndarray, tol: np.ndarray | None, p: np.ndarray, approximate: bool) -> int:
    """The interval matching of :func:`kramabench.scorers.lists._greedy_numbers` on arrays (``tol``: the exact
    tolerances of ``g``; unused when ``approximate``): each gold accepts the predicted values in
    ``[y - half, y + half]`` (from the smallest value when the lower end is NaN, none when the upper end
    is), NaN matches NaN. Counted as the maximum matching of those runs of the sorted distinct values
    (:func:`kramabench.scorers.matching.runs_matching`), which is the count of the greedy by upper ends."""
    from kramabench.scorers.matching import runs_matching

    p_nan = np.isnan(p)
    g_nan = np.isnan(g)
    count = min(int(p_nan.sum()), int(g_nan.sum()))
    values, counts = np.unique(p[~p_nan], return_counts=True)
    keep = ~g_nan
    y = g[keep]
    if approximate:
        # an infinite gold accepts only the same infinity (as numeric_approximate), not [nan, inf]
        half = np.where(np.isinf(y), 0.0, np.where(y != 0, np.abs(y), 1.0) / 9.0 * (1 - 1e-12))
    else:
        assert tol is not None, "numeric_exact accepts within the gold tolerances"
        half = tol[keep]
    with np.errstate(invalid="ignore"):
        lo, hi = y - half, y + half
    first = np.where(np.isnan(lo), 0, np.searchsorted(values, lo, side="left"))
    last = np.where(np.isnan(hi), -1, np.searchsorted(values, hi, side="right") - 1)
    return count + runs_matching(first, last, len(values), None, counts)


__all__ = ["gold_facts", "greedy_values", "numeric_array", "pair_identical", "pred_tolerances"]
