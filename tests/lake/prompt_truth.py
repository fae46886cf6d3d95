"""An independent reader of rendered lake text: does every label agree with what is shown, and is every
raw line shown a line of the file, byte for byte?

It knows only the prompt's words (the labels a model reads) and the files on disk, not the renderer's
code: rows are counted with the csv module over the file itself, lines with ``bytes.split(b"\\n")``.
:func:`check_lake_text` returns the problems found, one sentence each (empty: the text tells the truth).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

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
_CELLS_LABEL = re.compile(r"^\s*(?:\[.*\] )?(?:all (?P<n>[\d,]+) rows?|the first (?P<k>[\d,]+) of (?P<t>.+?) rows)"
                          r"(?P<short>, shortened to fit the prompt budget)?, as cells")


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
            rest = s[len(start):]
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
    bare_note = re.search(r"^\(The content of [\d,]+ of the files above is not shown: shortened to fit the prompt "
                          r"budget\.\)$", text, re.M) is not None
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
    for label, shown in fences:
        out += _check_fence(label, shown, real, header_line, delimiter, n, head)
    has_content = (m_rows and _int(m_rows.group("rows")) > 0) or (m_lines and _int(m_lines.group("lines")) > 0)
    told = any("(no rows shown: shortened to fit the prompt budget)" in ln for ln in b.body) or bare_note
    if has_content and not fences and not told:
        out.append("no content shown and no word why")
    return out


def _check_fence(label: str, shown: list[str], real, header_line: int | None, delimiter: str, n: int,
                 head: str) -> list[str]:
    out: list[str] = []
    label = label.rstrip()
    if "not the file's" in label:
        m = _CELLS_LABEL.match(label)
        if m:
            rows = len(shown) - 1
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
            out.append(f"{k} of {len(file_)} lines shown (fewer than N = {n}) and the label does not say it was shortened")
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
            out.append(f"{k} of {total_rows} rows shown (fewer than N = {n}) and the label does not say it was shortened")
        if short and k >= min(n, total_rows):
            out.append("the label says shortened, yet N rows (or all) are shown")
    elif not what.startswith("the header"):
        out.append(f"a rows label no reader can count: {what!r}")
    return out


def _records_in(shown: list[str], header_line: int | None, delimiter: str) -> int:
    """Records below the header among the lines shown (a blank line is a record, as the label counts)."""
    return len(csv_records(shown[header_line or 0 :], delimiter))


__all__ = ["check_lake_text", "file_lines", "split_blocks", "table_rows"]
