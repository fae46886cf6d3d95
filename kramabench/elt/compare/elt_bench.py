"""The ``elt-bench`` comparator: ELT-Bench's own stage-2 comparison, on the tables as its evaluation reads them,
with two named fixes.

What the original does (``evaluation/eva_stage2.py`` of uiuc-kang-lab/ELT-Bench; facts, our code):

* both tables are read through pandas' CSV round trip (:mod:`kramabench.elt.compare.original`): the query's
  result by ``read_sql`` -> ``to_csv`` -> ``read_csv``, the ground truth by ``read_csv``; the values compared are
  what ``read_csv`` gives (integers, floats, booleans, text; missing as NaN);
* every ground-truth column is looked up by name in the result; absent, it is *missed*; the columns the
  ground truth lacks are ignored;
* a column of another length than the ground truth's (a missing or an extra row) is *unmatched*;
* otherwise the values are compared row by row, by position (the query's ``ORDER BY`` fixes the order):
  two missing values match; two numbers (booleans are numbers: ``True`` is 1) match unless
  ``produced > expected * 1.01`` or ``produced < expected * 0.99``; a missing value against a number matches
  too (every comparison with NaN is false, so neither bound is crossed); anything else must be equal
  (a missing value never equals a text);
* a data model is correct when no column is missed or unmatched and at least one matched.

Fixed (each a deliberate difference, named in the results where it changed a verdict; docs/elt.md):

1. **negative numbers** (``sign``): the original's bounds are written for a positive expected value; for a
   negative one ``expected * 1.01 < expected * 0.99`` and every value crosses one bound, the expected value
   itself included. Here the bounds are taken in order (``min``/``max`` of the two), i.e.
   ``|produced - expected| <= 1% x |expected|`` for every sign; NaN keeps the original's behaviour.
2. **letter case of column names** (``case``): the original finds a column by its exact name, which on
   Snowflake (unquoted names folded to upper case on both sides) meant case did not matter; DuckDB keeps a
   name as written, so here a column the result lacks under its exact name is found without regard to case.

Nothing else is changed: the ground truth's NaN against a produced number (and the reverse) matches, as in
the original; a produced text ``'None'`` or ``''`` is a NULL as pandas reads it.
"""

from __future__ import annotations

from typing import Any

from kramabench.elt.compare.base import SAMPLES, ColumnResult, RoundTripComparator, TableResult, sample_value
from kramabench.elt.compare.values import Table

#: relative tolerance of the original's number test
REL_TOL = 0.01
#: its bounds, as factors of the expected value, as the original writes them (a value on a bound matches)
_HI, _LO = 1.01, 0.99

#: the named fixes (docs/elt.md "The elt-bench comparator")
FIXES = {
    "sign": "negative numbers compared within 1% of |expected| (the original's bounds reject every negative "
    "expected value)",
    "case": "a column found without regard to letter case (Snowflake folds unquoted names to upper case; DuckDB "
    "keeps them as written)",
}


def _numeric(v: Any) -> bool:
    """A number for the original's test: a boolean, an integer, a float, or a missing value (NaN is a float)."""
    return v is None or isinstance(v, bool | int | float)


def _within(e: Any, a: Any, *, fixed: bool) -> bool:
    """The original's number test: ``a`` not above ``e * 1.01`` and not below ``e * 0.99``; ``fixed``: the two
    bounds in order (fix 1). A missing value on either side crosses no bound (it compares false)."""
    if e is None or a is None:
        return True
    fe, fa = float(e), float(a)
    lo, hi = fe * _LO, fe * _HI
    if fixed and lo > hi:
        lo, hi = hi, lo
    return not (fa > hi or fa < lo)


def _pair(e: Any, a: Any, *, fixed: bool = True) -> bool:
    if e is None and a is None:
        return True
    if _numeric(e) and _numeric(a):
        return _within(e, a, fixed=fixed)
    return bool(e == a)


def values_match(expected: Any, actual: Any, *, fixed: bool = True) -> bool:
    """Whether two values (as ``read_csv`` gives them; None for a missing value) match under the original's
    rules, with the sign fix unless ``fixed=False``."""
    return _pair(expected, actual, fixed=fixed)


def find_column(table: Table, name: str, *, fixed: bool = True) -> tuple[int | None, bool]:
    """(position of ``name`` in ``table`` or None, whether the case fix found it)."""
    if name in table.columns:
        return table.columns.index(name), False
    if not fixed:
        return None, False
    j = table.index(name)
    return j, j is not None


class EltBenchComparator(RoundTripComparator):
    name = "elt-bench"
    description = (
        "ELT-Bench's own comparison (pandas' CSV round trip of both tables; by position; numbers within 1%; "
        "NaN = NaN and NaN = any number; else equal), two named fixes (sign, case)"
    )

    def refused(self, result: TableResult) -> TableResult:
        result.unfixed_correct = False  # the original code fails on it too
        return result

    def compare_read(self, expected: Table, actual: Table, *, dropped: dict[str, str] | None) -> TableResult:
        return compare_original(expected, actual, dropped=dropped, comparator=self.name)


def verdict(exp: Table, act: Table, *, dropped: dict[str, str] | None = None, fixed: bool = True) -> bool:
    """The verdict alone: with the fixes, or (``fixed=False``) the original code's own."""
    drop = {k.lower() for k in (dropped or {})}
    matched = 0
    for i, name in enumerate(exp.columns):
        if name.lower() in drop:
            continue
        j, _ = find_column(act, name, fixed=fixed)
        if j is None or len(exp) != len(act):
            return False
        if not all(_pair(er[i], ar[j], fixed=fixed) for er, ar in zip(exp.rows, act.rows, strict=True)):
            return False
        matched += 1
    return matched > 0


def compare_original(
    exp: Table, act: Table, *, dropped: dict[str, str] | None = None, comparator: str = "elt-bench"
) -> TableResult:
    """The comparison of two original views (see the module docstring): the verdict with the fixes, the
    original's own verdict beside it (``unfixed_correct``), per-column diagnostics (a column the fixes decided
    says which in ``normalised``)."""
    drop = {k.lower(): v for k, v in (dropped or {}).items()}
    same_len = len(exp) == len(act)
    cols: list[ColumnResult] = []
    for i, name in enumerate(exp.columns):
        if name.lower() in drop:
            cols.append(ColumnResult(name=name, status="dropped", reason=drop[name.lower()]))
            continue
        j, by_case = find_column(act, name)
        if j is None:
            cols.append(
                ColumnResult(name=name, status="missing", reason="the produced table has no such column")
            )
            continue
        notes = [f"fix case: compared with the produced column {act.columns[j]!r}"] if by_case else []
        if not same_len:
            cols.append(
                ColumnResult(
                    name=name,
                    status="mismatched",
                    mismatches=max(len(exp), len(act)),
                    normalised=notes,
                    reason=f"{len(act)} rows produced, {len(exp)} expected",
                )
            )
            continue
        bad = rescued = 0
        samples: list[dict[str, Any]] = []
        for r, (er, ar) in enumerate(zip(exp.rows, act.rows, strict=True)):
            e, a = er[i], ar[j]
            if _pair(e, a):
                rescued += not _pair(e, a, fixed=False)
                continue
            bad += 1
            if len(samples) < SAMPLES:
                samples.append({"row": r, "expected": sample_value(e), "actual": sample_value(a)})
        if rescued:
            notes.append(f"fix sign: {rescued} negative value(s) within 1% that the original's test rejects")
        cols.append(
            ColumnResult(
                name=name,
                status="matched" if bad == 0 else "mismatched",
                compared=len(exp),
                mismatches=bad,
                samples=samples,
                normalised=notes,
            )
        )
    correct = any(c.status == "matched" for c in cols) and all(
        c.status in ("matched", "dropped") for c in cols
    )
    return TableResult(
        comparator=comparator,
        correct=correct,
        unfixed_correct=verdict(exp, act, dropped=dropped, fixed=False),
        rows_expected=len(exp),
        rows_actual=len(act),
        missing_rows=max(0, len(exp) - len(act)),
        extra_rows=max(0, len(act) - len(exp)),
        columns=cols,
    )


__all__ = [
    "FIXES",
    "REL_TOL",
    "EltBenchComparator",
    "compare_original",
    "find_column",
    "values_match",
    "verdict",
]
