"""list_exact and list_approximate: F1 over an optimal one-to-one matching of items.

* Both sides are read with :func:`kramabench.scorers.parse.parse_list` (a scalar prediction is a one-element
  list; a string holding a JSON or Python list literal is parsed safely) and each element with
  :func:`kramabench.scorers.parse.to_item` (number, string or nested list).
* Order does not matter and duplicates count: ``[1, 1, 2]`` vs ``[1, 2]`` has 2 matches, precision 1,
  recall 2/3. F1 = 2·matches / (len(gold) + len(predicted)). Empty gold and empty prediction score 1;
  one empty and the other not scores 0. ``None`` scores 0 (reason ``none``).
* A number only matches a number, a string a string, a nested list a nested list.
* **list_exact** items: numbers by the numeric_exact rule (within half a unit of the gold item's last
  decimal; integral gold exactly), strings by normalised equality.
* **list_approximate** items: numbers when 1/(1+RAE) > 0.9; strings by normalised equality, yes/no/
  true/false words by truth value, else the paraphrase judge (never asked about abstentions like
  "I don't know").
* **Nested lists** (rows such as ``["Boston", 9.29]``) are compared as ordered tuples: same length and
  every position matching by the same rules, recursively.
* Matching: identical items (same canonical key) are paired first; the rest is matched optimally
  (maximum number of one-to-one matches, :mod:`kramabench.scorers.matching`: an interval greedy when each gold
  number's matches are one run of values, else ``scipy.optimize.linear_sum_assignment``). For
  list_approximate numbers the whole numeric part is matched optimally (no identical-first pairing).
  Numeric parts beyond 4,000,000 pairs are matched by intervals (each gold accepts an interval of
  values; golds by right end take the smallest free value inside — also optimal), without the
  percentage-points and unrounded-gold extensions (note ``interval_matching``).
* Without a judge, or with an unreadable verdict, a string pair that needs one is *unknown*: the score
  is computed with unknown pairs as non-matches and as matches; when both agree the score stands,
  otherwise the answer is unscored (``judge_required`` / ``judge_unparsable``) and the details hold
  both bounds.
* Details: ``precision``, ``recall``, ``matched``, ``n_expected``, ``n_predicted``, parsing ``notes`` and
  ``scale_mismatch`` when rescaling the predicted numbers by 100 would match more items.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable
from enum import Enum
from itertools import repeat
from operator import attrgetter
from typing import Any, Final, Literal, TypeVar

import numpy as np

from kramabench.scorers.base import Score, ScoreCall, scorer_variant
from kramabench.scorers.context import JudgeContext
from kramabench.scorers.matching import first_true, interval_matching, max_matching, runs_matching
from kramabench.scorers.numeric import (
    APPROX_ITEM_THRESHOLD,
    candidates,
    exact_match,
    exact_tolerance,
    is_unrounded,
    prediction_tolerance,
    rae_score,
)
from kramabench.scorers.numeric_lists import (
    gold_facts,
    greedy_values,
    numeric_array,
    pair_identical,
    pred_tolerances,
)
from kramabench.scorers.parse import (
    LST,
    NUM,
    STR,
    Item,
    _float_item,
    _str_item,
    bool_word,
    is_abstention,
    parse_list,
    plain_number_items,
    to_item,
)

#: pairs compared one by one in Python (nested lists, judged strings) before pairing identical first
MAX_PAIRWISE = 250_000
_KEY = attrgetter("key")
_KIND = attrgetter("kind")
#: numeric matrix cells compared at once (beyond: the interval matching of :func:`_greedy_numbers`)
MAX_MATRIX = 4_000_000


_max_matching = max_matching
_K = TypeVar("_K", bound=Hashable)


# ---- numbers --------------------------------------------------------------------------------------


def _num_matrix(gold: list[Item], pred: list[Item], approximate: bool, factor: float = 1.0) -> np.ndarray:
    g = np.array([i.number.value for i in gold], dtype=np.float64)
    p = np.array([i.number.value for i in pred], dtype=np.float64)
    order = np.argsort(p, kind="stable")
    if len(p) > 1 and (order[1:] < order[:-1]).any():
        # columns in value order: a gold's matches are then one run of columns (see kramabench.scorers.matching)
        p = p[order]
        pred = [pred[j] for j in order.tolist()]
    pts = None
    if any(i.number.points is not None for i in pred):
        pts = np.array(
            [pt if (pt := i.number.points) is not None else np.nan for i in pred], dtype=np.float64
        )
    if approximate:
        return _value_matrix(g, p, pts, True, factor)
    tol = np.array([exact_tolerance(i.number) for i in gold], dtype=np.float64)
    unrounded = np.array([is_unrounded(i.number) for i in gold], dtype=np.bool_)
    ptol = None
    if unrounded.any():
        ptol = np.array(
            [prediction_tolerance(v, d) for i in pred for v, d, _ in candidates(i.number)[:1]],
            dtype=np.float64,
        )
    return _value_matrix(g, p, pts, False, factor, tol, unrounded, ptol)


def _value_matrix(
    g: np.ndarray,
    p: np.ndarray,
    pts: np.ndarray | None,
    approximate: bool,
    factor: float = 1.0,
    tol: np.ndarray | None = None,
    unrounded: np.ndarray | None = None,
    ptol: np.ndarray | None = None,
) -> np.ndarray:
    """Which predicted values (``p``, percentage points ``pts``; scaled by ``factor``) match which gold values
    ``g``: numeric_approximate items (1/(1+RAE) > 0.9), or numeric_exact ones (within ``tol`` of the gold; for
    an ``unrounded`` gold also within ``ptol``, half a unit of the prediction's last decimal)."""
    m: np.ndarray
    with np.errstate(all="ignore"):
        p = p * factor
        gc = g[:, None]
        if approximate:
            denom = np.where(gc == 0, 1.0, np.abs(gc))
            m = (1.0 / (1.0 + np.abs(p[None, :] - gc) / denom)) > APPROX_ITEM_THRESHOLD
            if pts is not None:
                m |= (1.0 / (1.0 + np.abs(pts[None, :] * factor - gc) / denom)) > APPROX_ITEM_THRESHOLD
        else:
            assert tol is not None, "numeric_exact compares within the gold tolerances"
            t = tol[:, None]
            m = np.abs(p[None, :] - gc) <= t
            if pts is not None:
                m |= np.abs(pts[None, :] * factor - gc) <= t
            if ptol is not None and unrounded is not None and unrounded.any():
                m |= unrounded[:, None] & (np.abs(p[None, :] - gc) <= (ptol * factor)[None, :])
        m |= gc == p[None, :]  # equal infinities
        m |= np.isnan(gc) & np.isnan(p)[None, :]
    return m


def _pair_identical(gold: list[Item], pred: list[Item]) -> tuple[int, list[Item], list[Item]]:
    """Pair items with the same canonical key; return (pairs, unpaired gold, unpaired pred).

    Per key, the first gold occurrences and the last predicted ones are paired; the unpaired predicted
    items come grouped by key, in the order the keys first appear. Counted with ``Counter`` (C), so that the
    common cases (one side inside the other) need no Python loop over the items."""
    gk = list(map(_KEY, gold))
    pk = list(map(_KEY, pred))
    cg, cp = Counter(gk), Counter(pk)
    if cg == cp:  # the same multiset (a reordering): everything pairs
        return len(gold), [], []
    common = cg & cp
    pairs = common.total()
    if not pairs:
        return 0, gold, _grouped(pred, pk, cp)
    if common == cg:
        rest_gold: list[Item] = []
    else:
        need = dict(common)
        rest_gold = []
        for it, k in zip(gold, gk, strict=True):
            n = need.get(k, 0)
            if n:
                need[k] = n - 1
            else:
                rest_gold.append(it)
    if common == cp:
        return pairs, rest_gold, []
    keep = cp - common
    return pairs, rest_gold, _grouped(pred, pk, keep)


def _grouped(items: list[Item], keys: list[Hashable], keep: Counter[Hashable]) -> list[Item]:
    """The first ``keep[k]`` items of each key, grouped by key in the order the keys first appear."""
    groups: dict[Hashable, list[Item]] = {}
    for it, k in zip(items, keys, strict=True):
        g = groups.setdefault(k, [])
        if len(g) < keep.get(k, 0):
            g.append(it)
    return [it for g in groups.values() for it in g]


def _match_numbers(gold: list[Item], pred: list[Item], approximate: bool, notes: list[str]) -> int:
    if not gold or not pred:
        return 0
    base = 0
    if not approximate:
        base, gold, pred = _pair_identical(gold, pred)
        if not gold or not pred:
            return base
    if len(gold) * len(pred) > MAX_MATRIX:
        notes.append("interval_matching")
        return base + _greedy_numbers(gold, pred, approximate)
    return base + _max_matching(_num_matrix(gold, pred, approximate))


def _interval(g: Item, approximate: bool) -> tuple[float, float]:
    """The predicted values a gold number accepts (ignoring percentage points and rounded predictions)."""
    y = g.number.value
    if approximate:
        # 1/(1+RAE) > 0.9  <=>  RAE < 1/9; RAE = |p - y| / |y|, or |p| for y = 0
        half = (abs(y) if y != 0 else 1.0) / 9.0 * (1 - 1e-12) if math.isfinite(y) else 0.0
    else:
        half = exact_tolerance(g.number)
    return y - half, y + half


def _greedy_numbers(gold: list[Item], pred: list[Item], approximate: bool) -> int:
    """Matching of numbers to the intervals they fall in: golds by the right end of their interval, each
    taking the smallest free prediction inside it (optimal for interval acceptance). For lists too large for
    the matrix; percentage points and the unrounded-gold rule are not considered here. Counted on arrays by
    :func:`~kramabench.scorers.numeric_lists.greedy_values` (deleting each taken value from a sorted Python list was
    quadratic in the list's length)."""
    g = np.fromiter((i.number.value for i in gold), dtype=np.float64, count=len(gold))
    p = np.fromiter((i.number.value for i in pred), dtype=np.float64, count=len(pred))
    tol = (
        None
        if approximate
        else np.fromiter((exact_tolerance(i.number) for i in gold), dtype=np.float64, count=len(gold))
    )
    return greedy_values(g, tol, p, approximate)


def _num_item_match(g: Item, p: Item, approximate: bool) -> bool:
    gv = g.number
    for v, d, _ in candidates(p.number):
        if approximate:
            if rae_score(gv.value, v) > APPROX_ITEM_THRESHOLD:
                return True
        elif exact_match(gv, v, d):
            return True
    return False


# ---- generic items --------------------------------------------------------------------------------


def item_match(g: Item, p: Item, approximate: bool, ctx: JudgeContext) -> bool | None:
    """Does predicted item ``p`` match gold item ``g``? None when a judge verdict is missing."""
    if g.kind != p.kind:
        return False
    if g.key == p.key:
        return True
    if g.kind == NUM:
        return _num_item_match(g, p, approximate)
    if g.kind == STR:
        if not approximate or is_abstention(p.text or "") or is_abstention(g.text or ""):
            return False
        gb, pb = bool_word(g.text or ""), bool_word(p.text or "")
        if gb is not None and pb is not None:
            return gb == pb
        return ctx.ask(g.raw, p.raw)
    if len(g.children) != len(p.children):
        return False
    pending: list[tuple[Item, Item]] = []
    for gc, pc in zip(g.children, p.children, strict=True):
        if gc.kind == STR and pc.kind == STR and approximate and gc.key != pc.key:
            pending.append((gc, pc))
            continue
        r = item_match(gc, pc, approximate, ctx)
        if r is False:
            return False
        if r is None:
            pending.append((gc, pc))
    unknown = False
    for gc, pc in pending:
        r = item_match(gc, pc, approximate, ctx)
        if r is False:
            return False
        if r is None:
            unknown = True
    return None if unknown else True


def _match_pairwise(
    gold: list[Item], pred: list[Item], approximate: bool, ctx: JudgeContext, notes: list[str]
) -> tuple[int, int]:
    """(lower, upper) number of matches; they differ only when some verdict is unknown."""
    if not gold or not pred:
        return 0, 0
    if not approximate and gold[0].kind == STR:  # exact strings: equal keys are the only matches
        n = _common_total(Counter(map(_KEY, gold)), Counter(map(_KEY, pred)))
        return n, n
    base, gold, pred = _pair_identical(gold, pred)
    if not gold or not pred:
        return base, base
    if gold[0].kind == STR and not approximate:
        return base, base  # exact strings: equal keys are the only matches
    if len(gold) * len(pred) > MAX_PAIRWISE:
        notes.append("pairwise_comparison_truncated")
        if approximate:  # the pairs left uncompared might match: an upper bound, never a silent 0
            ctx.over_budget += 1
            return base, base + min(len(gold), len(pred))
        return base, base
    lo = np.zeros((len(gold), len(pred)), dtype=bool)
    hi = np.zeros_like(lo)
    for i, g in enumerate(gold):
        for j, p in enumerate(pred):
            r = item_match(g, p, approximate, ctx)
            if r is True:
                lo[i, j] = hi[i, j] = True
            elif r is None:
                hi[i, j] = True
    n_lo = _max_matching(lo)
    n_hi = n_lo if not hi.any() or (hi == lo).all() else _max_matching(hi)
    return base + n_lo, base + n_hi


def count_matches(
    gold: list[Item], pred: list[Item], approximate: bool, ctx: JudgeContext, notes: list[str]
) -> tuple[int, int]:
    by_kind: dict[int, tuple[list[Item], list[Item]]] = {NUM: ([], []), STR: ([], []), LST: ([], [])}
    kinds = set(map(_KIND, gold)) | set(map(_KIND, pred))
    if len(kinds) == 1:  # one kind on both sides (most lists): no loop over the items
        by_kind[kinds.pop()] = (gold, pred)
    else:
        for it in gold:
            by_kind[it.kind][0].append(it)
        for it in pred:
            by_kind[it.kind][1].append(it)
    n = _match_numbers(*by_kind[NUM], approximate, notes)
    lo_s, hi_s = _match_pairwise(*by_kind[STR], approximate, ctx, notes)
    lo_l, hi_l = _match_pairwise(*by_kind[LST], approximate, ctx, notes)
    return n + lo_s + lo_l, n + hi_s + hi_l


def items_of(values: list[Any]) -> list[Item]:
    """The items of a list (:func:`kramabench.scorers.parse.to_item`); a list of short strings goes through the cached
    string reader, a list of ints or of floats through the shared number items, without a Python call per
    element."""
    if not values:
        return []
    types = set(map(type, values))
    if types == _STR and max(map(len, values)) <= 200:
        return list(map(_str_item, values, repeat(0, len(values))))
    numbers = plain_number_items(values, types)
    if numbers is not None:
        return numbers
    return [_float_item(v) if type(v) is float else to_item(v) for v in values]


_STR = frozenset({str})


def _exact_strings(gold: _Gold, pred: list[Any]) -> int | None:
    """list_exact matches between two lists of strings, or None when the general path is needed.

    Equal strings are paired first (a multiset intersection): each such pair is a pair of identical items,
    and pairing identical items first is what the matching does, so the count is that of the general path
    when one side is then used up, or when every string left on both sides is a string item (a number, a
    nested list literal... left over needs the general path); the strings left are then paired by their
    normalised keys. No diagnostic is lost: with a side used up the score is not below the shorter length, and
    with only string items left every number of either side was paired as it is written (no scale
    mismatch to find)."""
    if not pred or not gold.lst or set(map(type, pred)) != _STR or not gold.all_str():
        return None
    cg = gold.counter()
    cp = Counter(pred)
    pairs = _common_total(cg, cp)
    if pairs == min(len(gold.lst), len(pred)):
        return pairs
    rest_g = items_of(_left_over(cg, cp))
    rest_p = items_of(_left_over(cp, cg))
    if any(i.kind != STR for i in rest_g) or any(i.kind != STR for i in rest_p):
        return None
    return pairs + _common_total(Counter(map(_KEY, rest_g)), Counter(map(_KEY, rest_p)))


def _common_total(a: Counter[_K], b: Counter[_K]) -> int:
    """``(a & b).total()`` without building the intersection (no Python loop over the keys)."""
    if len(a) > len(b):
        a, b = b, a
    return sum(map(min, a.values(), map(b.get, a, repeat(0))))


def _left_over(a: Counter[_K], b: Counter[_K]) -> list[_K]:
    """The elements of ``a - b`` (each as many times as it is left), found from the (key, count) pairs of
    ``a`` that ``b`` does not have."""
    out: list[_K] = []
    for k, c in a.items() - b.items():
        n = c - b.get(k, 0)
        if n > 0:
            out.extend(repeat(k, n))
    return out


_PLAIN = frozenset({str, int, float, bool, type(None)})


def same_values(a: list[Any], b: list[Any]) -> bool:
    """``a`` and ``b`` hold equal values of the same types, position by position (``1`` and ``1.0`` and
    ``True`` are equal for ``==`` but not here); nested lists are compared the same way. Anything else
    inside (a dict, a tuple, an object) makes it False."""
    if len(a) != len(b) or a != b:
        return False
    ta = list(map(type, a))
    if ta != list(map(type, b)):
        return False
    kinds = set(ta)
    if kinds <= _PLAIN:
        return True
    if not kinds <= _PLAIN | {list}:
        return False
    return all(same_values(x, y) for x, y, t in zip(a, b, ta, strict=True) if t is list)


def _f1(matches: int, n_gold: int, n_pred: int) -> float:
    if n_gold + n_pred == 0:
        return 1.0
    return 2.0 * matches / (n_gold + n_pred)


def _scale_check(
    gold: list[Item], pred: list[Item], approximate: bool, matched_numbers: int
) -> dict[str, object] | None:
    # the NUM items, by the number they carry (no other kind carries one)
    g = [i for i in gold if (n := i.num) is not None and math.isfinite(n.value) and n.value != 0]
    p = [i for i in pred if (n := i.num) is not None and math.isfinite(n.value) and n.value != 0]
    if not g or not p or len(g) * len(p) > MAX_MATRIX:
        return None
    for factor, label in ((0.01, "x100"), (100.0, "/100")):
        k = _max_matching(_num_matrix(g, p, approximate, factor))
        if k > matched_numbers:
            return {"factor": label, "matches_if_rescaled": k}
    return None


class _Gold:
    """A gold answer read once: its list, the parse notes, its items and (for plain numbers) its array."""

    __slots__ = ("raw", "lst", "notes", "_items", "_array", "_distinct", "_all_str", "_counter")

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.lst, self.notes = parse_list(raw, lenient=True)
        self._items: list[Item] | None = None
        self._array: np.ndarray | None | Literal[_Unset.UNSET] = _UNSET
        self._distinct: tuple[np.ndarray, np.ndarray] | None = None
        self._all_str: bool | None = None
        self._counter: Counter[str] | None = None

    def facts(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(exact tolerance, unrounded flag) of the gold numbers at ``index``."""
        assert self.lst is not None, "facts of the numbers of a gold list"
        return gold_facts(self.lst, index)

    def all_str(self) -> bool:
        """Every element of the gold list is a ``str``."""
        if self._all_str is None:
            self._all_str = set(map(type, self.lst)) == _STR if self.lst else False
        return self._all_str

    def counter(self) -> Counter[str]:
        """The gold list's strings with their counts."""
        if self._counter is None:
            self._counter = Counter(self.lst or [])
        return self._counter

    def distinct(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct values of :meth:`array` (sorted, NaN last) and their counts."""
        if self._distinct is None:
            arr = self.array()
            assert arr is not None, "distinct values of a gold of plain numbers only"
            self._distinct = np.unique(arr, return_counts=True)
        return self._distinct

    def items(self) -> list[Item]:
        if self._items is None:
            self._items = items_of(self.lst or [])
        return self._items

    def array(self) -> np.ndarray | None:
        if self._array is _UNSET:
            self._array = numeric_array(self.lst) if self.lst else None
        return self._array


class _Unset(Enum):
    UNSET = "unset"


_UNSET: Final = _Unset.UNSET
#: gold answers already read, by identity (the entry holds the gold, so an id is never reused while cached)
_GOLD_CACHE: dict[int, _Gold] = {}
_GOLD_CACHE_MAX = 4096


def _gold(expected: Any) -> _Gold:
    """The gold read once per gold object: a task's answer is parsed on its first scoring only (several
    predictions, runs or settings scored against one workload reuse it). Gold answers are never mutated."""
    if not isinstance(expected, (list, str)):
        return _Gold(expected)
    hit = _GOLD_CACHE.get(id(expected))
    if hit is not None and hit.raw is expected:
        return hit
    g = _Gold(expected)
    if len(_GOLD_CACHE) >= _GOLD_CACHE_MAX:
        _GOLD_CACHE.clear()
    _GOLD_CACHE[id(expected)] = g
    return g


#: matrices of fewer cells are built whole (cheaper than the bisection of :func:`_sorted_values_matching`)
RUNS_MIN_CELLS = 20_000


def _sorted_values_matching(
    g: np.ndarray,
    p: np.ndarray,
    approximate: bool,
    factor: float = 1.0,
    tol: np.ndarray | None = None,
    row_counts: np.ndarray | None = None,
    col_counts: np.ndarray | None = None,
) -> int | None:
    """The maximum matching of :func:`_value_matrix` (no percentage points, no unrounded gold) without the
    matrix: ``p`` sorted ascending, every value finite; then the predictions a gold accepts are one run of
    ``p`` (the rule is monotone in ``p - g``, computed with the same floating-point operations), found by
    bisection. None when it does not apply (small, or not finite)."""
    if len(g) * len(p) < RUNS_MIN_CELLS:
        return None
    with np.errstate(all="ignore"):
        ps = p * factor
        if not (np.isfinite(g).all() and np.isfinite(ps).all()):
            return None
        if approximate:
            denom: np.ndarray = np.where(g == 0, 1.0, np.abs(g))

            def accepts(i: np.ndarray, x: np.ndarray) -> np.ndarray:
                ok: np.ndarray = (1.0 / (1.0 + np.abs(x) / denom[i])) > APPROX_ITEM_THRESHOLD
                return ok
        else:
            assert tol is not None, "numeric_exact compares within the gold tolerances"
            gold_tol = tol

            def accepts(i: np.ndarray, x: np.ndarray) -> np.ndarray:
                ok: np.ndarray = np.abs(x) <= gold_tol[i]
                return ok

        def from_left(i: np.ndarray, j: np.ndarray) -> np.ndarray:  # at or past the run's start
            x: np.ndarray = ps[j] - g[i]
            at_or_past: np.ndarray = (x >= 0) | accepts(i, x)
            return at_or_past

        def past(i: np.ndarray, j: np.ndarray) -> np.ndarray:  # past the run's end
            x: np.ndarray = ps[j] - g[i]
            beyond: np.ndarray = (x > 0) & ~accepts(i, x)
            return beyond

        first = first_true(len(g), len(ps), from_left)
        last = first_true(len(g), len(ps), past) - 1
    return runs_matching(first, last, len(ps), row_counts, col_counts)


def _numeric_fast(
    gold: _Gold, g: np.ndarray, pred: list[Any], p: np.ndarray, approximate: bool, notes: list[str]
) -> int:
    """Matches between two lists of plain numbers (the rules of :func:`_match_numbers`, on arrays)."""
    if approximate:
        if len(g) * len(p) > MAX_MATRIX:
            notes.append("interval_matching")
            return greedy_values(g, None, p, True)
        # on the distinct values, with their counts (the matrix depends on the values only)
        ug, cg = gold.distinct()
        up, cp = np.unique(p, return_counts=True)
        k = _sorted_values_matching(ug, up, True, 1.0, None, cg, cp)
        if k is None:
            k = interval_matching(_value_matrix(ug, up, None, True), cg, cp)
        return k if k is not None else _max_matching(_value_matrix(g, p, None, True))
    if len(g) == len(p) and np.array_equal(np.sort(g), np.sort(p)):
        return len(g)  # the same values in another order (no NaN: NaN != NaN): every value pairs
    base, gi, pi = pair_identical(g, p)
    if not len(gi) or not len(pi):
        return base
    pi = pi[np.argsort(p[pi], kind="stable")]  # columns in value order (see kramabench.scorers.matching)
    tol, unr = gold.facts(gi)
    if len(gi) * len(pi) > MAX_MATRIX:
        notes.append("interval_matching")
        return base + greedy_values(g[gi], tol, p[pi], False)
    if not unr.any():
        k = _sorted_values_matching(g[gi], p[pi], False, 1.0, tol)
        if k is not None:
            return base + k
    ptol = pred_tolerances(pred, pi) if unr.any() else None
    return base + _max_matching(_value_matrix(g[gi], p[pi], None, False, 1.0, tol, unr, ptol))


def _numeric_scale_check(
    gold: _Gold, g: np.ndarray, pred: list[Any], p: np.ndarray, approximate: bool, matched: int
) -> dict[str, object] | None:
    """:func:`_scale_check` for two lists of plain numbers."""
    with np.errstate(all="ignore"):
        gi = np.nonzero(np.isfinite(g) & (g != 0))[0]
        pi = np.nonzero(np.isfinite(p) & (p != 0))[0]
    if not len(gi) or not len(pi) or len(gi) * len(pi) > MAX_MATRIX:
        return None
    pi = pi[np.argsort(p[pi], kind="stable")]  # columns in value order (see kramabench.scorers.matching)
    tol = unr = ptol = None
    if not approximate:
        tol, unr = gold.facts(gi)
        ptol = pred_tolerances(pred, pi) if unr.any() else None
    for factor, label in ((0.01, "x100"), (100.0, "/100")):
        k = None if ptol is not None else _sorted_values_matching(g[gi], p[pi], approximate, factor, tol)
        if k is None:
            k = _max_matching(_value_matrix(g[gi], p[pi], None, approximate, factor, tol, unr, ptol))
        if k > matched:
            return {"factor": label, "matches_if_rescaled": k}
    return None


def score_list(
    expected: Any,
    predicted: Any,
    call: ScoreCall,
    *,
    approximate: bool,
    metric: str,
    details: dict[str, Any] | None = None,
) -> Score:
    details = dict(details or {})
    gold = _gold(expected)
    gold_list, gold_notes = gold.lst, gold.notes
    if gold_list is None:
        return Score(value=None, metric=metric, unscored=True, details={**details, "reason": "no_gold"})
    if gold_notes:  # a gold stored as a string or a scalar: worth counting in an audit
        details["gold_notes"] = gold_notes
    if predicted is None:
        details.update(reason="none", n_expected=len(gold_list), n_predicted=0)
        return Score(value=0.0, metric=metric, details=details)
    pred_list, notes = parse_list(predicted)
    assert pred_list is not None
    ctx = JudgeContext(call.judge, call.question)
    match_notes: list[str] = []
    g_arr = gold.array()
    p_arr = numeric_array(pred_list) if g_arr is not None else None
    pred_items: list[Item] | None = None
    strings_only = False
    if (not approximate or len(gold_list) ** 2 <= MAX_MATRIX) and same_values(pred_list, gold_list):
        # the gold itself (same values, same types): every item pairs with its identical twin, which is what
        # the matching below finds (a maximum matching cannot exceed the length); a long approximate numeric
        # part would be matched by intervals, which is left to the general path
        lo = hi = ng = np_ = len(gold_list)
    elif g_arr is not None and p_arr is not None:  # plain numbers on both sides: arrays, no item objects
        lo = hi = _numeric_fast(gold, g_arr, pred_list, p_arr, approximate, match_notes)
        ng, np_ = len(gold_list), len(pred_list)
    elif not approximate and (n := _exact_strings(gold, pred_list)) is not None:
        lo = hi = n
        strings_only = True
        if len(pred_list) == 1:  # an abstention is told by its item
            pred_items = items_of(pred_list)
        ng, np_ = len(gold_list), len(pred_list)
    else:
        gold_items = gold.items()
        pred_items = items_of(pred_list)
        lo, hi = count_matches(gold_items, pred_items, approximate, ctx, match_notes)
        ng, np_ = len(gold_items), len(pred_items)
    f_lo, f_hi = _f1(lo, ng, np_), _f1(hi, ng, np_)
    details.update(n_expected=ng, n_predicted=np_, matched=lo)
    if notes:
        details["notes"] = notes + match_notes
    elif match_notes:
        details["notes"] = match_notes
    if call.diagnostics:
        details["precision"] = lo / np_ if np_ else float(ng == 0)
        details["recall"] = lo / ng if ng else float(np_ == 0)
    if (
        lo < min(ng, np_) and call.diagnostics and not strings_only
    ):  # (strings_only: no scale mismatch to find)
        if pred_items is None:
            # plain numbers on both sides (the gold's very values match everything: lo is not below)
            assert g_arr is not None and p_arr is not None
            sc = _numeric_scale_check(gold, g_arr, pred_list, p_arr, approximate, lo)
            if sc:
                details["scale_mismatch"] = sc
        elif any(i.kind == NUM for i in gold_items):
            matched_numbers = _match_numbers(
                [i for i in gold_items if i.kind == NUM],
                [i for i in pred_items if i.kind == NUM],
                approximate,
                [],
            )
            sc = _scale_check(gold_items, pred_items, approximate, matched_numbers)
            if sc:
                details["scale_mismatch"] = sc
    if ng and not np_:
        details["reason"] = "empty_list"
    elif isinstance(predicted, str) and not predicted.strip() and lo == 0:
        details["reason"] = "empty"
    elif (
        pred_items is not None
        and np_ == 1
        and pred_items[0].kind == STR
        and is_abstention(pred_items[0].text or "")
        and lo == 0
    ):
        details["reason"] = "abstention"
    ctx.record(details)
    if f_lo != f_hi:
        details.update(reason=ctx.unscored_reason(), value_lower_bound=f_lo, value_upper_bound=f_hi)
        return Score(value=None, metric=metric, details=details, unscored=True)
    return Score(value=f_lo, metric=metric, details=details)


list_exact = scorer_variant(score_list, "list_exact", __name__, approximate=False, metric="list_exact")


list_approximate = scorer_variant(
    score_list, "list_approximate", __name__, approximate=True, metric="list_approximate"
)


__all__ = ["count_matches", "item_match", "list_approximate", "list_exact", "score_list"]
