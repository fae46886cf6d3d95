"""A test oracle: ELT-Bench's own evaluation of a warehouse, re-implemented from its published behaviour
(``evaluation/eva_stage1.py`` and ``eva_stage2.py`` of uiuc-kang-lab/ELT-Bench: the facts, written here
independently of kramabench's scorer), on a DuckDB warehouse instead of Snowflake.

Stage 1: the schema exists; every expected table is a ``BASE TABLE`` of it (names compared in upper case,
as Snowflake folds them) with exactly its row count. Stage 2, only for a warehouse that passed: for each data
model, ``pandas.read_sql(query, connection)`` (the real one, on a DuckDB connection), ``to_csv(index=False)`` to
a file, ``read_csv`` of that file and of the ground truth; then each ground-truth column is looked up in the
result; both NaN is a match; two Python numbers fail when ``b > a * 1.01 or b < a * 0.99``; anything else fails
when ``a != b``; a column of another length fails. Any exception is the model's failure. A model is correct when
at least one column matched and none was unmatched or missed.

``fixes``: the named fixes of the ``elt-bench`` comparator to apply (``sign``: the bounds taken in order;
``case``: a column found without regard to letter case when its exact name is absent); none: the original.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import duckdb
import pandas as pd

ALL_FIXES = frozenset({"sign", "case"})


def stage1(warehouse: Path, schema: str, tables: dict[str, int]) -> bool:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        schemas = [
            r[0].upper()
            for r in con.execute("SELECT schema_name FROM information_schema.schemata").fetchall()
        ]
        if schema.upper() not in schemas:
            return False
        base = {
            r[0].upper(): r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE upper(table_schema) = ? AND table_type = 'BASE TABLE'",
                [schema.upper()],
            ).fetchall()
        }
        for t, n in tables.items():
            if t.upper() not in base:
                return False
            if con.execute(f'SELECT count(*) FROM "{schema}"."{base[t.upper()]}"').fetchone()[0] != n:
                return False
        return True
    finally:
        con.close()


def _bounds_fail(a: float, b: float, fixes: frozenset[str]) -> bool:
    hi, lo = float(a) * 1.01, float(a) * 0.99
    if "sign" in fixes and lo > hi:
        lo, hi = hi, lo
    return float(b) > hi or float(b) < lo


def _column_matches(gold: pd.Series, got: pd.Series, fixes: frozenset[str]) -> bool:
    if len(gold) != len(got):
        return False
    for a, b in zip(gold, got, strict=True):
        if pd.isna(a) and pd.isna(b):
            continue
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            if _bounds_fail(a, b, fixes):
                return False
        elif a != b:
            return False
    return True


def stage2_model(
    warehouse: Path, query: str, ground_truth: Path, fixes: frozenset[str] = frozenset()
) -> bool:
    """One data model's verdict."""
    try:
        con = duckdb.connect(str(warehouse), read_only=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                df = pd.read_sql(query, con)
        finally:
            con.close()
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "result.csv"
            df.to_csv(out, index=False)
            df = pd.read_csv(out)
        gt = pd.read_csv(ground_truth)
    except Exception:  # noqa: BLE001 - the original logs "Error:" and the model counts as wrong
        return False
    matched = unmatched = missed = 0
    for col in gt.columns:
        name = col
        if col not in df.columns and "case" in fixes:
            name = next((c for c in df.columns if str(c).lower() == str(col).lower()), col)
        if name not in df.columns:
            missed += 1
        elif _column_matches(gt[col], df[name], fixes):
            matched += 1
        else:
            unmatched += 1
    return matched > 0 and unmatched == 0 and missed == 0


def evaluate(
    warehouse: Path,
    schema: str,
    tables: dict[str, int],
    models: dict[str, tuple[str, Path]],
    fixes: frozenset[str] = frozenset(),
) -> tuple[bool, dict[str, bool]]:
    """(stage 1 passed, model -> correct); ``models``: name -> (evaluation query, ground-truth file)."""
    if not stage1(warehouse, schema, tables):
        return False, {m: False for m in models}
    return True, {m: stage2_model(warehouse, q, gt, fixes) for m, (q, gt) in models.items()}


__all__ = ["ALL_FIXES", "evaluate", "stage1", "stage2_model"]
