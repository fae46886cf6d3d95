"""Values of a compared table, made comparable: a warehouse's typed values and a ground-truth CSV's text.

Canonical values are ``None`` (NULL; a float NaN is NULL too), ``bool``, ``int``, ``float`` and ``str``.
A warehouse's ``Decimal`` becomes a float, a date becomes ``YYYY-MM-DD``, a timestamp
``YYYY-MM-DD HH:MM:SS[.ffffff]`` (trailing zeros of the fraction dropped), a time ``HH:MM:SS[.ffffff]``,
a list or struct its JSON text. A ground-truth CSV column is read as text and typed as a whole: empty is
NULL; a column whose every other value is ``true``/``false`` (any case) is boolean, one whose every value is
a whole number is integer, one whose every value is a number is float, else text (dates stay text; they
compare with a warehouse's dates as text).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_BOOL = {"true": True, "false": False}
_NULL_TEXT = {"", "nan", "NaN", "NULL", "null", "None", "<NA>"}


def _ts_text(v: dt.datetime) -> str:
    text = v.replace(tzinfo=None).isoformat(sep=" ")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if v.tzinfo is not None:
        off = v.utcoffset()
        if off:
            sign = "+" if off >= dt.timedelta(0) else "-"
            mins = abs(int(off.total_seconds())) // 60
            text += f"{sign}{mins // 60:02d}:{mins % 60:02d}"
    return text


def from_db(v: Any) -> Any:
    """A warehouse value as a canonical value."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return None if math.isnan(v) else v
    if isinstance(v, Decimal):
        f = float(v)
        return None if math.isnan(f) else f
    if isinstance(v, str):
        return v
    if isinstance(v, dt.datetime):
        return _ts_text(v)
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, dt.time):
        text = v.isoformat()
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(v, dt.timedelta):
        return str(v)
    if isinstance(v, bytes | bytearray | memoryview):
        return bytes(v).hex()
    item = getattr(v, "item", None)  # numpy scalars
    if callable(item):
        return from_db(item())
    try:
        return json.dumps(v, default=str, sort_keys=True)
    except (TypeError, ValueError):
        return str(v)


def type_column(texts: list[str | None]) -> list[Any]:
    """A CSV column's texts as canonical values, typed as a whole (see the module docstring)."""
    vals = [None if t is None or t.strip() in _NULL_TEXT else t for t in texts]
    present = [v for v in vals if v is not None]
    if not present:
        return [None] * len(vals)
    if all(v.strip().lower() in _BOOL for v in present):
        return [None if v is None else _BOOL[v.strip().lower()] for v in vals]
    if all(_INT.match(v.strip()) for v in present):
        return [None if v is None else int(v.strip()) for v in vals]
    if all(_FLOAT.match(v.strip()) or v.strip().lower() in ("inf", "-inf", "infinity", "-infinity") for v in present):
        return [None if v is None else float(v.strip()) for v in vals]
    return vals


class Table:
    """Named columns and rows of canonical values."""

    def __init__(self, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
        self.columns = list(columns)
        self.rows = [tuple(r) for r in rows]

    def __len__(self) -> int:
        return len(self.rows)

    def index(self, name: str) -> int | None:
        """The position of a column, found without regard to letter case (None: absent)."""
        low = name.lower()
        for i, c in enumerate(self.columns):
            if c.lower() == low:
                return i
        return None

    def column(self, i: int) -> list[Any]:
        return [r[i] for r in self.rows]

    @classmethod
    def from_db(cls, columns: list[str], rows: list[tuple[Any, ...]]) -> Table:
        return cls(columns, [tuple(from_db(v) for v in r) for r in rows])

    @classmethod
    def from_csv(cls, path: Path) -> Table:
        """A ground-truth CSV (header row first) with its columns typed as wholes."""
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                return cls([], [])
            raw = [r + [None] * (len(header) - len(r)) if len(r) < len(header) else r[: len(header)] for r in reader]
        cols = [type_column([r[i] for r in raw]) for i in range(len(header))]
        rows = [tuple(c[j] for c in cols) for j in range(len(raw))]
        return cls(header, rows)

    @classmethod
    def from_records(cls, columns: list[str], rows: list[list[Any] | tuple[Any, ...]]) -> Table:
        """From Python values (tests, predictions): each value made canonical as a warehouse's would be."""
        return cls.from_db(columns, [tuple(r) for r in rows])


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


__all__ = ["Table", "from_db", "is_number", "type_column"]
