"""Resolution of ``data_sources`` entries against the files of a data lake.

An entry is a path relative to the lake (file or folder), ``./`` for the whole lake, or a glob pattern
(``water-body-testing-*.csv``, ``State MSA Identity Theft data/*``). Resolution tries, in order: an exact
match; the same path sitting in a deeper folder (official workloads often name a nested file by its
name only); a match that differs only in letter case; a close spelling (small typo); a name whose words
all occur in one file name (``Carson Beach`` -> ``carson_beach_datasheet.csv``). Each outcome carries
the closest existing path as a suggestion.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
import stat
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path


class Match(str, Enum):
    EXACT = "exact"  # the path (or pattern) exists as written
    LAKE = "lake"  # "./", "." or "": the whole lake
    NESTED = "nested"  # exists as written, but in a deeper folder
    AMBIGUOUS = "ambiguous"  # exists as written in several deeper folders
    PREFIXED = "prefixed"  # exists once leading folders are dropped (``data/<domain>/input/x.csv``)
    CASE = "case"  # exists when letter case is ignored
    TYPO = "typo"  # a close spelling exists
    WORDS = "words"  # the words of the entry occur in a file name
    MISSING = "missing"  # nothing like it in the lake
    OUTSIDE = "outside"  # absolute path or one that leaves the lake


@dataclass
class Resolution:
    entry: str
    match: Match
    #: lake-relative paths (files or folders) or patterns to suggest / that were matched
    paths: list[str] = field(default_factory=list)
    #: number of lake files the entry (or its suggestion) covers
    n_files: int = 0

    @property
    def ok(self) -> bool:
        return self.match in (Match.EXACT, Match.LAKE, Match.NESTED, Match.AMBIGUOUS, Match.PREFIXED)


_GLOB = re.compile(r"[*?\[]")
_WORD = re.compile(r"[a-z0-9]+")
_TYPO_CUTOFF = 0.85


_LFS_HEAD = b"version https://git-lfs.github.com/spec/"


def _is_lfs_pointer(path: Path) -> bool:
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode) or st.st_size > 1024:  # never open a FIFO or a device
            return False
        with path.open("rb") as fh:
            return fh.read(len(_LFS_HEAD)) == _LFS_HEAD
    except OSError:
        return False


def special_kind(path: Path) -> str | None:
    """'FIFO', 'socket', 'character device' or 'block device' for a special file (links followed), else None."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    for test, name in (
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return name
    return None


def is_glob(s: str) -> bool:
    return bool(_GLOB.search(s))


class LakeInventory:
    """Files and folders of a lake as lake-relative POSIX paths (hidden entries skipped)."""

    def __init__(self, lake: Path) -> None:
        self.lake = Path(lake)
        files: list[str] = []
        dirs: list[str] = []
        special: list[tuple[str, str]] = []
        unreadable: list[tuple[str, str]] = []
        if self.lake.is_dir():
            if not os.access(self.lake, os.R_OK | os.X_OK):
                unreadable.append((".", "the lake folder cannot be listed (permission denied)"))
            for p in sorted(self.lake.rglob("*")):
                rel = p.relative_to(self.lake)
                if any(part.startswith(".") for part in rel.parts):
                    continue
                kind = special_kind(p)
                if kind is not None:  # a FIFO, socket or device: reading it would block or never end
                    special.append((rel.as_posix(), kind))
                    continue
                is_dir = p.is_dir()
                (dirs if is_dir else files).append(rel.as_posix())
                if is_dir and not os.access(p, os.R_OK | os.X_OK):  # rglob skips what it cannot list
                    unreadable.append(
                        (rel.as_posix() + "/", "a folder that cannot be listed (permission denied)")
                    )
                elif not is_dir and p.exists() and not os.access(p, os.R_OK):
                    unreadable.append((rel.as_posix(), "a file that cannot be read (permission denied)"))
        self.files = files
        self.dirs = dirs
        #: (path, kind) of special files (FIFOs, sockets, devices): skipped, reported as findings
        self.special = special
        #: (path, why) of files and folders this process cannot read: reported as findings
        self.unreadable = unreadable
        #: files that are Git LFS pointers (the data was never downloaded)
        self.pointers = {f for f in files if _is_lfs_pointer(self.lake / f)}
        self._file_set = set(files)
        self._words: list[tuple[str, frozenset[str]]] | None = None
        self._dir_set = set(dirs)

    def _file_words(self) -> list[tuple[str, frozenset[str]]]:
        if self._words is None:
            self._words = [(f, frozenset(_WORD.findall(f.rsplit("/", 1)[-1].lower()))) for f in self.files]
        return self._words

    def is_file(self, rel: str) -> bool:
        return rel in self._file_set

    def is_dir(self, rel: str) -> bool:
        return rel in self._dir_set

    def files_under(self, rel_dir: str) -> int:
        if rel_dir in ("", "."):
            return len(self.files)
        prefix = rel_dir.rstrip("/") + "/"
        return sum(1 for f in self.files if f.startswith(prefix))

    # -- resolution ---------------------------------------------------------------------------------
    def resolve(self, entry: str) -> Resolution:
        r = self._resolve(entry)
        if r.match in (Match.EXACT, Match.LAKE, Match.NESTED, Match.OUTSIDE, Match.CASE):
            # a path that exists once letter case or a small typo is fixed is that path: dropping its
            # leading folders would hide the defect (``storm-ai/x.csv`` for ``STORM-AI/x.csv`` is not
            # "written from the workload root")
            return r
        # a path written from the workload root or the domain folder (data/<domain>/input/x.csv)
        parts = [p for p in entry.strip().replace("\\", "/").split("/") if p not in ("", ".")]
        top = [d.lower() for d in self.dirs if "/" not in d]
        for k in range(1, len(parts)):
            tail = parts[k:]
            if all(is_glob(p) for p in tail):
                break  # never reduce an entry to bare wildcards
            t = self._resolve("/".join(tail), fuzzy=False)
            if t.match in (Match.EXACT, Match.NESTED):
                first = parts[0].lower()
                if first in top or difflib.get_close_matches(first, top, n=1, cutoff=_TYPO_CUTOFF):
                    # written from the lake (its first folder exists, or nearly) but a folder on the way
                    # is wrong (``STORM-AI/warmup/v3/OMNI2/*`` for ``.../v2/...``, ``geomag_forcast/x``):
                    # a wrong path, not one written from the workload root
                    return r if r.match is Match.TYPO else Resolution(entry, Match.TYPO, t.paths, t.n_files)
                return Resolution(entry, Match.PREFIXED, t.paths, t.n_files)
        return r

    def _resolve(self, entry: str, *, fuzzy: bool = True) -> Resolution:
        raw = entry
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", entry.strip()):
            return Resolution(raw, Match.OUTSIDE)  # a URL
        s = re.sub(r"/+", "/", entry.strip().replace("\\", "/"))
        if s.startswith("/") or re.match(r"^[A-Za-z]:/", s) or ".." in s.split("/"):
            return Resolution(raw, Match.OUTSIDE)
        while s.startswith("./"):
            s = s[2:]
        if s in ("", "."):
            return Resolution(raw, Match.LAKE, [""], len(self.files))
        want_dir = s.endswith("/")
        s = s.rstrip("/")
        parts = s.split("/")
        if is_glob(s):
            if any(is_glob(p) for p in parts[:-1]):
                return self._resolve_glob_anywhere(raw, s)
            dir_part, name = "/".join(parts[:-1]), parts[-1]
            if dir_part:
                d = self._resolve_literal(dir_part, kinds="d", fuzzy=fuzzy)
                if not d.paths:
                    return self._resolve_glob_anywhere(raw, s)
            else:
                d = Resolution(raw, Match.EXACT, [""])
            # glob the name in each candidate folder, case-sensitive first
            best: Resolution | None = None
            for folder in d.paths:
                n_exact, _ = self._glob_count(folder, name, case=True)
                n_ci, first = (n_exact, None) if n_exact else self._glob_count(folder, name, case=False)
                if not n_ci:
                    continue
                spelt = name if first is None else _respell_glob(name, first)
                suggestion = f"{folder}/{spelt}" if folder else spelt
                match = d.match if n_exact else _worse(d.match, Match.CASE)
                cand = Resolution(raw, match, [suggestion], n_ci)
                if best is None or _rank(cand.match) < _rank(best.match):
                    best = cand
            if best is None:  # e.g. a bare pattern for files that sit in a deeper folder
                return self._resolve_glob_anywhere(raw, s)
            if d.match is Match.AMBIGUOUS and best.match is Match.AMBIGUOUS:
                best.paths = [f"{p}/{name}" for p in d.paths]
            return best
        kinds = "d" if want_dir else "fd"
        return self._resolve_literal(s, kinds=kinds, raw=raw, fuzzy=fuzzy)

    def _candidates(self, kinds: str) -> list[str]:
        return (self.files if "f" in kinds else []) + (self.dirs if "d" in kinds else [])

    def _count(self, rel: str) -> int:
        return 1 if rel in self._file_set else self.files_under(rel)

    def _resolve_literal(
        self, s: str, *, kinds: str, raw: str | None = None, fuzzy: bool = True
    ) -> Resolution:
        raw = raw if raw is not None else s
        cands = self._candidates(kinds)
        if s in cands:
            return Resolution(raw, Match.EXACT, [s], self._count(s))
        suffix = "/" + s
        nested = [c for c in cands if c.endswith(suffix)]
        if len(nested) == 1:
            return Resolution(raw, Match.NESTED, nested, self._count(nested[0]))
        if nested:
            return Resolution(raw, Match.AMBIGUOUS, nested, sum(self._count(c) for c in nested))
        low = s.lower()
        ci = [c for c in cands if c.lower() == low or c.lower().endswith("/" + low)]
        if ci:
            ci.sort(key=lambda c: (c.count("/"), c))
            return Resolution(raw, Match.CASE, ci[:3], self._count(ci[0]))
        if not fuzzy:
            return Resolution(raw, Match.MISSING)
        # small typo: compare with every candidate's trailing segments (as many as the entry has); a
        # ratio >= _TYPO_CUTOFF needs lengths within this factor of each other
        k = s.count("/") + 1
        lo, hi = len(low) * _TYPO_CUTOFF / (2 - _TYPO_CUTOFF), len(low) * (2 - _TYPO_CUTOFF) / _TYPO_CUTOFF
        tails: dict[str, list[str]] = {}
        for c in cands:
            tail = "/".join(c.split("/")[-k:]).lower()
            if lo <= len(tail) <= hi:
                tails.setdefault(tail, []).append(c)
        close = [
            t
            for t in difflib.get_close_matches(low, list(tails), n=3, cutoff=_TYPO_CUTOFF)
            if not _numbered_sibling(low, t)
        ]
        close = [t for i, t in enumerate(close) if i == 0 or not _numbered_sibling(close[0], t)]
        if close:
            paths = [p for t in close for p in tails[t]][:3]
            return Resolution(raw, Match.TYPO, paths, self._count(paths[0]))
        # all words of the entry in one file name
        words = set(_WORD.findall(low.rsplit("/", 1)[-1]))
        if len(words) >= 2 and "f" in kinds:
            hits = [c for c, ws in self._file_words() if words <= ws]
            if hits:
                hits.sort(key=lambda c: (len(c), c))
                return Resolution(raw, Match.WORDS, hits[:3], 1)
        return Resolution(raw, Match.MISSING)

    def _glob_count(self, folder: str, name: str, *, case: bool) -> tuple[int, str | None]:
        """Files directly in ``folder`` whose name matches ``name``, and the first such name."""
        prefix = folder + "/" if folder else ""
        n = 0
        first: str | None = None
        pat = name if case else name.lower()
        for f in self.files:
            if not f.startswith(prefix):
                continue
            rest = f[len(prefix) :]
            if "/" in rest:
                continue
            if fnmatch.fnmatchcase(rest if case else rest.lower(), pat):
                n += 1
                first = first or rest
        return n, first

    def _resolve_glob_anywhere(self, raw: str, s: str) -> Resolution:
        """Patterns with wildcards in folder names: match segment-wise, at the root or deeper."""
        pat = s.split("/")

        def fold(x: str, case: bool) -> str:
            return x if case else x.lower()

        def seg_match(segs: list[str], pats: list[str], case: bool) -> bool:
            if not pats:
                return not segs
            if pats[0] == "**":
                return any(seg_match(segs[k:], pats[1:], case) for k in range(len(segs) + 1))
            return (
                bool(segs)
                and fnmatch.fnmatchcase(fold(segs[0], case), fold(pats[0], case))
                and seg_match(segs[1:], pats[1:], case)
            )

        def head_len(path: str, case: bool, anchored: bool) -> int | None:
            """Number of leading folders before the pattern matches (None: no match)."""
            segs = path.split("/")
            for k in range(0, 1 if anchored else len(segs)):
                if (k > 0 or anchored) and seg_match(segs[k:], pat, case):
                    return k
            return None

        for match, case, anchored in (
            (Match.EXACT, True, True),
            (Match.NESTED, True, False),
            (Match.CASE, False, True),
            (Match.CASE, False, False),
        ):
            hits = [(f, k) for f in self.files if (k := head_len(f, case, anchored)) is not None]
            if hits:
                if match is Match.EXACT:
                    paths = [s]
                else:
                    paths = sorted({_suggest_pattern(f, k, pat) for f, k in hits})
                if match is Match.NESTED and len(paths) > 1:
                    match = Match.AMBIGUOUS
                return Resolution(raw, match, paths[:3], len(hits))
        return Resolution(raw, Match.MISSING)


def _numbered_sibling(a: str, b: str) -> bool:
    """True when two names differ only in digits (``mmc2`` vs ``mmc7``, ``2023`` vs ``2024``): another
    member of a numbered series, not a misspelling."""
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    diffs = [(a[i1:i2], b[j1:j2]) for op, i1, i2, j1, j2 in sm.get_opcodes() if op != "equal"]
    return bool(diffs) and all((x + y).isdigit() for x, y in diffs)


def _suggest_pattern(path: str, head: int, pat: list[str]) -> str:
    """The pattern rewritten with the real leading folders and the real spelling of literal segments."""
    segs = path.split("/")
    if "**" in pat:
        return "/".join(segs[:head] + pat)
    tail = segs[head : head + len(pat)]
    # literal segments take the real spelling; a wildcard segment that only matches when case is
    # ignored keeps its wildcards with the letters of the real name (``*.DAT`` -> ``*.dat``)
    return "/".join(
        segs[:head] + [_respell_glob(p, t) if is_glob(p) else t for t, p in zip(tail, pat, strict=True)]
    )


_GLOB_TOKEN = re.compile(r"\*+|\?|\[!?\]?[^\]]*\]")


def _respell_glob(pattern: str, name: str) -> str:
    """``pattern`` with its literal runs spelt as in ``name``, which it matches when case is ignored
    (``2024_*.CSV`` and ``2024_Report.csv`` give ``2024_*.csv``); the pattern itself when it already
    matches or cannot be aligned."""
    if fnmatch.fnmatchcase(name, pattern):
        return pattern
    parts: list[tuple[bool, str]] = []  # (is_wildcard, text)
    pos = 0
    for m in _GLOB_TOKEN.finditer(pattern):
        if m.start() > pos:
            parts.append((False, pattern[pos : m.start()]))
        parts.append((True, m.group()))
        pos = m.end()
    if pos < len(pattern):
        parts.append((False, pattern[pos:]))
    regex = ""
    for wild, text in parts:
        if not wild:
            regex += f"({re.escape(text)})"
        elif text.startswith("*"):
            regex += ".*"
        elif text == "?":
            regex += "."
        else:  # a character class: [abc], [!abc]
            body = text[1:-1]
            regex += "[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]"
    try:
        found = re.fullmatch(regex, name, re.IGNORECASE | re.DOTALL)
    except re.error:
        return pattern
    if found is None:
        return pattern
    groups = iter(found.groups())
    return "".join(text if wild else next(groups) for wild, text in parts)


_ORDER = [
    Match.EXACT,
    Match.LAKE,
    Match.NESTED,
    Match.AMBIGUOUS,
    Match.PREFIXED,
    Match.CASE,
    Match.TYPO,
    Match.WORDS,
    Match.MISSING,
]


def _rank(m: Match) -> int:
    return _ORDER.index(m) if m in _ORDER else len(_ORDER)


def _worse(a: Match, b: Match) -> Match:
    return a if _rank(a) >= _rank(b) else b


__all__ = ["LakeInventory", "Match", "Resolution", "is_glob"]
