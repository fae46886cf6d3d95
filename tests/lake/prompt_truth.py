"""An independent reader of rendered lake text: does every label agree with what is shown, and is every
raw line shown a line of the file, byte for byte?

It knows only the prompt's words (the labels a model reads) and the files on disk, not the renderer's
code: rows are counted with the csv module over the file itself, lines with ``bytes.split(b"\\n")``.
:func:`check_lake_text` returns the problems found, one sentence each (empty: the text tells the truth).
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: what ends a cut line in a snippet (the renderer's mark, restated here on purpose)
CUT_RE = re.compile(r" \[… line cut: (more than )?([\d,]+) more characters\]$")
MASK = "[MASKED]"
#: the paper's N: a label may only show fewer rows or lines when it says the budget shortened it
PAPER_N = 100
_FENCE = re.compile(r"^(`{3,})$")
_DELIMS = {"comma": ",", "tab": "\t", "semicolon": ";", "pipe": "|"}
_ROWS_LABEL = re.compile(
    r"^\s*(?P<what>.+?): lines 1-(?P<last>[\d,]+)(?: of (?P<total>[\d,]+))? as in the file \((?P<detail>.*)\):$"
)
_TEXT_LABEL = re.compile(
    r"^\s*(?:all (?P<n>[\d,]+) lines?|the first (?P<k>[\d,]+) of (?P<t>[\d,?]+) lines) as in the file(?P<extra>.*):$"
)
_CELLS_LABEL = re.compile(
    r"^\s*(?:\[.*\] )?(?:all (?P<n>[\d,]+) rows?|the first (?P<k>[\d,]+) of (?P<t>.+?) rows)"
    r"(?P<short>, shortened to fit the prompt budget)?, as cells"
)


def _int(s: str) -> int:
    return int(s.replace(",", ""))


def file_lines(path: Path, encoding: str) -> list[str]:
    """The lines of a file: split at b'\\n', line ends and a first-line BOM removed, decoded."""
    data = path.read_bytes()
    sep = b"\r" if b"\n" not in data and b"\r" in data else b"\n"  # classic Mac line ends
    if encoding == "utf-16":
        text = data.decode("utf-16")
        parts = text.split(sep.decode())
    else:
        parts = [p.decode(encoding, errors="replace") for p in data.split(sep)]
    if parts and parts[-1] == "":
        parts.pop()
    out = [p[:-1] if p.endswith("\r") else p for p in parts]
    if out and out[0].startswith("\ufeff"):
        out[0] = out[0][1:]
    return out


def _encoding(desc: str) -> str:
    for enc in ("utf-8 with BOM", "utf-16", "cp1252", "latin-1", "utf-8"):
        if f", {enc}," in f", {desc},":
            return {"utf-8 with BOM": "utf-8-sig"}.get(enc, enc)
    return "utf-8"


def csv_records(lines: list[str], delimiter: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO("".join(ln + "\n" for ln in lines), newline=""), delimiter=delimiter))


def _blank(rec: list[str]) -> bool:
    return not any(c.strip() for c in rec)


def table_rows(lines: list[str], header_line: int | None, delimiter: str) -> int:
    """Records below the header (blank records inside count, trailing blank ones do not)."""
    recs = csv_records(lines[header_line or 0 :], delimiter)
    while recs and _blank(recs[-1]):
        recs.pop()
    return len(recs)


@dataclass
class FileBlock:
    path: str  # lake-relative
    header: str  # the summary line
    body: list[str] = field(default_factory=list)  # the lines after it, up to the next file


def split_blocks(text: str, files: set[str], prefix: str = "/lake") -> list[FileBlock]:
    """The file blocks of a rendered lake: a summary line ``- /lake/<path> (...`` and what follows."""
    blocks: list[FileBlock] = []
    in_fence: str | None = None
    by_len = sorted(files, key=len, reverse=True)
    for line in text.splitlines():
        if in_fence is not None:
            if line == in_fence:
                in_fence = None
            if blocks:
                blocks[-1].body.append(line)
            continue
        m = _FENCE.match(line)
        if m:
            in_fence = m.group(1)
            if blocks:
                blocks[-1].body.append(line)
            continue
        s = line.lstrip(" ")
        start = f"- {prefix}/"
        if s.startswith(start):
            rest = s[len(start) :]
            path = next((p for p in by_len if rest.startswith(p + " (") or rest.startswith(p + ":")), None)
            if path is not None:
                blocks.append(FileBlock(path, line))
                continue
        if line.startswith(("- ", "#")) or s.startswith(f"- {prefix}/"):
            blocks.append(FileBlock("", line))  # not a file of the lake: a folder group's line, a section
            continue
        if blocks:
            blocks[-1].body.append(line)
    return [b for b in blocks if b.path]


def _fenced(body: list[str]) -> list[tuple[str, list[str]]]:
    """(label line, fenced lines) for every code fence in a block."""
    out = []
    i = 0
    while i < len(body):
        m = _FENCE.match(body[i])
        if m:
            j = i + 1
            while j < len(body) and body[j] != m.group(1):
                j += 1
            out.append((body[i - 1] if i else "", body[i + 1 : j]))
            i = j + 1
        else:
            i += 1
    return out


def _same_line(shown: str, real: str) -> str | None:
    """None when ``shown`` is ``real`` (or it cut with a true mark, or masked); else what differs."""
    if shown == real:
        return None
    m = CUT_RE.search(shown)
    if m:
        kept = shown[: m.start()]
        more = _int(m.group(2))
        if not real.startswith(kept):
            return "a cut line whose kept part is not the start of the file's line"
        if m.group(1) is None and len(real) - len(kept) != more:
            return f"a cut line says {more:,} more characters, the file's line has {len(real) - len(kept):,}"
        return None
    if MASK in shown:
        pattern = ".*".join(re.escape(p) for p in shown.split(MASK))
        if re.fullmatch(pattern, real, re.DOTALL):
            return None
    return "differs from the file's line"


def check_lake_text(text: str, lake: Path, *, prefix: str = "/lake", n: int = PAPER_N) -> list[str]:
    """Every problem of the rendered lake ``text`` of the lake folder ``lake`` (one sentence each)."""
    lake = Path(lake)
    files = {p.relative_to(lake).as_posix() for p in lake.rglob("*") if p.is_file()}
    problems: list[str] = []
    bare_note = (
        re.search(
            r"^\(The content of [\d,]+ of the files above is not shown: shortened to fit the prompt "
            r"budget\.\)$",
            text,
            re.M,
        )
        is not None
    )
    for b in split_blocks(text, files, prefix):
        problems += [f"{b.path}: {p}" for p in _check_block(b, lake, n, bare_note)]
    return problems


def _check_block(b: FileBlock, lake: Path, n: int, bare_note: bool = False) -> list[str]:
    out: list[str] = []
    path = lake / b.path
    head = b.header.strip()
    if "): same content as " in head:
        other = head.split("): same content as ", 1)[1].split(" (byte-identical)")[0]
        other_path = lake / other.split("/", 2)[2] if other.startswith("/") else lake / other
        if not other_path.is_file() or other_path.read_bytes() != path.read_bytes():
            out.append(f"said to have the same content as {other}, but it does not")
        return out
    if re.search(r" \((xlsx|xls), ", head):
        return check_sheets(b, path, n, lake)
    desc = head.split(" (", 1)[1].rsplit(")", 1)[0] if " (" in head else ""
    enc = _encoding(desc)
    m_delim = re.search(r"csv \((\w+)-separated\)", head)
    delimiter = _DELIMS.get(m_delim.group(1), ",") if m_delim else ","
    lines: list[str] | None = None

    def real() -> list[str]:
        nonlocal lines
        if lines is None:
            lines = file_lines(path, enc)
        return lines

    m_rows = re.search(r"\): (?P<rows>[\d,]+) rows? × (?P<cols>[\d,]+) columns?", head)
    m_lines = re.search(r"\): (?P<lines>[\d,]+) lines?$", head)
    header_m = re.search(r"header on line (\d+)", head)
    header_line = int(header_m.group(1)) if header_m else (None if "no header row" in head else 1)
    if m_lines and _int(m_lines.group("lines")) != len(real()):
        out.append(f"summary says {m_lines.group('lines')} lines, the file has {len(real()):,}")
    gz = path.suffix.lower() == ".gz"
    if m_rows and "csv (" in head and not gz and "(estimated)" not in head:
        want = table_rows(real(), header_line, delimiter)
        if _int(m_rows.group("rows")) != want:
            out.append(f"summary says {m_rows.group('rows')} rows, the file has {want:,} below its header")
    for extra in b.body:
        m_more = re.match(r"\s*\+ \d+ more files? in (\S.*?/) with the same (?:columns|format): (.*)$", extra)
        if m_more and "row counts may differ" not in extra:
            folder = lake / m_more.group(1).split("/", 2)[2] if m_more.group(1).count("/") > 1 else lake
            for name, rows in re.findall(r"(?:^|, )(.+?) \(([\d,]+) rows?\)", m_more.group(2)):
                other = folder / name
                if other.is_file():
                    want = table_rows(file_lines(other, enc), header_line, delimiter)
                    if want != _int(rows):
                        out.append(f"{name} said to have {rows} rows, it has {want:,}")
                else:
                    out.append(f"{name} listed beside it but not in {folder}")
    fences = _fenced(b.body)
    fmt = desc.split(",", 1)[0].split(" (", 1)[0].strip()
    tables = None
    for label, shown in fences:
        if "as cells" in label and fmt in ("json", "jsonl", "parquet", "html"):
            if tables is None:
                tables = cell_tables(path, fmt, enc)
            out += _check_cells(label, shown, tables, n)
        else:
            out += _check_fence(label, shown, real, header_line, delimiter, n, head)
    has_content = (m_rows and _int(m_rows.group("rows")) > 0) or (
        m_lines and _int(m_lines.group("lines")) > 0
    )
    told = any("(no rows shown: shortened to fit the prompt budget)" in ln for ln in b.body) or bare_note
    if has_content and not fences and not told:
        out.append("no content shown and no word why")
    return out


def _check_fence(
    label: str, shown: list[str], real, header_line: int | None, delimiter: str, n: int, head: str
) -> list[str]:
    out: list[str] = []
    label = label.rstrip()
    if "not the file's" in label:
        m = _CELLS_LABEL.match(label)
        if m:
            rows = len(shown) - (0 if "no header row" in label else 1)
            want = _int(m.group("n") or m.group("k"))
            if rows != want:
                out.append(f"label {label.strip()!r} over {rows} rows of cells")
        return out
    m_rows = _ROWS_LABEL.match(label)
    m_text = _TEXT_LABEL.match(label) if m_rows is None else None
    if m_rows is None and m_text is None:
        return [f"a code fence under a label no reader can count: {label.strip()!r}"]
    file_ = real()
    for i, ln in enumerate(shown):
        if i >= len(file_):
            out.append(f"line {i + 1} shown, the file has {len(file_)} lines")
            break
        why = _same_line(ln, file_[i])
        if why:
            out.append(f"line {i + 1} {why}: {ln[:80]!r} vs {file_[i][:80]!r}")
    if m_text is not None:
        k = _int(m_text.group("n") or m_text.group("k"))
        if len(shown) != k:
            out.append(f"label {label.strip()!r} over {len(shown)} lines")
        if m_text.group("n") and k != len(file_):
            out.append(f"label says all {k} lines, the file has {len(file_)}")
        if m_text.group("t") and m_text.group("t") != "?" and _int(m_text.group("t")) != len(file_):
            out.append(f"label says of {m_text.group('t')} lines, the file has {len(file_)}")
        short = "shortened to fit the prompt budget" in m_text.group("extra")
        if m_text.group("k") and k < min(n, len(file_)) and not short:
            out.append(
                f"{k} of {len(file_)} lines shown (fewer than N = {n}) and the label does not say it was shortened"
            )
        if short and k >= min(n, len(file_)):
            out.append("the label says shortened, yet N lines (or all) are shown")
        return out
    last = _int(m_rows.group("last"))
    if len(shown) != last:
        out.append(f"label says lines 1-{last}, {len(shown)} lines shown")
    if m_rows.group("total") and _int(m_rows.group("total")) != len(file_):
        out.append(f"label says of {m_rows.group('total')} lines, the file has {len(file_)}")
    detail = m_rows.group("detail")
    h = re.search(r"the header on line (\d+)", detail)
    label_header = int(h.group(1)) if h else None
    if ("no header row" in detail) != (label_header is None):
        out.append(f"label {label.strip()!r} is unclear about the header")
    above = re.search(r"([\d,]+) lines? above the header", detail)
    if label_header and above and _int(above.group(1)) != label_header - 1:
        out.append("lines above the header do not add up to the header's line")
    what = m_rows.group("what")
    gap = re.search(r"([\d,]+) lines? (?:above|between the header and) the rows", detail)
    start = (label_header or 0) + (_int(gap.group(1)) if gap else 0)  # lines before the first row
    if re.search(r"comment or blank lines? among the rows", detail):
        return out  # a fixed-width file whose comment lines are not rows: the lines were checked above
    total_rows = table_rows(file_, start, delimiter)
    shown_rows = table_rows(shown, start, delimiter) if len(shown) >= start else 0
    m_lines = re.match(r"the first ([\d,]+) of ([\d,?]+) lines", what)
    if m_lines:  # a documentation file shown line by line
        if _int(m_lines.group(1)) != len(shown):
            out.append(f"label says the first {m_lines.group(1)} lines, {len(shown)} shown")
        return out
    m_all = re.match(r"all ([\d,]+) rows?$", what)
    m_first = re.match(r"the first ([\d,]+) of (about )?([\d,]+) rows(?P<rest>.*)$", what)
    if m_all:
        if _int(m_all.group(1)) != total_rows or shown_rows != total_rows:
            out.append(f"label says all {m_all.group(1)} rows; the file has {total_rows}, {shown_rows} shown")
    elif m_first:
        k = _int(m_first.group(1))
        csv_shown = _records_in(shown, start, delimiter)
        if csv_shown != k:
            out.append(f"label says the first {k} rows, {csv_shown} shown")
        if not m_first.group(2) and _int(m_first.group(3)) != total_rows:
            out.append(f"label says of {m_first.group(3)} rows, the file has {total_rows}")
        short = "shortened to fit the prompt budget" in m_first.group("rest")
        if k < min(n, total_rows) and not short and "rows the index read" not in m_first.group("rest"):
            out.append(
                f"{k} of {total_rows} rows shown (fewer than N = {n}) and the label does not say it was shortened"
            )
        if short and k >= min(n, total_rows):
            out.append("the label says shortened, yet N rows (or all) are shown")
    elif not what.startswith("the header"):
        out.append(f"a rows label no reader can count: {what!r}")
    return out


def _records_in(shown: list[str], header_line: int | None, delimiter: str) -> int:
    """Records below the header among the lines shown (a blank line is a record, as the label counts)."""
    return len(csv_records(shown[header_line or 0 :], delimiter))


__all__ = ["check_lake_text", "check_sheets", "file_lines", "read_sheets", "split_blocks", "table_rows"]


# ---- spreadsheets: every sheet as pandas reads it --------------------------------------------------------

_ERRORS = {"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA", "#ERROR"}
_SHEET_SHAPE = re.compile(r"^(?P<rows>[\d,]+) rows? × (?P<cols>[\d,]+) columns?(?::\s*(?P<rest>.*))?$")
_SHEET_ROWS = re.compile(
    r"^(?P<what>.+?): sheet rows 1-(?P<last>[\d,]+) of (?P<total>[\d,]+) \((?P<detail>.*)\), as cells \(.*\):$"
)


@functools.lru_cache(maxsize=16)
def _read_sheets(path: str, mtime: float) -> dict[str, list[list[Any]]]:
    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # openpyxl on extensions it does not know
        frames = pd.read_excel(
            path, sheet_name=None, header=None, dtype=object, keep_default_na=False, na_values=[]
        )
    return {str(name): df.values.tolist() for name, df in frames.items()}


def read_sheets(path: Path) -> dict[str, list[list[Any]]]:
    """Every sheet of a workbook as ``pd.read_excel(path, sheet_name=None, header=None)`` reads it
    (cells as values; an empty cell is "")."""
    return _read_sheets(str(path), path.stat().st_mtime)


def merged_ranges(path: Path) -> dict[str, list[str]]:
    """The merged ranges of every sheet, as the workbook library reads them (a full load, not streaming)."""
    if path.suffix.lower() == ".xls" or path.read_bytes()[:4] != b"PK\x03\x04":
        import xlrd

        book = xlrd.open_workbook(str(path), formatting_info=True)
        return {
            sh.name: [f"{_letters(c0)}{r0 + 1}:{_letters(c1 - 1)}{r1}" for r0, r1, c0, c1 in sh.merged_cells]
            for sh in book.sheets()
        }
    import openpyxl

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wb = openpyxl.load_workbook(path)
    return {ws.title: [str(r) for r in ws.merged_cells.ranges] for ws in wb.worksheets}


def _letters(j: int) -> str:
    s = ""
    j += 1
    while j:
        j, r = divmod(j - 1, 26)
        s = chr(65 + r) + s
    return s


def _escaped(text: str) -> str:
    return text.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n")


def same_cell(shown: str, real: Any) -> bool:
    """Is ``shown`` (a cell of a prompt) the value pandas reads, written out (a long cell cut, marked …)?"""
    import datetime as dt

    import pandas as pd

    if real is None or (isinstance(real, float) and math.isnan(real)):
        return shown == "" or shown in _ERRORS
    if isinstance(real, str):
        want = _escaped(real)
        if shown == want:
            return True
        if shown.endswith("…") and len(want) > len(shown) - 1 and want.startswith(shown[:-1]):
            return True
        if MASK in shown:
            return (
                re.fullmatch(".*".join(re.escape(p) for p in shown.split(MASK)), want, re.DOTALL) is not None
            )
        return False
    if isinstance(real, bool):
        return shown == str(real)
    if isinstance(real, (int, float)):
        try:
            return float(shown) == float(real) or str(real) == shown
        except ValueError:
            return False
    if isinstance(real, (dt.datetime, dt.date, pd.Timestamp)):
        try:
            return pd.Timestamp(shown) == pd.Timestamp(real)
        except ValueError:
            return False
    if isinstance(real, dt.time):
        return shown == real.isoformat()
    return shown == str(real)


def _filled(v: Any) -> bool:
    return not (v is None or v == "" or (isinstance(v, float) and math.isnan(v)))


def check_sheets(b: FileBlock, path: Path, n: int = PAPER_N, lake: Path | None = None) -> list[str]:
    """A spreadsheet shown as cells: its sheet names and counts against pandas' reading of the file, every
    shown cell against the cell pandas reads, every label's counts against the rows shown."""
    out: list[str] = []
    sheets = read_sheets(path)
    names = list(sheets)
    head = b.header.strip()
    m = re.search(r"\): ([\d,]+) sheets?$", head)
    if m and _int(m.group(1)) != len(names):
        out.append(f"summary says {m.group(1)} sheets, the workbook has {len(names)}")
    if m is None and any(_FENCE.match(ln) for ln in b.body):
        out.append("cells of a workbook shown without its count of sheets")
    by_len = sorted(names, key=len, reverse=True)

    def sheet_of(line: str) -> tuple[str | None, str]:
        s = line.strip()
        for name in by_len:
            if s.startswith(f"[{name}] "):
                return name, s[len(name) + 3 :]
        return None, s

    merged: dict[str, list[str]] | None = None
    claims: dict[str, dict[str, int | None]] = {}
    fences = dict(_fenced_at(b.body))
    counted: set[int] = set()
    for i, line in enumerate(b.body):
        s = line.strip()
        m_more = re.match(r"\+ \d+ more files? in (\S.*?/) with the same (?:columns|format): (.*)$", s)
        if m_more and "row counts may differ" not in s:
            where = m_more.group(1).split("/", 2)[2] if m_more.group(1).count("/") > 1 else ""
            folder = lake / where if lake is not None else path.parent
            listed = re.findall(
                r"(?:^|, )(.+?) \(rows per sheet as pandas reads them: ([\d, ]+)\)", m_more.group(2)
            )
            if not listed:
                out.append(f"workbooks listed beside it without the rows of their sheets: {s[:80]!r}")
            for other, counts in listed:
                said = [_int(c) for c in counts.split(", ")]
                real = [len(rows) for rows in read_sheets(folder / other).values()][: len(said)]
                if said != real:
                    out.append(f"{other} said to have {said} rows per sheet, pandas reads {real}")
            continue
        if s.startswith("sheets (rows × columns as pd.read_excel("):
            listed = re.findall(r'"([^"]*)"(?: \((\d+)×(\d+)\))?', s.split("): ", 1)[1])
            if len(listed) != len(names):
                out.append(f"the sheets line lists {len(listed)} sheets, the workbook has {len(names)}")
            for (shown_name, r, c), name in zip(listed, names, strict=False):
                cut = shown_name.endswith("…") and name.replace('"', "'").startswith(shown_name[:-1])
                if shown_name != name.replace('"', "'") and not cut:
                    out.append(f"sheet {shown_name!r} listed where the workbook has {name!r}")
                elif r and (int(r), int(c)) != _shape_of(sheets[name]):
                    out.append(f"sheet {name!r} listed as {r}×{c}, pandas reads {_shape_of(sheets[name])}")
            continue
        name, rest = sheet_of(line)
        if name is None:
            continue
        rows = sheets[name]
        n_rows, n_cols = _shape_of(rows)
        m_shape = _SHEET_SHAPE.match(rest)
        if m_shape:
            r, c = _int(m_shape.group("rows")), _int(m_shape.group("cols"))
            if (r, c) != (n_rows, n_cols):
                out.append(f"[{name}] said to be {r} rows × {c} columns, pandas reads {n_rows} × {n_cols}")
            detail = m_shape.group("rest") or ""
            h = re.search(r"the header on row ([\d,]+)", detail)
            above = re.search(r"([\d,]+) rows? above the (header|data)", detail)
            data = re.search(r"([\d,]+) data rows?", detail)
            if h:
                hh = _int(h.group(1))
                if above and _int(above.group(1)) != hh - 1:
                    out.append(f"[{name}] {above.group(0)} does not add up to the header on row {hh}")
                if not above and hh != 1:
                    out.append(f"[{name}] the header on row {hh} and no word of the rows above it")
                start = hh
                if f"header={hh - 1})" not in detail and hh > 1:
                    out.append(f"[{name}] the header on row {hh} without pandas' header={hh - 1}")
            elif "no header row" in detail:
                start = _int(above.group(1)) if above else 0
            elif r:
                out.append(f"[{name}] {rest!r} says neither where the header is nor that there is none")
                start = 0
            else:
                start = 0
            claims[name] = {"start": start, "header": _int(h.group(1)) if h else None}
            if data and _int(data.group(1)) != n_rows - start:
                out.append(
                    f"[{name}] said to have {data.group(1)} data rows, pandas reads {n_rows - start} below row {start}"
                )
            m_empty = re.search(r"empty in every row: columns? (.+?) \(pandas ([^)]*)\)", detail)
            empty = [j for j in range(n_cols) if not any(_filled(row[j]) for row in rows)]
            if m_empty:
                said = _expand(m_empty.group(2))
                if "more" not in m_empty.group(2) and said != empty or not set(said) <= set(empty):
                    out.append(f"[{name}] empty columns said {said}, pandas reads {empty} empty")
                letters = [_letters(j) for j in said]
                if _expand_letters(m_empty.group(1)) != letters and "more" not in m_empty.group(1):
                    out.append(
                        f"[{name}] empty columns {m_empty.group(1)} are not pandas' {m_empty.group(2)}"
                    )
            elif empty:
                out.append(f"[{name}] columns {empty} are empty in every row and the prompt does not say so")
            m_merged = re.search(r"([\d,]+) merged ranges?: (.+?) \(pandas reads", detail)
            if merged is None:
                merged = merged_ranges(path)
            real = merged.get(name, [])
            if m_merged:
                refs = [x for x in m_merged.group(2).split(", ") if not x.startswith("…")]
                if _int(m_merged.group(1)) != len(real) or not set(refs) <= set(real):
                    out.append(
                        f"[{name}] merged ranges said {m_merged.group(1)} ({refs[:5]}), the sheet has {len(real)}"
                    )
            elif real:
                out.append(f"[{name}] has {len(real)} merged ranges and the prompt does not say so")
            continue
        m_rows = _SHEET_ROWS.match(rest)
        if m_rows is None:
            continue
        shown = fences.get(i + 1)
        if shown is None:
            out.append(f"[{name}] a rows label with no rows under it")
            continue
        counted.add(i + 1)
        out += [f"[{name}] {p}" for p in _check_sheet_rows(m_rows, shown, rows, claims.get(name), n)]
    if set(fences) - counted:
        out.append(f"{len(set(fences) - counted)} code fences under no label that counts a sheet's rows")
    return out


def _shape_of(rows: list[list[Any]]) -> tuple[int, int]:
    return len(rows), (len(rows[0]) if rows else 0)


def _expand(numbers: str) -> list[int]:
    out: list[int] = []
    for part in numbers.split(", "):
        if "-" in part:
            a, b = part.split("-")
            out += list(range(int(a), int(b) + 1))
        elif part.isdigit():
            out.append(int(part))
    return out


def _expand_letters(letters: str) -> list[str]:
    def index(s: str) -> int:
        j = 0
        for ch in s:
            j = j * 26 + ord(ch) - 64
        return j - 1

    out: list[str] = []
    for part in letters.split(", "):
        if "-" in part:
            a, b = part.split("-")
            out += [_letters(j) for j in range(index(a), index(b) + 1)]
        else:
            out.append(part)
    return out


def _fenced_at(body: list[str]) -> list[tuple[int, list[str]]]:
    """(index of the fence's opening line, fenced lines) for every code fence in a block."""
    out = []
    i = 0
    while i < len(body):
        m = _FENCE.match(body[i])
        if m:
            j = i + 1
            while j < len(body) and body[j] != m.group(1):
                j += 1
            out.append((i, body[i + 1 : j]))
            i = j + 1
        else:
            i += 1
    return out


def _check_sheet_rows(
    m: re.Match, shown: list[str], rows: list[list[Any]], claim: dict | None, n: int
) -> list[str]:
    out: list[str] = []
    n_rows, n_cols = _shape_of(rows)
    last, total = _int(m.group("last")), _int(m.group("total"))
    if total != n_rows:
        out.append(f"rows label says of {total} rows, pandas reads {n_rows}")
    if last != len(shown):
        out.append(f"rows label says rows 1-{last}, {len(shown)} rows shown")
    breaks = False
    for i, line in enumerate(shown):
        if i >= n_rows:
            out.append(f"row {i + 1} shown, pandas reads {n_rows} rows")
            break
        cells = next(csv.reader([line]), [])
        if len(cells) != n_cols:
            out.append(f"row {i + 1} shows {len(cells)} cells, pandas reads {n_cols} columns")
            continue
        for j, (c, v) in enumerate(zip(cells, rows[i], strict=True)):
            if not same_cell(c, v):
                out.append(
                    f"row {i + 1} column {_letters(j)}: {c[:60]!r} shown, pandas reads {str(v)[:60]!r}"
                )
        breaks = breaks or any(isinstance(v, str) and ("\n" in v or "\r" in v) for v in rows[i])
    detail, what = m.group("detail"), m.group("what")
    if breaks != ("line breaks in cells written \\n" in detail):
        out.append("line breaks in the cells shown and the label disagree")
    h = re.search(r"the header on row ([\d,]+)", detail)
    above = re.search(r"([\d,]+) rows? above the (header|data)", detail)
    start = _int(h.group(1)) if h else (_int(above.group(1)) if above else 0)
    if h and above and _int(above.group(1)) != _int(h.group(1)) - 1:
        out.append(f"{above.group(0)} does not add up to the header on row {h.group(1)}")
    if ("no header row" in detail) == (h is not None):
        out.append(f"label {detail!r} is unclear about the header")
    if claim is not None and (
        claim["start"] != start or claim["header"] != (_int(h.group(1)) if h else None)
    ):
        out.append("the rows label and the sheet's shape line disagree about the header")
    data_total = n_rows - start
    k = len(shown) - start
    m_all = re.match(r"all ([\d,]+) data rows?$", what)
    m_first = re.match(r"the first ([\d,]+) of ([\d,]+) data rows(?P<rest>.*)$", what)
    if m_all:
        if _int(m_all.group(1)) != data_total or k != data_total:
            out.append(
                f"label says all {m_all.group(1)} data rows; pandas reads {data_total} below row {start}, {k} shown"
            )
    elif m_first:
        if _int(m_first.group(1)) != k:
            out.append(f"label says the first {m_first.group(1)} data rows, {k} shown")
        if _int(m_first.group(2)) != data_total:
            out.append(
                f"label says of {m_first.group(2)} data rows, pandas reads {data_total} below row {start}"
            )
        short = SHORT in m_first.group("rest")
        if k < min(n, data_total) and not short and "rows the index read" not in m_first.group("rest"):
            out.append(
                f"{k} of {data_total} data rows shown (fewer than N = {n}) and the label does not say it was shortened"
            )
        if short and k >= min(n, data_total):
            out.append("the label says shortened, yet N rows (or all) are shown")
    elif what.startswith(("the header, no data rows", "no data rows")):
        if data_total != 0 or k != 0:
            out.append(f"label says no data rows, pandas reads {data_total}")
    else:
        out.append(f"a rows label no reader can count: {what!r}")
    return out


SHORT = "shortened to fit the prompt budget"


# ---- other tables shown as cells: JSON records, JSON lines, parquet, HTML tables -----------------------------


def cell_tables(
    path: Path, fmt: str, encoding: str = "utf-8"
) -> dict[str | None, tuple[list[str], list[list[Any]]]]:
    """The tables of a file as pandas (or the json module) reads them: {table name: (column names, rows)};
    the name is None for a file of one table, a key for JSON records under a key, "table i" for HTML."""
    import json

    import pandas as pd

    def of(df: pd.DataFrame) -> tuple[list[Any], list[list[Any]]]:
        names = [c if isinstance(c, tuple) else str(c) for c in df.columns]
        return names, df.astype(object).where(df.notna(), None).values.tolist()

    if fmt == "parquet":
        return {None: of(pd.read_parquet(path))}
    text = path.read_bytes().decode("utf-8-sig" if encoding == "utf-8" else encoding, errors="replace")
    if fmt == "html":
        frames = pd.read_html(io.StringIO(text))
        return {f"table {i + 1}": of(df) for i, df in enumerate(frames)}
    if fmt == "jsonl":
        records = [json.loads(ln) for ln in text.splitlines() if ln.strip()]
        return {None: _records(records)}
    value = json.loads(text)
    if isinstance(value, list):
        return {None: _records(value)}
    if isinstance(value, dict):
        return {
            str(k): _records(v)
            for k, v in value.items()
            if isinstance(v, list) and v and isinstance(v[0], dict)
        }
    return {}


def _joined(name: Any) -> str:
    """A multi-level column name (a tuple) as the label says it is shown: levels joined by ' / ', 'Unnamed'
    levels left out, repeats once."""
    if not isinstance(name, tuple):
        return str(name)
    return " / ".join(dict.fromkeys(str(x) for x in name if not str(x).startswith("Unnamed")))


def _same_text(shown: str, real: str) -> bool:
    return shown == real or (shown.endswith("…") and real.startswith(shown[:-1]) and len(real) >= len(shown))


def _records(records: list[Any]) -> tuple[list[str], list[list[Any]]]:
    names: dict[str, None] = {}
    for r in records:
        if isinstance(r, dict):
            names.update((str(k), None) for k in r)
    return list(names), [[r.get(k) if isinstance(r, dict) else None for k in names] for r in records]


def _json_cell(v: Any) -> Any:
    import json

    return json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else v


def _check_cells(label: str, shown: list[str], tables: dict, n: int) -> list[str]:
    out: list[str] = []
    label = label.strip()
    m = _CELLS_LABEL.match(label)
    if m is None:
        return [f"a table of cells under a label no reader can count: {label!r}"]
    name = re.match(r"\[(.*?)\] ", label)
    key = name.group(1) if name else None
    if key not in tables:
        return [f"a table {key!r} shown that the file does not hold"] if tables else []
    names, rows = tables[key]
    numbered = "no header row" in label
    body = shown if numbered else shown[1:]
    if not numbered:
        header = next(csv.reader([shown[0]]), []) if shown else []
        joined = "levels joined by ' / '" in label
        want = [_joined(x) if joined else x for x in names]
        if len(header) != len(want) or not all(_same_text(h, w) for h, w in zip(header, want, strict=False)):
            out.append(f"column names {header[:6]} shown, the file's are {want[:6]}")
    elif [str(j) for j in range(len(names))] != names:
        out.append("said to have no header row, yet its columns have names")
    said = _int(m.group("n") or m.group("k"))
    if len(body) != said:
        out.append(f"label {label!r} over {len(body)} rows of cells")
    total = m.group("n") or m.group("t")
    if total and not total.startswith("about") and _int(total) != len(rows):
        out.append(f"label says {total} rows, the file holds {len(rows)}")
    short = m.group("short") is not None
    if m.group("k") and said < min(n, len(rows)) and not short:
        out.append(
            f"{said} of {len(rows)} rows shown (fewer than N = {n}) and the label does not say it was shortened"
        )
    breaks = False
    for i, line in enumerate(body[: len(rows)]):
        cells = next(csv.reader([line]), [])
        if len(cells) != len(names):
            out.append(f"row {i + 1} shows {len(cells)} cells, the table has {len(names)} columns")
            continue
        for j, (c, v) in enumerate(zip(cells, rows[i], strict=True)):
            v = _json_cell(v)
            breaks = breaks or (isinstance(v, str) and ("\n" in v or "\r" in v))
            if not same_cell(c, v):
                out.append(
                    f"row {i + 1} column {names[j]!r}: {c[:60]!r} shown, the file holds {str(v)[:60]!r}"
                )
    if breaks != ("line breaks in cells written \\n" in label):
        out.append("line breaks in the cells shown and the label disagree")
    return out
