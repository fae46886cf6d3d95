"""Text cut to a bound, and an error said in one line: the one home of each (no module writes its own).

- :func:`clip`: at most ``limit`` characters, the cut said by a trailing ``…`` (a table cell, a value quoted
  in a message); :func:`one_line` first folds white space (a message, a line of a log);
- :func:`keep_tail`: the last ``n`` characters after a ``…`` (a traceback's end, a program's last output);
- :func:`head_tail`: a program's output longer than a limit keeps its head and its tail, cut at line
  boundaries where a line allows, with a marker naming how much was left out; :func:`clip_words`: a
  sentence cut at a word boundary;
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
    characters and ``mark`` (``limit`` characters in all)."""
    return text if len(text) <= limit else text[: limit - len(mark)] + mark


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
    "keep_tail",
    "one_line",
]
