"""Database artifacts (a DuckDB warehouse an ELT task built, a SQLite file) previewed as a list of tables with
their row counts and first rows.

The file comes from a run folder, so it is untrusted: it is opened in a child process (a crafted file that
crashes or hangs the database engine takes the child down, never the viewer), which gets the file as an
open descriptor (the viewer checked the path; nothing can swap it afterwards), opens it read-only and,
for DuckDB, with external access disabled and extension loading off before anything of the file is read,
the configuration then locked. Only tables are read: their names, columns, ``count(*)`` and the first rows
(generated columns left out: their expression is SQL stored in the file). Views are listed with their
definition as text and never queried; nothing else the file holds (macros, sequences, defaults) is run.

    python -I kramabench/view/database.py FD ROWS     # the child (stdlib and duckdb only): JSON on stdout
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from kramabench.files import clip, one_line

#: tables previewed (their first rows); more are listed by name only
MAX_TABLES = 50
#: rows shown per table
DB_ROWS = 20
MAX_COLS = 60
CELL_CHARS = 300
#: the child's time and the engine's memory
TIMEOUT_S = 20.0
MEMORY_LIMIT = "512MB"
#: bytes of the JSON the child may print
MAX_OUTPUT = 8 << 20

DUCKDB_MAGIC = (8, b"DUCK")
SQLITE_MAGIC = (0, b"SQLite format 3\x00")
DB_EXTS = {".duckdb", ".ddb", ".db", ".sqlite", ".sqlite3"}


def engine_of(head: bytes) -> str | None:
    """``duckdb`` or ``sqlite`` from a file's first bytes, None for anything else."""
    for name, (at, magic) in (("duckdb", DUCKDB_MAGIC), ("sqlite", SQLITE_MAGIC)):
        if head[at : at + len(magic)] == magic:
            return name
    return None


def preview_database(fd: int, size: int, n_rows: int = DB_ROWS) -> dict[str, Any]:
    """The tables of the database file open at ``fd`` (read in a child process), as the preview API returns
    them: ``{"kind": "database", "engine", "tables": [...], "views": [...]}`` or ``{"kind": "error"}``."""
    n_rows = max(1, min(int(n_rows), 200))
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "HOME", "TZ")}
    with tempfile.TemporaryDirectory(prefix="kb-view-db-") as tmp:
        env["TMPDIR"] = tmp
        try:
            p = subprocess.run(
                [sys.executable, "-I", __file__, str(fd), str(n_rows)],
                pass_fds=(fd,),
                cwd=tmp,
                env=env,
                capture_output=True,
                timeout=TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return {
                "kind": "error",
                "message": f"the database preview was stopped after {TIMEOUT_S:g} s",
                "bytes": size,
            }
    if p.returncode != 0 or not p.stdout:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        why = err[-1][:300] if err else f"the reader ended with code {p.returncode}"
        return {"kind": "error", "message": f"cannot preview the database: {why}", "bytes": size}
    try:
        doc: dict[str, Any] = json.loads(p.stdout[:MAX_OUTPUT])
    except ValueError:
        return {
            "kind": "error",
            "message": "cannot preview the database: its reader's output was cut",
            "bytes": size,
        }
    doc["bytes"] = size
    return doc


# -- the child ---------------------------------------------------------------------------------------------


def _cell(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bytes | bytearray | memoryview):
        b = bytes(v)
        text = "\\x" + b[:100].hex() + ("…" if len(b) > 100 else "")
    else:
        text = v if isinstance(v, str) else str(v)
    return clip(text, CELL_CHARS)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _fd_path(fd: int) -> str:
    for base in ("/proc/self/fd", "/dev/fd"):
        if os.path.isdir(base):
            return f"{base}/{fd}"
    raise OSError("no /proc/self/fd or /dev/fd: a database cannot be opened by its descriptor here")


def _duckdb(path: str, n_rows: int) -> dict[str, Any]:
    import duckdb

    con = duckdb.connect(
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "threads": 1,
            "memory_limit": MEMORY_LIMIT,
        }
    )
    esc = path.replace("'", "''")
    con.execute(f"ATTACH '{esc}' AS db (READ_ONLY)")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    tables = con.execute(
        "SELECT schema_name, table_name, sql FROM duckdb_tables() WHERE database_name = 'db' "
        "ORDER BY schema_name, table_name"
    ).fetchall()
    create_sql = {(schema, table): sql for schema, table, sql in tables}
    views = con.execute(
        "SELECT schema_name, view_name, sql FROM duckdb_views() WHERE database_name = 'db' AND NOT internal "
        "ORDER BY schema_name, view_name"
    ).fetchall()
    cols = con.execute(
        "SELECT table_schema, table_name, column_name, data_type, is_generated FROM information_schema.columns "
        "WHERE table_catalog = 'db' ORDER BY table_schema, table_name, ordinal_position"
    ).fetchall()
    by_table: dict[tuple[str, str], list[tuple[str, str, bool]]] = {}
    for schema, table, col, typ, gen in cols:
        by_table.setdefault((schema, table), []).append((col, typ, gen not in (None, "NEVER")))
    for key, columns in by_table.items():
        if any(g for _, _, g in columns):
            continue
        # DuckDB before 2.0 leaves information_schema.columns.is_generated NULL: read the table's definition
        flags = _generated_in_create(create_sql.get(key) or "", len(columns))
        by_table[key] = [(c, t, g) for (c, t, _), g in zip(columns, flags, strict=True)]
    out_tables = []
    for k, (schema, table, _) in enumerate(tables):
        columns = by_table.get((schema, table), [])
        shown = [(c, t) for c, t, g in columns if not g][:MAX_COLS]
        entry: dict[str, Any] = {
            "schema": schema,
            "name": table,
            "columns": [c for c, _ in shown],
            "types": [t for _, t in shown],
            "columns_cut": len(columns) > MAX_COLS,
            "generated": [c for c, _, g in columns if g],
        }
        cells = ", ".join(f"CAST({_q(c)} AS VARCHAR)" for c, _ in shown) if k < MAX_TABLES and shown else None
        _count_and_preview(con, entry, f"db.{_q(schema)}.{_q(table)}", cells, n_rows)
        out_tables.append(entry)
    con.close()
    views_out = [{"schema": s, "name": n, "sql": _cell(q)} for s, n, q in views]
    return _database("duckdb", out_tables, min(len(tables), MAX_TABLES), views_out, n_rows)


def _count_and_preview(con: Any, entry: dict[str, Any], ref: str, cells: str | None, n_rows: int) -> None:
    """A table's ``rows`` (its count) and ``first_rows``: its first ``n_rows`` rows of the select list
    ``cells``, or None when it is not previewed (``cells`` None)."""
    entry["rows"] = con.execute(f"SELECT count(*) FROM {ref}").fetchone()[0]
    if cells is not None:
        got = con.execute(f"SELECT {cells} FROM {ref} LIMIT {n_rows}").fetchall()
        entry["first_rows"] = [[_cell(v) for v in r] for r in got]
    else:
        entry["first_rows"] = None


def _database(
    engine: str, tables: list[dict[str, Any]], previewed: int, views: list[dict[str, Any]], n_rows: int
) -> dict[str, Any]:
    """The preview of a database file: its tables (the first ``previewed`` with rows) and views."""
    return {
        "kind": "database",
        "engine": engine,
        "tables": tables,
        "tables_previewed": previewed,
        "views": views,
        "rows_asked": n_rows,
    }


def _generated_in_create(sql: str, n: int) -> list[bool]:
    """Which of a table's ``n`` columns are generated, read from its ``CREATE TABLE`` statement as DuckDB
    writes it (``name TYPE GENERATED ALWAYS AS(expr)``, in column order): the top-level comma-separated
    definitions inside the outer parentheses, quotes and nested parentheses skipped. Unreadable: none."""
    parts: list[str] = []
    depth, quote, start = 0, "", -1
    for i, ch in enumerate(sql):
        if quote:
            if ch == quote:
                quote = ""  # a doubled quote ('' or "") closes and reopens: the same outcome
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
            if depth == 1:
                start = i + 1
        elif ch == ")":
            if depth == 1:
                parts.append(sql[start:i])
                break
            depth -= 1
        elif ch == "," and depth == 1:
            parts.append(sql[start:i])
            start = i + 1
    if len(parts) < n:
        return [False] * n
    return [_is_generated_definition(d) for d in parts[:n]]


def _is_generated_definition(definition: str) -> bool:
    """``GENERATED ALWAYS AS`` outside quotes and parentheses in one column definition."""
    words: list[str] = []
    depth, quote, word = 0, "", ""
    for ch in definition + " ":
        if quote:
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if depth == 0 and (ch.isalnum() or ch == "_"):
            word += ch
            continue
        if word:
            words.append(word.upper())
            word = ""
    return any(words[i : i + 3] == ["GENERATED", "ALWAYS", "AS"] for i in range(1, len(words)))


def _sqlite(path: str, n_rows: int) -> dict[str, Any]:
    import sqlite3

    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    con.execute("PRAGMA trusted_schema = OFF")
    objs = con.execute(
        "SELECT type, name, sql FROM sqlite_schema WHERE type IN ('table', 'view') "
        "AND name NOT LIKE 'sqlite_%' ORDER BY type, name"
    ).fetchall()
    out_tables, out_views = [], []
    for typ, name, sql in objs:
        if typ == "view":
            out_views.append({"schema": "main", "name": name, "sql": _cell(sql)})
            continue
        if isinstance(sql, str) and sql.lstrip().upper().startswith("CREATE VIRTUAL"):
            out_tables.append(
                {
                    "schema": "main",
                    "name": name,
                    "columns": [],
                    "types": [],
                    "rows": None,
                    "first_rows": None,
                    "note": "a virtual table (its module's code): not read",
                }
            )
            continue
        info = con.execute(
            f"PRAGMA table_xinfo({_q(name)})"
        ).fetchall()  # cid, name, type, notnull, default, pk, hidden
        shown = [(r[1], r[2]) for r in info if r[6] == 0][:MAX_COLS]
        entry: dict[str, Any] = {
            "schema": "main",
            "name": name,
            "columns": [c for c, _ in shown],
            "types": [t for _, t in shown],
            "columns_cut": len(info) > MAX_COLS,
            "generated": [r[1] for r in info if r[6] in (2, 3)],
        }
        cells = ", ".join(_q(c) for c, _ in shown) if len(out_tables) < MAX_TABLES and shown else None
        _count_and_preview(con, entry, _q(name), cells, n_rows)
        out_tables.append(entry)
    con.close()
    return _database("sqlite", out_tables, min(len(out_tables), MAX_TABLES), out_views, n_rows)


def _child(fd: int, n_rows: int) -> dict[str, Any]:
    os.lseek(fd, 0, os.SEEK_SET)
    head = os.read(fd, 64)
    engine = engine_of(head)
    path = _fd_path(fd)
    if engine == "duckdb":
        return _duckdb(path, n_rows)
    if engine == "sqlite":
        return _sqlite(path, n_rows)
    return {"kind": "binary", "note": "not a DuckDB or SQLite database file"}


def main(argv: list[str]) -> int:
    fd, n_rows = int(argv[0]), int(argv[1])
    try:
        doc = _child(fd, n_rows)
    except Exception as e:  # noqa: BLE001 - a damaged file is said, in one line
        msg = clip(one_line(str(e)), 300, mark="")
        doc = {"kind": "error", "message": f"cannot preview the database: {type(e).__name__}: {msg}"}
    sys.stdout.write(json.dumps(doc, ensure_ascii=False, default=str))
    return 0


def sniff(path: Path) -> str | None:
    """The database engine of a file by its first bytes (the viewer's checked path)."""
    from kramabench.view.runs import open_regular

    fd = open_regular(path)
    try:
        return engine_of(os.read(fd, 64))
    finally:
        os.close(fd)


if __name__ == "__main__":
    raise SystemExit(
        main(sys.argv[1:])
    )  # run as a file: its folder is on sys.path, holding no module it imports


__all__ = ["DB_EXTS", "DB_ROWS", "engine_of", "preview_database", "sniff"]
