"""Safe unpacking of archives: the one rule set every tar or zip kramabench unpacks goes through (the official
workload's GitHub archive, ELT-Bench's repository and data zips, a lake or the artifacts shipped to and from
a Ray worker). ``tarfile.open``/``zipfile.ZipFile`` and ``extractall`` are banned elsewhere (ruff TID251).

The rules, whatever the format:

* an entry whose name has a NUL byte, a backslash, is absolute (``/x``, ``C:\\x``) or holds ``..``
  refuses the whole archive;
* more than ``max_members`` entries, an entry over ``max_file_bytes`` (as declared, and as read), or more
  than ``max_total_bytes`` unpacked in all refuses it;
* nothing is written outside the target folder: not through a link unpacked before, not by a link that
  leads outside (``..`` or absolute, or through earlier links); an entry never replaces a folder (a later
  file replaces an earlier file of the same name);
* links (symbolic and hard) are kept only where the caller allows them (``links=True``: a symbolic link
  inside the tree stays a link, a hard link to a file unpacked before becomes its copy, a special file is
  skipped and recorded); elsewhere any entry that is not a folder or a regular file refuses the archive.

Which entries are unpacked and where is the caller's ``place`` (a path's parts -> the parts under the target,
``None`` to leave the entry out, or a ``str`` to leave it out and record that text in ``skipped``). Every
refusal is an :class:`ArchiveRefused` (a ``ValueError``) whose message is one line naming the entry; a file
that does not open as an archive is a :class:`NotAnArchive`; an archive broken further on raises what
``tarfile``/``zipfile`` raise, for the caller to word.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Protocol

_CHUNK = 1 << 20
#: a symbolic link stored in a zip is its target's text: at most this long
_ZIP_LINK_BYTES = 4096


class ArchiveRefused(ValueError):
    """An archive that is not unpacked (or not further): an unsafe entry, over a limit. One line."""


class NotAnArchive(ValueError):
    """A file ``tarfile``/``zipfile`` cannot open as an archive (empty, another format); ``str()`` is what they
    said, ``__cause__`` their error."""


class Limits(Protocol):
    """The bounds of an unpacking (``kramabench.workload.fetch.FetchLimits`` is one)."""

    @property
    def max_members(self) -> int: ...
    @property
    def max_file_bytes(self) -> int: ...
    @property
    def max_total_bytes(self) -> int: ...


@dataclass(frozen=True)
class ArchiveLimits:
    """Bounds for an archive of files kramabench packed itself (a lake, artifacts): generous, never none."""

    max_members: int = 10_000_000
    max_file_bytes: int = 1 << 40
    max_total_bytes: int = 1 << 42


@dataclass
class Unpacked:
    """What an unpacking wrote: regular files (links included) and their bytes, the relative paths of the
    files, what was left out (and why), and the archive's comment (a GitHub archive's commit)."""

    files: int = 0
    bytes: int = 0
    paths: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    comment: str | None = None


#: which entries go where: the entry's path parts -> the parts under the target, None (left out) or a str
#: (left out, the text recorded in ``skipped``)
Place = Callable[[list[str]], "list[str] | str | None"]


def _everything(parts: list[str]) -> list[str]:
    return parts


def member_parts(name: str) -> list[str]:
    """The components of an archive entry's path (``.`` and empty ones dropped); :class:`ArchiveRefused` for
    a NUL byte, a backslash, an absolute path or ``..``."""
    if "\x00" in name:
        raise ArchiveRefused(f"archive entry {name!r} has a NUL byte: refusing the archive")
    if name.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", name):
        raise ArchiveRefused(f"archive entry {name!r} is an absolute path: refusing the archive")
    if "\\" in name:
        raise ArchiveRefused(f"archive entry {name!r} has a backslash: refusing the archive")
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveRefused(f"archive entry {name!r} contains '..': refusing the archive")
    return parts


def _inside(base: Path, path: Path) -> bool:
    base_r = os.path.realpath(base)
    return os.path.commonpath([base_r, os.path.realpath(path)]) == base_r


class _Writer:
    """Writes the entries of one archive under ``dest`` by the rules of the module."""

    def __init__(self, dest: Path, limits: Limits, links: bool, place: Place) -> None:
        self.dest = dest
        self.limits = limits
        self.links = links
        self.place_of = place
        self.out = Unpacked()
        self.written: dict[str, Path] = {}  # relpath -> unpacked regular file (hard links copy it)
        self.count = 0

    def place(self, name: str) -> tuple[str, Path] | None:
        self.count += 1
        if self.count > self.limits.max_members:
            raise ArchiveRefused(f"the archive has more than {self.limits.max_members} entries: refusing")
        parts = member_parts(name)
        if not parts:
            return None
        where = self.place_of(parts)
        if isinstance(where, str):
            self.out.skipped.append(where)
            return None
        if not where:
            return None
        return "/".join(where), self.dest.joinpath(*where)

    def folder(self, name: str, target: Path) -> None:
        target.mkdir(parents=True, exist_ok=True)
        if not _inside(self.dest, target):
            raise ArchiveRefused(f"archive entry {name!r} leads outside the target")

    def clear(self, name: str, target: Path) -> None:
        """Make room for a file or link at ``target`` (a later entry replaces an earlier file)."""
        target.parent.mkdir(parents=True, exist_ok=True)
        if not _inside(self.dest, target.parent):
            raise ArchiveRefused(f"archive entry {name!r} leads outside the target via a link")
        if target.is_symlink() or target.exists():
            if target.is_dir() and not target.is_symlink():
                raise ArchiveRefused(f"archive entry {name!r} replaces a folder")
            target.unlink()

    def file(
        self, name: str, relpath: str, target: Path, src: IO[bytes], size: int, executable: bool
    ) -> None:
        """Copy the open entry ``src`` (``size`` as the archive declares it) to ``target``, within the limits."""
        limit = self.limits.max_file_bytes
        if size > limit:
            raise ArchiveRefused(
                f"archive entry {relpath} is {size} bytes, over the per-file limit of {limit}"
            )
        self.clear(name, target)
        got = 0
        with src, open(target, "xb") as out:
            for chunk in iter(lambda: src.read(_CHUNK), b""):
                got += len(chunk)
                self.out.bytes += len(chunk)
                if got > limit:
                    raise ArchiveRefused(f"archive entry {relpath} is over the per-file limit")
                if self.out.bytes > self.limits.max_total_bytes:
                    raise ArchiveRefused(
                        f"the unpacked archive is over the limit of {self.limits.max_total_bytes} bytes"
                    )
                out.write(chunk)
        os.chmod(target, 0o755 if executable else 0o644)
        self.written[relpath] = target
        self.out.paths.append(relpath)
        self.out.files += 1

    def refuse(self, name: str, kind: str) -> None:
        raise ArchiveRefused(f"archive entry {name!r} is {kind}, not a regular file: refusing the archive")

    def symlink(self, name: str, relpath: str, target: Path, link: str) -> None:
        if not self.links:
            self.refuse(name, "a symbolic link")
        resolved = os.path.normpath(os.path.join(os.path.dirname(relpath), link))
        if os.path.isabs(link) or resolved == ".." or resolved.startswith("../"):
            raise ArchiveRefused(
                f"archive entry {relpath} is a link to {link!r}, outside the unpacked folders: refusing"
            )
        self.clear(name, target)
        os.symlink(link, target)
        if not _inside(self.dest, target):  # through links unpacked before it
            raise ArchiveRefused(
                f"archive entry {relpath} is a link to {link!r}, which leads outside: refusing"
            )
        self.out.paths.append(relpath)
        self.out.files += 1

    def hardlink(self, name: str, relpath: str, target: Path, source_parts: list[str]) -> None:
        if not self.links:
            self.refuse(name, "a hard link")
        try:
            where = self.place_of(source_parts) if source_parts else None
        except ArchiveRefused:  # a link to an entry that is not unpacked (outside the layout)
            where = None
        source = self.written.get("/".join(where)) if isinstance(where, list) else None
        if source is None:
            self.out.skipped.append(f"{relpath} (hard link to {'/'.join(source_parts)}, not unpacked)")
            return
        self.clear(name, target)
        shutil.copyfile(source, target)
        self.written[relpath] = target
        self.out.paths.append(relpath)
        self.out.files += 1
        self.out.bytes += target.stat().st_size

    def special(self, name: str, relpath: str) -> None:
        if not self.links:
            self.refuse(name, "a special file")
        self.out.skipped.append(f"{relpath} (special file)")


def unpack_tar(
    archive: Path | bytes,
    dest: Path,
    *,
    limits: Limits | None = None,
    links: bool = False,
    place: Place = _everything,
) -> Unpacked:
    """Unpack a tar (plain, gzip, bzip2 or xz; a file, or its bytes) under ``dest`` by the module's rules."""
    w = _Writer(Path(dest), limits or ArchiveLimits(), links, place)
    try:
        if isinstance(archive, bytes):
            tar = tarfile.open(fileobj=io.BytesIO(archive), mode="r:*")
        else:
            tar = tarfile.open(archive, mode="r:*")
    except (tarfile.TarError, OSError) as e:
        raise NotAnArchive(str(e)) from e
    with tar:
        for member in tar:
            if w.out.comment is None:
                w.out.comment = tar.pax_headers.get("comment")
            placed = w.place(member.name)
            if placed is None:
                continue
            relpath, target = placed
            if member.isdir():
                w.folder(member.name, target)
            elif member.isreg():
                src = tar.extractfile(member)
                assert src is not None
                w.file(member.name, relpath, target, src, member.size, bool(member.mode & 0o111))
            elif member.issym():
                w.symlink(member.name, relpath, target, member.linkname)
            elif member.islnk():
                w.hardlink(member.name, relpath, target, member_parts(member.linkname))
            else:
                w.special(member.name, relpath)
    return w.out


def unpack_zip(
    archive: Path,
    dest: Path,
    *,
    limits: Limits | None = None,
    links: bool = False,
    place: Place = _everything,
) -> Unpacked:
    """Unpack a zip under ``dest`` by the module's rules (an entry without a Unix mode, as zips made off Unix
    have, is a regular file)."""
    w = _Writer(Path(dest), limits or ArchiveLimits(), links, place)
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise NotAnArchive(str(e)) from e
    with zf:
        w.out.comment = zf.comment.decode("ascii", "replace")
        infos = zf.infolist()
        if len(infos) > w.limits.max_members:
            raise ArchiveRefused(f"the archive has more than {w.limits.max_members} entries: refusing")
        for info in infos:
            placed = w.place(info.filename)
            if placed is None:
                continue
            relpath, target = placed
            mode = info.external_attr >> 16
            if info.is_dir():
                w.folder(info.filename, target)
            elif stat.S_ISLNK(mode):
                if not links:
                    w.refuse(info.filename, "a symbolic link")
                if info.file_size > _ZIP_LINK_BYTES:
                    raise ArchiveRefused(
                        f"archive entry {relpath} is a link of {info.file_size} bytes: refusing"
                    )
                w.symlink(info.filename, relpath, target, zf.read(info).decode("utf-8", "replace"))
            elif stat.S_IFMT(mode) in (0, stat.S_IFREG):
                w.file(info.filename, relpath, target, zf.open(info), info.file_size, bool(mode & 0o111))
            else:
                w.special(info.filename, relpath)
    return w.out


def is_zip(archive: Path) -> bool:
    """Whether ``archive`` is a zip (else it is unpacked as a tar)."""
    return zipfile.is_zipfile(archive)


def pack_tar(root: Path, names: list[str]) -> bytes:
    """The files ``names`` (paths relative to ``root``) as an uncompressed tar (PAX), one entry each (a folder's
    content is not added); a symbolic link is stored as the file it leads to (what a reader of it sees, and
    what :func:`unpack_tar`, which refuses links, accepts)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT, dereference=True) as tar:
        for rel in names:
            tar.add(Path(root) / rel, arcname=rel, recursive=False)
    return buf.getvalue()


__all__ = [
    "ArchiveLimits",
    "ArchiveRefused",
    "Limits",
    "NotAnArchive",
    "Unpacked",
    "is_zip",
    "member_parts",
    "pack_tar",
    "unpack_tar",
    "unpack_zip",
]
