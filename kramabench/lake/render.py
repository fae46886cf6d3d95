"""Render lake entries as prompt text under a token budget shared fairly across files.

Each file is rendered as blocks tied to detail levels (0: one summary line; 1: compact columns and
notes; 2: columns with types and examples; 3..: first data rows, one more per level). The budget is
shared max-min fairly: every file gets the richest level whose cost stays under a common cap, the cap
being the highest one that fits; the leftover goes to files in order. If even the summary lines do not
fit, the files are listed by name, grouped by folder, and cut with a count of what was left out.
"""

from __future__ import annotations

import bisect
import csv
import io
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .models import FileEntry, TableInfo
from .readers import delimiter_name
from .secrets import MASK, mask_secrets, may_hold_secrets

# one match = one estimated token: letters in chunks of 4, digits in chunks of 3, any other symbol alone
_TOKEN_RE = re.compile(r"[A-Za-z]{1,4}|\d{1,3}|[^\sA-Za-z\d]|\n")
_BIG = 10**9
#: same-column files of one folder shown once (with the others' names and row counts) from this many on
FOLD_MIN = 3


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


@dataclass
class FileRender:
    path: str
    blocks: list[Block]
    costs: list[int]  # cost at each level
    prefmax: list[int]  # running max of costs (for monotone search)
    masked: list[str] = field(default_factory=list)  # kinds of secrets masked in this render
    masked_files: dict[str, list[str]] = field(default_factory=dict)  # lake path -> kinds masked
    folded: dict | None = None  # what a folded group stands for (recorded in the prompt facts)

    @property
    def max_level(self) -> int:
        return len(self.costs) - 1

    def text(self, level: int) -> str:
        return "".join(b.text for b in self.blocks if b.lo <= level <= b.hi)


def _fmt_desc(e: FileEntry) -> str:
    parts = [e.format]
    if e.format == "csv":
        parts = [f"csv ({delimiter_name(e.delimiter)}-separated)"]
    if e.encoding:
        parts.append({"utf-8-sig": "utf-8 with BOM"}.get(e.encoding, e.encoding))
    parts.append(human_size(e.size))
    return ", ".join(parts)


def _table_shape(t: TableInfo) -> str:
    rows = "? rows" if t.rows is None else f"{t.rows} rows" + ("" if t.rows_exact else " (estimated)")
    s = f"{rows} × {len(t.columns)} columns"
    if t.header_row and t.header_row > 1:
        unit = "row" if t.name is not None else "line"
        s += f"; header on {unit} {t.header_row} ({t.header_row - 1} {unit}s above it)"
    elif t.header_row is None and t.columns and t.name is None:
        s += "; no header row"
    if t.above_header:
        s += "; above the header: " + " / ".join(_q(a, 80) for a in t.above_header[:3])
    return s


def _q(s: str, limit: int = 60) -> str:
    s = s if len(s) <= limit else s[: limit - 1] + "…"
    return '"' + s.replace('"', "'") + '"'


def _csv_line(cells: Sequence[str], delimiter: str | None = ",") -> str:
    """One row as the file writes it: with its own delimiter (tab, semicolon, ...), quoted as needed."""
    buf = io.StringIO()
    d = delimiter if delimiter and len(delimiter) == 1 else ","
    csv.writer(buf, delimiter=d, lineterminator="\n").writerow(cells)
    return buf.getvalue()


def _table_blocks(t: TableInfo, max_rows: int, base: int = 0, delimiter: str | None = ",") -> list[Block]:
    blocks: list[Block] = []
    label = f"  [{t.name}] " if t.name else "  "
    if t.columns:
        compact = ", ".join(f"{c.name} ({c.dtype})" for c in t.columns[:40])
        if len(t.columns) > 40:
            compact += f", … {len(t.columns) - 40} more"
        blocks.append(Block(f"{label}columns: {compact}\n", 1, 1))
        detail = []
        for c in t.columns:
            line = f"   - {c.name}: {c.dtype}"
            if c.examples:
                quote = not c.dtype.startswith(("integer", "float", "date", "datetime", "boolean", "time", "percent"))
                line += "; e.g. " + ", ".join(_q(x, 40) if quote else x for x in c.examples)
            if c.missing:
                line += f"; {c.missing} empty in sample"
            if c.other_values:
                line += "; also " + ", ".join(_q(x, 20) for x in c.other_values[:3])
            detail.append(line + "\n")
        blocks.append(Block(f"{label}columns:\n" + "".join(detail), 2))
    for n in t.notes:
        blocks.append(Block(f"   note: {n}\n", 1))
    preview = t.preview[:max_rows]
    if preview:
        whole = t.rows is not None and t.rows <= len(preview)
        head = "all rows" if whole else f"first rows (of {t.rows if t.rows is not None else '?'})"
        header = _csv_line([c.name for c in t.columns], delimiter) if t.columns else ""
        if delimiter and delimiter != ",":
            head += f" ({delimiter_name(delimiter)}-separated, as in the file)"
        blocks.append(Block(f"{label}{head}:\n" + header + _csv_line(preview[0], delimiter), 3))
        for k, row in enumerate(preview[1:], start=2):
            blocks.append(Block(_csv_line(row, delimiter), 2 + k))
    return blocks


def file_blocks(e: FileEntry, display_path: str, max_rows: int) -> list[Block]:
    if e.error:
        return [Block(f"- {display_path}: {e.error}\n", 0)]
    summary = f"- {display_path} ({_fmt_desc(e)})"
    if e.tables and len(e.tables) == 1 and e.tables[0].name is None:
        summary += ": " + _table_shape(e.tables[0])
    elif e.lines is not None and not e.tables:
        summary += f": {e.lines} lines"
    summary += "\n"
    blocks = [Block(summary, 0)]
    if e.sheets is not None or (e.tables and e.tables[0].name is not None):
        shapes = {t.name: t for t in e.tables}
        names = e.sheets if e.sheets is not None else [t.name or "" for t in e.tables]
        kind = "sheets" if e.sheets is not None else "tables"
        listed = []
        for s in names:
            t = shapes.get(s)
            listed.append(_q(s, 50) + (f" ({t.rows if t.rows is not None else '?'}×{len(t.columns)})" if t else ""))
        blocks.append(Block(f"  {kind} (rows×columns): {', '.join(listed)}\n", 0))
        for t in e.tables:
            blocks.append(Block(f"  [{t.name}] {_table_shape(t)}\n", 1))
    for n in e.notes:
        blocks.append(Block(f"   note: {n[:400]}\n", 1))
    for t in e.tables:
        blocks.extend(_table_blocks(t, max_rows, delimiter=e.delimiter if e.format == "csv" else ","))
    if e.text_preview:
        lines = e.text_preview[:max_rows]
        blocks.append(Block("  first lines:\n   " + lines[0] + "\n", 1))
        for k, ln in enumerate(lines[1:], start=2):
            blocks.append(Block("   " + ln + "\n", k))
    return blocks


#: how lake files are shown: the paper's snippets, or the richer rendering (a named option)
STYLES = ("paper", "rich")
#: formats the paper's official code reads as tables (everything else is read as text)
PAPER_TABLE_FORMATS = {"csv"}
_TEXT_FORMATS = {"csv", "fixed-width", "text", "json", "jsonl", "html"}


def _paper_table(e: FileEntry) -> bool:
    """A CSV file, as the official code sees it: a delimited table named .csv (or .tsv)."""
    return e.format in PAPER_TABLE_FORMATS and len(e.tables) == 1 and _ext(e.path) in {"csv", "tsv"}


def paper_file_blocks(e: FileEntry, display_path: str, max_rows: int, lines: list[str] | None) -> list[Block]:
    """The paper's snippet of one file: a CSV file as a type-annotated table, the whole table when it has
    fewer than ``max_rows`` (N) rows, else its first N rows; any other text file as its first N lines;
    a binary file (spreadsheet, parquet, archive...) by name and format only."""
    if e.error:
        return [Block(f"- {display_path}: {e.error}\n", 0)]
    t = e.tables[0] if _paper_table(e) else None
    desc = _fmt_desc(e) if t is not None or e.format not in _TEXT_FORMATS else f"text, {human_size(e.size)}"
    summary = f"- {display_path} ({desc})"
    if t is not None:
        summary += ": " + _table_shape(t)
    elif e.lines is not None:
        summary += f": {e.lines} line{'s' if e.lines != 1 else ''}"
    blocks = [Block(summary + "\n", 0)]
    if t is not None:
        if t.columns:
            typed = ", ".join(f"{c.name} ({c.dtype})" for c in t.columns)
            blocks.append(Block(f"  column types: {typed}\n", 1))
        preview = t.preview[:max_rows]
        if preview:
            whole = t.rows is not None and t.rows <= len(preview)
            head = f"all {len(preview)} rows" if whole else f"first {len(preview)} rows (of {t.rows if t.rows is not None else '?'})"
            if e.delimiter and e.delimiter != ",":
                head += f", {delimiter_name(e.delimiter)}-separated as in the file"
            header = _csv_line([c.name for c in t.columns], e.delimiter) if t.columns else ""
            blocks.append(Block(f"  {head}:\n" + header + _csv_line(preview[0], e.delimiter), 2))
            for k, row in enumerate(preview[1:], start=3):
                blocks.append(Block(_csv_line(row, e.delimiter), k))
        return blocks
    if e.format not in _TEXT_FORMATS:
        blocks.append(Block("  (binary file: its content is not shown)\n", 0))
        return blocks
    shown = (lines if lines is not None else e.text_preview)[:max_rows]
    if shown:
        total = e.lines
        head = "all lines" if total is not None and total <= len(shown) else f"first {len(shown)} lines"
        blocks.append(Block(f"  {head}:\n   " + shown[0] + "\n", 1))
        for k, ln in enumerate(shown[1:], start=2):
            blocks.append(Block("   " + ln + "\n", k))
    return blocks


def head_lines(path: Path, n: int, encoding: str | None, max_bytes: int = 256 * 1024, width: int = 200) -> list[str]:
    """The first ``n`` lines of a text file (each cut at ``width`` characters); [] when unreadable."""
    try:
        with open(path, "rb") as f:
            raw = f.read(max_bytes)
    except OSError:
        return []
    try:
        text = raw.decode(encoding or "utf-8", "replace")
    except LookupError:
        text = raw.decode("utf-8", "replace")
    out = text.lstrip("\ufeff").splitlines()[:n]
    if len(raw) == max_bytes and len(out) == len(text.splitlines()):
        out = out[:-1] if len(out) > 1 else out  # the last line may be cut
    return [ln if len(ln) <= width else ln[: width - 1] + "…" for ln in out]


_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----")


def _masked_blocks(blocks: list[Block]) -> list[str]:
    """Mask secrets in every block's text (in place); the kinds found. A private key whose lines run
    over several blocks (one line per block) is masked up to its END line."""
    kinds: list[str] = []
    if not may_hold_secrets("".join(b.text for b in blocks)):
        return kinds
    in_key = False
    for b in blocks:
        if in_key:
            end = _PEM_END.search(b.text)
            b.text = (MASK + "\n") if end is None else MASK + b.text[end.end():]
            in_key = end is None
            continue
        begins = _PEM_BEGIN.search(b.text) if "PRIVATE KEY" in b.text else None
        in_key = begins is not None and _PEM_END.search(b.text, begins.end()) is None
        b.text, found = mask_secrets(b.text)
        kinds += found
    return kinds


def _finish(display_path: str, blocks: list[Block], masked: list[str] | None = None) -> FileRender:
    for b in blocks:
        b.cost = estimate_tokens(b.text)
    top = max(b.lo for b in blocks)
    delta = [0] * (top + 2)  # cost at each level in one pass: a block counts from its lo to its hi
    for b in blocks:
        delta[b.lo] += b.cost
        if b.hi < top:
            delta[b.hi + 1] -= b.cost
    costs = []
    run = 0
    for lv in range(top + 1):
        run += delta[lv]
        costs.append(run)
    prefmax = []
    m = 0
    for c in costs:
        m = max(m, c)
        prefmax.append(m)
    return FileRender(display_path, blocks, costs, prefmax, masked=list(masked or []))


def prepare(
    e: FileEntry, display_path: str, max_rows: int, *, style: str = "rich", root: Path | None = None
) -> FileRender:
    if style == "paper":
        lines = None
        if root is not None and not e.error and e.format in _TEXT_FORMATS and not _paper_table(e):
            lines = head_lines(Path(root) / e.path, max_rows, e.encoding)
        blocks = paper_file_blocks(e, display_path, max_rows, lines)
    else:
        blocks = file_blocks(e, display_path, max_rows)
    masked = _masked_blocks(blocks)
    fr = _finish(display_path, blocks, masked)
    fr.masked_files = {e.path: masked} if masked else {}
    return fr


def _level_for(fr: FileRender, cap: int) -> int:
    return max(0, bisect.bisect_right(fr.prefmax, cap) - 1)


def allocate(renders: Sequence[FileRender], budget: int) -> list[int] | None:
    """Detail level per file under ``budget`` tokens (max-min fair); None if summaries do not fit."""
    base = sum(fr.costs[0] for fr in renders)
    if base > budget:
        return None
    candidates = sorted({c for fr in renders for c in fr.prefmax})
    lo, hi = 0, len(candidates) - 1
    best = 0
    while lo <= hi:
        mid = (lo + hi) // 2
        cap = candidates[mid]
        total = sum(fr.costs[_level_for(fr, cap)] for fr in renders)
        if total <= budget:
            best = mid
            lo = mid + 1
        else:
            hi = mid - 1
    cap = candidates[best] if candidates else 0
    levels = [_level_for(fr, cap) for fr in renders]
    total = sum(fr.costs[lv] for fr, lv in zip(renders, levels, strict=True))
    # hand out the leftover one level at a time, in file order, while it fits
    progress = True
    while progress:
        progress = False
        for i, fr in enumerate(renders):
            lv = levels[i]
            if lv < fr.max_level:
                extra = fr.costs[lv + 1] - fr.costs[lv]
                if total + extra <= budget:
                    levels[i] = lv + 1
                    total += extra
                    progress = True
    return levels


def list_paths(paths: Sequence[str], budget: int) -> str:
    """Paths grouped by folder, cut to the budget with a count of what is not shown."""
    groups: dict[str, list[str]] = {}
    for p in paths:
        d, _, name = p.rpartition("/")
        groups.setdefault(d, []).append(name)
    out: list[str] = []
    used = 0
    shown = 0
    for d, names in groups.items():
        head = f"- {d}/ ({len(names)} files): " if d else "- "
        line_cost = estimate_tokens(head)
        if used + line_cost + 30 > budget:
            break
        kept = []
        for n in names:
            c = estimate_tokens(n) + 1
            if used + line_cost + c + 30 > budget:
                break
            kept.append(n)
            line_cost += c
        out.append(head + ", ".join(kept) + ("" if len(kept) == len(names) else ", …") + "\n")
        used += line_cost
        shown += len(kept)
        if len(kept) < len(names):
            break
    if shown < len(paths):
        out.append(f"(… {len(paths) - shown} more files not listed: list the folder in code to see them all)\n")
    return "".join(out)


def _signature(e: FileEntry) -> tuple:
    d = e.path.rpartition("/")[0]
    if e.error:
        return (d, "error", e.path)
    # title lines above the header often say what a file is about (a place, a year): they must match too
    tables = tuple((t.name, tuple(c.name for c in t.columns), tuple(t.above_header)) for t in e.tables)
    return (d, e.format, e.delimiter, e.encoding, tables)


def _compact_names(names: list[str]) -> str:
    if len(names) <= 6:
        return ", ".join(names)
    pre = names[0]
    suf = names[0]
    for n in names[1:]:
        while not n.startswith(pre):
            pre = pre[:-1]
        while not n.endswith(suf):
            suf = suf[1:]
    pattern = f" (all named {pre}*{suf})" if (pre or suf) and len(pre) + len(suf) >= 3 else ""
    return ", ".join(names[:3]) + ", …, " + ", ".join(names[-2:]) + pattern


def _groups(entries: list[FileEntry], cache: dict | None) -> list[list[FileEntry]]:
    """Entries grouped by folder, format and columns, in order of first appearance."""
    groups: dict[tuple, list[FileEntry]] = {}
    for e in entries:
        skey = ("sig", e.content_hash, e.path, e.error)
        sig = cache.get(skey) if cache is not None else None
        if sig is None:
            sig = _signature(e)
            if cache is not None:
                cache[skey] = sig
        groups.setdefault(sig, []).append(e)
    return list(groups.values())


def _single(e: FileEntry, prefix: str, max_rows: int, cache: dict | None, style: str = "rich",
            root: Path | None = None) -> FileRender:
    key = (e.content_hash, e.path, e.error, prefix, max_rows, style)
    fr = cache.get(key) if cache is not None else None
    if fr is None:
        fr = prepare(e, prefix + e.path, max_rows, style=style, root=root)
        if cache is not None:
            cache[key] = fr
    return fr


def _folded(members: list[FileEntry], prefix: str, max_rows: int, cache: dict | None, with_rows: bool,
            style: str = "rich", root: Path | None = None) -> FileRender:
    """One render for files of a folder with the same columns: the first in full, the others by name."""
    rep = members[0]
    key = ("group", rep.content_hash, hash(tuple(m.path for m in members)), prefix, max_rows, with_rows, style)
    fr = cache.get(key) if cache is not None else None
    if fr is not None:
        return fr
    fr = prepare(rep, prefix + rep.path, max_rows, style=style, root=root)
    d = rep.path.rpartition("/")[0]
    names = [m.path.rpartition("/")[2] for m in members[1:]]
    what = "columns" if rep.tables else "format"
    if with_rows and len(names) <= 40:
        listed = ", ".join(
            n + (f" ({m.rows} rows)" if m.rows is not None else "") for n, m in zip(names, members[1:], strict=True)
        )
        tail = f"with the same {what}: {listed}"
    else:
        tail = f"with the same {what} (row counts may differ): {_compact_names(names)}"
    loc = prefix + (d + "/" if d else "")
    where = f" in {loc}" if loc else ""
    extra = Block(f"  + {len(names)} more file{'s' if len(names) != 1 else ''}{where} {tail}\n", 0)
    extra.cost = estimate_tokens(extra.text)
    fr = FileRender(fr.path, [fr.blocks[0], extra, *fr.blocks[1:]], [c + extra.cost for c in fr.costs],
                    [c + extra.cost for c in fr.prefmax], masked=fr.masked, masked_files=fr.masked_files)
    if cache is not None:
        cache[key] = fr
    return fr


# ---- folders that repeat: N sibling folders holding the same kind of files, shown once ---------------

_DIGITS_RE = re.compile(r"\d+")


def _ext(name: str) -> str:
    base = name.rpartition("/")[2]
    return base.rpartition(".")[2].lower() if "." in base.strip(".") else ""


def _kind(e: FileEntry) -> tuple:
    """What a file is, for deciding whether two folders hold the same kind of files: its extension and
    format, and for a delimited table its columns (two folders of different tables are not repeats)."""
    ext = _ext(e.path)
    table = e.format == "csv" and ext in {"csv", "tsv"}
    # a text file sniffed as one format here and another there (a header file that looks delimited) is text
    fam = "text" if e.format in _TEXT_FORMATS and not table else e.format
    cols = tuple(c.name for t in e.tables for c in t.columns) if table else ()
    return (ext, fam, cols, bool(e.error))


def repeated_folders(entries: Sequence[FileEntry], min_folders: int = FOLD_MIN) -> list[list[str]]:
    """Groups of sibling folders (same parent, digits aside) whose files are of the same kinds, each
    group at least ``min_folders`` folders, in order of first appearance (folder paths, lake-relative)."""
    by_folder: dict[str, list[FileEntry]] = {}
    for e in entries:
        d = e.path.rpartition("/")[0]
        if d:
            by_folder.setdefault(d, []).append(e)
    groups: dict[tuple, list[str]] = {}
    for d, files in by_folder.items():
        parent = d.rpartition("/")[0]
        shape = tuple(sorted(_kind(e) for e in files))
        groups.setdefault((_DIGITS_RE.sub("#", parent), shape), []).append(d)
    return [folders for folders in groups.values() if len(folders) >= min_folders]


def _kinds_text(files: Sequence[FileEntry]) -> str:
    counts: dict[str, int] = {}
    for e in files:
        ext = _ext(e.path)
        label = f".{ext}" if ext else e.format
        counts[label] = counts.get(label, 0) + 1
    return " + ".join(f"{n} {k} file{'s' if n != 1 else ''}" for k, n in counts.items())


def _folder_group(
    folders: list[str], files_of: dict[str, list[FileEntry]], prefix: str, max_rows: int, cache: dict | None,
    style: str, root: Path | None,
) -> FileRender:
    """One render for a group of repeated folders: a line with the count and the folders' names, then
    the files of the first folder as the example."""
    rep = folders[0]
    key = ("folders", hash(tuple(folders)), tuple(e.content_hash for e in files_of[rep]), prefix, max_rows, style)
    fr = cache.get(key) if cache is not None else None
    if fr is not None:
        return fr
    parent = posixpath.commonpath(folders) if len(folders) > 1 else rep.rpartition("/")[0]
    if parent in folders:
        parent = parent.rpartition("/")[0]
    names = [f[len(parent) + 1 :] if parent else f for f in folders]
    loc = prefix + (parent + "/" if parent else "")
    n_files = sum(len(files_of[f]) for f in folders)
    head = Block(
        f"- {len(folders)} folders {'under ' + loc if loc else 'in the lake'} hold the same kinds of files "
        f"(each: {_kinds_text(files_of[rep])}; {n_files} files in all): {_compact_names(names)}. "
        f"The files of {prefix}{rep}/ are shown as the example:\n",
        0,
    )
    blocks = [head]
    masked: dict[str, list[str]] = {}
    for e in files_of[rep]:
        one = _single(e, prefix, max_rows, cache, style, root)
        blocks += [Block("  " + b.text.replace("\n", "\n  ").rstrip(" ") if b.text.startswith("- ") else b.text, b.lo, b.hi)
                   for b in one.blocks]
        masked.update(one.masked_files)
    fr = _finish(prefix + rep + "/", blocks, [k for v in masked.values() for k in v])
    fr.masked_files = masked
    fr.folded = {"folders": len(folders), "files": n_files, "example": rep, "parent": parent}
    if cache is not None:
        cache[key] = fr
    return fr


@dataclass
class Rendered:
    text: str
    tokens: int
    levels: dict[str, int]
    mode: str  # "detail" | "grouped" (every same-column group folded, names compacted) | "names"
    #: lake path -> kinds of secrets masked in the text shown of it
    masked: dict[str, list[str]] = field(default_factory=dict)
    #: groups of repeated folders shown once (count, example folder)
    folded_folders: list[dict] = field(default_factory=list)
    #: files shown with fewer rows/lines than the sampling rule gives, for the budget
    shortened: list[str] = field(default_factory=list)


def _fit(renders: list[FileRender], budget: int, mode: str) -> Rendered | None:
    levels = allocate(renders, budget)
    if levels is None:
        return None
    text = "".join(fr.text(lv) for fr, lv in zip(renders, levels, strict=True))
    tokens = sum(fr.costs[lv] for fr, lv in zip(renders, levels, strict=True))
    masked: dict[str, list[str]] = {}
    for fr in renders:
        masked.update(fr.masked_files)
    return Rendered(
        text, tokens, {fr.path: lv for fr, lv in zip(renders, levels, strict=True)}, mode, masked=masked,
        folded_folders=[fr.folded for fr in renders if fr.folded],
        shortened=[fr.path for fr, lv in zip(renders, levels, strict=True) if lv < fr.max_level],
    )


def render_entries(
    entries: Iterable[FileEntry],
    *,
    budget_tokens: int,
    path_prefix: str = "",
    max_rows: int = 10,
    content: bool = True,
    cache: dict | None = None,
    style: str = "rich",
    root: Path | None = None,
) -> Rendered:
    """The files as prompt text within ``budget_tokens`` (estimated).

    ``content=False`` renders names and paths only (no byte of the data).
    ``style``: ``"paper"`` (the paper's snippets: CSV files as type-annotated tables, the whole table
    under ``max_rows`` rows else the first ``max_rows``; other text files as their first lines, read
    from ``root``) or ``"rich"`` (formats, header detection, column types with examples, sheets).
    Either way, sibling folders holding the same kinds of files are shown once (count + example) and
    secrets are masked.
    ``cache``: a dict kept by the caller (the index) to reuse prepared renders across tasks.
    """
    if style not in STYLES:
        raise ValueError(f"unknown lake rendering {style!r} (known: {', '.join(STYLES)})")
    entries = list(entries)
    prefix = path_prefix.rstrip("/") + "/" if path_prefix else ""
    if not content:
        lines = [f"- {prefix}{e.path}\n" for e in entries]
        text = "".join(lines)
        if estimate_tokens(text) > budget_tokens:
            text = list_paths([prefix + e.path for e in entries], budget_tokens)
        return Rendered(text, estimate_tokens(text), {}, "names")
    # 0. groups of repeated sibling folders: one unit each, placed where their first folder was
    files_of: dict[str, list[FileEntry]] = {}
    for e in entries:
        files_of.setdefault(e.path.rpartition("/")[0], []).append(e)
    folder_units: dict[str, FileRender] = {}
    in_group: set[str] = set()
    for folders in repeated_folders(entries):
        folder_units[folders[0]] = _folder_group(folders, files_of, prefix, max_rows, cache, style, root)
        in_group.update(folders)
    rest = [e for e in entries if e.path.rpartition("/")[0] not in in_group]
    groups = _groups(rest, cache)
    order = {e.path: i for i, e in enumerate(entries)}
    first_of = {d: order[files_of[d][0].path] for d in folder_units}

    def ordered(units: list[tuple[int, FileRender]]) -> list[FileRender]:
        units += [(first_of[d], fr) for d, fr in folder_units.items()]
        return [fr for _, fr in sorted(units, key=lambda x: x[0])]

    # 1. every file on its own, except runs of >= FOLD_MIN same-column files of a folder, folded into one
    units: list[tuple[int, FileRender]] = []
    for g in groups:
        if len(g) >= FOLD_MIN and g[0].tables:
            units.append((order[g[0].path], _folded(g, prefix, max_rows, cache, True, style, root)))
        else:
            units.extend((order[e.path], _single(e, prefix, max_rows, cache, style, root)) for e in g)
    out = _fit(ordered(units), budget_tokens, "detail")
    if out is not None:
        return out
    # 2. every group of two or more folded, names compacted
    if any(len(g) > 1 for g in groups):
        units = [(order[g[0].path], _folded(g, prefix, max_rows, cache, False, style, root) if len(g) > 1
                  else _single(g[0], prefix, max_rows, cache, style, root)) for g in groups]
        out = _fit(ordered(units), budget_tokens, "grouped")
        if out is not None:
            return out
    # 3. names only
    text = list_paths([prefix + e.path for e in entries], budget_tokens)
    return Rendered(text, estimate_tokens(text), {}, "names")


__all__ = [
    "PAPER_TABLE_FORMATS",
    "STYLES",
    "Rendered",
    "allocate",
    "estimate_tokens",
    "head_lines",
    "human_size",
    "list_paths",
    "render_entries",
    "repeated_folders",
]
