"""Reading a source table's data file (csv, jsonl, parquet) with DuckDB: its columns, types and rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any


def reader_sql(path: Path) -> str:
    """A DuckDB table function call reading ``path`` by its extension (types sniffed)."""
    lit = "'" + str(path).replace("'", "''") + "'"
    ext = path.suffix.lower()
    if ext == ".csv":
        return f"read_csv({lit}, header=true)"
    if ext == ".jsonl":
        return f"read_json({lit}, format='newline_delimited')"
    if ext == ".parquet":
        return f"read_parquet({lit})"
    raise ValueError(f"{path}: unknown data format {ext!r} (csv, jsonl or parquet)")


def describe(path: Path) -> list[tuple[str, str]]:
    """(column, DuckDB type) of a data file."""
    import duckdb

    con = duckdb.connect()
    try:
        return [(r[0], r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM {reader_sql(path)}").fetchall()]
    finally:
        con.close()


def records(path: Path) -> list[dict[str, Any]]:
    """The rows of a data file as JSON-ready dicts (dates and timestamps as ISO text)."""
    return list(iter_records(path))


def iter_records(path: Path, batch: int = 2048) -> Iterator[dict[str, Any]]:
    """The rows of a data file as JSON-ready dicts (dates and timestamps as ISO text), read in batches: a table of
    any size takes the memory of one batch."""
    import duckdb

    from kramabench.elt.compare.values import from_db

    con = duckdb.connect()
    try:
        cur = con.execute(f"SELECT * FROM {reader_sql(path)}")
        cols = [d[0] for d in cur.description]
        while True:
            rows = cur.fetchmany(batch)
            if not rows:
                break
            for row in rows:
                yield {
                    c: v if isinstance(v, list | dict) else from_db(v) for c, v in zip(cols, row, strict=True)
                }
    finally:
        con.close()


def write_jsonl(path: Path, dest: Path) -> Path:
    """The rows of ``path`` as JSON lines in ``dest`` (one ``json.dumps`` object per line, values as
    :func:`iter_records` makes them), written row by row."""
    import json

    with open(dest, "w", encoding="ascii") as f:
        for rec in iter_records(path):
            f.write(json.dumps(rec, default=str))
            f.write("\n")
    return dest


def convert(src: Path, dest: Path) -> Path:
    """Write ``src``'s rows to ``dest`` in ``dest``'s format (csv with a header, jsonl or parquet)."""
    import duckdb

    ext = dest.suffix.lower()
    fmt = {".csv": "FORMAT csv, HEADER true", ".jsonl": "FORMAT json", ".parquet": "FORMAT parquet"}.get(ext)
    if fmt is None:
        raise ValueError(f"{dest}: unknown data format {ext!r}")
    con = duckdb.connect()
    try:
        lit = "'" + str(dest).replace("'", "''") + "'"
        con.execute(f"COPY (SELECT * FROM {reader_sql(src)}) TO {lit} ({fmt})")
    finally:
        con.close()
    return dest


def prepare(jobs: list[tuple[str, Path, Path]], timeout_s: float = 1800.0) -> list[list[tuple[str, str]]]:
    """Each job ``(op, src, dest)`` done in one child process (``python -m kramabench.elt.sources.tables``), so that
    DuckDB's buffers for a large table never stay in the runner: ``op`` ``csv`` writes ``src``'s rows as a CSV with a
    header to ``dest`` (a copy when ``src`` is one), ``jsonl`` as :func:`write_jsonl` does; each job's columns and
    DuckDB types (:func:`describe` of ``src``) in order."""
    import json
    import os
    import subprocess
    import sys

    if not jobs:
        return []
    req = [{"op": op, "src": str(src), "dest": str(dest)} for op, src, dest in jobs]
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV", "KRAMABENCH_CACHE")
    proc = subprocess.run(
        [sys.executable, "-m", "kramabench.elt.sources.tables"],
        input=json.dumps(req).encode(),
        capture_output=True,
        timeout=timeout_s,
        env={k: v for k, v in os.environ.items() if k in keep},
    )
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        raise RuntimeError(
            f"preparing the source tables failed: {err[-1] if err else f'exit code {proc.returncode}'}"
        )
    return [[(c, t) for c, t in cols] for cols in json.loads(proc.stdout)]


def _main() -> int:
    import json
    import shutil
    import sys

    out = []
    for job in json.loads(sys.stdin.buffer.read()):
        src, dest = Path(job["src"]), Path(job["dest"])
        out.append(describe(src))
        if job["op"] == "jsonl":
            write_jsonl(src, dest)
        elif src.suffix.lower() == dest.suffix.lower():
            shutil.copyfile(src, dest)
        else:
            convert(src, dest)
    sys.stdout.write(json.dumps(out))
    return 0


__all__ = ["convert", "describe", "iter_records", "prepare", "reader_sql", "records", "write_jsonl"]


if __name__ == "__main__":
    raise SystemExit(_main())
