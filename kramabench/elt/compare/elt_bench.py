"""The ``elt-bench`` comparator: ELT-Bench's stage-2 rules, with its two faults fixed.

The paper's rules: the evaluation query's result is compared with the ground truth column by column, by
position (the query's ``ORDER BY`` fixes the order): a ground-truth column the result lacks fails; two
numbers match within 1% of the ground-truth value; NULL (NaN) matches NULL; any other pair must be equal;
columns the ground truth does not have are allowed. A data model is correct when every ground-truth column
matches. Tables of different lengths match in no column.

Fixed (each a deliberate difference, listed in docs/elt.md):

1. the 1% test of the original is written for positive numbers only: for a negative ground-truth value its
   interval is empty and no value matches. Here: ``|actual - expected| <= 0.01 * |expected|``.
2. numpy integers (how pandas reads integer columns) fell through the number test to the exact test, so
   an integer ground truth never matched within 1%. Here every number type is a number.

Values: see :mod:`kramabench.elt.compare.values` (a boolean is a number 0/1 as in Python; a boolean and a
text never match; dates and timestamps compare as their ISO text).
"""

from __future__ import annotations

from typing import Any

from kramabench.elt.compare.base import SAMPLES, ColumnResult, TableResult, sample_value
from kramabench.elt.compare.values import Table, from_db, is_number

#: relative tolerance of the paper's number test
REL_TOL = 0.01


def _num(v: Any) -> bool:
    return is_number(v) or isinstance(v, bool)


def values_match(expected: Any, actual: Any) -> bool:
    """Whether two values match under the paper's rules (any numeric type is a number: fault 2 fixed)."""
    expected, actual = from_db(expected), from_db(actual)
    if expected is None or actual is None:
        return expected is None and actual is None
    if _num(expected) and _num(actual):
        e, a = float(expected), float(actual)
        if e == a:
            return True
        if e != e or a != a or abs(e) == float("inf") or abs(a) == float("inf"):
            return False
        return abs(a - e) <= REL_TOL * abs(e)
    if type(expected) is not type(actual) and (isinstance(expected, bool) or isinstance(actual, bool)):
        return False
    return expected == actual


def _match(expected: Any, actual: Any) -> bool:
    """:func:`values_match` on values already canonical (the comparator's loop)."""
    if expected is None or actual is None:
        return expected is None and actual is None
    if _num(expected) and _num(actual):
        e, a = float(expected), float(actual)
        return e == a or (e == e and a == a and abs(e) != float("inf") and abs(a - e) <= REL_TOL * abs(e))
    if type(expected) is not type(actual) and (isinstance(expected, bool) or isinstance(actual, bool)):
        return False
    return expected == actual


class EltBenchComparator:
    name = "elt-bench"
    description = "ELT-Bench's rules (by position; numbers within 1%; NULL = NULL; else exact), two faults fixed"

    def compare(self, expected: Table, actual: Table, *, dropped: dict[str, str] | None = None) -> TableResult:
        drop = {k.lower(): v for k, v in (dropped or {}).items()}
        same_len = len(expected) == len(actual)
        cols: list[ColumnResult] = []
        for i, name in enumerate(expected.columns):
            if name.lower() in drop:
                cols.append(ColumnResult(name=name, status="dropped", reason=drop[name.lower()]))
                continue
            j = actual.index(name)
            if j is None:
                cols.append(ColumnResult(name=name, status="missing", reason="the produced table has no such column"))
                continue
            if not same_len:
                cols.append(ColumnResult(name=name, status="mismatched", mismatches=max(len(expected), len(actual)),
                                         reason=f"{len(actual)} rows produced, {len(expected)} expected"))
                continue
            bad = 0
            samples: list[dict[str, Any]] = []
            for r, (er, ar) in enumerate(zip(expected.rows, actual.rows, strict=True)):
                if not _match(er[i], ar[j]):
                    bad += 1
                    if len(samples) < SAMPLES:
                        samples.append({"row": r, "expected": sample_value(er[i]), "actual": sample_value(ar[j])})
            cols.append(ColumnResult(name=name, status="matched" if bad == 0 else "mismatched", compared=len(expected),
                                     mismatches=bad, samples=samples))
        correct = all(c.status in ("matched", "dropped") for c in cols)
        return TableResult(comparator=self.name, correct=correct, rows_expected=len(expected), rows_actual=len(actual),
                           missing_rows=max(0, len(expected) - len(actual)),
                           extra_rows=max(0, len(actual) - len(expected)), columns=cols)


__all__ = ["REL_TOL", "EltBenchComparator", "values_match"]
