"""Evaluation queries written for Snowflake, transpiled to DuckDB with sqlglot."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Transpiled:
    """The DuckDB query (None when it could not be made) and, if so, why."""

    sql: str | None
    reason: str | None = None


def transpile(sql: str, *, read: str = "snowflake") -> Transpiled:
    """One query in ``read``'s dialect as DuckDB SQL; a query sqlglot cannot parse, one that uses a feature
    it cannot express in DuckDB, one that is not exactly one statement or one DuckDB cannot parse gives
    ``sql=None`` with the reason."""
    import sqlglot
    from sqlglot.errors import ErrorLevel, SqlglotError

    try:
        statements = [s for s in sqlglot.parse(sql, read=read) if s is not None]
    except SqlglotError as e:
        return Transpiled(None, f"sqlglot cannot parse it as {read} SQL: {str(e).splitlines()[0]}")
    if len(statements) != 1:
        return Transpiled(None, f"{len(statements)} statements; an evaluation query is one SELECT")
    try:
        out = statements[0].sql(dialect="duckdb", pretty=True, unsupported_level=ErrorLevel.RAISE)
    except SqlglotError as e:
        return Transpiled(None, f"not expressible in DuckDB: {str(e).splitlines()[0]}")
    from kramabench.elt.suite.validate import parse_error

    err = parse_error(out)
    if err:
        return Transpiled(None, f"DuckDB cannot parse the transpiled query: {err}")
    return Transpiled(out + "\n")


__all__ = ["Transpiled", "transpile"]
