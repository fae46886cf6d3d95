"""The ``verified`` comparator: ELT-Bench-Verified's stage-2 rules, with three named differences.

The rules are ELT-Bench-Verified's as published in uiuc-kang-lab/ELT-Bench:
``reproducibility_artifacts/evastage2_changes.md`` (the document, sections 2.1-2.7), and, where the document
abbreviates, the revised ``evaluation/eva_stage2.py`` it describes (the facts; the code is not copied) and
``evaluation/compute_metrics.py`` (when a model counts as correct). Both tables are read as the original reads
them (pandas' CSV round trip, :mod:`kramabench.elt.compare.original`). Per ground-truth column, on its rows
aligned with the produced ones (Verified's ``vectors_match``):

1. **quotes** (document 2.1): a text of 2 or more characters that starts and ends with ``"``, or with ``'``,
   loses that pair;
2. **timestamps** (document 2.2; the column test from the code): when the first non-NULL value of either side
   is a text starting ``YYYY-MM-DD HH:MM:SS`` (or ``T`` for the space) or being ``YYYY-MM-DD``, every value of
   both sides is read with ``pandas.to_datetime`` (a value it refuses stays as it was, quotes included) and
   floored to the day when exactly one side is *date-only* (more than 80% of its non-NULL values match
   ``^\\d{4}-\\d{2}-\\d{2}$`` after stripping spaces), else to the second. Two times are equal only as
   pandas' ``Timestamp`` equality says: a time with an offset (a ``TIMESTAMPTZ``, written ``+00:00``) never
   equals one without;
3. **booleans** (document 2.6; the code also requires at most two distinct values): when either side holds
   only ``true``/``false``/``1``/``0``/``yes``/``no`` (any case, spaces stripped), booleans and the numbers
   0 and 1, with at most two distinct values, both sides' such values become 1/0 (``'t'``/``'f'`` are not
   boolean: they stay text);
4. **percentage scale** (document 2.5): over the aligned pairs where both sides read as numbers
   (``pandas.to_numeric``) and the ground truth's is not 0, when there are at least 3 and the median of
   produced/expected is within [95, 105] (or [0.0095, 0.0105]) the produced column is divided by 100 (or
   multiplied by 100);
5. **each pair** (document 2.5, 2.7; the order and ``tol`` from the code): two NULLs match; NULL or 0 against
   NULL or 0 matches (a ``False`` is 0); NULL against anything else does not; when both read as numbers (a
   number, or a text ``float()`` accepts after stripping spaces) they match when both are 0, when one is 0 and
   the other within ``1e-7`` of it, when ``|a - b| <= 1% x max(|a|, |b|)``, ``<= 1e-7`` or ``< 1e-6``; two
   times when equal; anything else when its texts are equal **without regard to letter case** (spaces count).

A model is correct when at least one ground-truth column matched and none is unmatched or missing (as
``compute_metrics.py`` counts it).

Named differences from Verified's own code (docs/elt.md, "Named differences of verified"; each tested against
Verified's own verdict in ``tests/elt/test_corpus.py`` and ``tests/elt/test_verified_rules.py``):

* **rows**: Verified drops duplicate rows, and the rows whose key the other side lacks, before comparing; here
  every row is paired or counted (a ground-truth row without a produced partner is a *missing row*, a produced
  one without a ground-truth partner an *extra row*, a duplicate included) and either makes the model wrong;
* **key**: Verified aligns rows on the first column (by name, alphabetically) named like an identifier
  (``*_id``, ``*id``, ``id``; then ``*_code``, ``*_key``, ``*_name``, ``name``; then any) whose ground-truth
  values are 80% distinct, compared as text, else sorts both sides by every column. That can be a measure (a
  weight 0.4% off is then another key). Here rows are paired on *identifying* columns: text (codes, dates,
  timestamps) and whole numbers named as an identifier or a code; the first of them (identifier names first,
  then text, then dates) whose ground-truth values are unique and non-NULL, else all of them together, else
  (none) every column after sorting. Values are paired after the normalisations above (quotes, timestamps to
  the column's precision, letter case, numbers as numbers, NULL as 0), exactly: an identifying number within
  1% of another is another row. When Verified pairs the same rows, the verdict is the same;
* **case**: Verified looks a column up by its exact name (on Snowflake both sides' unquoted names were upper
  case); here a column absent under its exact name is found without regard to case.

Ground-truth corrections: the columns an errata set drops for this comparator are left out.
"""

from __future__ import annotations

import math
import re
import warnings
from collections import defaultdict
from typing import Any

from kramabench.elt.compare.base import SAMPLES, ColumnResult, RoundTripComparator, TableResult, sample_value
from kramabench.elt.compare.values import Table, from_db

#: two numbers within 1% of the larger magnitude match (Verified's relative tolerance)
REL_TOL = 0.01
#: Verified's ``tol`` (``eva_stage2.py`` passes ``tolerance = 1e-7``): a number this close to 0 matches 0
ABS_TOL = 1e-7
#: Verified's last resort: two numbers closer than this match (a float's last digits)
FLOAT_EPS = 1e-6
#: the fewest pairs a percentage/decimal rescale is decided on
MIN_SCALE_PAIRS = 3
#: a side is date-only when more than this share of its non-NULL values is ``YYYY-MM-DD``
DATE_ONLY_SHARE = 0.8

_SURROGATE = (re.compile(r"^unique_.*"), re.compile(r".*_surrogate.*"), re.compile(r".*_hash.*"))
#: names of identifier and code columns, in the order they are preferred as a key
_ID_LIKE = (
    re.compile(r"^id$"),
    re.compile(r".*_id$"),
    re.compile(r".*id$"),
    re.compile(r"^(.*_)?code$"),
    re.compile(r"^(.*_)?key$"),
)
_TIME_HEAD = (re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}"), re.compile(r"\d{4}-\d{2}-\d{2}$"))
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_BOOL_WORDS = ("true", "false", "1", "0", "yes", "no")


def _missing(v: Any) -> bool:
    """NULL as pandas sees it: None, NaN, NaT."""
    import pandas as pd

    return v is None or v is pd.NaT or (isinstance(v, float) and math.isnan(v))


def _unquote(v: Any) -> Any:
    if isinstance(v, str) and len(v) >= 2 and ((v[0] == v[-1] == '"') or (v[0] == v[-1] == "'")):
        return v[1:-1]
    return v


def _is_time_column(values: list[Any]) -> bool:
    first = next((v for v in values if not _missing(v)), None)
    return isinstance(first, str) and any(p.match(first) for p in _TIME_HEAD)


def _is_date_only(values: list[Any]) -> bool:
    present = [v for v in values if not _missing(v)]
    if not present:
        return False
    days = sum(1 for v in present if isinstance(v, str) and _DATE_ONLY.match(v.strip()))
    return days / len(present) > DATE_ONLY_SHARE


def _to_time(v: Any, to_day: bool) -> Any:
    """``pandas.to_datetime`` of one value, floored (Verified's normalisation); a value it refuses as it was."""
    if _missing(v):
        return v
    import pandas as pd

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pd.to_datetime(v).floor("D" if to_day else "s")
    except Exception:  # noqa: BLE001 - Verified keeps any value pandas does not read as a time
        return v


#: plain ISO dates and times (no offset): what ``pandas.to_datetime`` reads alike one by one or all at once
_PLAIN_ISO = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)?")


def _to_times(values: list[Any], to_day: bool) -> list[Any]:
    """:func:`_to_time` of every value; the plain ISO texts read in one call of ``pandas.to_datetime`` (the same
    points in time as one by one, much faster), any other value one by one."""
    import pandas as pd

    out = list(values)
    plain = [k for k, v in enumerate(values) if isinstance(v, str) and _PLAIN_ISO.fullmatch(v)]
    if plain:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                read = pd.to_datetime([values[k] for k in plain], format="ISO8601").floor(
                    "D" if to_day else "s"
                )
            for k, t in zip(plain, read, strict=True):
                out[k] = t
        except Exception:  # noqa: BLE001 - a value out of range or not a day: each on its own, as Verified reads it
            plain = []
    done = set(plain)
    return [out[k] if k in done else _to_time(v, to_day) for k, v in enumerate(values)]


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_boolean_column(values: list[Any]) -> bool:
    present = [v for v in values if not _missing(v)]
    if not present:
        return False
    seen: set[Any] = set()
    for v in present:
        if isinstance(v, bool):
            seen.add(v)
        elif isinstance(v, str) and v.lower().strip() in _BOOL_WORDS:
            seen.add(v.lower().strip())
        elif _is_number(v) and v in (0, 1):
            seen.add(int(v))
        else:
            return False
    return len(seen) <= 2


def _to_boolean(v: Any) -> Any:
    if _missing(v):
        return v
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, str):
        low = v.lower().strip()
        if low in ("true", "1", "yes"):
            return 1
        if low in ("false", "0", "no"):
            return 0
        return v
    if _is_number(v) and v in (0, 1):
        return int(v)
    return v


class _Rules:
    """Verified's normalisation of one column pair (quotes, then timestamps, then booleans), decided on the two
    value lists as given."""

    def __init__(self, exp: list[Any], act: list[Any]) -> None:
        self.notes: list[str] = []
        self.boolean = _is_boolean_column(exp) or _is_boolean_column(act)
        self.time = _is_time_column(exp) or _is_time_column(act)
        if self.boolean:
            self.exp = [_to_boolean(v) for v in exp]
            self.act = [_to_boolean(v) for v in act]
            self.notes.append("booleans compared as 1/0")
        elif self.time:
            to_day = _is_date_only(exp) != _is_date_only(act)
            self.exp = _to_times(exp, to_day)
            self.act = _to_times(act, to_day)
            self.notes.append(
                "times compared to the day (one side holds dates only)"
                if to_day
                else "times compared to the second"
            )
        else:
            self.exp = [_unquote(v) for v in exp]
            self.act = [_unquote(v) for v in act]
            if self.exp != exp or self.act != act:
                self.notes.append("one pair of surrounding quotes dropped")

    def rescale(self) -> None:
        """Verified's percentage check: the produced column divided by 100 (or multiplied by 100) when the
        median ratio over at least 3 numeric pairs (the ground truth's not 0) says so."""
        import pandas as pd

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            e = pd.to_numeric(pd.Series(self.exp), errors="coerce")
            a = pd.to_numeric(pd.Series(self.act), errors="coerce")
            valid = e.notna() & a.notna() & (e != 0)
            if int(valid.sum()) < MIN_SCALE_PAIRS:
                return
            median = float((a[valid] / e[valid]).median())
        if 95 <= median <= 105:
            factor, note = 100.0, "produced values divided by 100 (a percentage against a fraction)"
        elif 0.0095 <= median <= 0.0105:
            factor, note = 0.01, "produced values multiplied by 100 (a fraction against a percentage)"
        else:
            return
        self.act = [None if _missing(v) else float(v) for v in (a / factor).tolist()]
        self.notes.append(note)


def _as_float(v: Any) -> float | None:
    """A number, or a text ``float()`` reads after stripping spaces (Verified's numeric parse)."""
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


def _is_zero(v: Any) -> bool:
    return isinstance(v, int | float) and v == 0


def _pair_matches(a: Any, b: Any) -> tuple[bool, bool]:
    """(match, matched only without regard to letter case) for two normalised values (Verified's rules, in
    its order)."""
    if _missing(a) and _missing(b):
        return True, False
    if (_missing(a) or _is_zero(a)) and (_missing(b) or _is_zero(b)):
        return True, False
    if _missing(a) or _missing(b):
        return False, False
    fa, fb = _as_float(a), _as_float(b)
    if fa is not None and fb is not None:
        if fa == 0 and fb == 0:
            return True, False
        if fa == 0:
            return abs(fb) <= ABS_TOL, False
        if fb == 0:
            return abs(fa) <= ABS_TOL, False
        d = abs(fa - fb)
        return d / max(abs(fa), abs(fb)) <= REL_TOL or d <= ABS_TOL or d < FLOAT_EPS, False
    import pandas as pd

    if isinstance(a, pd.Timestamp) and isinstance(b, pd.Timestamp):
        return bool(a == b), False
    if str(a) == str(b):
        return True, False
    same = str(a).lower() == str(b).lower()
    return same, same


def values_match(e: Any, a: Any) -> bool:
    """Whether two values match by Verified's pair rule (no column normalisation): NULL = NULL = 0, numbers
    within 1% (or 1e-7, or under 1e-6), times equal, texts equal without regard to case."""
    return _pair_matches(from_db(e), from_db(a))[0]


# -- row alignment on identifying columns (the named difference "key") -------------------------------------

_NULL_KEY = ("0",)


def _key_value(v: Any) -> tuple[Any, ...]:
    """A normalised value as a part of a row key: equal when Verified's pair rule would call the values equal
    exactly (NULL and 0 one value, numbers as floats, texts without regard to case)."""
    import pandas as pd

    if _missing(v) or _is_zero(v):
        return _NULL_KEY
    if isinstance(v, int | float):
        return ("n", float(v))
    if isinstance(v, pd.Timestamp):
        return ("t", v)
    if isinstance(v, str):
        f = _as_float(v)
        if f is not None and not math.isnan(f):
            return _NULL_KEY if f == 0 else ("n", f)
        return ("s", v.lower())
    return ("s", str(v).lower())


def _sort_value(v: Any) -> tuple[int, float, str, str]:
    import pandas as pd

    if _missing(v):
        return (0, 0.0, "", "")
    if isinstance(v, int | float):
        return (1, float(v), "", "")
    if isinstance(v, pd.Timestamp):
        return (2, 0.0, str(v), "")
    return (3, 0.0, str(v).lower(), str(v))


class _Column:
    """One ground-truth column and its produced partner: the raw values (as read) and, for the alignment, the
    values normalised over the whole columns."""

    def __init__(self, name: str, exp: list[Any], act: list[Any]) -> None:
        self.name = name
        self.exp = exp
        self.act = act
        whole = _Rules(exp, act)
        self.boolean = whole.boolean
        self.time = whole.time
        self.key_exp = [_key_value(v) for v in whole.exp]
        self.key_act = [_key_value(v) for v in whole.act]
        self.sort_exp = [_sort_value(v) for v in whole.exp]
        self.sort_act = [_sort_value(v) for v in whole.act]

    def rank(self) -> tuple[int, int] | None:
        """How early the column is tried as the key (None: not identifying): identifier and code names first,
        then text, then dates and timestamps; a surrogate key, a boolean and a measure never."""
        low = self.name.lower()
        if any(p.match(low) for p in _SURROGATE) or self.boolean:
            return None
        named = next((r for r, p in enumerate(_ID_LIKE) if p.match(low)), None)
        present = [v for v in self.exp if not _missing(v)]
        if any(isinstance(v, str) for v in present):
            return (0, named) if named is not None else ((2, 0) if self.time else (1, 0))
        if named is not None and all(_is_number(v) and float(v).is_integer() for v in present):
            return (0, named)
        return None

    def unique_key(self) -> bool:
        return not any(_missing(v) for v in self.exp) and len(set(self.key_exp)) == len(self.key_exp)


def _key(cols: list[_Column]) -> list[int]:
    ranked = sorted((r, k) for k, c in enumerate(cols) if (r := c.rank()) is not None)
    for _, k in ranked:
        if cols[k].unique_key():
            return [k]
    return sorted(k for _, k in ranked)


def _align(
    cols: list[_Column], n_exp: int, n_act: int
) -> tuple[list[int], list[tuple[int, int]], list[int], list[int]]:
    """(key column positions, aligned (expected, actual) row pairs in ground-truth order, missing rows, extra
    rows)."""
    key = _key(cols)
    if not key:
        oe = sorted(range(n_exp), key=lambda i: tuple(c.sort_exp[i] for c in cols))
        oa = sorted(range(n_act), key=lambda j: tuple(c.sort_act[j] for c in cols))
        n = min(n_exp, n_act)
        return [], sorted(zip(oe[:n], oa[:n], strict=True)), sorted(oe[n:]), sorted(oa[n:])
    others = [c for k, c in enumerate(cols) if k not in key]
    buckets: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for j in sorted(range(n_act), key=lambda j: tuple(c.sort_act[j] for c in others)):
        buckets[tuple(cols[k].key_act[j] for k in key)].append(j)
    taken: dict[tuple[Any, ...], int] = defaultdict(int)
    pairs: list[tuple[int, int]] = []
    missing: list[int] = []
    for i in sorted(range(n_exp), key=lambda i: tuple(c.sort_exp[i] for c in others)):
        kv = tuple(cols[k].key_exp[i] for k in key)
        bucket = buckets.get(kv)
        if bucket is not None and taken[kv] < len(bucket):
            pairs.append((i, bucket[taken[kv]]))
            taken[kv] += 1
        else:
            missing.append(i)
    extra = sorted(j for kv, b in buckets.items() for j in b[taken[kv] :])
    return key, sorted(pairs), sorted(missing), extra


class VerifiedComparator(RoundTripComparator):
    name = "verified"
    description = (
        "ELT-Bench-Verified's rules (quotes, timestamp precision, booleans, percentage scale, 1% "
        "tolerance, NULL = 0, text without regard to case), rows paired on identifying columns, "
        "missing and extra rows counted as errors"
    )

    def compare_read(self, expected: Table, actual: Table, *, dropped: dict[str, str] | None) -> TableResult:
        drop = {k.lower(): v for k, v in (dropped or {}).items()}
        results: dict[str, ColumnResult] = {}
        paired: list[tuple[int, int, str]] = []
        for i, name in enumerate(expected.columns):
            if name.lower() in drop:
                results[name] = ColumnResult(name=name, status="dropped", reason=drop[name.lower()])
                continue
            j = actual.index(name)
            if j is None:
                results[name] = ColumnResult(
                    name=name, status="missing", reason="the produced table has no such column"
                )
                continue
            paired.append((i, j, name))
        cols = [_Column(name, expected.column(i), actual.column(j)) for i, j, name in paired]

        key, pairs, missing, extra = _align(cols, len(expected), len(actual))
        for (_, j, _), c in zip(paired, cols, strict=True):
            rules = _Rules([c.exp[i] for i, _ in pairs], [c.act[j] for _, j in pairs])
            rules.rescale()
            notes = list(rules.notes)
            if actual.columns[j] != c.name:
                notes.append(
                    f"found as the produced column {actual.columns[j]!r} (names without regard to case)"
                )
            bad = 0
            caseless = False
            samples: list[dict[str, Any]] = []
            for (i, jj), exp_v, act_v in zip(pairs, rules.exp, rules.act, strict=True):
                ok, by_case = _pair_matches(exp_v, act_v)
                caseless = caseless or by_case
                if not ok:
                    bad += 1
                    if len(samples) < SAMPLES:
                        samples.append(
                            {
                                "row": i,
                                "key": _key_text(cols, key, i),
                                "expected": sample_value(_show(expected, c.name, i)),
                                "actual": sample_value(_show(actual, actual.columns[j], jj)),
                            }
                        )
            if caseless:
                notes.append("texts equal without regard to letter case")
            results[c.name] = ColumnResult(
                name=c.name,
                status="matched" if bad == 0 else "mismatched",
                compared=len(pairs),
                mismatches=bad,
                samples=samples,
                normalised=notes,
            )
        ordered = [results[n] for n in expected.columns if n in results]
        correct = (
            not missing
            and not extra
            and any(c.status == "matched" for c in ordered)
            and all(c.status in ("matched", "dropped") for c in ordered)
        )
        return TableResult(
            comparator=self.name,
            correct=correct,
            rows_expected=len(expected),
            rows_actual=len(actual),
            missing_rows=len(missing),
            extra_rows=len(extra),
            missing_samples=[_row_sample(expected, i) for i in missing[:SAMPLES]],
            extra_samples=[_row_sample(actual, j) for j in extra[:SAMPLES]],
            columns=ordered,
            key=[cols[k].name for k in key],
        )


def _show(t: Table, name: str, row: int) -> Any:
    i = t.index(name)
    return None if i is None else t.rows[row][i]


def _row_sample(t: Table, row: int) -> dict[str, Any]:
    return {"row": row, **{c: sample_value(v) for c, v in zip(t.columns, t.rows[row], strict=True)}}


def _key_text(cols: list[_Column], key: list[int], i: int) -> str | None:
    if not key:
        return None
    return ", ".join(f"{cols[k].name}={cols[k].exp[i]}" for k in key)


__all__ = [
    "ABS_TOL",
    "DATE_ONLY_SHARE",
    "FLOAT_EPS",
    "MIN_SCALE_PAIRS",
    "REL_TOL",
    "VerifiedComparator",
    "values_match",
]
