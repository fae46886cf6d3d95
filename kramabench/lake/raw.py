"""The first lines of a lake file exactly as the file holds them, for snippets a model can count in.

A line is the text between two ``\\n`` of the decoded file, without its line end (``\\n`` or ``\\r\\n``;
``\\r`` in a file with no ``\\n`` at all) and, on the first line, without a byte-order mark. A line
longer than ``width`` characters is cut and ends with :data:`CUT_MARK`
(``" [… line cut: 1,234 more characters]"``), so a cut is never silent. The file is streamed: a
single line of a gigabyte costs ``max_bytes`` of reading at most.
"""

from __future__ import annotations

import codecs
import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path

#: characters of a line shown before it is cut
LINE_WIDTH = 2000
#: what ends a cut line (``{more}``: "1,234" or "more than 1,234")
CUT_MARK = " [… line cut: {more} more characters]"
#: a shown line that was cut: its kept text, then the mark
CUT_MARK_RE = re.compile(r" \[… line cut: (?:more than )?[\d,]+ more characters\]$")
_CHUNK = 1 << 16


@dataclass
class RawLines:
    """Lines as shown (cut ones end with the mark) and which of them were cut."""

    lines: list[str] = field(default_factory=list)
    cut: list[bool] = field(default_factory=list)

    @property
    def any_cut(self) -> bool:
        return any(self.cut)


def _decoder(encoding: str | None) -> codecs.IncrementalDecoder:
    enc = encoding or "utf-8"
    if enc == "utf-8":
        enc = "utf-8-sig"  # a BOM is never part of the first line's text
    try:
        return codecs.getincrementaldecoder(enc)(errors="replace")
    except LookupError:
        return codecs.getincrementaldecoder("utf-8-sig")(errors="replace")


def read_raw_lines(
    path: Path,
    count: int | None,
    encoding: str | None,
    *,
    width: int = LINE_WIDTH,
    gz: bool = False,
    max_bytes: int = 16 << 20,
) -> RawLines:
    """The first ``count`` lines of ``path`` (all lines when None), decoded with ``encoding``.

    ``gz``: the file is gzip-compressed (its decompressed lines are read). Reading stops after
    ``max_bytes``: a line still open then is cut ("more than N more characters").
    """
    out = RawLines()
    dec = _decoder(encoding)
    opener = gzip.open if gz else open
    kept: list[str] = []  # the pieces of the current line, up to width (+1 to see a final '\r')
    kept_len = 0
    length = 0  # characters of the current line so far
    last = ""  # its last character (a '\r' before the '\n' belongs to the line end)
    read = 0
    sep: str | None = None

    def finish(complete: bool) -> None:
        nonlocal kept, kept_len, length, last
        n = length - (1 if complete and last == "\r" and sep == "\n" else 0)
        text = "".join(kept)[:n]
        if n > width or not complete:
            shown = text[:width]
            more = max(0, n - len(shown))
            mark = CUT_MARK.format(more=f"{more:,}" if complete else f"more than {more:,}")
            out.lines.append(shown + mark)
            out.cut.append(True)
        else:
            out.lines.append(text)
            out.cut.append(False)
        kept, kept_len, length, last = [], 0, 0, ""

    def wanted() -> bool:
        return count is None or len(out.lines) < count

    try:
        f = opener(path, "rb")
    except OSError:
        return out
    with f:
        while wanted():
            try:
                raw = f.read(_CHUNK)
            except (OSError, EOFError):  # a gzip stream cut short: what was read so far
                raw = b""
            read += len(raw)
            text = dec.decode(raw, final=not raw)
            if (
                sep is None and text
            ):  # a file whose lines end in '\r' alone (no '\n' in its head): classic Mac
                sep = "\r" if "\n" not in text and "\r" in text else "\n"
            pos = 0
            while pos < len(text) and wanted():
                nl = text.find(sep or "\n", pos)
                piece = text[pos:] if nl < 0 else text[pos:nl]
                if piece:
                    room = width + 1 - kept_len
                    if room > 0:
                        kept.append(piece[:room])
                        kept_len += min(room, len(piece))
                    length += len(piece)
                    last = piece[-1]
                if nl < 0:
                    break
                finish(True)
                pos = nl + 1
            if not raw:
                if length and wanted():
                    finish(True)  # a last line without a line end
                break
            if read >= max_bytes and wanted():
                if length:
                    finish(False)
                break
    return out


def fence_for(lines: list[str]) -> str:
    """A Markdown code fence longer than any run of backticks that opens a shown line."""
    longest = 0
    for ln in lines:
        s = ln.lstrip(" ")
        if s.startswith("`"):
            longest = max(longest, len(s) - len(s.lstrip("`")))
    return "`" * max(3, longest + 1)


__all__ = ["CUT_MARK", "CUT_MARK_RE", "LINE_WIDTH", "RawLines", "fence_for", "read_raw_lines"]
