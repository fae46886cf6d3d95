"""Artifacts of a run (files collected from a system's sessions into ``results/<run>/artifacts/...``): found
only through a record that names them, served as bytes with a fixed type, and previewed as tables (a
database file, DuckDB or SQLite, as its tables: :mod:`kramabench.view.database`).

A path is served only when a record of the run lists it, it lies under the run's ``artifacts/`` folder,
no part of it is a symbolic link and it is a regular file. The type sent is chosen by the file's
extension from a short list (images, plain text, else a download); HTML and SVG are never sent as a page
that runs code (text/plain, or an image under a ``sandbox`` content policy).
"""

from __future__ import annotations

import csv
import io
import json
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from kramabench.files import clip
from kramabench.view.database import DB_EXTS, DB_ROWS, engine_of, preview_database
from kramabench.view.runs import RunFollower, open_regular

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".svg": "image/svg+xml",
}
TEXT_EXTS = {
    ".csv",
    ".tsv",
    ".txt",
    ".json",
    ".jsonl",
    ".ndjson",
    ".md",
    ".py",
    ".sql",
    ".log",
    ".yaml",
    ".yml",
    ".toml",
    ".html",
    ".htm",
    ".xml",
    ".r",
    ".sh",
    ".ipynb",
    ".err",
    ".out",
}
TABLE_EXTS = {".csv", ".tsv", ".parquet", ".json", ".jsonl", ".ndjson", ".xlsx"}

PREVIEW_ROWS = 50
MAX_ROWS = 500
MAX_COLS = 60
CELL_CHARS = 300
#: bytes of a text or CSV file read for a preview
PREVIEW_BYTES = 2 << 20
#: largest JSON or Excel file parsed whole for a preview
WHOLE_FILE_BYTES = 16 << 20


class ArtifactError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def listed_paths(run: RunFollower) -> set[str]:
    return {p for r in run.snapshot(all_attempts=True) for p in r.artifacts}


def resolve(run: RunFollower, rel: str) -> Path:
    """The file of an artifact path a record lists, checked to be a regular file under ``artifacts/``."""
    if not rel or "\x00" in rel or "\\" in rel:
        raise ArtifactError(400, "not an artifact path")
    parts = PurePosixPath(rel).parts
    if (
        PurePosixPath(rel).is_absolute()
        or ".." in parts
        or not parts
        or parts[0] != "artifacts"
        or len(parts) < 2
    ):
        raise ArtifactError(403, "only files under the run's artifacts/ folder are served")
    if rel not in listed_paths(run):
        raise ArtifactError(404, "no record of this run lists that artifact")
    here = run.dir
    for part in parts:
        here = here / part
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            raise ArtifactError(
                404, f"{rel}: not in the run folder (listed by a record, but missing)"
            ) from None
        except OSError as e:
            raise ArtifactError(403, f"{rel}: cannot read ({e.strerror})") from None
        if stat.S_ISLNK(st.st_mode):
            raise ArtifactError(403, f"{rel}: a symbolic link; not served")
    real_root = os.path.realpath(run.dir / "artifacts")
    if not os.path.realpath(here).startswith(real_root + os.sep):
        raise ArtifactError(403, f"{rel}: outside the artifacts folder")
    if not stat.S_ISREG(os.lstat(here).st_mode):
        raise ArtifactError(403, f"{rel}: not a regular file")
    return here


def media_type(path: Path) -> tuple[str, bool]:
    """The type to send and whether to send it as a download."""
    ext = path.suffix.lower()
    if ext in IMAGE_TYPES:
        return IMAGE_TYPES[ext], False
    if ext in TEXT_EXTS:
        return "text/plain; charset=utf-8", False
    return "application/octet-stream", True


def read_bytes(path: Path, limit: int) -> bytes:
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as f:
        return f.read(limit)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
    return clip(text, CELL_CHARS)


def _table(columns: list[str], rows: list[list[Any]], **extra: Any) -> dict[str, Any]:
    cut_cols = len(columns) > MAX_COLS
    return {
        "kind": "table",
        "columns": [_cell(c) for c in columns[:MAX_COLS]],
        "rows": [[_cell(v) for v in r[:MAX_COLS]] for r in rows],
        "columns_cut": cut_cols,
        **extra,
    }


def preview(path: Path, n_rows: int | None = None) -> dict[str, Any]:
    """A table (columns, first rows, whether more exist), a database's tables (DuckDB, SQLite: each with its
    row count and first rows; :mod:`kramabench.view.database`) or a text head, as JSON-safe text cells."""
    ext = path.suffix.lower()
    size = os.lstat(path).st_size
    if ext in DB_EXTS or not (ext in TEXT_EXTS or ext in TABLE_EXTS or ext in IMAGE_TYPES):
        fd = open_regular(path)
        try:
            if engine_of(os.pread(fd, 64, 0)):
                return preview_database(fd, size, DB_ROWS if n_rows is None else n_rows)
        finally:
            os.close(fd)
    n_rows = max(1, min(PREVIEW_ROWS if n_rows is None else n_rows, MAX_ROWS))
    try:
        if ext in {".csv", ".tsv"}:
            data = read_bytes(path, PREVIEW_BYTES)
            text = data.decode("utf-8", errors="replace")
            lines = text.splitlines()
            if len(data) >= PREVIEW_BYTES and lines:
                lines = lines[:-1]  # a line cut by the read
            reader = csv.reader(lines, delimiter="\t" if ext == ".tsv" else ",")
            out = [row for _, row in zip(range(n_rows + 1), reader, strict=False)]
            if not out:
                return {"kind": "text", "text": "", "bytes": size}
            return _table(
                out[0],
                out[1 : n_rows + 1],
                more=len(lines) > n_rows + 1 or len(data) >= PREVIEW_BYTES,
                bytes=size,
            )
        if ext == ".parquet":
            import pyarrow.parquet as pq

            fd = open_regular(path)
            with os.fdopen(fd, "rb") as f:
                pf = pq.ParquetFile(f)
                total = pf.metadata.num_rows
                batch = next(pf.iter_batches(batch_size=n_rows), None)
                cols = pf.schema_arrow.names
                rows = [list(r.values()) for r in batch.to_pylist()] if batch is not None else []
            return _table(cols, rows, more=total > len(rows), total_rows=total, bytes=size)
        if ext in {".jsonl", ".ndjson"}:
            data = read_bytes(path, PREVIEW_BYTES)
            objs = []
            for line in data.decode("utf-8", errors="replace").splitlines()[: n_rows + 1]:
                try:
                    objs.append(json.loads(line))
                except ValueError:
                    break
            return _objects(objs[:n_rows], more=len(objs) > n_rows, bytes=size) or _text(data, size)
        if ext == ".json":
            if size > WHOLE_FILE_BYTES:
                return _text(read_bytes(path, 64 << 10), size)
            data = read_bytes(path, WHOLE_FILE_BYTES)
            try:
                doc = json.loads(data)
            except (ValueError, RecursionError):
                return _text(data[: 64 << 10], size)
            if isinstance(doc, list):
                return _objects(
                    doc[:n_rows], more=len(doc) > n_rows, bytes=size, total_rows=len(doc)
                ) or _text(data[: 64 << 10], size)
            return _text(data[: 64 << 10], size)
        if ext == ".xlsx" and size <= WHOLE_FILE_BYTES:
            import openpyxl

            fd = open_regular(path)
            with os.fdopen(fd, "rb") as f:
                wb = openpyxl.load_workbook(
                    io.BytesIO(f.read(WHOLE_FILE_BYTES)), read_only=True, data_only=True
                )
                ws = wb.worksheets[0]
                got = [
                    list(r) for _, r in zip(range(n_rows + 2), ws.iter_rows(values_only=True), strict=False)
                ]
                wb.close()
            if not got:
                return {"kind": "text", "text": "", "bytes": size}
            return _table(
                [str(c) if c is not None else "" for c in got[0]],
                got[1 : n_rows + 1],
                more=len(got) > n_rows + 1,
                bytes=size,
            )
    except Exception as e:  # noqa: BLE001 - a damaged file is said, not raised
        return {
            "kind": "error",
            "message": f"cannot preview: {type(e).__name__}: {str(e)[:300]}",
            "bytes": size,
        }
    if media_type(path)[0].startswith("text/"):
        return _text(read_bytes(path, 64 << 10), size)
    if media_type(path)[0].startswith("image/"):
        return {"kind": "image", "bytes": size}
    return {"kind": "binary", "bytes": size}


def _objects(objs: list[Any], **extra: Any) -> dict[str, Any] | None:
    if not objs or not all(isinstance(o, dict) for o in objs):
        return None
    cols: dict[str, None] = {}
    for o in objs:
        for k in o:
            cols.setdefault(str(k), None)
    names = list(cols)
    return _table(names, [[o.get(c) for c in names] for o in objs], **extra)


def _text(data: bytes, size: int) -> dict[str, Any]:
    return {
        "kind": "text",
        "text": data[: 64 << 10].decode("utf-8", errors="replace"),
        "bytes": size,
        "more": size > min(len(data), 64 << 10),
    }


__all__ = ["ArtifactError", "listed_paths", "media_type", "preview", "read_bytes", "resolve"]
