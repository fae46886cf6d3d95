"""How a spreadsheet is shown in the richer rendering: every sheet as ``pd.read_excel(path,
sheet_name=name, header=None)`` reads it.

Counts are pandas' (rows up to the last holding a value, title and header rows included; columns up
to the widest row). The rows shown are the sheet's rows from row 1: title rows above the header are
shown and counted as such, the header row is shown where it is, and a sheet whose first row is typed
like the rows below it is said to have no header row. Cells are written comma-separated and quoted as
in CSV (they are not the file's bytes), long cells cut with a visible mark, line breaks in a cell
written ``\\n``. Every label counts what is shown at the level the budget gave the file.
"""

from __future__ import annotations

from collections.abc import Callable

from .models import FileEntry, TableInfo
from .raw import fence_for
from .sheets import col_letter
from .snippets import NO_ROWS, SHORTENED, Block, column_detail_lines, csv_line, fmt_desc, q

#: said of the cells of a sheet (they are values, not the file's bytes)
CELLS = "as cells (not the file's bytes: comma-separated and quoted as in CSV; long cells cut, marked …)"
PANDAS = "pd.read_excel(path, sheet_name=..., header=None)"


def _n(n: int, unit: str) -> str:
    return f"{n:,} {unit}{'' if n == 1 else 's'}"


def _columns_list(cols: list[int]) -> str:
    """0-based columns as letters with pandas' numbers: ``A-B (0-1)``, runs joined."""
    runs: list[tuple[int, int]] = []
    for j in cols:
        if runs and runs[-1][1] == j - 1:
            runs[-1] = (runs[-1][0], j)
        else:
            runs.append((j, j))
    shown = runs[:10]
    letters = ", ".join(col_letter(a) if a == b else f"{col_letter(a)}-{col_letter(b)}" for a, b in shown)
    numbers = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in shown)
    more = f", … {len(runs) - 10} more" if len(runs) > 10 else ""
    return f"{'column' if len(cols) == 1 else 'columns'} {letters}{more} (pandas {numbers}{more})"


def width(t: TableInfo) -> int:
    return len(t.columns)


def sheet_shape(t: TableInfo) -> str:
    """``16 rows × 1 column: no header row (...), 16 data rows`` and what else a reader must know."""
    total = t.sheet_rows or 0
    s = f"{_n(total, 'row')} × {_n(width(t), 'column')}"
    if not total:
        return s + ": an empty sheet"
    h = t.header_row
    first = t.first_data_row or 1
    data = t.rows or 0
    if h is None:
        s += (
            ": no header row (row 1 is typed like the rows below it)"
            if first == 1
            else (f": no header row; {_n(first - 1, 'row')} above the data")
        )
        s += f", {_n(data, 'data row')}"
    else:
        where = f"the header on row {h}" + (f" (pd.read_excel(..., header={h - 1}))" if h > 1 else "")
        s += ": " + (f"{_n(h - 1, 'row')} above the header, " if h > 1 else "") + where
        s += f", {_n(data, 'data row')} below it"
    if t.above_header:
        s += f"; {'above the header' if h else 'above the data'}: " + " / ".join(
            q(a, 80) for a in t.above_header[:3]
        )
    if t.empty_columns:
        s += f"; empty in every row: {_columns_list(t.empty_columns)}"
    if t.merged_count:
        refs = ", ".join(t.merged_cells)
        more = (
            f", … {t.merged_count - len(t.merged_cells)} more" if t.merged_count > len(t.merged_cells) else ""
        )
        s += (
            f"; {_n(t.merged_count, 'merged range')}: {refs}{more} (pandas reads a merged range's value in its "
            "first cell, the others empty)"
        )
    return s


def _names(t: TableInfo) -> list[str]:
    return [c.name for c in t.columns]


def _columns_blocks(t: TableInfo) -> list[Block]:
    if not t.columns:
        return []
    label = f"  [{t.name}] "
    head = (
        "columns" if t.header_row else "columns (no header row: named by letter; pandas numbers them 0, 1, …)"
    )
    names = _names(t)
    compact = ", ".join(f"{n} ({c.dtype})" for n, c in zip(names[:40], t.columns[:40], strict=True))
    if len(t.columns) > 40:
        compact += f", … {len(t.columns) - 40} more"
    blocks = [Block(f"{label}{head}: {compact}\n", 1, 1)]
    detail = column_detail_lines(t, names)
    if any(len(x) > 40 for c in t.columns for x in c.examples):
        head += " (examples longer than 40 characters cut, marked …)"
    blocks.append(Block(f"{label}{head}:\n" + "".join(detail), 2))
    return blocks


def _rows_label(t: TableInfo, max_rows: int, n_rows: int) -> Callable[[int], str]:
    """The label of a sheet's rows when ``k`` of the ``n_rows`` data rows prepared are shown (after the
    rows above the data: title rows, the header)."""
    above = len(t.sheet_head)
    total = t.sheet_rows or 0
    data = t.rows or 0
    h = t.header_row

    def label(k: int) -> str:
        last = above + k
        if not k:
            what = "the header, no data rows" if h else "no data rows"
        elif k >= data:
            what = f"all {_n(data, 'data row')}"
        else:
            what = f"the first {k:,} of {data:,} data rows"
            if k < n_rows:
                what += ", " + SHORTENED
            elif k < min(max_rows, data):
                what += " (all the rows the index read)"
        if h is None:
            where = "no header row" if above == 0 else f"{_n(above, 'row')} above the data, no header row"
        elif h == 1:
            where = "the header on row 1"
        else:
            where = f"{_n(h - 1, 'row')} above the header, the header on row {h}"
        if any(i < last for i in t.line_breaks):
            where += "; line breaks in cells written \\n"
        return f"  [{t.name}] {what}: sheet rows 1-{last:,} of {total:,} ({where}), {CELLS}:\n"

    return label


def _rows_blocks(t: TableInfo, max_rows: int, first: int) -> list[Block]:
    """The rows above the data and the first data row from level ``first``, then one data row per level."""
    head = t.sheet_head
    rows = t.preview[:max_rows]
    if not head and not rows:
        return []
    lines = [csv_line(r) for r in head + rows]
    fence = fence_for([ln.rstrip("\n") for ln in lines])
    cut = len(head) + (1 if rows else 0)
    chunks = ["".join(lines[:cut]), *lines[cut:]]
    label = _rows_label(t, max_rows, len(rows))
    n = len(rows)
    blocks = [
        Block("", first, label=lambda lv: label(max(1, min(lv - first + 1, n)) if n else 0)),
        Block(fence + "\n", first, raw=True, fence=True),
    ]
    # cells at the start of the line, as the fence is (never indented under a folder group's line)
    blocks += [Block(c, first + i, raw=True) for i, c in enumerate(chunks)]
    blocks.append(Block(fence + "\n", first, raw=True, fence=True))
    return blocks


def sheet_file_blocks(e: FileEntry, display_path: str, max_rows: int) -> list[Block]:
    """A workbook: its sheets with pandas' counts, then each sheet's columns and rows by level."""
    names = e.sheets or []
    summary = f"- {display_path} ({fmt_desc(e)}): {_n(len(names), 'sheet')}\n"
    tables = {t.name: t for t in e.tables}
    listed = [
        q(s, 50) + (f" ({tables[s].sheet_rows or 0}×{width(tables[s])})" if s in tables else "")
        for s in names
    ]
    described = sum(1 for s in names if s in tables)
    more = f"; the first {described} described, the others named only" if described < len(names) else ""
    blocks = [
        Block(summary, 0),
        Block(f"  sheets (rows × columns as {PANDAS} reads them{more}): {', '.join(listed)}\n", 0),
    ]
    for t in e.tables:
        blocks.append(Block(f"  [{t.name}] {sheet_shape(t)}\n", 1))
    for note in e.notes:
        if not note.startswith("only the first "):
            blocks.append(Block(f"   note: {note[:400]}\n", 1))
    for t in e.tables:
        blocks += _columns_blocks(t)
        blocks += [Block(f"   note: [{t.name}] {n}\n", 2) for n in t.notes]
        rows = _rows_blocks(t, max_rows, 3)
        if rows and t.preview:
            blocks.append(Block(NO_ROWS.replace("  (", f"  [{t.name}] (", 1), 1, 2))
        blocks += rows
    return blocks


__all__ = ["CELLS", "PANDAS", "sheet_file_blocks", "sheet_shape"]
