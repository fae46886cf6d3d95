"""Tables as ELT-Bench's evaluation reads them: its CSV round trip, made by pandas itself.

ELT-Bench's stage 2 (``evaluation/eva_stage2.py`` of uiuc-kang-lab/ELT-Bench, and ELT-Bench-Verified's
revision of it) never compares a warehouse's values. It reads each evaluation query's result with
``pandas.read_sql``, writes it with ``to_csv(index=False)``, reads that file back with ``read_csv``, and reads
the ground truth with ``read_csv`` too; both comparators of this package compare what that round trip gives.
The facts that follow are pandas' behaviour (the installed version's, which this module uses, never imitates):

* **types come from the CSV, column by column**: a column whose every value reads as an integer is integers
  (``'0451'`` becomes ``451`` on both sides, so a digit-only code matches), one of numbers is floats, one of
  ``True``/``False``/``true``/``false``/``TRUE``/``FALSE`` is booleans (``'t'``, ``'yes'`` stay text),
  anything else is text; a column mixing kinds is text throughout (``'True'`` and ``'2'``);
* **NULL tokens**: an empty field and ``NA``, ``N/A``, ``NaN``, ``nan``, ``null``, ``NULL``, ``None``,
  ``<NA>``, ``#N/A`` (and pandas' other defaults) are read as missing (NaN), on both sides: a text ``'None'``
  or ``''`` in the warehouse is a NULL for the comparison;
* **timestamps are written as pandas prints a datetime column**: a column whose every value is at midnight is
  written as dates (``2024-01-01``), else with the time, at the precision the column needs; a TIMESTAMPTZ
  column is converted to UTC and written with ``+00:00`` (so it never equals a ground truth written without
  an offset); a DATE column is written as ``YYYY-MM-DD``; dates are then read back as text;
* DECIMALs are read as floats; booleans are written ``True``/``False``; lists and structs as Python prints
  them; ``read_csv`` names a repeated column ``name.1``.

:func:`render_result` is the first half (the query's result as ``read_sql`` frames it and ``to_csv`` writes
it, from the rows the DB-API cursor returned); :func:`read_original` the second (``read_csv``).
"""

from __future__ import annotations

import io
import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class OriginalUnreadable(ValueError):
    """``read_csv`` refused the table (the original evaluation logs an ``Error:`` for it: the model is wrong)."""


class _ReplayCursor:
    """A DB-API cursor over rows already fetched: ``pandas.read_sql`` builds its frame from it exactly as from a
    live connection (its own code path: the same type inference, the same TIMESTAMPTZ conversion)."""

    def __init__(self, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        self.description = [(str(c), None, None, None, None, None, None) for c in columns]
        self._rows = [tuple(r) for r in rows]

    def execute(self, *args: Any, **kwargs: Any) -> _ReplayCursor:
        return self

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows

    def close(self) -> None:
        pass


class _ReplayConnection:
    def __init__(self, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        self._cursor = _ReplayCursor(columns, rows)

    def cursor(self) -> _ReplayCursor:
        return self._cursor

    def commit(self) -> None:
        pass

    def rollback(self) -> None:
        pass


def render_result(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A query's result as the original writes it: ``pandas.read_sql(...).to_csv(index=False)``, from the
    columns and the rows its DB-API cursor returned (DuckDB's Python values)."""
    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "pandas only supports SQLAlchemy connectable ...": the DB-API path
        frame = pd.read_sql("SELECT 1", _ReplayConnection(columns, rows))
    text: str = frame.to_csv(index=False)
    return text


def _value(v: Any) -> Any:
    """A value of a read frame as a plain Python value: NaN (pandas' missing) as None."""
    item = getattr(v, "item", None)
    if callable(item) and not isinstance(v, str | bytes):
        v = item()
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    try:
        import pandas as pd

        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        pass
    return v


def read_original(source: str | Path) -> tuple[list[str], list[tuple[Any, ...]]]:
    """``pandas.read_csv`` of a CSV (text, or a file's path) as (columns, rows of plain values), missing values
    as None. Raises :class:`OriginalUnreadable` with pandas' reason when it refuses the file."""
    import pandas as pd

    try:
        frame = pd.read_csv(io.StringIO(source) if isinstance(source, str) else Path(source))
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as e:
        what = "the table" if isinstance(source, str) else str(source)
        raise OriginalUnreadable(f"{what}: pandas.read_csv refused it: {' '.join(str(e).split())}") from None
    cols = [str(c) for c in frame.columns]
    data = [[_value(v) for v in frame.iloc[:, i]] for i in range(len(cols))]
    return cols, [tuple(c[j] for c in data) for j in range(len(frame))]


__all__ = ["OriginalUnreadable", "read_original", "render_result"]
