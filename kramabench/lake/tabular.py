"""Shared table logic: header detection (title rows above the header) and column type inference.

Types are inferred from the cell text, so a snippet tells a model what pandas will *not* tell it by
default: thousands separators, decimal commas, percent signs, currency, missing-value markers such as
``M`` or ``NULL`` mixed into a numeric column.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from kramabench.files import clip

from .models import ColumnInfo

MISSING = {"", "na", "n/a", "nan", "null", "none", "-", "--", "?", ".", "#n/a", "nat", "missing"}

#: the kinds a value is recognised as, in the order they are tried: the first whose pattern matches (else "string")
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^[+-]?\d+$"), "integer"),
    # thousands separator, or a decimal comma with 3 decimals (decided per column)
    (re.compile(r"^[+-]?\d{1,3}(,\d{3})+$"), "integer,"),
    (re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$"), "float"),
    (re.compile(r"^[+-]?\d{1,3}(,\d{3})+\.\d+$"), "float,"),
    (re.compile(r"^[+-]?\d+,\d+$"), "decimal-comma"),
    (re.compile(r"^[+-]?\d{1,3}(\.\d{3})+,\d+$"), "decimal-comma"),
    (re.compile(r"^[+-]?\d+(?:[.,]\d+)?\s?%$"), "percent"),
    (
        re.compile(r"^[+-]?[$€£¥]\s?\d{1,3}(?:,?\d{3})*(?:\.\d+)?$|^[+-]?\d+(?:[.,]\d+)?\s?[$€£¥]$"),
        "currency",
    ),
    (
        re.compile(r"^\d{4}-\d{1,2}-\d{1,2}[ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$"),
        "datetime",
    ),
    (re.compile(r"^\d{4}-\d{1,2}-\d{1,2}$"), "date"),
    (
        re.compile(r"^\d{1,2}/\d{1,2}/\d{2,4}[ T]\d{1,2}:\d{2}(:\d{2})?(\s?[AaPp][Mm])?$"),
        "datetime (m/d/y or d/m/y)",
    ),
    (re.compile(r"^\d{1,2}/\d{1,2}/\d{2,4}$"), "date (m/d/y or d/m/y)"),
    (re.compile(r"^\d{1,2}\.\d{1,2}\.\d{4}$"), "date (d.m.y)"),
    (re.compile(r"^\d{1,2}:\d{2}(:\d{2})?$"), "time"),
)
_BOOL = {"true", "false"}


@functools.lru_cache(maxsize=1 << 16)
def is_missing(value: str) -> bool:
    if len(value) > 12:
        return not value.strip()
    return value.strip().lower() in MISSING


@functools.lru_cache(maxsize=1 << 16)
def _kind(v: str) -> str:
    s = v.strip()
    if "\u2212" in s:  # the Unicode minus sign of typeset tables: a number all the same
        s = s.replace("\u2212", "-")
    if not s:
        return "string"
    c = s[0]
    if c.isdigit() or (c in "+-." and len(s) > 1):
        body = s[1:] if c in "+-" else s
        if body.isdigit() and body.isascii():
            return "integer"
        if "," not in s and "_" not in s and body[:1] not in "iInN":
            try:
                float(s)
                return "float"
            except ValueError:
                pass
    elif c.isalpha():
        if s.lower() in _BOOL:
            return "boolean"
        return "string"
    for pattern, kind in _PATTERNS:
        if pattern.match(s):
            return kind
    return "string"


def _numeric(kind: str) -> bool:
    return kind in {"integer", "integer,", "float", "float,", "decimal-comma"}


_NUMERIC_KINDS = frozenset({"integer", "integer,", "float", "float,", "decimal-comma"})


def infer_text_dtype(values: Sequence[str]) -> tuple[str, list[str], int]:
    """(dtype, values not of that type, missing count) for cells given as text."""
    counts_by_value = Counter(values)
    missing = 0
    n_present = 0
    kind_of: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for v, n in counts_by_value.items():
        if is_missing(v):
            missing += n
            continue
        k = _kind(v)
        kind_of[v] = k
        counts[k] += n
        n_present += n
    if not n_present:
        return "empty", [], missing
    num = sum(n for k, n in counts.items() if k in _NUMERIC_KINDS)
    dtype: str
    if num and num >= 0.5 * n_present:
        non_numeric = [v for v, k in kind_of.items() if k not in _NUMERIC_KINDS]
        numeric_ok = num >= 0.8 * n_present or len({v.strip() for v in non_numeric}) <= 3
    else:
        numeric_ok = False
    if numeric_ok:
        if counts.get("decimal-comma", 0):
            dtype = "float (decimal comma)"
        elif counts.get("float,", 0) or (counts.get("float", 0) and counts.get("integer,", 0)):
            dtype = "float (thousands separator ',')"
        elif counts.get("integer,", 0):
            dtype = "integer (thousands separator ',')"
        elif counts.get("float", 0):
            dtype = "float"
        elif any(
            len(v) > 1 and v.lstrip()[:1] == "0" and v.strip()[1:2].isdigit()
            for v, k in kind_of.items()
            if k == "integer"
        ):
            dtype = "integer-like code with leading zeros"
        else:
            dtype = "integer"
        outliers = [v for v, k in kind_of.items() if k not in _NUMERIC_KINDS]
    else:
        top, n = counts.most_common(1)[0]
        if n >= 0.8 * n_present and top not in {"integer,", "float,"}:
            dtype = top
            outliers = [v for v, k in kind_of.items() if k != top]
        else:
            dtype = "string"
            outliers = []
    if dtype != "string" and any("\u2212" in v for v in kind_of):
        dtype += " (written with the Unicode minus sign '\u2212')"
    if dtype == "string":
        distinct = len({v.strip() for v in kind_of})
        if n_present >= 20 and distinct <= max(3, n_present // 10):
            dtype = f"string, {distinct} distinct value{'s' if distinct != 1 else ''} in sample"
    other = list(dict.fromkeys(v.strip() for v in outliers))[:5]
    return dtype, other, missing


def _py_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "integer" if math.isfinite(v) and v.is_integer() else "float"
    if isinstance(v, _dt.datetime):
        return "date" if (v.hour, v.minute, v.second, v.microsecond) == (0, 0, 0, 0) else "datetime"
    if isinstance(v, _dt.date):
        return "date"
    if isinstance(v, _dt.time):
        return "time"
    return "text"


def infer_cell_dtype(values: Sequence[Any]) -> tuple[str, list[str], int]:
    """Like :func:`infer_text_dtype` for typed cells (spreadsheets, JSON): Python values or None."""
    present = [v for v in values if v is not None and not (isinstance(v, str) and is_missing(v))]
    missing = len(values) - len(present)
    if not present:
        return "empty", [], missing
    kinds = [_py_kind(v) for v in present]
    if all(k == "text" for k in kinds):
        return infer_text_dtype([str(v) for v in values if v is not None])
    counts = Counter(kinds)
    if (
        counts.get("float")
        and counts.get("integer")
        and counts["float"] + counts["integer"] >= 0.8 * len(present)
    ):
        top = "float"
        n = counts["float"] + counts["integer"]
    else:
        top, n = counts.most_common(1)[0]
    if top == "text" or n < 0.8 * len(present):
        texts = [cell_text(v) for v in present]
        dtype, _, _ = infer_text_dtype(texts)
        return (dtype if dtype != "string" else "mixed"), [], missing
    if top == "float":
        outliers = [
            cell_text(v) for v, k in zip(present, kinds, strict=True) if k not in {"float", "integer"}
        ]
    else:
        outliers = [cell_text(v) for v, k in zip(present, kinds, strict=True) if k != top]
    return top, list(dict.fromkeys(outliers))[:5], missing


def cell_text(v: Any, limit: int | None = None) -> str:
    """A cell as it should appear in a preview."""
    if v is None:
        s = ""
    elif isinstance(v, float):
        s = repr(v) if not v.is_integer() or abs(v) >= 1e16 else str(int(v))
    elif isinstance(v, _dt.datetime):
        s = (
            v.isoformat(sep=" ")
            if (v.hour, v.minute, v.second, v.microsecond) != (0, 0, 0, 0)
            else v.date().isoformat()
        )
    elif isinstance(v, (_dt.date, _dt.time)):
        s = v.isoformat()
    else:
        s = str(v)
    s = s.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return s if limit is None else clip(s, limit)


def _nonempty(row: Sequence[Any]) -> int:
    return sum(1 for c in row if c is not None and str(c).strip() != "")


def _looks_numeric(c: Any) -> bool:
    if isinstance(c, (int, float)) and not isinstance(c, bool):
        return True
    if isinstance(c, str):
        return _numeric(_kind(c))
    return False


def _year_like(c: Any) -> bool:
    try:
        v = float(str(c).strip())
    except ValueError:
        return False
    return v.is_integer() and 1800 <= v <= 2100


def find_header(rows: Sequence[Sequence[Any]]) -> tuple[int | None, int]:
    """(header index or None, index of the first data row) in the first rows of a table.

    Title lines above the header (``"Number of reports by year",`` then a blank line) are skipped:
    the header is the first row that fills most of the table's typical width. No header is
    reported when that row is mostly numeric.
    """
    if not rows:
        return None, 0
    counts = [_nonempty(r) for r in rows]
    nonblank = [c for c in counts if c > 0]
    if not nonblank:
        return None, len(rows)
    # the typical width: the most common count among the widest rows of the sample
    typical = Counter(nonblank).most_common()
    width = max(c for c, n in typical if n >= max(1, typical[0][1] // 3))
    need = max(1, math.ceil(0.6 * width)) if width > 1 else 1
    start = next(i for i, c in enumerate(counts) if c >= need)
    cells = [c for c in rows[start] if c is not None and str(c).strip() != ""]
    following = [r for r in rows[start + 1 : start + 21] if _nonempty(r)]
    if cells and all(_looks_numeric(c) for c in cells) and not all(_year_like(c) for c in cells):
        if following and all(sum(1 for c in r if _looks_numeric(c)) >= 0.5 * _nonempty(r) for r in following):
            return None, start  # a numeric first row followed by numeric rows: data, not a header
    if _fits_the_data(rows[start], following):
        return None, start  # the first row is typed like the rows below it (1,alpha,0.5): data
    return start, start + 1


def _fits_the_data(first: Sequence[Any], following: Sequence[Sequence[Any]]) -> bool:
    """A first row that is data, not a header: in every column whose cells below are numbers, its cell
    is a number too (and they are not all years, which name columns: ``Name,2019,2020``). In a table
    of text columns only (a sheet listing gene names), its cells are written like the cells below them
    (:func:`_text_fits`)."""
    if len(following) < 2:
        return False
    numeric_cells = []
    text_columns: list[tuple[Any, list[Any]]] = []
    for j, c in enumerate(first):
        below = [r[j] for r in following if j < len(r) and r[j] is not None and str(r[j]).strip()]
        if len(below) < 2:
            continue
        numbers = sum(1 for v in below if _looks_numeric(v))
        if numbers < 0.5 * len(below):
            text_columns.append((c, below))
            continue  # a text column
        if c is None or not str(c).strip() or not _looks_numeric(c):
            return False  # a name (or nothing) above numbers: a header
        if numbers >= 0.9 * len(below):
            numeric_cells.append(c)
    if numeric_cells:
        return not all(_year_like(c) for c in numeric_cells)
    return bool(text_columns) and all(_text_fits(c, below) for c, below in text_columns)


#: words a column is named with; a first-row cell made of them only is a header, whatever lies below
HEADER_WORDS = frozenset(
    """
name names id ids idx index key code codes label labels title type types kind category categories class group
description desc note notes comment comments remark remarks source sources reference references ref status
value values count counts number total amount score rank level unit units
date year month day time period start end
gene genes symbol symbols protein proteins peptide peptides sample samples patient patients subject case cases
sequence feature features variable variables item items entry entries field fields sheet sheets
country countries state states city cities region regions site sites location address county province
species family genus organism
""".split()
)


def _words(s: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()) if w]


def shape(s: str) -> str:
    """How a text is written: letters by case, digits and other characters by class, runs collapsed
    (``BRD8`` -> ``A9``, ``C3L-00006`` -> ``A9A-9``, ``Gene`` -> ``Aa``)."""
    out: list[str] = []
    for ch in s.strip():
        k = (
            "A"
            if ch.isupper()
            else "a"
            if ch.islower()
            else "9"
            if ch.isdigit()
            else " "
            if ch.isspace()
            else ch
        )
        if not out or out[-1] != k:
            out.append(k)
    return "".join(out)


def _text_fits(first: Any, below: Sequence[Any]) -> bool:
    """A first-row cell of a text column that is data: present, not a column name made of naming words
    only (``Gene``, ``Sample ID``), written like some cell below it (``BRD8`` over ``DHX15``, ``SSB``)."""
    if first is None or not str(first).strip() or _looks_numeric(first):
        return False
    text = str(first)
    words = _words(text)
    if words and all(w in HEADER_WORDS for w in words):
        return False
    # a cell equal to the first is no evidence (a header repeated above a second table in the sheet)
    return shape(text) in {shape(str(v)) for v in below if str(v) != text}


def header_names(row: Sequence[Any] | None, width: int) -> list[str]:
    names: list[str] = []
    seen: Counter[str] = Counter()
    for i in range(width):
        raw = row[i] if row is not None and i < len(row) else None
        name = cell_text(raw).strip() if raw is not None else ""
        if not name:
            name = f"column {i + 1}" if row is None else f"(unnamed {i + 1})"
        seen[name] += 1
        if seen[name] > 1:
            name = f"{name}.{seen[name] - 1}"
        names.append(name)
    return names


def describe_columns(
    names: Sequence[str],
    data: Sequence[Sequence[Any]],
    *,
    typed: bool,
    max_cell_chars: int,
    n_examples: int = 3,
) -> list[ColumnInfo]:
    cols: list[ColumnInfo] = []
    width = len(names)
    columns: list[list[Any]]  # cells as read (typed), or as text
    if typed:
        columns = [[r[j] if j < len(r) else None for r in data] for j in range(width)]
    else:
        # text rows (csv): pad short rows once, then transpose at C speed
        padded = [r if len(r) >= width else list(r) + [""] * (width - len(r)) for r in data]
        columns = (
            [list(c) for c in zip(*padded, strict=False)][:width] if padded else [[] for _ in range(width)]
        )
        while len(columns) < width:
            columns.append([""] * len(data))
    for j, name in enumerate(names):
        values = columns[j]
        if typed:
            dtype, other, missing = infer_cell_dtype(values)
            texts = [cell_text(v) for v in values if v is not None and cell_text(v).strip()]
        else:
            svals = values
            dtype, other, missing = infer_text_dtype(svals)
            texts = []
            for v in dict.fromkeys(svals):  # distinct values in order of appearance
                if not is_missing(v):
                    texts.append(v.strip())
                    if len(texts) >= n_examples * 2:
                        break
        examples = [cell_text(v, max_cell_chars) for v in list(dict.fromkeys(texts))[:n_examples]]
        cols.append(
            ColumnInfo(
                name=cell_text(name, max_cell_chars * 2),
                dtype=dtype,
                examples=examples,
                missing=missing,
                other_values=[cell_text(v, max_cell_chars) for v in other],
            )
        )
    return cols


__all__ = [
    "MISSING",
    "cell_text",
    "describe_columns",
    "find_header",
    "header_names",
    "infer_cell_dtype",
    "infer_text_dtype",
    "is_missing",
]
