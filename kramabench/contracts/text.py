"""How text that came from data is shown. A workload, a lake, a model or a system wrote it (task ids, file
names, answers, error messages), so it may hold what a terminal, a Markdown renderer or a browser would obey
instead of show: an escape sequence that retitles the terminal or colours the rest of the screen, a carriage
return or a newline that forges a line, a right-to-left override that reverses what follows.

- :func:`safe_text`, for a terminal (and the base of the others): control characters (C0, DEL, C1), the
  characters that reorder or hide text (bidi embeddings, overrides, isolates and marks, zero-width
  characters, line and paragraph separators, tag characters, the byte-order mark) and lone surrogates become
  visible escapes: ``\\x1b``, ``\\n``, ``\\u202e``. One line, unless ``multiline`` keeps newlines and tabs.
- :func:`md_text`, for Markdown (report.md): :func:`safe_text`, then what Markdown would read as structure,
  code, HTML, an entity or a link backslash-escaped, so that the value stays text in a table cell, a heading
  or a list item.
- :func:`html_text`, for HTML (report.html): :func:`safe_text` (newlines kept), then HTML-escaped.

Text of our own (labels, the table rules) is not passed through them; only what came from data is.
"""

from __future__ import annotations

import html
import re
from typing import Any

# what reorders or hides text: soft hyphen, Arabic letter mark, Mongolian vowel separator, zero-width space /
# (non-)joiner, LRM/RLM, line and paragraph separators, LRE/RLE/PDF/LRO/RLO, word joiner and invisible
# operators, LRI/RLI/FSI/PDI, the byte-order mark, interlinear annotation marks, tag characters
_INVISIBLE = (
    "\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb\U000e0000-\U000e007f"
)
_SURROGATES = "\ud800-\udfff"
_ONE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_INVISIBLE}{_SURROGATES}]")
_MULTI_LINE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}{_SURROGATES}]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# what Markdown (CommonMark, GFM tables) would read as structure, code, HTML or a link: a backslash, a table's
# bar, a code span's backtick, a tag or an autolink, an entity (&#x202e;), and a link's or an image's "](";
# emphasis is left as it is (cosmetic, and escaping every underscore of file names makes the file unreadable)
_MARKDOWN = re.compile(r"([\\`|])|([<>&])|\](?=\()")
_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    named = _NAMED.get(c)
    if named is not None:
        return named
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def safe_text(value: Any, *, multiline: bool = False) -> str:
    """``value`` as text a terminal shows as it is: control and invisible characters as visible escapes (see the
    module); ``multiline`` keeps newlines and tabs."""
    s = value if isinstance(value, str) else str(value)
    pattern = _MULTI_LINE if multiline else _ONE_LINE
    return pattern.sub(_escape, s) if pattern.search(s) else s


def md_text(value: Any) -> str:
    """``value`` as Markdown text: one line, no table bar, code span, HTML, entity or link (a table cell, a
    heading, a list item)."""
    return _MARKDOWN.sub(_md_escape, safe_text(value))


def _md_escape(m: re.Match[str]) -> str:
    if m.group(1):
        return "\\" + m.group(1)
    if m.group(2):  # as entities: the raw file holds no tag either (a reader that greps it, a plain renderer)
        return _ENTITIES[m.group(2)]
    return "]\\"


def md_code_block(value: Any, lang: str = "") -> list[str]:
    """``value`` (code, a program's output: many lines) as the lines of a fenced Markdown code block: shown as
    :func:`safe_text` (newlines kept), in a fence longer than any run of backticks in it (so it cannot close it)."""
    body = safe_text(value, multiline=True).rstrip("\n")
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", body)), default=0))
    return [fence + lang, *body.split("\n"), fence]


def html_text(value: Any, *, multiline: bool = True) -> str:
    """``value`` as HTML text (an element's content or an attribute's value)."""
    return html.escape(safe_text(value, multiline=multiline), quote=True)


# a console's own output on a terminal: CSI sequences of colours (m), line erasing (K, J) and cursor moves
# (A-H), cursor show/hide (?25h/l); anything else starting with ESC (OSC: window titles, hyperlinks) is data
_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_TTY = re.compile(f"{_CSI.pattern}|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_INVISIBLE}{_SURROGATES}]")
_CONSOLE_FINALS = frozenset("mKJABCDGHhl")


def terminal_output(s: str) -> str:
    """What a program writes to a terminal, made safe as a last line of defence: the console's own CSI
    sequences (colours, a live display's cursor moves), newlines, tabs and carriage returns pass; every other
    control or invisible character (an OSC sequence, a bell, a bidi override) is escaped as in
    :func:`safe_text`. Data should have passed :func:`safe_text` already: a CSI colour in data looks like the
    console's own here."""
    if not _TTY.search(s):
        return s

    def one(m: re.Match[str]) -> str:
        seq = m.group()
        if len(seq) > 1 and seq[-1] in _CONSOLE_FINALS:
            return seq
        return _ONE_LINE.sub(_escape, seq)

    return _TTY.sub(one, s)


# a terminal's escape codes as programs write them: CSI (colours, cursor moves, erasing; ESC [ or the 8-bit
# CSI), OSC (titles, hyperlinks; ended by BEL or ST), DCS/SOS/PM/APC strings (ended by ST), and the short
# ESC sequences (charset selection, keypad modes, ESC 7/8)
_ESCAPE_CODES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
)


def without_escape_codes(text: str) -> str:
    """``text`` without the terminal escape codes a program wrote (dbt's colours: ``\\x1b[0m``, a progress
    bar's cursor moves, a hyperlink's OSC), for text a model reads or a record keeps rather than a terminal
    shows. Other characters are left as they are (a lone ESC too)."""
    return _ESCAPE_CODES.sub("", text) if ("\x1b" in text or "\x9b" in text) else text


def unsafe(value: str) -> bool:
    """Whether :func:`safe_text` would change ``value`` (one line)."""
    return bool(_ONE_LINE.search(value))


__all__ = [
    "html_text",
    "md_code_block",
    "md_text",
    "safe_text",
    "terminal_output",
    "unsafe",
    "without_escape_codes",
]
