"""Render lake entries as prompt text under a token budget shared fairly across files.

Each file is rendered as blocks tied to detail levels (:mod:`.snippets`: 0 is one summary line, then
columns, then one more row or line per level, each content block labelled with what it shows at the
level chosen). The budget is shared max-min fairly: every file gets the richest level whose cost stays
under a common cap, the cap being the highest one that fits; the leftover goes to files in order. Small
documentation files are shown whole first (up to half the budget together). A file byte-identical to
one shown before it is one line naming that file. If even the summary lines do not fit, the files are
listed by name, grouped by folder, and cut with a count of what was left out.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from .models import FileEntry
from .secrets import MASK, mask_secrets, may_hold_secrets
from .sheet_snippets import sheet_file_blocks
from .snippets import (
    PAPER_TABLE_FORMATS,
    TEXT_FORMATS,
    Block,
    FileRender,
    estimate_tokens,
    file_blocks,
    fmt_desc,
    human_size,
    paper_file_blocks,
    whole_from_level_1,
)
from .snippets import _ext as _ext_case

#: what a file is, for grouping it with the same-column files of its folder (see :func:`_signature`)
Signature = tuple[Hashable, ...]
#: what :func:`render_entries` keeps across calls (the index holds one), by keys of distinct shapes: the
#: files' signatures and the renders prepared
RenderCache = dict[tuple[Hashable, ...], "Signature | FileRender"]

#: same-column files of one folder shown once (with the others' names and row counts) from this many on
FOLD_MIN = 3
#: STYLES: how lake files are shown: the paper's snippets, or the richer rendering (a named option)
STYLES = ("paper", "rich")
#: documentation files shown whole take at most this share of the budget together (the rest as any file)
DOC_SHARE = 0.5


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
        if b.fence or b.label is not None:  # our own text, not the file's
            continue
        if in_key:
            end = _PEM_END.search(b.text)
            b.text = (MASK + "\n") if end is None else MASK + b.text[end.end() :]
            in_key = end is None
            continue
        begins = _PEM_BEGIN.search(b.text) if "PRIVATE KEY" in b.text else None
        in_key = begins is not None and _PEM_END.search(b.text, begins.end()) is None
        masked, found = mask_secrets(b.text)
        if in_key and b.text.endswith("\n") and not masked.endswith("\n"):
            masked += "\n"  # a key masked to the end of its block keeps the block's line end
        b.text = masked
        kinds += found
    return kinds


def _finish(display_path: str, blocks: list[Block], masked: list[str] | None = None) -> FileRender:
    top = max(b.lo for b in blocks)
    for b in blocks:
        if b.label is not None:  # a label's counts change with the level: the costlier of its two ends
            b.cost = max(estimate_tokens(b.label(b.lo)), estimate_tokens(b.label(top)))
        else:
            b.cost = estimate_tokens(b.text)
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
    """The blocks of one file; ``root`` (the lake folder) is where the lines of text files are read."""
    if style == "paper":
        blocks, whole = paper_file_blocks(e, display_path, max_rows, root)
    elif e.sheets is not None and not e.error:
        blocks, whole = sheet_file_blocks(e, display_path, max_rows), False
    else:
        blocks, whole = file_blocks(e, display_path, max_rows, root)
    masked = _masked_blocks(blocks)
    if masked:  # the lines shown are then not the file's, byte for byte: say where they differ
        blocks.insert(1, Block(f"   note: {MASKED_NOTE}\n", 1))
    fr = _finish(display_path, blocks, masked)
    fr.masked_files = {e.path: masked} if masked else {}
    if whole:
        fr.floor = fr.max_level
    return fr


def _level_for(fr: FileRender, cap: int, floor: int = 0) -> int:
    return max(floor, bisect.bisect_right(fr.prefmax, cap) - 1)


def _floors(renders: Sequence[FileRender], budget: int) -> list[int]:
    """The level each file gets whatever the cap: documentation files whole, in order, while they take
    at most ``DOC_SHARE`` of the budget together (and the summaries still fit)."""
    total = sum(fr.costs[0] for fr in renders)
    extra = 0
    floors = []
    for fr in renders:
        more = fr.costs[fr.floor] - fr.costs[0] if fr.floor else 0
        if fr.floor and extra + more <= DOC_SHARE * budget and total + extra + more <= budget:
            extra += more
            floors.append(fr.floor)
        else:
            floors.append(0)
    return floors


def allocate(renders: Sequence[FileRender], budget: int) -> list[int] | None:
    """Detail level per file under ``budget`` tokens (max-min fair above the floors of documentation
    files); None if summaries do not fit."""
    base = sum(fr.costs[0] for fr in renders)
    if base > budget:
        return None
    floors = _floors(renders, budget)
    candidates = sorted({c for fr in renders for c in fr.prefmax})
    lo, hi = 0, len(candidates) - 1
    best = -1
    while lo <= hi:
        mid = (lo + hi) // 2
        cap = candidates[mid]
        total = sum(fr.costs[_level_for(fr, cap, f)] for fr, f in zip(renders, floors, strict=True))
        if total <= budget:
            best = mid
            lo = mid + 1
        else:
            hi = mid - 1
    cap = candidates[best] if best >= 0 else -1
    levels = [_level_for(fr, cap, f) for fr, f in zip(renders, floors, strict=True)]
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
        out.append(
            f"(… {len(paths) - shown} more files not listed: list the folder in code to see them all)\n"
        )
    return "".join(out)


def _signature(e: FileEntry) -> Signature:
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


def _groups(entries: list[FileEntry], cache: RenderCache | None) -> list[list[FileEntry]]:
    """Entries grouped by folder, format and columns, in order of first appearance."""
    groups: dict[Signature, list[FileEntry]] = {}
    for e in entries:
        skey = ("sig", e.content_hash, e.path, e.error)
        hit = cache.get(skey) if cache is not None else None
        sig = hit if isinstance(hit, tuple) else None
        if sig is None:
            sig = _signature(e)
            if cache is not None:
                cache[skey] = sig
        groups.setdefault(sig, []).append(e)
    return list(groups.values())


def _cached(cache: RenderCache | None, key: tuple[Hashable, ...]) -> FileRender | None:
    """The render kept under ``key`` (by an earlier task), if any."""
    hit = cache.get(key) if cache is not None else None
    return hit if isinstance(hit, FileRender) else None


def _keep(cache: RenderCache | None, key: tuple[Hashable, ...], fr: FileRender) -> FileRender:
    """``fr``, kept under ``key`` for the next task."""
    if cache is not None:
        cache[key] = fr
    return fr


def _single(
    e: FileEntry,
    prefix: str,
    max_rows: int,
    cache: RenderCache | None,
    style: str = "rich",
    root: Path | None = None,
) -> FileRender:
    key = (e.content_hash, e.path, e.error, prefix, max_rows, style)
    hit = _cached(cache, key)
    if hit is not None:
        return hit
    fr = prepare(e, prefix + e.path, max_rows, style=style, root=root)
    return _keep(cache, key, fr)


def _rows_of(m: FileEntry) -> str:
    """A folded file's row count: a workbook's per sheet, as pandas reads them (header=None)."""
    if m.sheets is not None:
        counts = [t.sheet_rows for t in m.tables]
        if not counts or any(c is None for c in counts):
            return ""
        return f" (rows per sheet as pandas reads them: {', '.join(f'{c:,}' for c in counts)})"
    return f" ({m.rows:,} row{'s' if m.rows != 1 else ''})" if m.rows is not None else ""


def _folded(
    members: list[FileEntry],
    prefix: str,
    max_rows: int,
    cache: RenderCache | None,
    with_rows: bool,
    style: str = "rich",
    root: Path | None = None,
) -> FileRender:
    """One render for files of a folder with the same columns: the first in full, the others by name."""
    rep = members[0]
    key = (
        "group",
        rep.content_hash,
        hash(tuple(m.path for m in members)),
        prefix,
        max_rows,
        with_rows,
        style,
    )
    hit = _cached(cache, key)
    if hit is not None:
        return hit
    fr = prepare(rep, prefix + rep.path, max_rows, style=style, root=root)
    d = rep.path.rpartition("/")[0]
    names = [m.path.rpartition("/")[2] for m in members[1:]]
    what = "columns" if rep.tables else "format"
    if with_rows and len(names) <= 40:
        listed = ", ".join(n + _rows_of(m) for n, m in zip(names, members[1:], strict=True))
        tail = f"with the same {what}: {listed}"
    else:
        tail = f"with the same {what} (row counts may differ): {_compact_names(names)}"
    loc = prefix + (d + "/" if d else "")
    where = f" in {loc}" if loc else ""
    extra = Block(f"  + {len(names)} more file{'s' if len(names) != 1 else ''}{where} {tail}\n", 0)
    extra.cost = estimate_tokens(extra.text)
    fr = FileRender(
        fr.path,
        [fr.blocks[0], extra, *fr.blocks[1:]],
        [c + extra.cost for c in fr.costs],
        [c + extra.cost for c in fr.prefmax],
        masked=fr.masked,
        masked_files=fr.masked_files,
        floor=fr.floor,
    )
    return _keep(cache, key, fr)


# ---- folders that repeat: N sibling folders holding the same kind of files, shown once ---------------


def _indented(b: Block) -> Block:
    """A block of a file shown inside a folder group, indented under it (lines of the file are not)."""
    if b.raw:
        return b
    if b.label is not None:
        f = b.label
        return replace(b, label=lambda lv: _indent_text(f(lv)))
    return replace(b, text=_indent_text(b.text))


def _indent_text(text: str) -> str:
    return "".join("  " + ln for ln in text.splitlines(keepends=True))


_DIGITS_RE = re.compile(r"\d+")


def _kind(e: FileEntry) -> tuple[str, str, tuple[str, ...], bool]:
    """What a file is, for deciding whether two folders hold the same kind of files: its extension and
    format, and for a delimited table its columns (two folders of different tables are not repeats)."""
    ext = _ext_case(e.path)  # as on disk: a folder of .HDR files is not one of .hdr files
    table = e.format == "csv" and ext.lower() in {"csv", "tsv"}
    # a text file sniffed as one format here and another there (a header file that looks delimited) is text
    fam = "text" if e.format in TEXT_FORMATS and not table else e.format
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
    groups: dict[tuple[str, tuple[tuple[str, str, tuple[str, ...], bool], ...]], list[str]] = {}
    for d, files in by_folder.items():
        parent = d.rpartition("/")[0]
        shape = tuple(sorted(_kind(e) for e in files))
        groups.setdefault((_DIGITS_RE.sub("#", parent), shape), []).append(d)
    return [folders for folders in groups.values() if len(folders) >= min_folders]


def _kinds_text(files: Sequence[FileEntry]) -> str:
    counts: dict[str, int] = {}
    for e in files:
        ext = _ext_case(e.path)
        label = f".{ext}" if ext else e.format
        counts[label] = counts.get(label, 0) + 1
    return " + ".join(f"{n} {k} file{'s' if n != 1 else ''}" for k, n in counts.items())


def _folder_group(
    folders: list[str],
    files_of: dict[str, list[FileEntry]],
    prefix: str,
    max_rows: int,
    cache: RenderCache | None,
    style: str,
    root: Path | None,
) -> FileRender:
    """One render for a group of repeated folders: a line with the count and the folders' names, then
    the files of the first folder as the example."""
    rep = folders[0]
    key = (
        "folders",
        hash(tuple(folders)),
        tuple(e.content_hash for e in files_of[rep]),
        prefix,
        max_rows,
        style,
    )
    hit = _cached(cache, key)
    if hit is not None:
        return hit
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
    whole = False
    for e in files_of[rep]:
        one = _single(e, prefix, max_rows, cache, style, root)
        # the example's files share one level: a documentation file among them is whole from level 1 on
        own = whole_from_level_1(one.blocks) if one.floor else one.blocks
        whole = whole or bool(one.floor)
        blocks += [_indented(b) for b in own]
        masked.update(one.masked_files)
    fr = _finish(prefix + rep + "/", blocks, [k for v in masked.values() for k in v])
    fr.masked_files = masked
    fr.floor = 1 if whole and fr.max_level >= 1 else 0
    fr.folded = {"folders": len(folders), "files": n_files, "example": rep, "parent": parent}
    return _keep(cache, key, fr)


@dataclass
class Rendered:
    text: str
    tokens: int
    levels: dict[str, int]
    mode: str  # "detail" | "grouped" (every same-column group folded, names compacted) | "names"
    #: lake path -> kinds of secrets masked in the text shown of it
    masked: dict[str, list[str]] = field(default_factory=dict)
    #: groups of repeated folders shown once (count, example folder)
    folded_folders: list[dict[str, int | str]] = field(default_factory=list)
    #: files shown with fewer rows/lines than the sampling rule gives, for the budget
    shortened: list[str] = field(default_factory=list)


#: said of a file whose shown lines had secrets masked
MASKED_NOTE = f"secret values (passwords, keys, tokens) in its lines are shown as {MASK}"

#: after the files when some of them are shown by their summary line only
BARE_NOTE = "(The content of {n} of the files above is not shown: shortened to fit the prompt budget.)\n"


def _bare(renders: list[FileRender], levels: list[int]) -> int:
    """Files shown by their summary line alone although they have content to show."""
    return sum(1 for fr, lv in zip(renders, levels, strict=True) if lv == 0 and fr.max_level > 0)


def _fit(renders: list[FileRender], budget: int, mode: str) -> Rendered | None:
    levels = allocate(renders, budget)
    if levels is None:
        return None
    note = ""
    if _bare(renders, levels):  # say so, in room taken from the files
        room = budget - estimate_tokens(BARE_NOTE.format(n=len(renders)))
        levels = allocate(renders, room)
        if levels is None:
            return None
        note = BARE_NOTE.format(n=f"{_bare(renders, levels):,}") if _bare(renders, levels) else ""
    text = "".join(fr.text(lv) for fr, lv in zip(renders, levels, strict=True)) + note
    tokens = sum(fr.costs[lv] for fr, lv in zip(renders, levels, strict=True)) + estimate_tokens(note)
    masked: dict[str, list[str]] = {}
    for fr in renders:
        masked.update(fr.masked_files)
    return Rendered(
        text,
        tokens,
        {fr.path: lv for fr, lv in zip(renders, levels, strict=True)},
        mode,
        masked=masked,
        folded_folders=[fr.folded for fr in renders if fr.folded],
        shortened=[fr.path for fr, lv in zip(renders, levels, strict=True) if lv < fr.max_level],
    )


def _copy_of(e: FileEntry, same: FileEntry, prefix: str) -> FileRender:
    """One line for a file byte-identical to one shown before it."""
    return _finish(
        prefix + e.path,
        [
            Block(
                f"- {prefix}{e.path} ({fmt_desc(e)}): same content as {prefix}{same.path} (byte-identical)\n",
                0,
            )
        ],
    )


def render_entries(
    entries: Iterable[FileEntry],
    *,
    budget_tokens: int,
    path_prefix: str = "",
    max_rows: int = 10,
    content: bool = True,
    cache: RenderCache | None = None,
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
    order = {e.path: i for i, e in enumerate(entries)}
    # byte-identical files: the first is shown, every later copy is one line naming it
    copies: list[tuple[int, FileRender]] = []
    first_copy: dict[str, FileEntry] = {}
    distinct = []
    for e in rest:
        same = first_copy.get(e.content_hash or "") if e.content_hash and e.size and not e.error else None
        if same is None:
            if e.content_hash and e.size and not e.error:
                first_copy[e.content_hash] = e
            distinct.append(e)
        else:
            copies.append((order[e.path], _copy_of(e, same, prefix)))
    groups = _groups(distinct, cache)
    first_of = {d: order[files_of[d][0].path] for d in folder_units}

    def ordered(units: list[tuple[int, FileRender]]) -> list[FileRender]:
        units += [(first_of[d], fr) for d, fr in folder_units.items()] + copies
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
        units = [
            (
                order[g[0].path],
                _folded(g, prefix, max_rows, cache, False, style, root)
                if len(g) > 1
                else _single(g[0], prefix, max_rows, cache, style, root),
            )
            for g in groups
        ]
        out = _fit(ordered(units), budget_tokens, "grouped")
        if out is not None:
            return out
    # 3. names only, said so (the snippets the prompt's introduction promises do not fit)
    note = "(Only the names of the files fit the prompt budget: no snippet is shown.)\n"
    text = note + list_paths(
        [prefix + e.path for e in entries], max(0, budget_tokens - estimate_tokens(note))
    )
    return Rendered(text, estimate_tokens(text), {}, "names")


__all__ = [
    "PAPER_TABLE_FORMATS",
    "STYLES",
    "Rendered",
    "allocate",
    "estimate_tokens",
    "human_size",
    "list_paths",
    "render_entries",
    "repeated_folders",
]
