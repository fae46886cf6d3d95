"""How one lake file is shown in a prompt: blocks of text tied to detail levels.

Levels: 0 is the file's summary line; then columns (their types), then content, one more row or line
per level. Whatever comes from the file's lines is shown *as the file holds it*: exact lines in a code
fence (never indented, never re-quoted, a long line cut with a visible mark, see :mod:`.raw`). Every
content block has a label that counts what is shown at the level chosen ("the first 12 of 1,132 rows,
shortened to fit the prompt budget: lines 1-15 of 1,134 as in the file (...)"), so a label never
promises rows the prompt does not hold. Small documentation files (data dictionaries, READMEs, header
files) are shown whole. Content that is not lines of the file (cells of a spreadsheet, an outline of a
JSON document) says so in its label.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kramabench.files import clip

from .models import FileEntry, TableInfo
from .raw import LINE_WIDTH, RawLines, fence_for, read_raw_lines
from .readers import delimiter_name
from .sniff import csv_reader

# one match = one estimated token: letters in chunks of 4, digits in chunks of 3, any other symbol alone
_TOKEN_RE = re.compile(r"[A-Za-z]{1,4}|\d{1,3}|[^\sA-Za-z\d]|\n")
_BIG = 10**9
#: formats held as lines of text (everything else is binary: listed by name and format)
TEXT_FORMATS = {"csv", "fixed-width", "text", "json", "jsonl", "html"}
#: formats the paper's official code reads as tables (everything else is read as text)
PAPER_TABLE_FORMATS = {"csv"}
#: a documentation file up to this size is shown whole (all its lines, none cut)
DOC_MAX_BYTES = 24 * 1024
_DOC_WORDS = {
    "readme",
    "dictionary",
    "dictionaries",
    "codebook",
    "glossary",
    "legend",
    "legends",
    "metadata",
    "meta",
    "description",
    "descriptions",
    "documentation",
    "doc",
    "docs",
    "schema",
    "variables",
    "definitions",
    "notes",
    "about",
    "header",
    "headers",
    "info",
    "codes",
    "manifest",
    "key",
    "keys",
}
_DOC_EXTS = {"md", "rst", "hdr", "readme"}
SHORTENED = "shortened to fit the prompt budget"
#: a table whose columns are shown but none of its rows (the budget stopped before them)
NO_ROWS = f"  (no rows shown: {SHORTENED})\n"
CUT_NOTE = f"lines over {LINE_WIDTH:,} characters cut where marked"


def estimate_tokens(text: str) -> int:
    """A conservative token estimate (real BPE tokenizers merge more): about chars/3.5 for prose."""
    return len(_TOKEN_RE.findall(text))


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


@dataclass
class Block:
    text: str
    lo: int
    hi: int = _BIG
    cost: int = 0
    #: text that depends on the level shown (a label counting the rows shown); ``text`` is then unused
    label: Callable[[int], str] | None = None
    #: lines of the file: shown exactly (never re-indented)
    raw: bool = False
    #: a code fence line: never masked, never part of the file's text
    fence: bool = False

    def at(self, level: int) -> str:
        return self.label(level) if self.label is not None else self.text


@dataclass
class FileRender:
    path: str
    blocks: list[Block]
    costs: list[int]  # cost at each level
    prefmax: list[int]  # running max of costs (for monotone search)
    masked: list[str] = field(default_factory=list)  # kinds of secrets masked in this render
    masked_files: dict[str, list[str]] = field(default_factory=dict)  # lake path -> kinds masked
    folded: dict[str, int | str] | None = (
        None  # what a folded group stands for (recorded in the prompt facts)
    )
    #: the level shown whenever the budget allows it (a small documentation file: whole)
    floor: int = 0

    @property
    def max_level(self) -> int:
        return len(self.costs) - 1

    def text(self, level: int) -> str:
        return "".join(b.at(level) for b in self.blocks if b.lo <= level <= b.hi)


def _n(n: int, unit: str) -> str:
    return f"{n:,} {unit}{'' if n == 1 else 's'}"


def _ext(name: str) -> str:
    """The extension as on disk (case kept), '' when none."""
    base = name.rpartition("/")[2]
    return base.rpartition(".")[2] if "." in base.strip(".") else ""


def is_documentation(e: FileEntry) -> bool:
    """A small text file shown whole: see :func:`whole_kind`."""
    return whole_kind(e) is not None


def whole_kind(e: FileEntry) -> str | None:
    """What a small file shown whole is: "documentation file" (named so: README, data dictionary,
    codebook, legend, metadata...; a header file ``.HDR``; Markdown); None for any other file (a plain
    text file is shown as the paper shows it, its first N lines, whatever it holds)."""
    if e.error or not 0 < e.size <= DOC_MAX_BYTES or e.format not in TEXT_FORMATS:
        return None
    name = e.path.rpartition("/")[2]
    ext = _ext(name)
    stem = name[: -len(ext) - 1] if ext else name
    low = stem.lower()
    words = re.split(r"[^a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", stem).lower())
    if (
        ext.lower() in _DOC_EXTS
        or any(w in _DOC_WORDS for w in words)
        or any(w in low for w in ("readme", "dictionar", "codebook", "data_dict", "datadict"))
    ):
        return "documentation file"
    return None


def fmt_desc(e: FileEntry) -> str:
    parts = [e.format]
    if e.format == "csv":
        parts = [f"csv ({delimiter_name(e.delimiter)}-separated)"]
    if e.encoding:
        parts.append({"utf-8-sig": "utf-8 with BOM"}.get(e.encoding, e.encoding))
    parts.append(human_size(e.size))
    return ", ".join(parts)


def _count(n: int | None, exact: bool = True) -> str:
    return "?" if n is None else (f"{n:,}" if exact else f"about {n:,}")


def table_shape(t: TableInfo, lines: bool = True) -> str:
    """Rows × columns, and where the header is (``lines``: a file of lines with a header line or none;
    records of JSON have no header to speak of)."""
    rows = "? rows" if t.rows is None else f"{_n(t.rows, 'row')}" + ("" if t.rows_exact else " (estimated)")
    s = f"{rows} × {_n(len(t.columns), 'column')}"
    if t.header_row and t.header_row > 1:
        unit = "row" if t.name is not None else "line"
        s += f"; header on {unit} {t.header_row} ({_n(t.header_row - 1, unit)} above it)"
    elif t.header_row is None and t.columns and t.name is None and lines:
        s += "; no header row"
    if t.above_header:
        where = "above the header" if t.header_row else "above the rows"
        s += f"; {where}: " + " / ".join(q(a, 80) for a in t.above_header[:3])
    return s


def q(s: str, limit: int = 60) -> str:
    s = clip(s, limit)
    return '"' + s.replace('"', "'") + '"'


def csv_line(cells: Sequence[str], delimiter: str | None = ",") -> str:
    """One row of cells, comma-separated and quoted as needed."""
    buf = io.StringIO()
    d = delimiter if delimiter and len(delimiter) == 1 else ","
    csv.writer(buf, delimiter=d, lineterminator="\n").writerow(cells)
    return buf.getvalue()


# ---- raw lines ------------------------------------------------------------------------------------


def read_raw(e: FileEntry, root: Path | None, count: int | None, *, doc: bool = False) -> RawLines | None:
    """The first ``count`` lines of the file (all when None), or None without a lake root; ``doc``: a
    documentation file shown whole (its lines are not cut to a width)."""
    if root is None or e.error:
        return None
    return read_raw_lines(
        Path(root) / e.path,
        count,
        e.encoding,
        width=DOC_MAX_BYTES if doc else LINE_WIDTH,
        gz=e.format == "gzip",
    )


def raw_blocks(
    lines: list[str], bounds: list[int], first: int, label: Callable[[int], str], indent: str = ""
) -> list[Block]:
    """Lines ``1..bounds[0]`` from level ``first``, then ``bounds[i-1]+1..bounds[i]`` from level
    ``first + i``, in one code fence, after a label told how many chunks are shown."""
    if not bounds:
        return []
    fence = fence_for(lines[: bounds[-1]])
    n = len(bounds)
    blocks = [
        Block("", first, label=lambda lv: label(max(1, min(lv - first + 1, n)))),
        Block(fence + "\n", first, raw=True, fence=True),
    ]
    prev = 0
    for i, b in enumerate(bounds):
        blocks.append(Block("".join(ln + "\n" for ln in lines[prev:b]), first + i, raw=True))
        prev = b
    blocks.append(Block(fence + "\n", first, raw=True, fence=True))
    return blocks


def whole_from_level_1(blocks: list[Block]) -> list[Block]:
    """The blocks of a file shown whole (a documentation file), all from level 1 on: blocks of one level
    range only (compact columns) are dropped, labels count everything."""
    out = []
    for b in blocks:
        if b.lo == 0:
            out.append(b)
        elif b.hi >= _BIG:
            out.append(replace(b, lo=1, label=_at_big(b.label) if b.label is not None else None))
    return out


def _at_big(label: Callable[[int], str]) -> Callable[[int], str]:
    """``label`` as shown at the deepest level, whatever the level asked."""
    return lambda _level: label(_BIG)


def _where(e: FileEntry, last: int) -> str:
    return f"lines 1-{last:,} of {e.lines:,}" if e.lines is not None else f"lines 1-{last:,}"


def table_bounds(t: TableInfo, max_rows: int, available: int) -> tuple[list[int], bool]:
    """Chunk ends (1-based lines) of a line-based table: lines above the header, the header and row 1,
    then one row per chunk; (bounds, whether rows are in them). Only rows wholly read are used."""
    ends = [x for x in t.preview_line_ends[:max_rows] if x <= available]
    if ends:
        return ends, True
    h = t.header_row
    return ([h] if h and h <= available else []), False


def table_label(
    e: FileEntry,
    t: TableInfo,
    bounds: list[int],
    has_rows: bool,
    cut: list[bool],
    max_rows: int,
    indent: str = "  ",
    doc: str | None = None,
) -> Callable[[int], str]:
    """The label of a line-based table shown as raw lines: rows and lines shown, and what they hold."""
    # gaps between the rows' last lines: a csv record over several lines; a fixed-width file's skipped lines
    multiline = (
        has_rows
        and e.format != "fixed-width"
        and any(b - a > 1 for a, b in zip(bounds, bounds[1:], strict=False))
    )
    n = len(bounds)

    def label(k: int) -> str:
        last = bounds[k - 1]
        whole = k == n and doc and e.lines is not None and last >= e.lines
        if doc and not whole:  # a documentation file shown line by line
            what = f"the first {last:,} of {_count(e.lines)} lines"
        elif whole or (has_rows and t.rows is not None and k >= t.rows):
            what = f"all {_n(t.rows, 'row')}" if t.rows is not None else "all rows"
        elif has_rows:
            what = (
                f"the first {k:,} of {_count(t.rows, t.rows_exact)} rows"
                if t.rows is not None
                else f"the first {k:,} rows (of a number not known)"
            )
        else:
            what = "the header, no rows" if not t.rows else "the header only (its rows could not be read)"
        if k < n:
            what += ", " + SHORTENED
        elif has_rows and not doc and t.rows is not None and k < min(max_rows, t.rows):
            what += " (all the rows the index read)"
        parts = []
        h = t.header_row
        if h is None:
            parts.append("no header row")
        elif h == 1:
            parts.append("the header on line 1")
        else:
            parts.append(f"{_n(h - 1, 'line')} above the header, the header on line {h}")
        gap = (t.data_line - 1 - (h or 0)) if has_rows and t.data_line else 0
        if gap > 0:  # comment or blank lines before the first row (a fixed-width file's '#' lines)
            parts.append(f"{_n(gap, 'line')} {'above' if h is None else 'between the header and'} the rows")
        skipped = (last - t.data_line + 1 - k) if has_rows and t.data_line and not multiline else 0
        if skipped > 0 and not doc:
            parts.append(f"{_n(skipped, 'comment or blank line')} among the rows, not counted as rows")
        if multiline:
            parts.append("some rows run over several lines")
        if any(cut[:last]):
            parts.append(CUT_NOTE)
        if whole:
            parts.append(f"a small {doc}: shown whole")
        return f"{indent}{what}: {_where(e, last)} as in the file ({'; '.join(parts)}):\n"

    return label


def _raw_rows(
    t: TableInfo, e: FileEntry, raw: RawLines, max_rows: int, doc: str | None, level: int
) -> tuple[list[Block], bool]:
    """The rows of a table shown as its raw lines (all of a document's), at ``level``, after the line saying
    rows were left out when they were; and whether a document showed any."""
    if doc:
        bounds, has_rows = list(range(1, len(raw.lines) + 1)), True
    else:
        bounds, has_rows = table_bounds(t, max_rows, len(raw.lines))
    blocks = [Block(NO_ROWS, 1, level)] if bounds and has_rows else []
    blocks += raw_blocks(
        raw.lines, bounds, level + 1, table_label(e, t, bounds, has_rows, raw.cut, max_rows, doc=doc)
    )
    return blocks, bool(doc) and bool(bounds)


def text_label(
    e: FileEntry, n_lines: int, cut: list[bool], indent: str = "  ", doc: str | None = None
) -> Callable[[int], str]:
    """The label of a text file shown as raw lines (one line per chunk)."""

    def label(k: int) -> str:
        total = e.lines
        if total is not None and k >= total:
            what = f"all {_n(k, 'line')}"
        else:
            what = f"the first {k:,} of {_count(total)} lines"
        extras = ""
        if doc and total is not None and k >= total:
            extras += f" (a small {doc}: shown whole)"
        if k < n_lines:
            extras += ", " + SHORTENED
        if any(cut[:k]):
            extras += "; " + CUT_NOTE
        return f"{indent}{what} as in the file{extras}:\n"

    return label


def column_names(t: TableInfo, e: FileEntry, raw: RawLines | None) -> list[str]:
    """The names of a table's columns as its header line writes them (positions kept: duplicates and
    empty names are not renamed); the index's names when the header line is not at hand."""
    names = [c.name for c in t.columns]
    h = t.header_row
    if raw is None or h is None or h > len(raw.lines) or raw.cut[h - 1] or t.name is not None:
        return names
    if e.format not in ("csv", "gzip") or not e.delimiter:
        return names
    try:
        cells = next(csv_reader([raw.lines[h - 1]], delimiter=e.delimiter), [])
    except csv.Error:
        return names
    if len(cells) < len([c for c in t.columns if not c.name.startswith("(unnamed ")]):
        return names
    return [(cells[i].strip() or "(no name)") if i < len(cells) else "(no name)" for i in range(len(names))]


def types_line(t: TableInfo, names: list[str], indent: str = "  ") -> str:
    typed = ", ".join(f"{n} ({c.dtype})" for n, c in zip(names, t.columns, strict=True))
    head = "column types" + (
        " (no header row: columns by position)" if t.header_row is None and t.name is None else ""
    )
    return f"{indent}{head}: {typed}\n"


# ---- the paper's snippets ---------------------------------------------------------------------------


def paper_table(e: FileEntry) -> bool:
    """A CSV file, as the official code sees it: a delimited table named .csv (or .tsv)."""
    return e.format in PAPER_TABLE_FORMATS and len(e.tables) == 1 and _ext(e.path).lower() in {"csv", "tsv"}


def paper_file_blocks(
    e: FileEntry, display_path: str, max_rows: int, root: Path | None
) -> tuple[list[Block], bool]:
    """The paper's snippet of one file, and whether it is a documentation file shown whole: a CSV file
    as a type-annotated table, the whole table when it has fewer than ``max_rows`` (N) rows, else its
    first N rows; any other text file as its first N lines; a binary file by name and format only.
    Rows and lines are the file's own lines."""
    if e.error:
        return [Block(f"- {display_path}: {e.error}\n", 0)], False
    t = e.tables[0] if paper_table(e) else None
    desc = fmt_desc(e) if t is not None or e.format not in TEXT_FORMATS else _text_desc(e)
    summary = f"- {display_path} ({desc})"
    if t is not None:
        summary += ": " + table_shape(t)
    elif e.lines is not None and e.format in TEXT_FORMATS:
        summary += f": {_n(e.lines, 'line')}"
    blocks = [Block(summary + "\n", 0)]
    doc = whole_kind(e)
    if t is not None:
        if doc:
            raw = read_raw(e, root, None, doc=True)
        else:
            want = max(t.preview_line_ends[:max_rows] or [t.header_row or 0])
            raw = read_raw(e, root, want) if want else None
        if t.columns:
            blocks.append(Block(types_line(t, column_names(t, e, raw)), 1))
        if raw is None:
            return blocks, False
        rows, shown = _raw_rows(t, e, raw, max_rows, doc, 1)
        return blocks + rows, shown
    if e.format not in TEXT_FORMATS:
        blocks.append(Block("  (binary file: its content is not shown)\n", 0))
        return blocks, False
    raw = read_raw(e, root, None if doc else max_rows, doc=doc is not None)
    if raw is None or not raw.lines:
        return blocks, False
    bounds = list(range(1, len(raw.lines) + 1))
    blocks += raw_blocks(raw.lines, bounds, 1, text_label(e, len(bounds), raw.cut, doc=doc))
    return blocks, doc is not None


def _text_desc(e: FileEntry) -> str:
    enc = {"utf-8-sig": "utf-8 with BOM"}.get(e.encoding or "", e.encoding or "")
    return ", ".join(x for x in ("text", enc, human_size(e.size)) if x)


# ---- the richer rendering (a named option) ----------------------------------------------------------


def _cells_label(t: TableInfo, n_rows: int, indent: str) -> Callable[[int], str]:
    """The label of rows shown as cells (JSON records, a parquet file, an HTML table): not lines of a file."""
    name = f"[{t.name}] " if t.name else ""

    def label(k: int) -> str:
        if t.rows is not None and k >= t.rows:
            what = f"all {_n(t.rows, 'row')}"
        else:
            what = f"the first {k:,} of {_count(t.rows, t.rows_exact)} rows"
        if k < n_rows:
            what += ", " + SHORTENED
        if t.numbered_columns:
            under = "(no header row: pd.read_html numbers the columns 0, 1, …; "
        elif t.header_levels > 1:
            under = (
                f"under the column names (pandas reads a {t.header_levels}-level header: each name its levels "
                "joined by ' / ', 'Unnamed' levels left out; "
            )
        else:
            under = "under the column names ("
        breaks = "; line breaks in cells written \\n" if any(i < k for i in t.line_breaks) else ""
        return f"{indent}{name}{what}, as cells {under}not the file's bytes; long cells cut, marked …{breaks}):\n"

    return label


def _cell_rows_blocks(t: TableInfo, max_rows: int, first: int) -> list[Block]:
    preview = t.preview[:max_rows]
    if not preview:
        return []
    header = csv_line([c.name for c in t.columns]) if t.columns and not t.numbered_columns else ""
    lines = (header + "".join(csv_line(r) for r in preview)).splitlines()
    fence = fence_for(lines)
    blocks = [
        Block(
            "",
            first,
            label=lambda lv: _cells_label(t, len(preview), "  ")(max(1, min(lv - first + 1, len(preview)))),
        )
    ]
    blocks.append(Block(fence + "\n", first, raw=True, fence=True))
    blocks.append(Block(header + csv_line(preview[0]), first, raw=True))
    for k, row in enumerate(preview[1:], start=1):
        blocks.append(Block(csv_line(row), first + k, raw=True))
    blocks.append(Block(fence + "\n", first, raw=True, fence=True))
    return blocks


def column_detail_lines(t: TableInfo, names: list[str]) -> list[str]:
    """One line per column: its name and type, examples (text quoted, cut at 40), empty cells, other values."""
    detail = []
    for n, c in zip(names, t.columns, strict=True):
        line = f"   - {n}: {c.dtype}"
        if c.examples:
            quote = not c.dtype.startswith(
                ("integer", "float", "date", "datetime", "boolean", "time", "percent")
            )
            line += "; e.g. " + ", ".join(q(x, 40) if quote else x for x in c.examples)
        if c.missing:
            line += f"; {c.missing} empty in sample"
        if c.other_values:
            line += "; also " + ", ".join(q(x, 20) for x in c.other_values[:3])
        detail.append(line + "\n")
    return detail


def _columns_blocks(t: TableInfo, names: list[str]) -> list[Block]:
    blocks: list[Block] = []
    label = f"  [{t.name}] " if t.name else "  "
    if not t.columns:
        return blocks
    compact = ", ".join(f"{n} ({c.dtype})" for n, c in zip(names[:40], t.columns[:40], strict=True))
    if len(t.columns) > 40:
        compact += f", … {len(t.columns) - 40} more"
    blocks.append(Block(f"{label}columns: {compact}\n", 1, 1))
    detail = column_detail_lines(t, names)
    head = (
        "columns (examples longer than 40 characters cut, marked …)"
        if any(len(x) > 40 for c in t.columns for x in c.examples)
        else "columns"
    )
    blocks.append(Block(f"{label}{head}:\n" + "".join(detail), 2))
    return blocks


def _line_based(e: FileEntry) -> bool:
    return (
        len(e.tables) == 1
        and e.tables[0].name is None
        and bool(e.tables[0].preview_line_ends)
        and (e.format in ("csv", "fixed-width") or e.format == "gzip")
    )


def _raw_text(e: FileEntry) -> bool:
    """The text preview of the index is the file's first lines (not an outline made from it)."""
    return e.format in ("text", "fixed-width", "csv", "gzip") or any(
        n.startswith(("large JSON", "large HTML")) for n in e.notes
    )


def file_blocks(
    e: FileEntry, display_path: str, max_rows: int, root: Path | None
) -> tuple[list[Block], bool]:
    """The richer rendering of one file (format, header detection, typed columns with examples, every
    sheet), and whether it is a documentation file shown whole."""
    if e.error:
        return [Block(f"- {display_path}: {e.error}\n", 0)], False
    summary = f"- {display_path} ({fmt_desc(e)})"
    if e.tables and len(e.tables) == 1 and e.tables[0].name is None:
        summary += ": " + table_shape(e.tables[0], lines=e.format in ("csv", "fixed-width", "gzip"))
    elif e.lines is not None and not e.tables:
        summary += f": {_n(e.lines, 'line')}"
    blocks = [Block(summary + "\n", 0)]
    if e.sheets is not None or (e.tables and e.tables[0].name is not None):
        shapes = {t.name: t for t in e.tables}
        names = e.sheets if e.sheets is not None else [t.name or "" for t in e.tables]
        kind = "sheets" if e.sheets is not None else "tables"
        listed = []
        for s in names:
            t = shapes.get(s)
            listed.append(
                q(s, 50) + (f" ({t.rows if t.rows is not None else '?'}×{len(t.columns)})" if t else "")
            )
        blocks.append(Block(f"  {kind} (rows×columns): {', '.join(listed)}\n", 0))
        for t in e.tables:
            numbered = (
                "; no header row (pd.read_html numbers the columns 0, 1, …)" if t.numbered_columns else ""
            )
            blocks.append(Block(f"  [{t.name}] {table_shape(t)}{numbered}\n", 1))
    for n in e.notes:
        blocks.append(Block(f"   note: {n[:400]}\n", 1))
    doc = whole_kind(e)
    if _line_based(e):
        t = e.tables[0]
        want = None if doc else max(t.preview_line_ends[:max_rows])
        raw = read_raw(e, root, want, doc=doc is not None)
        blocks += _columns_blocks(t, column_names(t, e, raw))
        blocks += [Block(f"   note: {n}\n", 1) for n in t.notes]
        if raw is None:
            return blocks, False
        rows, shown = _raw_rows(t, e, raw, max_rows, doc, 2)
        return blocks + rows, shown
    for t in e.tables:
        blocks += _columns_blocks(t, [c.name for c in t.columns])
        blocks += [Block(f"   note: {n}\n", 1) for n in t.notes]
        rows = _cell_rows_blocks(t, max_rows, 3)
        if rows:
            blocks.append(Block(NO_ROWS, 1, 2))
        blocks += rows
    if e.text_preview and not e.tables:
        if _raw_text(e):
            raw = read_raw(e, root, None if doc else max_rows, doc=doc is not None)
            if raw is not None and raw.lines:
                bounds = list(range(1, len(raw.lines) + 1))
                blocks += raw_blocks(raw.lines, bounds, 1, text_label(e, len(bounds), raw.cut, doc=doc))
                return blocks, doc is not None
            return blocks, False
        lines = e.text_preview[:max_rows]
        what = (
            "an outline of the document (pretty-printed and shortened, not the file's lines)"
            if e.format in ("json", "jsonl")
            else "the text of the page (markup removed, not the file's lines)"
        )
        n_lines = len(lines)

        def label(k: int) -> str:
            return f"  {what}" + (f", {SHORTENED}" if k < n_lines else "") + ":\n"

        blocks += raw_blocks(lines, list(range(1, n_lines + 1)), 1, label)
    return blocks, False


__all__ = [
    "DOC_MAX_BYTES",
    "PAPER_TABLE_FORMATS",
    "TEXT_FORMATS",
    "Block",
    "FileRender",
    "estimate_tokens",
    "file_blocks",
    "human_size",
    "is_documentation",
    "whole_kind",
    "paper_file_blocks",
]
