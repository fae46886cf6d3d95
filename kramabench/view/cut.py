"""A big record sent in part: long texts and long lists cut, each cut named by its path, the rest whole.

A record may hold a model reply of megabytes, a transcript of thousands of entries or an answer that is a list
of a million numbers (one of 37 MB took 26 s to show whole). The task page gets the record with every text
longer than :data:`TEXT_CHARS` characters cut to its first part (and, once :data:`BUDGET_CHARS` of text have
been sent, every further text longer than :data:`SMALL_CHARS` to a shorter first part) and every list longer
than :data:`LIST_ITEMS` to its first items. ``cuts`` says where and how much: ``{path: {"chars": n}}`` or
``{path: {"items": n}}``, a path being a JSON pointer (RFC 6901: ``/steps/3/observation``). The whole value
of one path is one request away (:func:`value_at`), and the whole line is served as it is on disk.
"""

from __future__ import annotations

from typing import Any

#: a text longer than this is cut to its first TEXT_CHARS characters
TEXT_CHARS = 20_000
#: once this much text is kept, longer texts are cut to SMALL_CHARS
BUDGET_CHARS = 2_000_000
SMALL_CHARS = 2_000
#: a list longer than this keeps its first LIST_ITEMS items
LIST_ITEMS = 500
#: nesting deeper than this is not walked (kept as it is: json.loads refuses far deeper)
MAX_DEPTH = 200


def pointer(parts: list[str | int]) -> str:
    """The JSON pointer of a path (``~`` as ``~0``, ``/`` as ``~1``)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def parse_pointer(ptr: str) -> list[str]:
    if ptr == "":
        return []
    if not ptr.startswith("/"):
        raise ValueError("a path starts with '/'")
    return [p.replace("~1", "/").replace("~0", "~") for p in ptr[1:].split("/")]


def value_at(doc: Any, ptr: str) -> Any:
    """The value at a JSON pointer; KeyError when there is none."""
    here = doc
    for p in parse_pointer(ptr):
        if isinstance(here, dict):
            if p not in here:
                raise KeyError(ptr)
            here = here[p]
        elif isinstance(here, list):
            if not p.isdigit() or int(p) >= len(here):
                raise KeyError(ptr)
            here = here[int(p)]
        else:
            raise KeyError(ptr)
    return here


def cut_record(
    rec: Any,
    *,
    text_chars: int = TEXT_CHARS,
    list_items: int = LIST_ITEMS,
    budget_chars: int = BUDGET_CHARS,
    small_chars: int = SMALL_CHARS,
) -> tuple[Any, dict[str, dict[str, int]]]:
    """``rec`` with long texts and lists cut (a new object; ``rec`` unchanged) and the cuts by path."""
    cuts: dict[str, dict[str, int]] = {}
    budget = [budget_chars]

    def walk(v: Any, path: list[str | int], depth: int) -> Any:
        if isinstance(v, str):
            limit = text_chars if budget[0] > 0 else small_chars
            if len(v) > limit:
                cuts[pointer(path)] = {"chars": len(v)}
                v = v[:limit]
            budget[0] -= len(v)
            return v
        if depth >= MAX_DEPTH:
            return v
        if isinstance(v, dict):
            return {k: walk(x, [*path, k], depth + 1) for k, x in v.items()}
        if isinstance(v, list):
            if len(v) > list_items:
                cuts[pointer(path)] = {"items": len(v)}
            return [walk(x, [*path, n], depth + 1) for n, x in enumerate(v[:list_items])]
        return v

    return walk(rec, [], 0), cuts


__all__ = ["BUDGET_CHARS", "LIST_ITEMS", "TEXT_CHARS", "cut_record", "parse_pointer", "pointer", "value_at"]
