"""Cutting long text for the audit without losing what it says: never silently, never mid-word.

- :func:`head_tail`: program output longer than a limit keeps its head and its tail, cut at line
  boundaries where a line allows, with a marker naming how much was left out (an auditor needs the
  first lines, which say what was read, and the last, which say what came out or what failed);
- :func:`clip_words`: a sentence longer than a limit ends at a word boundary with ``…``.
"""

from __future__ import annotations

MARK = "\n… [{n:,} characters cut here] …\n"


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
    return cut.rstrip(" ,;:") + "…"


__all__ = ["MARK", "clip_words", "head_tail"]
