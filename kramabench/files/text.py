"""Text cut to a bound, and an error said in one line: the one home of each (no module writes its own).

- :func:`clip`: at most ``limit`` characters, the cut said by a trailing ``…`` (a table cell, a value quoted
  in a message); :func:`one_line` first folds white space (a message, a line of a log);
- :func:`keep_tail`: the last ``n`` characters after a ``…`` (a traceback's end, a program's last output);
- :func:`head_tail`: a program's output longer than a limit keeps its head and its tail, cut at line
  boundaries where a line allows, with a marker naming how much was left out (the audit);
  :func:`head_tail_lines`/:func:`tail_lines` keep whole lines and count those cut (DS-Guru's feedback),
  :func:`head_tail_said` counts characters and lines cut (the code agent's steps): each baseline's prompts
  keep the text they always had; :func:`clip_words`: a sentence cut at a word boundary;
- :func:`error_where`, :func:`first_error`, :func:`errors_line`, :func:`field_error`: a validation error
  (pydantic's ``ValidationError``, read through its ``errors()``) as one line.

Standard library only: a validation error is read through its ``errors()`` list of dicts (``loc``, ``msg``,
``type``), never imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

#: the trailing mark of a clipped text
ELLIPSIS = "…"
#: the marker :func:`head_tail` puts where it cut
MARK = "\n… [{n:,} characters cut here] …\n"


def clip(text: str, limit: int, *, mark: str = ELLIPSIS) -> str:
    """``text`` whole when it has at most ``limit`` characters; else its first ``limit - len(mark)``
    characters (one at least) and ``mark`` (``limit`` characters in all)."""
    return text if len(text) <= limit else text[: max(1, limit - len(mark))] + mark


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` with its runs of white space (newlines too) made single spaces, :func:`clip`-ped to ``limit``
    when given."""
    line = " ".join(text.split())
    return line if limit is None else clip(line, limit)


def keep_tail(text: str, n: int, *, mark: str = ELLIPSIS) -> str:
    """``text`` whole when it has at most ``n`` characters; else ``mark`` and its last ``n`` characters."""
    return text if len(text) <= n else mark + text[-n:]


def head_tail(text: str, limit: int, *, head_share: float = 1 / 3) -> str:
    """``text`` whole when it fits in ``limit`` characters; else about ``head_share`` of the limit from its
    start and the rest from its end, each cut at a line boundary when one is near, joined by :data:`MARK`."""
    if len(text) <= limit:
        return text
    head_n = max(0, int(limit * head_share))
    tail_n = max(0, limit - head_n)
    head = text[:head_n]
    nl = head.rfind("\n")
    if nl >= head_n // 2:
        head = head[: nl + 1]
    tail = text[len(text) - tail_n :] if tail_n else ""
    nl = tail.find("\n")
    if 0 <= nl <= tail_n // 2:
        tail = tail[nl + 1 :]
    head = head.rstrip("\n")
    cut = len(text) - len(head) - len(tail)
    return head + MARK.format(n=cut) + tail


def clip_words(text: str, limit: int) -> str:
    """``text`` (whitespace runs made single spaces) whole when it fits in ``limit`` characters; else cut at the
    last word boundary before it, ending with ``…``."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[: max(1, limit - 1)]
    sp = cut.rfind(" ")
    if sp >= limit // 2:
        cut = cut[:sp]
    return cut.rstrip(" ,;:") + ELLIPSIS


def _cut_note(n_lines: int, n_chars: int, where: str) -> str:
    return f"[… {n_lines:,} {where} line{'s' if n_lines != 1 else ''} ({n_chars:,} characters) cut …]"


def _line_start(line: str, limit: int) -> str:
    """A line longer than the room left: its start, with the cut said (as in lake snippets)."""
    return line[:limit] + f" [… line cut: {len(line) - limit:,} more characters]"


def tail_lines(text: str, limit: int) -> str:
    """The last whole lines of ``text`` within about ``limit`` characters, after a line saying how many
    earlier lines were cut; a last line longer than ``limit`` alone keeps its end, its cut said."""
    text = text.rstrip()
    if len(text) <= limit:
        return text
    lines = text.split("\n")
    kept: list[str] = []
    size = 0
    for ln in reversed(lines):
        if size + len(ln) + 1 > limit:
            break
        kept.append(ln)
        size += len(ln) + 1
    kept.reverse()
    if not kept:
        last = lines[-1]
        before = len(text) - len(last)
        head = _cut_note(len(lines) - 1, before, "earlier") + "\n" if len(lines) > 1 else ""
        return head + f"[… line cut: its first {len(last) - limit:,} characters …] " + last[-limit:]
    n_cut = len(lines) - len(kept)
    return _cut_note(n_cut, len(text) - size + 1, "earlier") + "\n" + "\n".join(kept)


def head_tail_lines(text: str, limit: int) -> str:
    """The first and the last whole lines of ``text`` within about ``limit`` characters (half each), a
    line between them saying how many lines were cut (an answer is printed last, a traceback's cause
    first)."""
    text = text.rstrip()
    if len(text) <= limit:
        return text
    lines = text.split("\n")
    half = limit // 2
    head: list[str] = []
    size = 0
    for ln in lines:
        if size + len(ln) + 1 > half:
            break
        head.append(ln)
        size += len(ln) + 1
    if not head:  # the first line alone is longer than half: its start
        head = [_line_start(lines[0], half)]
        rest = lines[1:]
    else:
        rest = lines[len(head) :]
    tail = tail_lines("\n".join(rest), half)
    if tail.startswith("[… "):  # the tail's own note counts the lines cut between head and tail
        return "\n".join(head) + "\n" + tail.replace(" earlier line", " line", 1)
    return "\n".join([*head, tail])


def head_tail_said(text: str, limit: int) -> tuple[str, bool]:
    """The first and last lines of ``text`` within about ``limit`` characters (half each, cut at a line
    boundary when one is near), the characters and lines cut said between them; and whether it was cut
    (the code agent's view of a step's output)."""
    text = text.rstrip()
    if len(text) <= limit:
        return text, False
    half = limit // 2
    head = text[:half]
    cut_at = head.rfind("\n")
    if cut_at > half // 2:
        head = head[:cut_at]
    tail = text[-half:]
    nl = tail.find("\n")
    if 0 <= nl < half // 2:
        tail = tail[nl + 1 :]
    cut = text[len(head) : len(text) - len(tail)]
    n_lines = cut.count("\n")
    note = f"[… {len(cut):,} characters{f' ({n_lines:,} lines)' if n_lines else ''} cut …]"
    return f"{head}\n{note}\n{tail}", True


class _Invalid(Protocol):
    """What is read of a validation error (pydantic's ``ValidationError``)."""

    def errors(self) -> Any: ...


def error_where(er: Mapping[str, Any]) -> str:
    """Where one error of ``errors()`` is: its ``loc`` joined by dots (``options.limit``; "" at the top)."""
    return ".".join(str(x) for x in er.get("loc", ()))


def first_error(e: _Invalid) -> tuple[str, str, str]:
    """(where, message, type) of a validation error's first error."""
    er = e.errors()[0]
    return error_where(er), str(er.get("msg", "")), str(er.get("type", ""))


def field_error(e: _Invalid) -> str:
    """The first error as ``field 'loc': message``."""
    where, msg, _ = first_error(e)
    return f"field {where!r}: {msg}"


def errors_line(e: _Invalid, *, top: str = "options") -> str:
    """Every error as ``loc: message``, joined by ``; `` (an error at the top is named ``top``)."""
    return "; ".join(f"{error_where(er) or top}: {er['msg']}" for er in e.errors())


__all__ = [
    "ELLIPSIS",
    "MARK",
    "clip",
    "clip_words",
    "error_where",
    "errors_line",
    "field_error",
    "first_error",
    "head_tail",
    "head_tail_lines",
    "head_tail_said",
    "keep_tail",
    "one_line",
    "tail_lines",
]
