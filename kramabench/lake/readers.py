"""Per-format readers: each turns one file into a :class:`FileEntry` and is tolerant of bad input.

Readers look only at what a snippet needs: the head of a text file (plus the line count from the
scan) or the first rows of each sheet. A reader that fails raises; :func:`read_entry` turns that into
a one-line ``could not read: reason`` entry.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import logging
import warnings
import zipfile
from collections.abc import Callable, Iterable
from itertools import islice
from pathlib import Path
from typing import Any

from kramabench.files import clip

from .models import FileEntry, LakeOptions, TableInfo
from .sheets import row_cells, sheet_table, xls_merged_cells, xlsx_merged_cells
from .sniff import (
    Scan,
    csv_reader,
    decode,
    detect_encoding,
    ext_format,
    looks_binary,
    magic_format,
    sniff_delimiter,
    sniff_text_format,
    split_fixed_width,
    whitespace_table,
)
from .tabular import cell_text, describe_columns, find_header, header_names

log = logging.getLogger(__name__)

_DELIM_NAMES = {",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe"}
_HEADER_SCAN_ROWS = 40  # rows looked at to find the header below title lines


def delimiter_name(d: str | None) -> str:
    return _DELIM_NAMES.get(d or "", repr(d))


def _filled_len(row: list[Any]) -> int:
    n = len(row)
    while n and (row[n - 1] is None or str(row[n - 1]).strip() == ""):
        n -= 1
    return n


def _table_from_rows(
    rows: list[list[Any]],
    *,
    opts: LakeOptions,
    total_rows_after_header: Callable[[int], int | None] | None = None,
    complete: bool,
    name: str | None = None,
    first_line_no: Callable[[int], int] | None = None,
    last_line_no: Callable[[int], int] | None = None,
) -> TableInfo:
    """Build a table from its first rows (all of them when ``complete``), its columns described untyped
    (``describe_columns(typed=False)``: every caller reads text cells)."""
    hdr, data_start = find_header(rows[:_HEADER_SCAN_ROWS])
    above = [
        " ".join(cell_text(c) for c in r if c is not None and str(c).strip())
        for r in rows[: hdr if hdr is not None else data_start]
    ]
    above = [a for a in above if a][:5]
    data = rows[data_start:]
    # trailing blank rows do not count
    while data and not any(c is not None and str(c).strip() for c in data[-1]):
        data.pop()
    sample = data[: opts.sample_rows]
    lengths = sorted(_filled_len(r) for r in sample)
    typical = lengths[len(lengths) // 2] if lengths else 0  # median filled width of the data rows
    if hdr is not None:
        # the header decides, unless most data rows are wider (columns without a name)
        width = max(len(rows[hdr]), typical)
    else:
        width = max(lengths) if lengths and lengths[-1] <= typical + 2 else typical
    if hdr is not None:
        # drop trailing unnamed columns that are empty in the sample (a trailing delimiter)
        while (
            width > 1
            and (width > len(rows[hdr]) or not str(rows[hdr][width - 1] or "").strip())
            and not any(
                width - 1 < len(r) and r[width - 1] is not None and str(r[width - 1]).strip() for r in sample
            )
        ):
            width -= 1
    names = header_names(rows[hdr] if hdr is not None else None, width)
    cols = describe_columns(names, sample, typed=False, max_cell_chars=opts.max_cell_chars)
    preview = [
        [cell_text(r[j] if j < len(r) else None, opts.max_cell_chars) for j in range(width)]
        for r in data[: opts.max_rows]
    ]
    notes: list[str] = []
    if complete:
        nrows: int | None = len(data)
        exact = True
    else:
        nrows = total_rows_after_header(data_start) if total_rows_after_header else None
        exact = False
    ragged = sum(1 for r in sample if _filled_len(r) > width)
    if ragged:
        notes.append(f"{ragged} of the first {len(sample)} rows have more fields than the header")
    if len(sample) < len(data) or not complete:
        notes.append(f"types from the first {len(sample)} rows")
    header_row = (first_line_no(hdr) if first_line_no else hdr + 1) if hdr is not None else None
    ends = [last_line_no(data_start + k) for k in range(len(preview))] if last_line_no else []
    data_line = first_line_no(data_start) if first_line_no and last_line_no and data else None
    if hdr is None:
        notes.append("no header row: columns are numbered")
    return TableInfo(
        name=name,
        rows=nrows,
        rows_exact=exact,
        columns=cols,
        header_row=header_row,
        above_header=above,
        preview=preview,
        preview_line_ends=ends,
        data_line=data_line,
        notes=notes,
    )


# ---------------------------------------------------------------------------------------------- text


def _text_lines(scan: Scan) -> int:
    if scan.size == 0:
        return 0
    ends = scan.newlines or scan.carriage_returns  # a file of '\r' line ends (no '\n' at all) has lines too
    return ends + (0 if scan.ends_with_newline else 1)


def _trailing_blank_lines(scan: Scan, encoding: str) -> int:
    text = decode(scan.tail, encoding if encoding != "utf-16" else "latin-1", partial=True)
    lines = text.split("\n" if scan.newlines or not scan.carriage_returns else "\r")
    if lines and lines[-1] == "":
        lines.pop()
    n = 0
    for ln in reversed(lines):
        if ln.strip().strip(",;\t|").strip():
            break
        n += 1
    return n


def _head_text(scan: Scan, entry: FileEntry) -> tuple[str, str, bool]:
    """A text file's encoding (UTF-8 unless another was detected), the text of its head and whether that head is
    the whole file (else its last character may be cut)."""
    enc = entry.encoding or "utf-8"
    complete = scan.size <= len(scan.head)
    return enc, decode(scan.head, enc, partial=not complete), complete


def read_delimited(path: Path, scan: Scan, opts: LakeOptions, entry: FileEntry) -> None:
    enc, text, complete = _head_text(scan, entry)
    if text.startswith("\ufeff"):
        text = text[1:]
    sniffed = sniff_delimiter(text)
    delim = sniffed.delimiter if sniffed else ","
    entry.delimiter = delim
    if not complete:
        # drop the last (possibly cut) line of the head
        cut = max(text.rfind("\n"), 0)
        text = text[:cut]
    reader = csv_reader(io.StringIO(text, newline=""), delimiter=delim)
    rows: list[list[str]] = []
    line_of_row: list[int] = []  # physical line on which each record starts
    end_of_row: list[int] = []  # and the one on which it ends
    prev_line = 0
    bad = 0
    limit = _HEADER_SCAN_ROWS + opts.sample_rows + opts.max_rows
    cut_short = False
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error:
            bad += 1
            prev_line = reader.line_num
            continue
        line_of_row.append(prev_line + 1)
        prev_line = reader.line_num
        end_of_row.append(prev_line)
        rows.append(row)
        if len(rows) >= limit:
            cut_short = True
            break
    multiline = prev_line > len(rows) + bad
    if complete and cut_short:
        # only the first rows are needed; the others are counted (lines, or records if quoted fields span lines)
        complete = False

    def first_line_no(i: int) -> int:
        return line_of_row[i] if i < len(line_of_row) else i + 1

    def last_line_no(i: int) -> int:
        return end_of_row[i] if i < len(end_of_row) else i + 1

    total_lines = _text_lines(scan)
    trailing = _trailing_blank_lines(scan, enc)

    def rows_after(data_start: int) -> int | None:
        start_line = first_line_no(data_start) if data_start < len(line_of_row) else data_start + 1
        return max(0, total_lines - trailing - (start_line - 1))

    if multiline and not complete:
        # quoted fields span lines: count records properly (streaming, whole file)
        table = _table_from_rows(
            rows,
            opts=opts,
            complete=False,
            first_line_no=first_line_no,
            last_line_no=last_line_no,
        )
        _, data_start = find_header(rows[:_HEADER_SCAN_ROWS])
        table.rows = max(0, _count_records(path, enc, delim) - data_start)
        table.rows_exact = True
        table.notes.append("quoted fields span several lines")
    else:
        table = _table_from_rows(
            rows,
            opts=opts,
            total_rows_after_header=rows_after,
            complete=complete,
            first_line_no=first_line_no,
            last_line_no=last_line_no,
        )
        if not complete:
            table.rows_exact = True  # line count of the whole file, no multi-line records seen
    if bad:
        table.notes.append(f"{bad} malformed lines skipped in the first rows")
    if sniffed is None and Path(path).suffix.lower() in {".csv", ".tsv"}:
        table.notes.append("no delimiter found: read as one column")
    entry.tables = [table]
    entry.lines = total_lines


def _count_records(path: Path, encoding: str, delim: str) -> int:
    with open(path, encoding=encoding, errors="replace", newline="") as f:
        n = 0
        blank_tail = 0
        for row in csv_reader(f, delimiter=delim):
            if any(c.strip() for c in row):
                n += 1 + blank_tail
                blank_tail = 0
            else:
                blank_tail += 1
        return n


def read_fixed_width(path: Path, scan: Scan, opts: LakeOptions, entry: FileEntry) -> None:
    enc, text, complete = _head_text(scan, entry)
    lines = text.splitlines()
    if not complete and lines:
        lines = lines[:-1]
    comments = [ln for ln in lines[:50] if ln.lstrip().startswith(("#", "%", "!"))]
    body_idx = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith(("#", "%", "!"))]
    body = [lines[i] for i in body_idx]
    spans = split_fixed_width(body[:200])
    ws_width = whitespace_table(body[:200])
    if spans is not None and ws_width is not None and len(spans) < ws_width:
        spans = None  # whitespace-separated fields that do not line up
    rows: list[list[str]]
    if spans is not None:
        rows = [[ln[a:b].strip() for a, b in spans] for ln in body]
        entry.notes.append(
            "fixed-width columns at character positions " + ", ".join(f"{a + 1}-{b}" for a, b in spans[:30])
        )
    else:
        rows = [ln.split() for ln in body]
        entry.notes.append("whitespace-separated columns")
    total_lines = _text_lines(scan)
    trailing = _trailing_blank_lines(scan, enc)

    def rows_after(data_start: int) -> int | None:
        line_no = body_idx[data_start] + 1 if data_start < len(body_idx) else data_start + 1
        return max(0, total_lines - trailing - (line_no - 1))

    table = _table_from_rows(
        rows,
        opts=opts,
        total_rows_after_header=rows_after,
        complete=complete,
        first_line_no=lambda i: body_idx[i] + 1 if i < len(body_idx) else i + 1,
        last_line_no=lambda i: body_idx[i] + 1 if i < len(body_idx) else i + 1,
    )
    if comments:
        table.above_header = [c.strip()[:200] for c in comments[:5]] + table.above_header
    entry.tables = [table]
    entry.lines = total_lines


def read_text(path: Path, scan: Scan, opts: LakeOptions, entry: FileEntry) -> None:
    _, text, complete = _head_text(scan, entry)
    lines = text.lstrip("\ufeff").splitlines()
    if not complete and lines:
        lines = lines[:-1]
    entry.lines = _text_lines(scan)
    entry.text_preview = [cell_text(ln, 200) for ln in lines[: max(opts.max_rows, 20)]]


# ---------------------------------------------------------------------------------------------- json


def _json_outline(value: Any, depth: int = 0, max_depth: int = 3) -> str:
    if isinstance(value, dict):
        if depth >= max_depth:
            return f"object ({len(value)} keys)"
        inner = ", ".join(
            f"{k}: {_json_outline(v, depth + 1, max_depth)}" for k, v in islice(value.items(), 12)
        )
        more = f", … {len(value) - 12} more keys" if len(value) > 12 else ""
        return "{" + inner + more + "}"
    if isinstance(value, list):
        if not value:
            return "[] (empty)"
        if depth >= max_depth:
            return f"list of {len(value)}"
        return f"list of {len(value)} × {_json_outline(value[0], depth + 1, max_depth)}"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if value is None:
        return "null"
    return "string"


def _records_table(records: list[Any], opts: LakeOptions, name: str | None, total: int) -> TableInfo:
    sample = records[: opts.sample_rows]
    keys: dict[str, None] = {}
    for r in sample:
        if isinstance(r, dict):
            for k in r:
                keys.setdefault(str(k), None)
    names = list(keys)

    def cell(v: Any) -> Any:
        if isinstance(v, (dict, list)):
            return json.dumps(v, ensure_ascii=False)[: opts.max_cell_chars * 2]
        return v

    rows = [[cell(r.get(k)) if isinstance(r, dict) else None for k in names] for r in sample]
    cols = describe_columns(names, rows, typed=True, max_cell_chars=opts.max_cell_chars)
    shown = [row_cells(row, len(names), opts.max_cell_chars) for row in rows[: opts.max_rows]]
    notes = [f"types from the first {len(sample)} records"] if len(sample) < total else []
    return TableInfo(
        name=name,
        rows=total,
        columns=cols,
        header_row=None,
        preview=[c for c, _ in shown],
        notes=notes,
        line_breaks=[i for i, (_, b) in enumerate(shown) if b],
    )


def _find_records(value: Any, path: str = "") -> tuple[str, list[Any]] | None:
    """The first list of objects in a JSON document (top level or one level down)."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value[:50]):
        return path or "(top level)", value
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, list) and v and all(isinstance(x, dict) for x in v[:50]):
                return f"{path}.{k}" if path else str(k), v
    return None


def read_json(path: Path, scan: Scan, opts: LakeOptions, entry: FileEntry) -> None:
    enc = entry.encoding or "utf-8"
    if scan.size > opts.max_json_bytes:
        entry.notes.append(f"large JSON file ({scan.size} bytes): not parsed whole")
        read_text(path, scan, opts, entry)
        return
    with open(path, encoding=enc if enc != "utf-8" else "utf-8-sig", errors="strict") as f:
        try:
            value = json.load(f)
        except json.JSONDecodeError as e:
            # maybe JSON lines after all
            f.seek(0)
            head = f.read(2048)
            if head.lstrip().startswith("{") and "\n" in head.strip():
                entry.format = "jsonl"
                read_jsonl(path, scan, opts, entry)
                return
            raise ValueError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from e
    entry.notes.append("structure: " + _json_outline(value)[:1500])
    if (
        isinstance(value, dict)
        and value.get("type") == "FeatureCollection"
        and isinstance(value.get("features"), list)
    ):
        feats = value["features"]
        records = []
        for f in feats[: opts.sample_rows]:
            props = f.get("properties") if isinstance(f, dict) else None
            geom = f.get("geometry") if isinstance(f, dict) else None
            rec = dict(props) if isinstance(props, dict) else {}
            rec["geometry.type"] = geom.get("type") if isinstance(geom, dict) else None
            records.append(rec)
        entry.notes.append(f"GeoJSON FeatureCollection of {len(feats)} features: properties as columns")
        entry.tables = [_records_table(records, opts, "features", len(feats))]
        return
    found = _find_records(value)
    if found is not None:
        name, records = found
        entry.tables = [_records_table(records, opts, None if name == "(top level)" else name, len(records))]
    else:
        text = json.dumps(_shrink(value), ensure_ascii=False, indent=1)
        entry.text_preview = [cell_text(ln, 200) for ln in text.splitlines()[: max(opts.max_rows, 20)]]


def _shrink(value: Any, depth: int = 0) -> Any:
    """A small copy of a JSON value for a preview (long lists and deep nesting cut)."""
    if depth > 4:
        return "…"
    if isinstance(value, dict):
        return {k: _shrink(v, depth + 1) for k, v in islice(value.items(), 30)}
    if isinstance(value, list):
        return [_shrink(v, depth + 1) for v in value[:5]] + (
            [f"… {len(value) - 5} more"] if len(value) > 5 else []
        )
    return clip(value, 201) if isinstance(value, str) and len(value) > 200 else value


def read_jsonl(path: Path, scan: Scan, opts: LakeOptions, entry: FileEntry) -> None:
    enc = entry.encoding or "utf-8"
    records: list[Any] = []
    bad = 0
    total = 0
    with open(path, encoding=enc if enc != "utf-8" else "utf-8-sig", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            total += 1
            if len(records) < opts.sample_rows:
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    bad += 1
    entry.tables = [_records_table(records, opts, None, total)]
    entry.lines = _text_lines(scan)
    if bad:
        entry.tables[0].notes.append(f"{bad} lines of the first {opts.sample_rows} are not valid JSON")


# ---------------------------------------------------------------------------------------------- html


class _EnoughText(Exception):
    pass


class _TextLines:
    """An lxml parser target: the page's text lines in document order (script and style left out)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.lines: list[str] = []
        self.skip = 0
        self.part: list[str] = []

    def start(self, tag: str, attrib: Any) -> None:
        self._flush()
        if tag in ("script", "style"):
            self.skip += 1

    def end(self, tag: str) -> None:
        self._flush()
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)

    def data(self, text: str) -> None:
        if not self.skip:
            self.part.append(text)

    def _flush(self) -> None:
        for ln in "".join(self.part).splitlines():
            if ln.strip():
                self.lines.append(ln.strip())
                if len(self.lines) >= self.n:
                    raise _EnoughText
        self.part = []

    def close(self) -> list[str]:
        self._flush()
        return self.lines


def _html_text_lines(text: str, n: int) -> list[str]:
    """The first ``n`` non-blank lines of a page's text (script and style left out), read by lxml's parser
    with a target, in pieces until it has them: no tree is built, whatever the page's size."""
    from lxml import etree

    target = _TextLines(n)
    parser = etree.HTMLParser(target=target, recover=True)
    step = 64 * 1024
    try:
        for i in range(0, len(text), step):
            parser.feed(text[i : i + step])
        parser.close()
    except _EnoughText:
        pass
    except etree.LxmlError:  # (recover=True: only an unusable document)
        pass
    return target.lines[:n]


def read_html(path: Path, scan: Scan, opts: LakeOptions, entry: FileEntry) -> None:
    import pandas as pd

    enc = entry.encoding or "utf-8"
    if scan.size > opts.max_html_bytes:  # a parsed DOM takes many times the file's size
        entry.notes.append(
            f"large HTML file ({_mb(scan.size)}, bound {_mb(opts.max_html_bytes)}): not parsed, "
            "its text head only"
        )
        read_text(path, scan, opts, entry)
        return
    with open(path, encoding=enc, errors="replace") as f:
        text = f.read()
    try:
        # lxml only: pandas' default falls back to BeautifulSoup + html5lib (a pure-Python tree, ~150x the
        # file's size in memory and ~10x the time) whenever lxml finds no table, or fails
        frames = pd.read_html(io.StringIO(text), flavor="lxml") if "<table" in text.lower() else []
    except ValueError:  # no table
        frames = []
    except ImportError as e:  # pragma: no cover - lxml is a dependency
        raise ValueError(f"no HTML parser available ({e})") from e
    title = None
    low = text.lower()
    a = low.find("<title")
    if a >= 0:
        b = low.find(">", a)
        c = low.find("</title>", b)
        if b >= 0 and c > b:
            title = " ".join(text[b + 1 : c].split())[:200]
    if title:
        entry.notes.append(f"title: {title}")
    if not frames:
        lines = _html_text_lines(text, max(opts.max_rows, 20))
        entry.notes.append("no tables")
        entry.text_preview = [cell_text(ln, 200) for ln in lines[: max(opts.max_rows, 20)]]
        return
    entry.notes.append(f"{len(frames)} tables")
    tables = []
    for i, df in enumerate(frames[: opts.max_tables]):
        if hasattr(df.columns, "levels"):
            names = [
                " / ".join(dict.fromkeys(str(x) for x in col if not str(x).startswith("Unnamed")))
                for col in df.columns
            ]
        else:
            names = [str(c) for c in df.columns]
        # no <th> row: pandas numbers the columns and every row is data (no header row to show)
        numbered = not hasattr(df.columns, "levels") and list(df.columns) == list(range(len(df.columns)))
        rows = [
            [None if _isna(v) else v for v in rec]
            for rec in df.head(opts.sample_rows).itertuples(index=False)
        ]
        cols = describe_columns(names, rows, typed=True, max_cell_chars=opts.max_cell_chars)
        shown = [row_cells(r, len(names), opts.max_cell_chars) for r in rows[: opts.max_rows]]
        tables.append(
            TableInfo(
                name=f"table {i + 1}",
                rows=len(df),
                columns=cols,
                preview=[c for c, _ in shown],
                line_breaks=[k for k, (_, b) in enumerate(shown) if b],
                numbered_columns=numbered,
                header_levels=getattr(df.columns, "nlevels", 1),
                notes=[f"types from the first {len(rows)} rows"] if len(rows) < len(df) else [],
            )
        )
    entry.tables = tables
    if len(frames) > opts.max_tables:
        entry.notes.append(f"only the first {opts.max_tables} tables are described")


def _isna(v: Any) -> bool:
    try:
        return bool(v != v)  # NaN
    except Exception:  # noqa: BLE001
        return False


# --------------------------------------------------------------------------------------------- excel


def _describe_sheets(
    entry: FileEntry, names: list[str], tables: Iterable[TableInfo], opts: LakeOptions
) -> None:
    """A workbook's sheet names and a table per sheet (the first ``opts.max_tables``)."""
    entry.sheets = names
    entry.tables = list(tables)
    if len(names) > opts.max_tables:
        entry.notes.append(f"only the first {opts.max_tables} sheets are described")


def _describe_book(
    entry: FileEntry,
    names: list[str],
    tables: Iterable[TableInfo],
    opts: LakeOptions,
    close: Callable[[], object],
) -> None:
    """:func:`_describe_sheets`, then ``close`` the workbook whatever happened."""
    try:
        _describe_sheets(entry, names, tables, opts)
    finally:
        close()


class DecompressionBound(ValueError):
    """A compressed file declares or inflates to more than the reader's bound (a decompression bomb)."""


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n:,} bytes"


def check_zip_inflation(path: Path, limit: int) -> int:
    """Bytes the members of a zip container inflate to, checked against ``limit`` twice: the sizes its
    directory declares, then the bytes that really come out (streamed, never held), so that a forged
    directory cannot pass either. Raises :class:`DecompressionBound` saying which check stopped it."""
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
        declared = sum(i.file_size for i in infos)
        if declared > limit:
            big = max(infos, key=lambda i: i.file_size)
            raise DecompressionBound(
                f"decompression bound: its parts declare {_mb(declared)} once inflated ({big.filename}: "
                f"{_mb(big.file_size)} from {_mb(big.compress_size)}), above the bound of {_mb(limit)}; not read"
            )
        actual = 0
        for info in infos:
            with z.open(info) as f:
                while chunk := f.read(1 << 20):
                    actual += len(chunk)
                    if actual > limit:
                        raise DecompressionBound(
                            f"decompression bound: its parts inflate past {_mb(limit)} (at {info.filename}) although "
                            f"they declare {_mb(declared)}; not read"
                        )
    return actual


def read_xlsx(path: Path, scan: Scan, opts: LakeOptions, entry: FileEntry) -> None:
    import openpyxl

    # openpyxl holds the shared strings (all cell text) in memory: a 1 MB file can hold 1 GB of them
    check_zip_inflation(path, opts.max_decompressed_bytes)
    wb = openpyxl.load_workbook(path, read_only=True, data_only=True)

    def tables() -> Iterable[TableInfo]:
        for ws in wb.worksheets[: opts.max_tables]:
            if hasattr(ws, "reset_dimensions"):
                ws.reset_dimensions()  # as pandas: rows and columns as the cells say, not the declared dimension
            part = getattr(ws, "_worksheet_path", None)
            merged = xlsx_merged_cells(path, part) if part else ([], 0)
            yield sheet_table(ws.title, ws.iter_rows(values_only=True), opts, merged)

    _describe_book(entry, list(wb.sheetnames), tables(), opts, wb.close)


def read_xls(path: Path, scan: Scan, opts: LakeOptions, entry: FileEntry) -> None:
    try:
        import xlrd
    except ImportError as e:
        raise ValueError("xlrd is not installed (needed for .xls)") from e
    try:  # formatting information holds the merged ranges
        book = xlrd.open_workbook(str(path), on_demand=True, formatting_info=True)
    except Exception:  # noqa: BLE001 - not every writer's file carries it: the cells are enough
        book = xlrd.open_workbook(str(path), on_demand=True)

    def cell(c: Any) -> Any:
        if c.ctype == xlrd.XL_CELL_DATE:
            try:
                v = xlrd.xldate.xldate_as_datetime(c.value, book.datemode)
            except Exception:  # noqa: BLE001
                return c.value
            if v.date() == (datetime.date(1904, 1, 1) if book.datemode else datetime.date(1899, 12, 31)):
                return v.time()  # a time of day (pandas reads these as times too)
            return v
        if c.ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
            return None
        if c.ctype == xlrd.XL_CELL_BOOLEAN:
            return bool(c.value)
        if c.ctype == xlrd.XL_CELL_ERROR:
            return xlrd.error_text_from_code.get(c.value, "#ERROR")
        return c.value

    def tables() -> Iterable[TableInfo]:
        for i in range(min(book.nsheets, opts.max_tables)):
            sh = book.sheet_by_index(i)
            merged = xls_merged_cells(getattr(sh, "merged_cells", []) or [])
            yield sheet_table(sh.name, ([cell(c) for c in sh.row(r)] for r in range(sh.nrows)), opts, merged)

    _describe_book(entry, book.sheet_names(), tables(), opts, book.release_resources)


# ------------------------------------------------------------------------------------------- parquet


def read_parquet(path: Path, scan: Scan, opts: LakeOptions, entry: FileEntry) -> None:
    try:
        import pyarrow.parquet as pq
    except ImportError as e:
        raise ValueError("pyarrow is not installed (needed for parquet)") from e
    pf = pq.ParquetFile(path)
    total = pf.metadata.num_rows
    if pf.metadata.num_row_groups:
        declared = pf.metadata.row_group(0).total_byte_size  # what the first batch decompresses
        if declared > opts.max_decompressed_bytes:
            raise DecompressionBound(
                f"decompression bound: its first row group declares {_mb(declared)} uncompressed, above the bound "
                f"of {_mb(opts.max_decompressed_bytes)}; not read"
            )
    names = [str(n) for n in pf.schema_arrow.names]
    rows: list[list[Any]] = []
    for batch in pf.iter_batches(batch_size=max(opts.sample_rows, 1)):
        rows = [list(r.values()) for r in batch.to_pylist()]
        break
    cols = describe_columns(names, rows, typed=True, max_cell_chars=opts.max_cell_chars)
    for c, f in zip(cols, pf.schema_arrow, strict=False):
        c.dtype = f"{c.dtype} (parquet {f.type})"
    shown = [row_cells(r, len(names), opts.max_cell_chars) for r in rows[: opts.max_rows]]
    entry.tables = [
        TableInfo(
            name=None,
            rows=total,
            columns=cols,
            preview=[c for c, _ in shown],
            line_breaks=[i for i, (_, b) in enumerate(shown) if b],
        )
    ]


# ------------------------------------------------------------------------------------- dbf and gzip


def read_dbf(path: Path, scan: Scan, opts: LakeOptions, entry: FileEntry) -> None:
    """dBase tables (the attribute table of a shapefile): header fields and the first records."""
    import struct

    head = scan.head
    if len(head) < 32:
        raise ValueError("truncated dBase header")
    n_records, header_len, record_len = struct.unpack("<IHH", head[4:12])
    fields: list[tuple[str, str, int]] = []
    pos = 32
    while pos + 32 <= min(header_len, len(head)) and head[pos] != 0x0D:
        name = head[pos : pos + 11].split(b"\x00", 1)[0].decode("latin-1").strip()
        ftype = chr(head[pos + 11])
        flen = head[pos + 16]
        fields.append((name, ftype, flen))
        pos += 32
    if not fields:
        raise ValueError("no fields in the dBase header")
    rows: list[list[Any]] = []
    with open(path, "rb") as f:
        f.seek(header_len)
        for _ in range(min(n_records, opts.sample_rows)):
            rec = f.read(record_len)
            if len(rec) < record_len:
                break
            if rec[:1] == b"*":  # deleted
                continue
            off = 1
            row = []
            for _name, _t, flen in fields:
                row.append(rec[off : off + flen].decode("latin-1", errors="replace").strip())
                off += flen
            rows.append(row)
    t = _table_from_rows([[n for n, _, _ in fields]] + rows, opts=opts, complete=True)
    t.rows = n_records
    t.header_row = None
    t.notes = [f"dBase field types: {', '.join(f'{n}={ty}{ln}' for n, ty, ln in fields[:40])}"]
    entry.tables = [t]
    entry.notes.append("dBase table (e.g. the attributes of a shapefile)")


def read_gzip(path: Path, scan: Scan, opts: LakeOptions, entry: FileEntry) -> None:
    """A gzip-compressed text file: its decompressed head is described like a plain file."""
    import gzip

    with gzip.open(path, "rb") as g:
        head = g.read(opts.head_bytes)
        more = bool(g.read(1))
    inner = Scan(
        size=len(head),
        digest=scan.digest,
        head=head,
        tail=head[-65536:],
        newlines=head.count(b"\n"),
        utf8_ok=True,
        cp1252_ok=True,
        ends_with_newline=head.endswith(b"\n"),
    )
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        inner.utf8_ok = e.start >= len(head) - 4 and more
    if looks_binary(head):
        entry.notes.append("gzip of a binary file")
        return
    inner_name = path.name[:-3] if path.name.lower().endswith(".gz") else path.name
    fmt = sniff_text_format(decode(head[:65536], detect_encoding(inner), partial=True), inner_name)
    entry.encoding = detect_encoding(inner)
    entry.notes.append(f"gzip-compressed {fmt}; described from its first {len(head)} decompressed bytes")
    if more:
        # the head is not the whole file: the row count is unknown, not the head's
        inner.size = len(head) + 1
    reader = {"csv": read_delimited, "fixed-width": read_fixed_width}.get(fmt, read_text)
    reader(path, inner, opts, entry)
    if more:
        for t in entry.tables:
            t.rows, t.rows_exact = None, False
        entry.lines = None


# ---------------------------------------------------------------------------------------------- main

READERS: dict[str, Callable[[Path, Scan, LakeOptions, FileEntry], None]] = {
    "csv": read_delimited,
    "fixed-width": read_fixed_width,
    "text": read_text,
    "json": read_json,
    "jsonl": read_jsonl,
    "html": read_html,
    "xlsx": read_xlsx,
    "xls": read_xls,
    "parquet": read_parquet,
    "dbf": read_dbf,
    "gzip": read_gzip,
}


_TEXT_FORMATS = {"csv", "json", "jsonl", "html", "text"}


def detect_format(rel: str, scan: Scan, path: Path) -> tuple[str, list[str]]:
    """(format, notes) from content first, extension second."""
    notes: list[str] = []
    ext = ext_format(rel)
    if scan.size == 0:
        return "empty", notes
    magic = magic_format(scan.head)
    if magic == "zip":
        try:
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
        except zipfile.BadZipFile as e:
            raise ValueError(f"corrupt zip container ({e})") from e
        if "xl/workbook.xml" in names:
            fmt = "xlsx"
        elif "word/document.xml" in names:
            fmt = "docx"
        elif "ppt/presentation.xml" in names:
            fmt = "pptx"
        else:
            fmt = "zip"
            if names:
                notes.append(
                    f"zip archive of {len(names)} files: "
                    + ", ".join(names[:10])
                    + (" …" if len(names) > 10 else "")
                )
    elif magic == "ole":
        fmt = "xls" if ext in (None, "xls") or rel.lower().endswith(".xls") else "ole"
        if fmt == "ole":
            fmt = "xls"  # try it as a workbook: most OLE files in data lakes are .xls
    elif magic == "shapefile" and ext == "shapefile-index":
        fmt = ext
    elif magic is not None:
        fmt = magic
    elif looks_binary(scan.head):
        fmt = ext if ext and ext not in _TEXT_FORMATS else "binary"
    else:
        enc = detect_encoding(scan)
        text = decode(scan.head[:65536], enc, partial=scan.size > 65536)
        fmt = sniff_text_format(text, rel)
        if fmt == "text" and ext == "csv":
            fmt = "csv"  # one column
    if ext and ext != fmt and not (ext == "text" and fmt in {"csv", "fixed-width"}) and fmt != "gzip":
        if not (ext == "json" and fmt == "jsonl"):
            notes.append(f"extension says {ext}, content is {fmt}")
    return fmt, notes


def read_entry(path: Path, rel: str, scan: Scan, opts: LakeOptions) -> FileEntry:
    """Describe one scanned file; never raises."""
    entry = FileEntry(path=rel, size=scan.size, content_hash=scan.digest)
    try:
        fmt, notes = detect_format(rel, scan, path)
        entry.format = fmt
        entry.notes.extend(notes)
        if fmt in {"csv", "fixed-width", "text", "json", "jsonl", "html"}:
            entry.encoding = detect_encoding(scan)
        reader = READERS.get(fmt)
        if reader is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # library warnings about odd files are not failures
                reader(path, scan, opts, entry)
        if entry.lines is None and entry.format in {"csv", "fixed-width", "text", "json", "jsonl", "html"}:
            entry.lines = _text_lines(scan)  # a text file's line count, whatever its reader looked at
    except DecompressionBound as e:  # why the reader stopped, recorded on the entry
        entry.tables = []
        entry.text_preview = []
        entry.error = f"not read: {e}"
    except Exception as e:  # noqa: BLE001 - any failure of a reader is an entry, never an exception
        log.debug("could not read %s", rel, exc_info=True)
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        entry.tables = []
        entry.text_preview = []
        if entry.format == "unknown":
            entry.format = ext_format(rel) or "unknown"
        entry.error = f"could not read: {type(e).__name__}{': ' + msg[:300] if msg else ''}"
    return entry


__all__ = [
    "READERS",
    "DecompressionBound",
    "check_zip_inflation",
    "delimiter_name",
    "detect_format",
    "read_entry",
]
