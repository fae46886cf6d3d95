"""A test oracle: ELT-Bench-Verified's stage-2 evaluation of a data model, re-implemented from its published
rules (the facts; written here independently of kramabench's ``verified`` comparator and of docs/elt.md), on
pandas frames, with kramabench's named differences as switches.

Sources (uiuc-kang-lab/ELT-Bench): the document ``reproducibility_artifacts/evastage2_changes.md`` ("doc"
below, by section), the revised ``evaluation/eva_stage2.py`` it describes (commit ec659484, "code"; read for
what the document leaves out, never copied) and ``evaluation/compute_metrics.py`` (commit f6ceae42):

* reading (code, as the original's): the query's result through ``pandas.read_sql`` -> ``to_csv(index=False)``
  -> ``read_csv``; the ground truth through ``read_csv``; an exception is the model's failure (``Error:``);
* duplicate rows (code ``normalize_dataframe``): each frame's duplicate rows dropped first;
* row alignment (doc 2.3, 2.4; the rest from the code): the common columns, by exact name, sorted. Surrogate
  names (``^unique_.*``, ``.*_surrogate.*``, ``.*_hash.*``, lower case, ``re.match``) are never the key.
  The key is the first of them named ``.*_id$``/``.*id$``/``^id$`` whose ground-truth values are at least 80%
  distinct (``nunique() >= 0.8 * rows``, NULL not counted), else the first named ``.*_code$``/``.*_key$``/
  ``.*_name$``/``^name$`` that is, else the first column that is; the key column becomes text on both sides
  (``astype(str)``, kept so for the comparison). Then: when neither side repeats a key, the rows whose key both
  sides have, each side sorted by the key (the others dropped); when one repeats a key and the row counts are
  equal, both sides sorted by all common columns; when the counts differ, each side's first row per key, those
  whose key both sides have, sorted by the key; when no rows remain, no key, or a sort fails: both sorted by
  all common columns (unsorted when that fails). Sides of different lengths fail every column (code);
* per ground-truth column (a column the result lacks under its exact name is *missed*), ``vectors_match`` of
  the two aligned columns (code; doc 2.1, 2.2, 2.5, 2.6, 2.7 for the pieces):
  - quotes (doc 2.1): a text of length >= 2 wrapped in matching ``"`` or ``'`` loses them;
  - timestamps (doc 2.2; the column test ``is_timestamp_column`` from the code): when the first non-NULL
    value of either side is a text that ``re.match``es ``\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}:\\d{2}`` or
    ``\\d{4}-\\d{2}-\\d{2}$``, both raw sides are read with ``pd.to_datetime`` (a failure keeps the raw
    value) and floored to the day when exactly one side is date-only (> 80% of its non-NULL values, stripped,
    match ``^\\d{4}-\\d{2}-\\d{2}$``), else to the second;
  - booleans (doc 2.6; "at most two distinct values" only in the code): when either raw side holds only
    booleans, 0/1 numbers and the texts true/false/1/0/yes/no (lower-cased, stripped), at most two distinct,
    both raw sides map those to 1/0 (``'t'`` and ``'f'`` are not boolean);
  - percentage scale (doc 2.5): ``pd.to_numeric(errors='coerce')`` of both; pairs with both numbers and a
    ground truth not 0; at least 3; median of produced/expected in [95, 105]: produced / 100; in
    [0.0095, 0.0105]: produced / 0.01;
  - each pair (doc 2.5, 2.7; order, ``tol`` = 1e-7 and the zero cases from the code): both NULL match; NULL
    or ``== 0`` on both sides match; one NULL fails; both numbers (numbers, or texts ``float()`` reads after
    ``strip()``): both 0 match, one 0 matches when the other is within ``tol``, else relative difference
    (of the larger magnitude) <= 0.01, or ``|a - b| <= tol``, or ``< 1e-6``; two ``Timestamp``s when ``==``;
    else ``str(a) == str(b)`` or equal in lower case (the code's last test: letter case never matters);
  - a column matches when every pair does (no pairs: it matches);
* the verdict (compute_metrics.py): at least one matched column, none unmatched, none missed.

``differences``: kramabench's named differences to apply (docs/elt.md): ``rows`` (no duplicate row dropped;
a row left unpaired by the alignment makes the model wrong), ``key`` (the alignment on identifying columns
below instead of Verified's), ``case`` (a ground-truth column absent under its exact name found without regard
to case). Identifying alignment, as docs/elt.md states it: a column is identifying unless its name is a
surrogate's or it is boolean (as above); it is when the ground truth holds text in it, or when its name is an
identifier's or a code's (``id``, ``*_id``, ``*id``, ``code``, ``*_code``, ``key``, ``*_key``) and every
ground-truth value is a whole number. Preference: identifier/code names (in that order of patterns), then text,
then timestamps (columns as above), then ground-truth position. The key is the first whose ground-truth
values are non-NULL and distinct, else all identifying columns, else none. Values are keyed after the column's
normalisation over the whole columns (quotes, timestamps, booleans): NULL and 0 alike, numbers (and numeric
texts) as floats, texts in lower case. Rows sharing a key pair in the order of their other columns' values
(NULL, then numbers, then times, then texts in lower case); without a key both sides are sorted by every
column and paired in order.
"""

from __future__ import annotations

import math
import re
import tempfile
import warnings
from itertools import combinations
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

DIFFERENCES = ("rows", "key", "case")

SKIP = (r"^unique_.*", r".*_surrogate.*", r".*_hash.*")
ID_PASS = (r".*_id$", r".*id$", r"^id$")
OTHER_PASS = (r".*_code$", r".*_key$", r".*_name$", r"^name$")
TIME_FIRST = (r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}", r"\d{4}-\d{2}-\d{2}$")
DAY = r"^\d{4}-\d{2}-\d{2}$"
TRUE_WORDS, FALSE_WORDS = ("true", "1", "yes"), ("false", "0", "no")
TOL = 1e-7


def frames(warehouse: Path, query: str, ground_truth: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(ground truth, result) as Verified reads them; raises what pandas or DuckDB raise."""
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


# -- the column comparison ------------------------------------------------------------------------------------


def _na(x: Any) -> bool:
    r = pd.isna(x)
    return bool(r) if isinstance(r, (bool, np.bool_)) else False


def _dequote(x: Any) -> Any:
    if isinstance(x, str) and len(x) > 1 and x[0] in "\"'" and x[-1] == x[0]:
        return x[1:-1]
    return x


def _time_like(s: pd.Series) -> bool:
    present = s.dropna()
    if present.empty:
        return False
    head = present.iloc[0]
    return isinstance(head, str) and any(re.match(p, str(head)) for p in TIME_FIRST)


def _days_only(s: pd.Series) -> bool:
    present = s.dropna()
    if present.empty:
        return False
    hits = [isinstance(x, str) and re.match(DAY, x.strip()) is not None for x in present]
    return sum(hits) / len(present) > 0.8


def _as_time(x: Any, unit: str) -> Any:
    if _na(x):
        return x
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pd.to_datetime(x).floor(unit)
    except Exception:  # noqa: BLE001 - a value pandas cannot read stays as it is
        return x


def _booleanish(s: pd.Series) -> bool:
    present = s.dropna()
    if present.empty:
        return False
    kinds: set[Any] = set()
    for x in present:
        if isinstance(x, (bool, np.bool_)):
            kinds.add(bool(x))
        elif isinstance(x, str):
            w = x.lower().strip()
            if w not in TRUE_WORDS + FALSE_WORDS:
                return False
            kinds.add(w)
        elif isinstance(x, (int, float, np.integer, np.floating)):
            if x not in (0, 1):
                return False
            kinds.add(int(x))
        else:
            return False
    return len(kinds) <= 2


def _as_bit(x: Any) -> Any:
    if _na(x):
        return x
    if isinstance(x, (bool, np.bool_)):
        return int(bool(x))
    if isinstance(x, str):
        w = x.lower().strip()
        return 1 if w in TRUE_WORDS else 0 if w in FALSE_WORDS else x
    if isinstance(x, (int, float, np.integer, np.floating)) and x in (0, 1):
        return int(x)
    return x


def _scale(expected: pd.Series, produced: pd.Series) -> float:
    e = pd.to_numeric(expected, errors="coerce")
    p = pd.to_numeric(produced, errors="coerce")
    ok = e.notna() & p.notna() & (e != 0)
    if ok.sum() < 3:
        return 1.0
    med = (p[ok] / e[ok]).median()
    if 95 <= med <= 105:
        return 100.0
    if 0.0095 <= med <= 0.0105:
        return 0.01
    return 1.0


def _number(x: Any) -> float | None:
    if _na(x):
        return None
    if isinstance(x, (int, float, np.integer, np.floating)):  # a bool is an int
        return float(x)
    if isinstance(x, str):
        try:
            return float(x.strip())
        except ValueError:
            return None
    return None


def _pair_ok(a: Any, b: Any) -> bool:
    if _na(a) and _na(b):
        return True
    if (_na(a) or bool(a == 0)) and (_na(b) or bool(b == 0)):
        return True
    if _na(a) or _na(b):
        return False
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        if x == 0 or y == 0:
            return (x == 0 and y == 0) or abs(x - y) <= TOL
        gap = abs(x - y)
        return gap / max(abs(x), abs(y)) <= 0.01 or gap <= TOL or gap < 1e-6
    if isinstance(a, pd.Timestamp) and isinstance(b, pd.Timestamp):
        return bool(a == b)
    return str(a) == str(b) or str(a).lower() == str(b).lower()


def _normalised(expected: pd.Series, produced: pd.Series) -> tuple[pd.Series, pd.Series, str]:
    """The two columns after quotes, timestamps and booleans, and which applied ('text', 'time', 'bool')."""
    ne, np_, kind = expected.apply(_dequote), produced.apply(_dequote), "text"
    if _time_like(expected) or _time_like(produced):
        unit = "D" if _days_only(expected) != _days_only(produced) else "s"
        ne, np_, kind = expected.apply(_as_time, unit=unit), produced.apply(_as_time, unit=unit), "time"
    if _booleanish(expected) or _booleanish(produced):
        ne, np_, kind = expected.apply(_as_bit), produced.apply(_as_bit), "bool"
    return ne, np_, kind


def column_matches(expected: pd.Series, produced: pd.Series) -> bool:
    """Verified's comparison of two aligned columns."""
    expected, produced = expected.reset_index(drop=True), produced.reset_index(drop=True)
    if len(expected) != len(produced):
        return False
    ne, np_, _ = _normalised(expected, produced)
    factor = _scale(ne, np_)
    if factor != 1.0:
        np_ = pd.to_numeric(np_, errors="coerce") / factor
    return all(_pair_ok(a, b) for a, b in zip(ne, np_, strict=True))


# -- Verified's alignment ----------------------------------------------------------------------------------------


def _first_key(gt: pd.DataFrame, names: list[str]) -> str | None:
    def fits(c: str) -> bool:
        return gt[c].nunique() >= len(gt) * 0.8

    usable = [c for c in names if not any(re.match(p, c.lower()) for p in SKIP)]
    for patterns in (ID_PASS, OTHER_PASS):
        for c in usable:
            if any(re.match(p, c.lower()) for p in patterns) and fits(c):
                return c
    return next((c for c in usable if fits(c)), None)


#: an alignment: (the ground truth and the result as compared, their rows' labels in aligned order, the rows of
#: either side left out)
Alignment = tuple[pd.DataFrame, pd.DataFrame, list[Any], list[Any], int]


def verified_alignment(gt: pd.DataFrame, got: pd.DataFrame) -> Alignment:
    """Verified's ``align_dataframes_by_key`` (its key column made text in the frames returned)."""

    def rows(*frames: pd.DataFrame) -> Alignment:
        return gt, got, list(frames[0].index), list(frames[1].index), abs(len(gt) - len(got))

    common = sorted(set(gt.columns) & set(got.columns))
    if not common:
        return rows(gt, got)
    k = _first_key(gt, common)
    if k is not None:
        gt[k], got[k] = gt[k].astype(str), got[k].astype(str)
        repeats = gt[k].duplicated().any() or got[k].duplicated().any()
        if repeats and len(gt) == len(got):
            try:
                return rows(gt.sort_values(by=common), got.sort_values(by=common))
            except Exception:  # noqa: BLE001 - Verified goes on to its last resort
                pass
        else:
            try:
                g1, p1 = (
                    (gt.drop_duplicates(subset=[k]), got.drop_duplicates(subset=[k]))
                    if repeats
                    else (gt, got)
                )
                both = set(g1[k]) & set(p1[k])
                if both:
                    ga = g1[g1[k].isin(both)].sort_values(by=k)
                    pa = p1[p1[k].isin(both)].sort_values(by=k)
                    return gt, got, list(ga.index), list(pa.index), len(gt) - len(ga) + len(got) - len(pa)
            except Exception:  # noqa: BLE001
                pass
    try:
        return rows(gt.sort_values(by=common), got.sort_values(by=common))
    except Exception:  # noqa: BLE001
        return rows(gt, got)


# -- kramabench's alignment on identifying columns (the difference "key") ---------------------------------------

ID_NAMES = (r"^id$", r".*_id$", r".*id$", r"^(.*_)?code$", r"^(.*_)?key$")


def _token(x: Any) -> Any:
    """A value as a key part: NULL and 0 alike, numbers and numeric texts as floats, texts in lower case."""
    if isinstance(x, pd.Timestamp):
        return ("time", x)
    n = _number(x)
    if _na(x) or (n is not None and not math.isnan(n) and n == 0):
        return "NULL/0"
    if n is not None and not math.isnan(n):
        return n
    return ("text", str(x).lower())


def _rank(x: Any) -> tuple[Any, ...]:
    if _na(x):
        return (0,)
    if isinstance(x, pd.Timestamp):
        return (2, str(x))
    if isinstance(x, (int, float, np.integer, np.floating)):
        return (1, float(x))
    return (3, str(x).lower(), str(x))


def identifying_alignment(gt: pd.DataFrame, got: pd.DataFrame) -> Alignment:
    """kramabench's alignment (module docstring); ``identifying_key`` names the key it chose."""
    return _identifying(gt, got)[0]


def identifying_key(gt: pd.DataFrame, got: pd.DataFrame) -> list[str]:
    return _identifying(gt, got)[1]


def _identifying(gt: pd.DataFrame, got: pd.DataFrame) -> tuple[Alignment, list[str]]:
    names = [c for c in gt.columns if c in got.columns]
    whole = {c: _normalised(gt[c].reset_index(drop=True), got[c].reset_index(drop=True)) for c in names}
    prefs: list[tuple[tuple[int, int, int], str]] = []
    for pos, c in enumerate(names):
        low = c.lower()
        if any(re.match(p, low) for p in SKIP) or whole[c][2] == "bool":
            continue
        named = next((r for r, p in enumerate(ID_NAMES) if re.match(p, low)), None)
        present = gt[c].dropna().tolist()
        if any(isinstance(x, str) for x in present):
            prefs.append(
                ((0, named, pos) if named is not None else (2 if whole[c][2] == "time" else 1, 0, pos), c)
            )
        elif named is not None and all(float(x).is_integer() for x in present):
            prefs.append(((0, named, pos), c))
    prefs.sort()
    key: list[str] = []
    for _, c in prefs:
        tokens = [_token(x) for x in whole[c][0]]
        if gt[c].notna().all() and len(set(tokens)) == len(tokens):
            key = [c]
            break
    else:
        key = [c for c in names if c in {c for _, c in prefs}]
    rest = [c for c in names if c not in key]

    def order(side: int, cols: list[str], n: int) -> list[int]:
        ranks = [[_rank(x) for x in whole[c][side]] for c in cols]
        return sorted(range(n), key=lambda i: [r[i] for r in ranks])

    if not key:
        og, op = order(0, names, len(gt)), order(1, names, len(got))
        n = min(len(og), len(op))
        pairs = sorted(zip(og[:n], op[:n], strict=True))
    else:
        keys_g = list(zip(*[[_token(x) for x in whole[c][0]] for c in key], strict=True))
        keys_p = list(zip(*[[_token(x) for x in whole[c][1]] for c in key], strict=True))
        waiting: dict[Any, list[int]] = {}
        for j in order(1, rest, len(got)):
            waiting.setdefault(keys_p[j], []).append(j)
        pairs = []
        for i in order(0, rest, len(gt)):
            queue = waiting.get(keys_g[i])
            if queue:
                pairs.append((i, queue.pop(0)))
        pairs.sort()
    gi, pj = [gt.index[i] for i, _ in pairs], [got.index[j] for _, j in pairs]
    return (gt, got, gi, pj, len(gt) - len(pairs) + len(got) - len(pairs)), key


# -- the verdict -----------------------------------------------------------------------------------------------


def judge(
    gt: pd.DataFrame,
    got: pd.DataFrame,
    differences: frozenset[str] | set[str] = frozenset(),
    dropped: set[str] | None = None,
) -> bool:
    """Whether the result is correct under Verified's rules with ``differences`` applied; ``dropped``: ground-truth
    columns an errata set leaves out (lower case)."""
    gone = {d.lower() for d in dropped or set()}
    gt = gt[[c for c in gt.columns if str(c).lower() not in gone]].copy()
    got = got.copy()
    if "case" in differences:
        rename: dict[str, str] = {}
        for c in gt.columns:
            if c not in got.columns:
                other = next(
                    (g for g in got.columns if str(g).lower() == str(c).lower() and g not in rename), None
                )
                if other is not None:
                    rename[other] = c
        got = got.rename(columns=rename)
    if "rows" not in differences:
        gt, got = gt.drop_duplicates(), got.drop_duplicates()
    align = identifying_alignment if "key" in differences else verified_alignment
    g, p, gi, pj, left_out = align(gt, got)
    ga, pa = g.loc[gi].reset_index(drop=True), p.loc[pj].reset_index(drop=True)
    if "rows" in differences and left_out:
        return False
    matched = unmatched = missed = 0
    for c in ga.columns:
        if c not in pa.columns:
            missed += 1
        elif column_matches(ga[c], pa[c]):
            matched += 1
        else:
            unmatched += 1
    return matched > 0 and unmatched == 0 and missed == 0


def evaluate_model(
    warehouse: Path,
    query: str,
    ground_truth: Path,
    differences: frozenset[str] | set[str] = frozenset(DIFFERENCES),
) -> bool:
    try:
        gt, got = frames(warehouse, query, ground_truth)
    except Exception:  # noqa: BLE001 - an unreadable table or a failing query: wrong
        return False
    return judge(gt, got, differences)


def deciding(gt: pd.DataFrame, got: pd.DataFrame) -> tuple[bool, bool, list[str]]:
    """(Verified's own verdict, the verdict with every named difference, what turns Verified's verdict around):
    the differences that do it alone (``rows``, ``key``), else the smallest sets that do it together
    (``rows+key``)."""
    own = judge(gt, got)
    full = judge(gt, got, frozenset(DIFFERENCES))
    for size in range(1, len(DIFFERENCES) + 1):
        found = ["+".join(c) for c in combinations(DIFFERENCES, size) if judge(gt, got, frozenset(c)) != own]
        if found:
            return own, full, found
    return own, full, []


__all__ = [
    "DIFFERENCES",
    "Alignment",
    "column_matches",
    "deciding",
    "evaluate_model",
    "frames",
    "identifying_alignment",
    "identifying_key",
    "judge",
    "verified_alignment",
]
