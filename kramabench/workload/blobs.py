"""Git blob ids of the official files: a per-file pin that holds whatever archive carried the files.

GitHub's codeload archives are not byte-stable (the compressor may change), so a sha256 of the archive
cannot be pinned once and for all. What is stable is each file's content, and git names it: the blob id
is ``sha1(b"blob <size>\\0" + content)``. A listing made with ``git ls-tree -r -l <commit>`` of the
upstream repository gives every file's blob id and size; :func:`verify_tree` checks an unpacked tree
against it, file by file, so a tar.gz, a tar.xz or a zip of the same commit all verify the same way.

Listing format (one line per file, ``#`` lines are comments)::

    <mode> blob <40 hex> <size or BAD><TAB><path>

``BAD`` as the size is what ``git ls-tree -l`` prints when the blob is not in the repository's object
store (upstream lists the file but does not store its content): such files are expected to be absent.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

_LINE_RE = re.compile(r"^(\d{6}) blob ([0-9a-f]{40})\s+(\d+|BAD|-)\t(.+)$")
_CHUNK = 1 << 20


class BlobEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    blob: str
    size: int | None = Field(None, description="None when upstream does not store the content (size BAD)")
    mode: str = "100644"

    @property
    def stored(self) -> bool:
        return self.size is not None


class BlobTable(BaseModel):
    """The blob listing of one upstream commit."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="where the listing came from (file name)")
    entries: dict[str, BlobEntry] = Field(default_factory=dict)

    def under(self, folders: Iterable[str]) -> dict[str, BlobEntry]:
        tops = tuple(f.rstrip("/") + "/" for f in folders)
        return {p: e for p, e in self.entries.items() if p.startswith(tops)}


class BlobMismatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    expected: str
    actual: str
    size: int


class TreeVerification(BaseModel):
    """What :func:`verify_tree` found; ``ok`` when every file is upstream's and nothing stored is absent."""

    model_config = ConfigDict(extra="forbid")

    verified: int = 0
    mismatched: list[BlobMismatch] = Field(default_factory=list)
    unknown: list[str] = Field(default_factory=list, description="files upstream does not list at all")
    absent: list[str] = Field(default_factory=list, description="files upstream stores that the tree lacks")
    not_stored: list[str] = Field(default_factory=list, description="files upstream lists but does not store")
    unverifiable: list[str] = Field(
        default_factory=list,
        description="present, but upstream does not store their content (e.g. a git-LFS file the archive resolved)",
    )

    @property
    def ok(self) -> bool:
        """Every file present is upstream's (absent files are reported, not refused: see ``absent``)."""
        return not (self.mismatched or self.unknown)

    def problem(self, limit: int = 3) -> str:
        """One line naming what failed (first few paths of each kind)."""

        def few(items: list[str]) -> str:
            more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
            return ", ".join(items[:limit]) + more

        parts = []
        if self.mismatched:
            parts.append(
                f"{len(self.mismatched)} file(s) differ from upstream: "
                + few(
                    [f"{m.path} (blob {m.actual[:12]}, upstream {m.expected[:12]})" for m in self.mismatched]
                )
            )
        if self.unknown:
            parts.append(f"{len(self.unknown)} file(s) upstream does not have: {few(self.unknown)}")
        return "; ".join(parts)


def git_blob_id(data: bytes) -> str:
    """Git's blob id of ``data``: sha1 of ``b"blob <len>\\0" + data``."""
    h = hashlib.sha1(b"blob %d\x00" % len(data))
    h.update(data)
    return h.hexdigest()


def git_blob_id_file(path: Path) -> str:
    """Git's blob id of a file (streamed); a symbolic link hashes its target text, as git stores it."""
    path = Path(path)
    if path.is_symlink():
        return git_blob_id(os.fsencode(os.readlink(path)))
    size = path.stat().st_size
    h = hashlib.sha1(b"blob %d\x00" % size)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def parse_blob_listing(text: str, *, source: str = "<listing>") -> BlobTable:
    """Parse ``git ls-tree -r -l`` output; a malformed line is a ``ValueError`` naming it."""
    table = BlobTable(source=source)
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = _LINE_RE.match(line)
        if m is None:
            raise ValueError(f"{source}, line {n}: not a 'git ls-tree -l' line: {line[:80]!r}")
        mode, blob, size, path = m.groups()
        table.entries[path] = BlobEntry(
            path=path, blob=blob, size=int(size) if size.isdigit() else None, mode=mode
        )
    return table


def load_blob_table(ref: str) -> BlobTable | None:
    """The blob listing shipped for ``ref`` (``official_blobs/<ref>.txt`` beside this module), if any."""
    if not re.fullmatch(r"[0-9a-f]{40}", ref):
        return None
    res = resources.files("kramabench.workload").joinpath("official_blobs").joinpath(f"{ref}.txt")
    if not res.is_file():
        return None
    return parse_blob_listing(res.read_text(encoding="utf-8"), source=f"official_blobs/{ref}.txt")


def verify_tree(root: Path, table: BlobTable, folders: Iterable[str]) -> TreeVerification:
    """Check every file under ``root/<folder>`` against ``table`` (restricted to those folders)."""
    root = Path(root)
    folders = list(folders)
    expected = table.under(folders)
    result = TreeVerification()
    seen: set[str] = set()
    for folder in folders:
        for dirpath, _dirs, files in os.walk(root / folder):
            for name in files:
                path = Path(dirpath) / name
                rel = path.relative_to(root).as_posix()
                entry = expected.get(rel)
                if entry is None:
                    result.unknown.append(rel)
                    continue
                seen.add(rel)
                actual = git_blob_id_file(path)
                if actual != entry.blob and not entry.stored:
                    result.unverifiable.append(rel)
                elif actual != entry.blob:
                    size = os.lstat(path).st_size
                    result.mismatched.append(
                        BlobMismatch(path=rel, expected=entry.blob, actual=actual, size=size)
                    )
                else:
                    result.verified += 1
    for rel, entry in sorted(expected.items()):
        if rel in seen:
            continue
        (result.not_stored if not entry.stored else result.absent).append(rel)
    result.unknown.sort()
    result.mismatched.sort(key=lambda m: m.path)
    return result


__all__ = [
    "BlobEntry",
    "BlobMismatch",
    "BlobTable",
    "TreeVerification",
    "git_blob_id",
    "git_blob_id_file",
    "load_blob_table",
    "parse_blob_listing",
    "verify_tree",
]
