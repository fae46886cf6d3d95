"""The ``verified`` comparator: ELT-Bench-Verified's refined stage-2 rules, with missing and extra rows
counted as errors.

Verified keeps the original's read of both tables (pandas' CSV round trip, :mod:`kramabench.elt.compare.original`:
types from the CSV, pandas' NULL tokens missing, midnight timestamps written as dates) and refines the
comparison (uiuc-kang-lab/ELT-Bench, ``reproducibility_artifacts/evastage2_changes.md``):

* **order-insensitive rows**: rows are aligned on a key, not compared by position. The key is made of
  *identifying* columns, never of measures: a ground-truth column is identifying when it holds text, dates
  or timestamps, or when its name says it is an identifier or a code (``id``, ``*_id``, ``*id``, ``*_code``,
  ``*_key``) and its values are whole numbers; a surrogate key (``unique_*``, ``*_surrogate*``,
  ``*_hash*``), a boolean column and any other number (a count, an amount, a weight) never is. The key is
  the first identifying column whose ground-truth values are unique and non-NULL (identifier names first,
  then text, then dates), else all identifying columns together (rows with the same key are paired in the
  order of their other values), else (no identifying column) all columns after sorting;
* **boolean normalisation**: when both sides of a column hold only boolean-like values (``true``/``false``,
  ``1``/``0``, ``yes``/``no``, ``t``/``f`` in any case, booleans, 0 and 1) they compare as 1/0;
* **float tolerance**: two numbers match when ``|a - b| <= 1% * max(|a|, |b|)`` or ``|a - b| <= 1e-6``; a
  number written as text compares as the number;
* **percentage/decimal normalisation**: when a column has at least 3 aligned pairs of non-zero numbers and
  their median ratio produced/expected is within [95, 105] (or [0.0095, 0.0105]) the produced column is
  rescaled by 1/100 (or 100) before comparing (a percentage written as a fraction, or the reverse);
* **NULL equivalence**: NULL matches NULL, and NULL matches 0 (an absent count and a zero count);
* **quotes**: one pair of quotes around a text is ignored (``"regular"`` matches ``regular``); other
  whitespace and case are not (trimming a source's value is an error);
* **timestamps**: dates and timestamps compare as points in time, to the second; when one side holds
  dates only and the other full timestamps, to the day;
* ground-truth corrections: the columns an errata set drops for this comparator are left out.

Not copied: the original keeps only the rows whose key both sides have (and drops duplicate rows), so a
missing, an extra or a duplicated row goes unpunished. Here a ground-truth row without a produced partner is
a *missing row*, a produced row without a ground-truth partner (a duplicate included) an *extra row*, and
either makes the data model incorrect.
"""

from __future__ import annotations

import datetime as dt
import re
import statistics
from collections import defaultdict
from typing import Any

from kramabench.elt.compare.base import SAMPLES, ColumnResult, TableResult, sample_value
from kramabench.elt.compare.original import OriginalUnreadable
from kramabench.elt.compare.values import Table, from_db, is_number

REL_TOL = 0.01
ABS_TOL = 1e-6
#: the fewest aligned non-zero pairs a percentage/decimal rescale is decided on (as Verified)
MIN_SCALE_PAIRS = 3

_SURROGATE = (re.compile(r"^unique_.*"), re.compile(r".*_surrogate.*"), re.compile(r".*_hash.*"))
#: names of identifier and code columns, in the order they are preferred as a key
_ID_LIKE = (re.compile(r"^id$"), re.compile(r".*_id$"), re.compile(r".*id$"), re.compile(r"^(.*_)?code$"),
            re.compile(r"^(.*_)?key$"))
_NUMBER = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")
_DATE = re.compile(r"^\d{4}[-/]\d{2}[-/]\d{2}$")
_TIMESTAMP = re.compile(r"^\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?$")
_BOOL_TEXT = {"true": 1, "false": 0, "1": 1, "0": 0, "yes": 1, "no": 0, "t": 1, "f": 0}


def _bool_like(v: Any) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if is_number(v) and v in (0, 1):
        return int(v)
    if isinstance(v, str):
        return _BOOL_TEXT.get(v.strip().lower())
    return None


def _unquote(v: Any) -> Any:
    if isinstance(v, str) and len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1]
    return v


def _as_number(v: Any) -> float | None:
    if is_number(v):
        return float(v)
    if isinstance(v, str) and _NUMBER.match(v):
        return float(v)
    return None


def _parse_time(v: Any) -> tuple[dt.datetime, bool] | None:
    """(point in time, date only?) of a date or timestamp text."""
    if not isinstance(v, str):
        return None
    s = v.strip().replace("/", "-")
    if _DATE.match(v.strip()):
        return dt.datetime.fromisoformat(s), True
    if _TIMESTAMP.match(v.strip()):
        try:
            t = dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
        except ValueError:
            return None
        if t.tzinfo is not None:
            t = t.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return t, False
    return None


class _Column:
    """One ground-truth column and its produced partner, normalised as a pair."""

    def __init__(self, name: str, exp: list[Any], act: list[Any]) -> None:
        self.name = name
        self.normalised: list[str] = []
        exp = [_unquote(v) for v in exp]
        act = [_unquote(v) for v in act]
        ne = [v for v in exp if v is not None]
        na = [v for v in act if v is not None]
        self.kind = "value"
        if ne and na and all(_bool_like(v) is not None for v in ne) and all(_bool_like(v) is not None for v in na) \
                and any(isinstance(v, bool | str) for v in ne + na):
            self.kind = "bool"
            exp = [None if v is None else _bool_like(v) for v in exp]
            act = [None if v is None else _bool_like(v) for v in act]
            self.normalised.append("boolean")
        elif (ne or na) and all(_parse_time(v) for v in ne) and all(_parse_time(v) for v in na):
            self.kind = "time"
            pe = [None if v is None else _parse_time(v) for v in exp]
            pa = [None if v is None else _parse_time(v) for v in act]
            day_e = bool(ne) and all(p[1] for p in pe if p)
            day_a = bool(na) and all(p[1] for p in pa if p)
            to_day = day_e != day_a
            if to_day:
                self.normalised.append("timestamp compared to the day (one side holds dates only)")

            def cut(p: tuple[dt.datetime, bool] | None) -> Any:
                if p is None:
                    return None
                t = p[0]
                return t.replace(hour=0, minute=0, second=0, microsecond=0) if to_day else t.replace(microsecond=0)

            exp, act = [cut(p) for p in pe], [cut(p) for p in pa]
        elif (ne or na) and all(_as_number(v) is not None for v in ne + na) and any(is_number(v) for v in ne + na):
            self.kind = "number"
            if any(isinstance(v, str) for v in ne + na):
                self.normalised.append("numbers written as text read as numbers")
            exp = [None if v is None else _as_number(v) for v in exp]
            act = [None if v is None else _as_number(v) for v in act]
        self.exp = exp
        self.act = act

    def key_of(self, v: Any) -> Any:
        """A value as part of a row key: numbers as floats, and NULL as 0 in a number column (NULL = 0)."""
        if self.kind == "number":
            return 0.0 if v is None else float(v)
        return v

    def rescale(self, pairs: list[tuple[int, int]]) -> None:
        if self.kind not in ("number", "value"):
            return
        ratios = []
        for i, j in pairs:
            e, a = self.exp[i], self.act[j]
            if is_number(e) and is_number(a) and e != 0 and a != 0:
                ratios.append(float(a) / float(e))
        if len(ratios) < MIN_SCALE_PAIRS:
            return
        med = statistics.median(ratios)
        if 95 <= med <= 105:
            self.act = [v / 100 if is_number(v) else v for v in self.act]
            self.normalised.append("produced values divided by 100 (a percentage against a fraction)")
        elif 0.0095 <= med <= 0.0105:
            self.act = [v * 100 if is_number(v) else v for v in self.act]
            self.normalised.append("produced values multiplied by 100 (a fraction against a percentage)")


def values_match(e: Any, a: Any) -> bool:
    """Whether two values match: NULL = NULL = 0, numbers within 1% or 1e-6, else equal."""
    return _match(from_db(e), from_db(a))


def _match(e: Any, a: Any) -> bool:
    if e is None or a is None:
        other = a if e is None else e
        return other is None or (is_number(other) and other == 0)
    if is_number(e) and is_number(a):
        e, a = float(e), float(a)
        if e == a:
            return True
        if e != e or a != a:
            return False
        d = abs(a - e)
        return d <= ABS_TOL or d <= REL_TOL * max(abs(a), abs(e))
    return bool(e == a)


def _sort_key(v: Any) -> tuple[int, Any]:
    if v is None:
        return (0, "")
    if is_number(v):
        return (1, round(float(v), 6))
    return (2, str(v))


class VerifiedComparator:
    name = "verified"
    description = ("ELT-Bench-Verified's rules (rows aligned on a key; booleans, 1% or 1e-6, percent/decimal, "
                   "NULL = 0, quotes, timestamp precision), missing and extra rows counted as errors")

    def compare(self, expected: Table, actual: Table, *, dropped: dict[str, str] | None = None) -> TableResult:
        try:
            expected = expected.original()
        except OriginalUnreadable as e:
            return _unreadable(self.name, expected, actual, f"the ground truth: {e}")
        try:
            actual = actual.original()
        except OriginalUnreadable as e:
            return _unreadable(self.name, expected, actual, f"the produced table: {e}")
        drop = {k.lower(): v for k, v in (dropped or {}).items()}
        results: dict[str, ColumnResult] = {}
        pairs_cols: list[tuple[int, int, str]] = []
        for i, name in enumerate(expected.columns):
            if name.lower() in drop:
                results[name] = ColumnResult(name=name, status="dropped", reason=drop[name.lower()])
                continue
            j = actual.index(name)
            if j is None:
                results[name] = ColumnResult(name=name, status="missing", reason="the produced table has no such column")
                continue
            pairs_cols.append((i, j, name))
        cols = [_Column(name, expected.column(i), actual.column(j)) for i, j, name in pairs_cols]

        key, pairs, missing, extra = self._align(cols, len(expected), len(actual))
        for c in cols:
            c.rescale(pairs)
            bad = 0
            samples: list[dict[str, Any]] = []
            for i, j in pairs:
                if not _match(c.exp[i], c.act[j]):
                    bad += 1
                    if len(samples) < SAMPLES:
                        samples.append({"row": i, "key": _key_text(cols, key, i),
                                        "expected": sample_value(_show(expected, c.name, i)),
                                        "actual": sample_value(_show(actual, c.name, j))})
            results[c.name] = ColumnResult(name=c.name, status="matched" if bad == 0 else "mismatched",
                                           compared=len(pairs), mismatches=bad, samples=samples,
                                           normalised=c.normalised)
        ordered = [results[n] for n in expected.columns if n in results]
        correct = not missing and not extra and all(c.status in ("matched", "dropped") for c in ordered)
        return TableResult(
            comparator=self.name, correct=correct, rows_expected=len(expected), rows_actual=len(actual),
            missing_rows=len(missing), extra_rows=len(extra),
            missing_samples=[_row_sample(expected, i) for i in missing[:SAMPLES]],
            extra_samples=[_row_sample(actual, j) for j in extra[:SAMPLES]],
            columns=ordered, key=[cols[k].name for k in key])

    @staticmethod
    def _align(cols: list[_Column], n_exp: int, n_act: int) -> tuple[list[int], list[tuple[int, int]], list[int], list[int]]:
        """(key column positions, aligned (expected, actual) row pairs, missing rows, extra rows)."""
        key = _key(cols)
        if not key:
            # nothing to key on: every column, both sides sorted, paired by position
            ke = sorted(range(n_exp), key=lambda i: tuple(_sort_key(c.exp[i]) for c in cols))
            ka = sorted(range(n_act), key=lambda j: tuple(_sort_key(c.act[j]) for c in cols))
            n = min(n_exp, n_act)
            return [], list(zip(ke[:n], ka[:n], strict=True)), ke[n:], ka[n:]

        others = [k for k in range(len(cols)) if k not in key]
        by_key: dict[tuple[Any, ...], list[int]] = defaultdict(list)
        act_order = sorted(range(n_act), key=lambda j: tuple(_sort_key(cols[k].act[j]) for k in others))
        for j in act_order:
            by_key[tuple(cols[k].key_of(cols[k].act[j]) for k in key)].append(j)
        exp_order = sorted(range(n_exp), key=lambda i: tuple(_sort_key(cols[k].exp[i]) for k in others))
        pairs: list[tuple[int, int]] = []
        missing: list[int] = []
        for i in exp_order:
            bucket = by_key.get(tuple(cols[k].key_of(cols[k].exp[i]) for k in key))
            if bucket:
                pairs.append((i, bucket.pop(0)))
            else:
                missing.append(i)
        extra = sorted(j for b in by_key.values() for j in b)
        pairs.sort()
        return key, pairs, sorted(missing), extra


def _id_rank(name: str) -> int | None:
    """The rank of an identifier or code name among :data:`_ID_LIKE` (None: not one)."""
    low = name.lower()
    return next((r for r, p in enumerate(_ID_LIKE) if p.match(low)), None)


def _identifying(c: _Column) -> bool:
    """Whether a column identifies rows (text, dates, or whole numbers named as an identifier or a code), as
    opposed to a measure (any other number, a boolean) or a surrogate key."""
    if any(p.match(c.name.lower()) for p in _SURROGATE) or c.kind == "bool":
        return False
    if c.kind == "number":
        return _id_rank(c.name) is not None and all(
            v is None or float(v).is_integer() for v in c.exp + c.act)
    return c.kind in ("time", "value") and not all(v is None or is_number(v) for v in c.exp + c.act)


def _key(cols: list[_Column]) -> list[int]:
    """The key columns (see the module docstring): one unique, non-NULL identifying column (identifier names
    first, then text, then dates), else every identifying column."""
    ident = [k for k, c in enumerate(cols) if _identifying(c)]

    def rank(k: int) -> tuple[int, int, int]:
        r = _id_rank(cols[k].name)
        return (0, r, k) if r is not None else (1 if cols[k].kind == "value" else 2, 0, k)

    for k in sorted(ident, key=rank):
        raw = cols[k].exp
        if all(v is not None for v in raw) and len({cols[k].key_of(v) for v in raw}) == len(raw):
            return [k]
    return ident


def _unreadable(name: str, expected: Table, actual: Table, why: str) -> TableResult:
    return TableResult(comparator=name, correct=False, rows_expected=len(expected), rows_actual=len(actual),
                       error=why, columns=[ColumnResult(name=c, status="missing", reason=why) for c in expected.columns])


def _show(t: Table, name: str, row: int) -> Any:
    i = t.index(name)
    return None if i is None else t.rows[row][i]


def _row_sample(t: Table, row: int) -> dict[str, Any]:
    return {"row": row, **{c: sample_value(v) for c, v in zip(t.columns, t.rows[row], strict=True)}}


def _key_text(cols: list[_Column], key: list[int], i: int) -> str | None:
    if not key:
        return None
    return ", ".join(f"{cols[k].name}={cols[k].exp[i]}" for k in key)


__all__ = ["ABS_TOL", "MIN_SCALE_PAIRS", "REL_TOL", "VerifiedComparator", "values_match"]
