"""Lake file names in answers: the same file whatever prefix names it.

A prompt shows lake files under some prefix (``/lake/a/b.csv``, ``./a/b.csv``, an absolute host path);
the gold names them relative to the lake (``a/b.csv``) or by bare name. :func:`canonical_lake_paths`
rewrites every string of an answer (alone, or an item of a list, or a value of a dict) that names a lake
file to that file's lake-relative path:

* ``a/b.csv``, ``./a/b.csv``, ``/lake/a/b.csv``, ``data/x/input/a/b.csv``: the longest trailing run of
  path components that is a lake file (``\\`` counts as ``/``);
* a bare name (``b.csv``): the lake file of that name when exactly one file has it (a name at the lake's
  top level is itself);
* anything else (a name that is in no lake file, or shared by several) is left as it is.

Pure: the caller passes the lake's file list.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from itertools import chain, repeat
from typing import Any, Final

_QUOTES = "\"'`"


class _Missing(Enum):
    MISS = "miss"


#: what the memo gives for a text it does not hold
_MISS: Final = _Missing.MISS
_MEMO_MAX = 500_000
_NO_PATHS = frozenset({int, float, bool, type(None)})
_STR_ONLY = frozenset({str})
_PLAIN = _NO_PATHS | _STR_ONLY
_LIST_ONLY = frozenset({list})


class LakePaths:
    """The lake's files, for resolving the names an answer uses."""

    def __init__(self, files: Iterable[str]) -> None:
        self.files = {f.strip("/") for f in files if f}
        names: dict[str, list[str]] = {}
        for f in self.files:
            names.setdefault(f.rpartition("/")[2], []).append(f)
        self.by_name = names
        #: text -> resolved path (answers repeat their strings: scoring a run resolves each one once)
        self._memo: dict[str, str | None] = {}
        #: the memo's strings that are left as they are (no lake file, or already its lake-relative path)
        self._kept: set[str] = set()

    def resolve(self, text: str) -> str | None:
        """The lake-relative path ``text`` names, or None."""
        hit = self._memo.get(text, _MISS)
        if hit is not _MISS:
            return hit
        r = self._resolve(text)
        if len(self._memo) < _MEMO_MAX:
            self._memo[text] = r
            if r is None or r == text:
                self._kept.add(text)
        return r

    def _resolve(self, text: str) -> str | None:
        if len(text) > 2000 and not (
            text[0].isspace() or text[-1].isspace() or text[0] in _QUOTES or text[-1] in _QUOTES
        ):
            return None  # nothing to strip: too long to be a path (a list written as text), not copied
        t = text.strip().strip(_QUOTES).strip().replace("\\", "/")
        if not t or len(t) > 2000 or "\n" in t:
            return None
        parts = [p for p in t.split("/") if p not in ("", ".")]
        if not parts:
            return None
        if len(parts) == 1:
            if parts[0] in self.files:
                return parts[0]
            same = self.by_name.get(parts[0])
            return same[0] if same is not None and len(same) == 1 else None
        for i in range(len(parts)):
            cand = "/".join(parts[i:])
            if cand in self.files:
                return cand
        return None


def canonical_lake_paths(value: Any, lake: LakePaths | Iterable[str] | None) -> tuple[Any, int]:
    """``value`` with every string that names a lake file replaced by its lake-relative path, and how
    many strings were rewritten (0: ``value`` is returned as it is)."""
    if lake is None:
        return value, 0
    paths = lake if isinstance(lake, LakePaths) else LakePaths(lake)
    if not paths.files:
        return value, 0
    counter = [0]
    out = _walk(value, paths, counter, 0)
    return (out, counter[0]) if counter[0] else (value, 0)


def _no_path(v: list[Any], paths: LakePaths) -> bool:
    """No string of the flat list ``v`` names a lake file other than itself (nothing to rewrite)."""
    strs = [x for x in v if type(x) is str]
    if paths._kept.issuperset(strs):
        return True
    resolved = list(map(paths._memo.get, strs, repeat(_MISS)))
    if _MISS in resolved:
        resolved = [paths.resolve(x) if r is _MISS else r for r, x in zip(resolved, strs, strict=True)]
    return all(r is None or r == x for r, x in zip(resolved, strs, strict=True))


def _walk(v: Any, paths: LakePaths, counter: list[int], depth: int) -> Any:
    """``v`` with its lake paths rewritten, adding the rewrites to ``counter[0]`` (a module function, not a
    closure: a closure that calls itself is a reference cycle, garbage left to the cyclic collector on every
    answer scored)."""
    if isinstance(v, str):
        r = paths.resolve(v)
        if r is not None and r != v:
            counter[0] += 1
            return r
        return v
    if depth > 10:
        return v
    if isinstance(v, list):
        kinds = set(map(type, v))
        if kinds <= _NO_PATHS:  # numbers (most long answers): nothing to rewrite, no call per element
            return v
        if kinds == _STR_ONLY:
            if paths._kept.issuperset(v):  # every string seen before and left as it is: one pass in C
                return v
            resolved = list(map(paths._memo.get, v, repeat(_MISS)))  # known strings: no Python call each
            if _MISS in resolved:
                resolved = [paths.resolve(x) if r is _MISS else r for r, x in zip(resolved, v, strict=True)]
            if resolved.count(None) == len(v):
                return v
            n = sum(1 for r, x in zip(resolved, v, strict=True) if r is not None and r != x)
            if not n:
                return v
            counter[0] += n
            return [x if r is None else r for r, x in zip(resolved, v, strict=True)]
        if kinds <= _PLAIN and _no_path(v, paths):  # a row of strings and numbers naming no lake file
            return v
        if kinds == _LIST_ONLY and depth < 10:  # rows: all their elements at once
            flat = list(chain.from_iterable(v))
            if set(map(type, flat)) <= _PLAIN and _no_path(flat, paths):
                return v
        return [_walk(x, paths, counter, depth + 1) for x in v]
    if isinstance(v, tuple):
        return tuple(_walk(x, paths, counter, depth + 1) for x in v)
    if isinstance(v, dict):
        return {
            _walk(k, paths, counter, depth + 1) if isinstance(k, str) else k: _walk(
                x, paths, counter, depth + 1
            )
            for k, x in v.items()
        }
    return v


__all__ = ["LakePaths", "canonical_lake_paths"]
