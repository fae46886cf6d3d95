"""Spreadsheet sheets as ``pd.read_excel(path, sheet_name=..., header=None)`` reads them.

A sheet is read whole once: its rows are counted up to the last row holding a value, its width is its
widest row (trailing empty cells trimmed), as pandas does; only its first rows are kept. Rows above the
header (titles, notes, blank rows) are kept as rows of the sheet, not dropped: they are shown and
counted as rows above the header. A first row typed like the rows below it is data
(:func:`kramabench.lake.tabular.find_header`): the sheet then has no header row. Columns empty in every
row and merged cells (whose value pandas reads in their first cell only) are recorded.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kramabench.files import clip

from .models import LakeOptions, TableInfo
from .tabular import cell_text, describe_columns, find_header

#: rows looked at to find the header below title rows
HEADER_SCAN_ROWS = 40
#: merged ranges recorded per sheet (the rest counted)
MAX_MERGED = 20


def col_letter(j: int) -> str:
    """0-based column index -> the sheet's letters (0 -> A, 26 -> AA)."""
    s = ""
    j += 1
    while j:
        j, r = divmod(j - 1, 26)
        s = chr(65 + r) + s
    return s


def _empty(v: Any) -> bool:
    """An empty cell as pandas trims it: no value, or an empty string."""
    return v is None or (isinstance(v, str) and v == "")


@dataclass
class SheetScan:
    """What one pass over a sheet's rows found."""

    head: list[list[Any]] = field(default_factory=list)  # the first rows (cells; None = empty)
    rows: int = 0  # rows up to the last one holding a value
    width: int = 0  # the widest row, trailing empty cells trimmed
    filled: set[int] = field(default_factory=set)  # columns holding a value in some row


def scan_rows(rows: Iterable[Sequence[Any]], keep: int) -> SheetScan:
    """Count a sheet's rows and columns as pandas does, keeping its first ``keep`` rows."""
    s = SheetScan()
    for i, row in enumerate(rows):
        last = len(row)
        while last and _empty(row[last - 1]):
            last -= 1
        if last:
            s.rows = i + 1
            if last > s.width:
                s.width = last
            s.filled.update(j for j in range(last) if not _empty(row[j]))
        if i < keep:
            s.head.append(list(row))
    del s.head[s.rows :]
    return s


def sheet_cell(v: Any, limit: int) -> tuple[str, bool]:
    """A cell as shown in a prompt, and whether it held a line break (written ``\\n``)."""
    if isinstance(v, str):
        broke = "\n" in v or "\r" in v
        s = v.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n") if broke else v
        return clip(s, limit), broke
    return cell_text(v, limit), False


def row_cells(row: Sequence[Any], width: int, limit: int) -> tuple[list[str], bool]:
    """A row's cells as shown (``width`` of them), and whether one held a line break."""
    out = []
    broke = False
    for j in range(width):
        text, b = sheet_cell(row[j] if j < len(row) else None, limit)
        out.append(text)
        broke = broke or b
    return out, broke


def sheet_table(
    name: str, rows: Iterable[Sequence[Any]], opts: LakeOptions, merged: tuple[list[str], int] = ([], 0)
) -> TableInfo:
    """The table of one sheet: every row counted, the first rows kept (title rows and the header as
    ``sheet_head``, data rows as ``preview``), the header found, the columns typed."""
    scan = scan_rows(rows, HEADER_SCAN_ROWS + opts.sample_rows + opts.max_rows)
    head = scan.head
    hdr, data_start = find_header(head[:HEADER_SCAN_ROWS])
    if scan.rows == 0:
        hdr, data_start = None, 0
    width = scan.width
    if hdr is not None:
        header = head[hdr]
        names = []
        for j in range(width):
            v = header[j] if j < len(header) else None
            names.append(cell_text(v, opts.max_cell_chars * 2).strip() if not _empty(v) else "")
    else:
        names = [col_letter(j) for j in range(width)]
    data = head[data_start:]
    sample = data[: opts.sample_rows]
    cols = describe_columns(
        [n or f"(no name {col_letter(j)})" for j, n in enumerate(names)],
        sample,
        typed=True,
        max_cell_chars=opts.max_cell_chars,
    )
    for c, n in zip(cols, names, strict=True):
        if not n:
            c.name = "(no name)"
    above = [
        " ".join(cell_text(c) for c in r if not _empty(c) and str(c).strip())
        for r in head[: hdr if hdr is not None else data_start]
    ]
    above = [a[:200] for a in above if a][:5]
    shown_head = [row_cells(r, width, opts.max_cell_chars) for r in head[:data_start]]
    shown = [row_cells(r, width, opts.max_cell_chars) for r in data[: opts.max_rows]]
    notes: list[str] = []
    n_data = max(0, scan.rows - data_start)
    if len(sample) < n_data:
        notes.append(f"types from the first {len(sample)} rows")
    merged_refs, merged_count = merged
    return TableInfo(
        name=name,
        rows=n_data,
        rows_exact=True,
        columns=cols,
        header_row=hdr + 1 if hdr is not None else None,
        above_header=above,
        preview=[c for c, _ in shown],
        notes=notes,
        sheet_rows=scan.rows,
        sheet_head=[c for c, _ in shown_head],
        first_data_row=data_start + 1,
        line_breaks=[i for i, (_, b) in enumerate(shown_head + shown) if b],
        empty_columns=[j for j in range(width) if j not in scan.filled],
        merged_cells=merged_refs,
        merged_count=merged_count,
    )


# ---- merged cells -------------------------------------------------------------------------------------

_MERGE_RE = re.compile(rb"<(?:\w+:)?mergeCell\b[^>]*?\bref=\"([A-Za-z]+\d+(?::[A-Za-z]+\d+)?)\"")


def xlsx_merged_cells(path: Any, part: str) -> tuple[list[str], int]:
    """The merged ranges of a worksheet part of an xlsx file (``xl/worksheets/sheet1.xml``): the first
    :data:`MAX_MERGED` refs and their count, the part streamed (its size was bounded before)."""
    refs: list[str] = []
    count = 0
    part = part.lstrip("/")
    with zipfile.ZipFile(path) as z:
        try:
            f = z.open(part)
        except KeyError:
            return [], 0
        with f:
            tail = b""
            while chunk := f.read(1 << 20):
                buf = tail + chunk
                last_end = 0
                for m in _MERGE_RE.finditer(buf):
                    count += 1
                    if len(refs) < MAX_MERGED:
                        refs.append(m.group(1).decode("ascii").upper())
                    last_end = m.end()
                tail = buf[max(last_end, len(buf) - 200) :]
    return refs, count


def xls_merged_cells(ranges: Iterable[tuple[int, int, int, int]]) -> tuple[list[str], int]:
    """xlrd's merged ranges (row_lo, row_hi, col_lo, col_hi; 0-based, hi exclusive) as ``A1:C2`` refs."""
    refs = [f"{col_letter(c0)}{r0 + 1}:{col_letter(c1 - 1)}{r1}" for r0, r1, c0, c1 in ranges]
    return refs[:MAX_MERGED], len(refs)


__all__ = [
    "HEADER_SCAN_ROWS",
    "SheetScan",
    "col_letter",
    "row_cells",
    "scan_rows",
    "sheet_cell",
    "sheet_table",
    "xls_merged_cells",
    "xlsx_merged_cells",
]
