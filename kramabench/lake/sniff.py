"""One pass over a file's bytes (hash, line count, encoding check, head and tail) and format sniffing.

The format comes from the content first (magic numbers, then the text itself) and from the extension
only when the content does not decide; a disagreement between the two becomes a note.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _csv import Reader

CHUNK = 1 << 20
_CONTROL = bytes([*range(0, 9), *range(14, 32)])
_C1 = re.compile(rb"[\x80-\x9f]")
_CP1252_UNDEFINED = (b"\x81", b"\x8d", b"\x8f", b"\x90", b"\x9d")


@dataclass
class Scan:
    """What one read of the whole file tells us."""

    size: int
    digest: str
    head: bytes
    tail: bytes
    newlines: int
    utf8_ok: bool
    cp1252_ok: bool
    ends_with_newline: bool
    has_c1: bool = False  # bytes 0x80-0x9f in a non-UTF-8 file: cp1252 punctuation, not latin-1
    carriage_returns: int = 0  # '\r' bytes: the line ends of a file without any '\n' (classic Mac)
    notes: list[str] = field(default_factory=list)


def scan_file(path: Path, head_bytes: int, tail_bytes: int = 64 * 1024) -> Scan:
    """Read ``path`` once: content hash (blake2b), newline count, head, tail and encoding validity."""
    h = hashlib.blake2b(digest_size=16)
    head = bytearray()
    tail = b""
    newlines = 0
    carriage_returns = 0
    size = 0
    dec = codecs.getincrementaldecoder("utf-8")()
    utf8_ok = True
    cp1252_ok = True
    has_c1 = False
    last = b""
    with open(path, "rb") as f:
        while True:
            chunk = f.read(CHUNK)
            if not chunk:
                break
            size += len(chunk)
            h.update(chunk)
            newlines += chunk.count(b"\n")
            if not newlines:
                carriage_returns += chunk.count(b"\r")
            if len(head) < head_bytes:
                head += chunk[: head_bytes - len(head)]
            tail = (tail + chunk)[-tail_bytes:]
            if utf8_ok:
                try:
                    dec.decode(chunk)
                except UnicodeDecodeError:
                    utf8_ok = False
            if not utf8_ok and not has_c1 and _C1.search(chunk):
                has_c1 = True
            if cp1252_ok and any(b in chunk for b in _CP1252_UNDEFINED):
                cp1252_ok = False
            last = chunk[-1:]
    if utf8_ok:
        try:
            dec.decode(b"", final=True)
        except UnicodeDecodeError:
            utf8_ok = False
    return Scan(
        size=size,
        digest=h.hexdigest(),
        head=bytes(head),
        tail=tail,
        newlines=newlines,
        utf8_ok=utf8_ok,
        cp1252_ok=cp1252_ok,
        ends_with_newline=last in (b"\n", b"\r"),
        has_c1=has_c1,
        carriage_returns=0 if newlines else carriage_returns,
    )


def hash_file(path: Path) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def detect_encoding(scan: Scan) -> str:
    head = scan.head
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if scan.utf8_ok:
        return "utf-8"
    if scan.cp1252_ok and scan.has_c1:
        return "cp1252"
    return "latin-1"


def decode(data: bytes, encoding: str, *, partial: bool) -> str:
    """Decode a head of a file; a multi-byte character cut at the end is dropped, not an error."""
    if encoding == "utf-16":
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        if partial and encoding.startswith("utf-8") and e.start >= len(data) - 4:
            return data[: e.start].decode(encoding, errors="replace")
        return data.decode(encoding, errors="replace")


_MAGIC: list[tuple[bytes, str]] = [
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "ole"),
    (b"PAR1", "parquet"),
    (b"%PDF", "pdf"),
    (b"\x89PNG", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"GIF8", "gif"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"7z\xbc\xaf", "7z"),
    (b"SQLite format 3\x00", "sqlite"),
    (b"\x89HDF", "hdf5"),
    (b"CDF\x01", "netcdf"),
    (b"CDF\x02", "netcdf"),
    (b"\xcd\xf3\x00\x01", "cdf"),
    (b"\xcd\xf3\x00\x02", "cdf"),
    (b"SIMPLE  =", "fits"),
    (b"ARROW1", "arrow"),
    (b"Obj\x01", "avro"),
    (b"\x93NUMPY", "npy"),
    (b"\x00\x00\x27\x0a", "shapefile"),
    (b"\x80\x04", "pickle"),
    (b"\x80\x05", "pickle"),
]

_EXT_FORMAT = {
    ".csv": "csv",
    ".tsv": "csv",
    ".tab": "csv",
    ".psv": "csv",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".xls": "xls",
    ".json": "json",
    ".geojson": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".txt": "text",
    ".dat": "text",
    ".md": "text",
    ".log": "text",
    ".text": "text",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".fits": "fits",
    ".fit": "fits",
    ".cdf": "cdf",
    ".nc": "netcdf",
    ".h5": "hdf5",
    ".hdf5": "hdf5",
    ".pdf": "pdf",
    ".zip": "zip",
    ".gz": "gzip",
    ".npy": "npy",
    ".pkl": "pickle",
    ".dbf": "dbf",
    ".shp": "shapefile",
    ".shx": "shapefile-index",
    ".prj": "text",
}


def ext_format(path: str) -> str | None:
    return _EXT_FORMAT.get(Path(path).suffix.lower())


def magic_format(head: bytes) -> str | None:
    for magic, fmt in _MAGIC:
        if head.startswith(magic):
            return fmt
    return None


def looks_binary(head: bytes) -> bool:
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    sample = head[:8192]
    if not sample:
        return False
    if sample.count(b"\x00") > max(2, 0.01 * len(sample)):
        return True
    control = len(sample) - len(sample.translate(None, _CONTROL))
    return control > 0.05 * len(sample)


_HTML_RE = re.compile(r"^\s*(<!doctype html|<html|<table|<!--|<\?xml[^>]*>\s*<html)", re.IGNORECASE)
_DELIMS = [",", "\t", ";", "|"]


@dataclass
class Delimited:
    delimiter: str
    width: int
    consistency: float


def sniff_delimiter(text: str, max_lines: int = 60) -> Delimited | None:
    """The delimiter whose field count is the most consistent over the first lines (outside quotes)."""
    text = text[:65536]
    lines = [ln for ln in text.splitlines()[: max_lines * 2] if ln.strip()][:max_lines]
    if len(lines) >= 2 and not text.endswith(("\n", "\r")):
        lines = lines[:-1] if len(lines) > 2 else lines  # the last line of a head may be cut
    if not lines:
        return None
    best: Delimited | None = None
    for d in _DELIMS:
        if not any(d in ln for ln in lines):
            continue
        try:
            rows = list(csv_reader(io.StringIO("\n".join(lines)), delimiter=d))
        except csv.Error:
            continue
        counts = [len(r) for r in rows if any(c.strip() for c in r)]
        if not counts:
            continue
        width, n = Counter(counts).most_common(1)[0]
        # tails of the sample (title lines above a header) should not decide: look at the widest mode
        wide = [c for c in counts if c >= 2]
        if width < 2 and wide:
            width, n = Counter(wide).most_common(1)[0]
        if width < 2:
            continue
        consistency = n / len(counts)
        score = consistency + 0.001 * min(width, 50)
        if best is None or score > best.consistency + 0.001 * min(best.width, 50):
            best = Delimited(d, width, consistency)
    if best is None:
        return None
    if best.consistency < 0.5 and len(lines) >= 4:
        return None
    return best


def split_fixed_width(lines: list[str]) -> list[tuple[int, int]] | None:
    """Column spans of a fixed-width table (positions blank in every line), or None."""
    body = [ln.rstrip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if len(body) < 3:
        return None
    width = max(len(ln) for ln in body)
    if width < 3:
        return None
    blank = [True] * width
    for ln in body:
        for i, ch in enumerate(ln):
            if ch != " ":
                blank[i] = False
    spans: list[tuple[int, int]] = []
    i = 0
    while i < width:
        if blank[i]:
            i += 1
            continue
        j = i
        while j < width and not blank[j]:
            j += 1
        spans.append((i, j))
        i = j
    if len(spans) < 2:
        return None
    # every line must put something in most columns, or it is prose that happens to align
    filled = 0
    for ln in body:
        filled += sum(1 for a, b in spans if ln[a:b].strip())
    if filled < 0.7 * len(spans) * len(body):
        return None
    return spans


def whitespace_table(lines: list[str]) -> int | None:
    """Field count of a whitespace-separated table (mostly numeric lines), or None."""
    body = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith(("#", "%", "!"))]
    if len(body) < 3:
        return None
    counts = Counter(len(ln.split()) for ln in body)
    width, n = counts.most_common(1)[0]
    if width < 2 or n < 0.8 * len(body):
        return None
    numeric = 0
    total = 0
    for ln in body[:50]:
        for tok in ln.split():
            total += 1
            try:
                float(tok)
                numeric += 1
            except ValueError:
                pass
    return width if total and numeric >= 0.5 * total else None


def sniff_text_format(text: str, path: str) -> str:
    """html, json, jsonl, csv, fixed-width or text for a decoded text head."""
    stripped = text.lstrip("\ufeff \t\r\n")
    ext = ext_format(path)
    if _HTML_RE.match(stripped) or (ext == "html" and "<" in stripped[:1000]):
        return "html"
    if stripped[:1] and stripped[0] in "{[":
        first = stripped.split("\n", 1)[0].strip()
        if ext == "jsonl" or (first.startswith("{") and first.endswith("}") and "\n{" in stripped[:200000]):
            return "jsonl"
        return "json"
    if sniff_delimiter(text) is not None:
        return "csv"
    lines = text.splitlines()[:200]
    if split_fixed_width(lines) is not None or whitespace_table(lines) is not None:
        return "fixed-width"
    return "text"


def csv_reader(source: Iterable[str], *, delimiter: str = ",") -> Reader:
    """``csv.reader`` that reads a NUL character the same on every Python: 3.10's csv refuses it ("line
    contains NUL") and would skip the line, 3.11 reads it as text; on 3.10 it is read as U+FFFD."""
    if sys.version_info < (3, 11):
        source = (line.replace("\x00", "\ufffd") for line in source)
    return csv.reader(source, delimiter=delimiter)


__all__ = [
    "Delimited",
    "csv_reader",
    "Scan",
    "decode",
    "detect_encoding",
    "ext_format",
    "hash_file",
    "looks_binary",
    "magic_format",
    "scan_file",
    "sniff_delimiter",
    "sniff_text_format",
    "split_fixed_width",
    "whitespace_table",
]
