"""Values of a compared table: a warehouse's typed values made canonical, and the table's original view.

Canonical values are ``None`` (NULL; a float NaN is NULL too), ``bool``, ``int``, ``float`` and ``str``.
A warehouse's ``Decimal`` becomes a float, a date becomes ``YYYY-MM-DD``, a timestamp
``YYYY-MM-DD HH:MM:SS[.ffffff]`` (trailing zeros of the fraction dropped), a time ``HH:MM:SS[.ffffff]``,
a list or struct its JSON text: how a produced table is shown and recorded.

What the comparators compare is each table's *original view* (:meth:`Table.original`): the table as
ELT-Bench's evaluation reads it, through pandas' CSV round trip (:mod:`kramabench.elt.compare.original`);
a ground-truth CSV is read that way directly (:meth:`Table.from_csv`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any


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


class Table:
    """Named columns and rows of canonical values.

    ``original_csv``: the table as ELT-Bench's evaluation reads it (:mod:`kramabench.elt.compare.original`),
    when known: a CSV file's path (a ground truth) or CSV text (a query's result as ``read_sql`` and
    ``to_csv`` wrote it in the warehouse reader); otherwise it is rendered from the values the table was made
    from. :meth:`original` is that view, read with ``read_csv``: what both comparators compare."""

    def __init__(
        self,
        columns: list[str],
        rows: list[tuple[Any, ...]],
        *,
        original_csv: str | Path | None = None,
        raw: list[tuple[Any, ...]] | None = None,
        is_original: bool = False,
    ) -> None:
        self.columns = list(columns)
        self.rows = [tuple(r) for r in rows]
        self.original_csv = original_csv
        self._raw = raw
        self._original: Table | None = self if is_original else None

    def __len__(self) -> int:
        return len(self.rows)

    def index(self, name: str) -> int | None:
        """The position of a column: by its exact name, else without regard to letter case (None: absent)."""
        if name in self.columns:
            return self.columns.index(name)
        low = name.lower()
        for i, c in enumerate(self.columns):
            if c.lower() == low:
                return i
        return None

    def column(self, i: int) -> list[Any]:
        return [r[i] for r in self.rows]

    def original(self) -> Table:
        """This table through ELT-Bench's CSV round trip (``read_csv`` of what ``to_csv`` wrote, or of the ground
        truth's file): missing values as None. Raises
        :class:`~kramabench.elt.compare.original.OriginalUnreadable` when ``read_csv`` refuses it."""
        if self._original is None:
            from kramabench.elt.compare.original import read_original, render_result

            src = self.original_csv
            if src is None:
                src = render_result(self.columns, self._raw if self._raw is not None else self.rows)
            cols, rows = read_original(src)
            self._original = Table(cols, rows, original_csv=src, is_original=True)
        return self._original

    @classmethod
    def from_db(cls, columns: list[str], rows: list[tuple[Any, ...]]) -> Table:
        return cls(columns, [tuple(from_db(v) for v in r) for r in rows], raw=[tuple(r) for r in rows])

    @classmethod
    def from_csv(cls, path: Path) -> Table:
        """A ground-truth CSV (header row first), read as ELT-Bench reads it (``pandas.read_csv``: each column
        typed as a whole, pandas' NULL tokens missing). Raises
        :class:`~kramabench.elt.compare.original.OriginalUnreadable` when ``read_csv`` refuses it."""
        from kramabench.elt.compare.original import read_original

        cols, rows = read_original(Path(path))
        return cls(cols, rows, original_csv=Path(path), is_original=True)

    @classmethod
    def from_csv_text(cls, text: str) -> Table:
        """CSV text with a header row, read as :meth:`from_csv` reads a file."""
        from kramabench.elt.compare.original import read_original

        cols, rows = read_original(text)
        return cls(cols, rows, original_csv=text, is_original=True)

    @classmethod
    def from_records(cls, columns: list[str], rows: list[list[Any] | tuple[Any, ...]]) -> Table:
        """From Python values (tests, predictions): each value made canonical as a warehouse's would be; the
        original view is rendered from the values as given (a datetime stays a datetime for ``to_csv``)."""
        return cls.from_db(columns, [tuple(r) for r in rows])


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


__all__ = ["Table", "from_db", "is_number"]
