"""A test oracle: ELT-Bench-Verified's rules as docs/elt.md states them for the ``verified`` comparator, written
independently of kramabench's comparator (pandas for the reading and the dates), on a DuckDB warehouse.

Both tables through the original's CSV round trip (``pandas.read_sql`` -> ``to_csv`` -> ``read_csv``); every
ground-truth column must be in the result (names without regard to case); per column: one pair of
surrounding quotes dropped; booleans (both sides only boolean-like values) as 1/0; dates and timestamps as
points in time (to the day when exactly one side holds dates only, else to the second); numbers and numeric
text as floats. Rows aligned on identifying columns (text, dates, whole numbers named as an identifier or a
code; never a measure, a boolean or a surrogate key): the first unique non-NULL one (identifier names first,
then text, then dates), else all of them, else all columns after sorting. A column is rescaled by 1/100 or 100
when at least 3 aligned non-zero pairs have a median ratio in [95, 105] or [0.0095, 0.0105]. NULL matches NULL
and 0; numbers match within 1% of the larger or 1e-6; anything else when equal. A missing or an extra row, a
missing or an unmatched column: wrong.
"""

from __future__ import annotations

import re
import statistics
import tempfile
import warnings
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

SURROGATE = [r"^unique_", r"_surrogate", r"_hash"]
ID_NAMES = [r"^id$", r"_id$", r"id$", r"^(.*_)?code$", r"^(.*_)?key$"]
BOOL_WORDS = {"true": 1, "false": 0, "yes": 1, "no": 0, "t": 1, "f": 0, "1": 1, "0": 0}
ISO_DAY = re.compile(r"^\d{4}[-/]\d{2}[-/]\d{2}$")
ISO_TIME = re.compile(r"^\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?$")


def _frames(warehouse: Path, query: str, ground_truth: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = pd.read_sql(query, con)
    finally:
        con.close()
    with tempfile.TemporaryDirectory() as tmp:
        got.to_csv(Path(tmp) / "r.csv", index=False)
        got = pd.read_csv(Path(tmp) / "r.csv")
    return pd.read_csv(ground_truth), got


def _plain(v: Any) -> Any:
    if pd.isna(v):
        return None
    if isinstance(v, str) and len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _bool(v: Any) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if _is_num(v) and v in (0, 1):
        return int(v)
    if isinstance(v, str):
        return BOOL_WORDS.get(v.strip().lower())
    return None


def _numeric(v: Any) -> float | None:
    if _is_num(v):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return None


def _when(v: Any) -> tuple[pd.Timestamp, bool] | None:
    if not isinstance(v, str):
        return None
    s = v.strip()
    if ISO_DAY.match(s):
        return pd.Timestamp(s.replace("/", "-")), True
    if ISO_TIME.match(s):
        t = pd.Timestamp(s.replace("/", "-"))
        if t.tzinfo is not None:
            t = t.tz_convert("UTC").tz_localize(None)
        return t, False
    return None


def _normalise(e: list[Any], a: list[Any]) -> tuple[str, list[Any], list[Any]]:
    ne = [v for v in e if v is not None]
    na = [v for v in a if v is not None]
    both = ne + na
    if ne and na and all(_bool(v) is not None for v in both) and any(isinstance(v, (bool, str)) for v in both):
        return "bool", [None if v is None else _bool(v) for v in e], [None if v is None else _bool(v) for v in a]
    if both and all(_when(v) is not None for v in both):
        te = [None if v is None else _when(v) for v in e]
        ta = [None if v is None else _when(v) for v in a]
        day = (bool(ne) and all(t[1] for t in te if t)) != (bool(na) and all(t[1] for t in ta if t))
        unit = "D" if day else "s"
        return ("time", [None if t is None else t[0].floor(unit) for t in te],
                [None if t is None else t[0].floor(unit) for t in ta])
    if both and all(_numeric(v) is not None for v in both) and any(_is_num(v) for v in both):
        return "number", [None if v is None else _numeric(v) for v in e], [None if v is None else _numeric(v) for v in a]
    return "value", e, a


def _id_rank(name: str) -> int | None:
    for r, p in enumerate(ID_NAMES):
        if re.search(p, name.lower()):
            return r
    return None


def _identifying(name: str, kind: str, e: list[Any], a: list[Any]) -> bool:
    if any(re.search(p, name.lower()) for p in SURROGATE) or kind == "bool":
        return False
    if kind == "number":
        return _id_rank(name) is not None and all(v is None or float(v).is_integer() for v in e + a)
    return not all(v is None or _is_num(v) for v in e + a)


def _order(v: Any) -> tuple[int, Any]:
    if v is None:
        return (0, "")
    if _is_num(v):
        return (1, round(float(v), 6))
    return (2, str(v))


def _same(x: Any, y: Any) -> bool:
    if x is None or y is None:
        other = y if x is None else x
        return other is None or (_is_num(other) and other == 0)
    if _is_num(x) and _is_num(y):
        d = abs(float(x) - float(y))
        return d <= 1e-6 or d <= 0.01 * max(abs(float(x)), abs(float(y)))
    return x == y


def judge(gt: pd.DataFrame, got: pd.DataFrame, dropped: set[str] | None = None) -> bool:
    """Whether the produced frame is correct under the rules (see the module docstring)."""
    dropped = {d.lower() for d in dropped or set()}
    names = [c for c in gt.columns if str(c).lower() not in dropped]
    cols: dict[str, tuple[str, list[Any], list[Any]]] = {}
    for c in names:
        match = c if c in got.columns else next((g for g in got.columns if str(g).lower() == str(c).lower()), None)
        if match is None:
            return False
        cols[c] = _normalise([_plain(v) for v in gt[c]], [_plain(v) for v in got[match]])
    ident = [c for c in names if _identifying(c, *cols[c])]

    def kval(c: str, v: Any) -> Any:
        return (0.0 if v is None else float(v)) if cols[c][0] == "number" else v

    def prefer(c: str) -> tuple[int, int, int]:
        r = _id_rank(c)
        return (0, r, names.index(c)) if r is not None else (1 if cols[c][0] == "value" else 2, 0, names.index(c))

    key: list[str] = []
    for c in sorted(ident, key=prefer):
        vals = cols[c][1]
        if None not in vals and len({kval(c, v) for v in vals}) == len(vals):
            key = [c]
            break
    else:
        key = ident
    rest = [c for c in names if c not in key]
    n_e, n_a = len(gt), len(got)
    if not key:
        oe = sorted(range(n_e), key=lambda i: [_order(cols[c][1][i]) for c in names])
        oa = sorted(range(n_a), key=lambda j: [_order(cols[c][2][j]) for c in names])
        if n_e != n_a:
            return False
        pairs = list(zip(oe, oa, strict=True))
    else:
        buckets: dict[tuple[Any, ...], list[int]] = {}
        for j in sorted(range(n_a), key=lambda j: [_order(cols[c][2][j]) for c in rest]):
            buckets.setdefault(tuple(kval(c, cols[c][2][j]) for c in key), []).append(j)
        pairs = []
        for i in sorted(range(n_e), key=lambda i: [_order(cols[c][1][i]) for c in rest]):
            b = buckets.get(tuple(kval(c, cols[c][1][i]) for c in key))
            if not b:
                return False  # a missing row
            pairs.append((i, b.pop(0)))
        if any(buckets.values()):
            return False  # an extra row
    for c in names:
        kind, e, a = cols[c]
        if kind in ("number", "value"):
            ratios = [a[j] / e[i] for i, j in pairs if _is_num(e[i]) and _is_num(a[j]) and e[i] != 0 and a[j] != 0]
            if len(ratios) >= 3:
                med = statistics.median(ratios)
                if 95 <= med <= 105:
                    a = [v / 100 if _is_num(v) else v for v in a]
                elif 0.0095 <= med <= 0.0105:
                    a = [v * 100 if _is_num(v) else v for v in a]
        if not all(_same(e[i], a[j]) for i, j in pairs):
            return False
    return True


def evaluate_model(warehouse: Path, query: str, ground_truth: Path) -> bool:
    try:
        gt, got = _frames(warehouse, query, ground_truth)
    except Exception:  # noqa: BLE001 - an unreadable table or a failing query: wrong
        return False
    return judge(gt, got)


__all__ = ["evaluate_model", "judge"]
