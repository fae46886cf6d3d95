"""What the report shows of a task's artifacts (files its sessions collected into the run folder): a list
with size, media type and checksum, the first rows of a collected table (CSV, TSV, Parquet) and a collected
image inline. Every read is bounded: a report over a hostile run folder stays small."""

from __future__ import annotations

import base64
import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from kramabench.contracts.artifacts import Artifact
from kramabench.files import clip, open_regular, read_bytes

PREVIEW_ROWS = 10
PREVIEW_COLS = 12
PREVIEW_BYTES = 256 * 1024
CELL_CHARS = 80
IMAGE_BYTES = 2 * 1024 * 1024
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml", "image/webp")
TABLE_TYPES = ("text/csv", "text/tab-separated-values", "application/vnd.apache.parquet")


@dataclass
class ArtifactView:
    artifact: Artifact
    #: the copy in the run folder (None: the path leads outside the run folder)
    file: Path | None
    exists: bool = False
    #: header + rows of a table's first rows
    table: list[list[str]] = field(default_factory=list)
    table_note: str = ""
    #: a data: URI of an image small enough to show inline
    image_uri: str | None = None


def _cell(v: object) -> str:
    s = "" if v is None else str(v)
    return clip(s, CELL_CHARS)


def _csv_rows(path: Path, delimiter: str) -> tuple[list[list[str]], str]:
    with open_regular(path) as f:
        raw = f.read(PREVIEW_BYTES)
    text = raw.decode("utf-8", "replace")
    if len(raw) == PREVIEW_BYTES and "\n" in text:
        text = text[: text.rindex("\n")]
    rows = []
    for row in csv.reader(io.StringIO(text), delimiter=delimiter):
        rows.append([_cell(c) for c in row[:PREVIEW_COLS]])
        if len(rows) > PREVIEW_ROWS:
            break
    return rows, ""


def _parquet_rows(path: Path) -> tuple[list[list[str]], str]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return [], "pyarrow is not installed: no preview"
    pf = pq.ParquetFile(path)
    cols = pf.schema_arrow.names[:PREVIEW_COLS]
    batch = next(pf.iter_batches(batch_size=PREVIEW_ROWS, columns=cols), None)
    rows = [[_cell(c) for c in cols]]
    if batch is not None:
        data = batch.to_pydict()
        for i in range(batch.num_rows):
            rows.append([_cell(data[c][i]) for c in cols])
    return rows, f"{pf.metadata.num_rows:,} rows in all"


def view(artifact: Artifact, run_dir: Path) -> ArtifactView:
    """The artifact's copy in ``run_dir`` and its preview (never a file outside the run folder)."""
    root = Path(run_dir).resolve()
    try:
        p = (root / artifact.path).resolve()
    except (OSError, ValueError):
        p = None
    if p is None or not p.is_relative_to(root):
        return ArtifactView(artifact, None)
    v = ArtifactView(artifact, p, exists=p.is_file())
    if not v.exists:
        return v
    kind = artifact.media_type
    try:
        if kind in ("text/csv", "text/tab-separated-values"):
            v.table, v.table_note = _csv_rows(p, "\t" if kind == "text/tab-separated-values" else ",")
        elif kind == "application/vnd.apache.parquet":
            v.table, v.table_note = _parquet_rows(p)
        elif kind in IMAGE_TYPES:
            size = p.stat().st_size
            if size <= IMAGE_BYTES:
                v.image_uri = (
                    f"data:{kind};base64," + base64.b64encode(read_bytes(p, limit=IMAGE_BYTES)).decode()
                )
            else:
                v.table_note = f"image of {size:,} bytes: too large to show inline"
    except Exception as e:  # noqa: BLE001 - a damaged file gets a note, never a failed report
        v.table, v.image_uri = [], None
        v.table_note = f"no preview: {type(e).__name__}: {str(e)[:200]}"
    return v


__all__ = ["ArtifactView", "view"]
