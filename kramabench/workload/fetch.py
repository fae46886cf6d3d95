"""Fetch the official KramaBench workloads: the repository archive at a pinned commit, verified, unpacked.

``fetch_official()`` downloads the GitHub archive of ``mitdbg/Kramabench`` at a commit (default
:data:`DEFAULT_REF`), checks its sha256 against the pin table (``official_pins.json`` beside this module,
or a checksum the caller gives), and unpacks only ``workload/``, ``data/`` and ``solutions/`` into
``official_root(ref)`` = ``<KRAMABENCH_HOME>/official/<ref>``. The unpacking refuses absolute paths,
``..`` components, links that leave the tree and archives over the size limits; it works in a staging
folder that replaces the target only when everything succeeded, so a failed fetch leaves nothing
half-unpacked. ``fetch-manifest.json`` in the root records what was fetched and which files upstream
does not store (git-LFS pointer files, files that tasks' ``data_sources`` name but the archive lacks).

Verification: an archive sha256 (pinned or given) checks the exact bytes. Without one, a ref with a
shipped git blob listing (``official_blobs/<ref>.txt``, see :mod:`kramabench.workload.blobs`) is
verified file by file: every unpacked file must have upstream's git blob id, whatever archive format
or compression carried it (``verification: blob-ids``); a file that differs or that upstream does not
have refuses the whole fetch. Files upstream stores that the archive lacks are recorded (``absent``).

Checksums of an unknown ref (no pin, no listing): the archive is downloaded, its sha256 printed in the error, and the
fetch needs ``sha256=`` (checked) or ``trust=True`` (recorded as ``verification: trusted``). The
downloaded archive is kept under ``official/.download/`` until it was unpacked, so re-running with the
printed checksum does not download it again (it is hashed again before use).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.files import (
    SMALL_JSON_BYTES,
    WORKLOAD_BYTES,
    clip,
    one_line,
    read_bytes,
    read_text,
    replace_dir,
    sha256,
    sha256_file,
    write_file,
)
from kramabench.files.archive import ArchiveRefused, NotAnArchive, is_zip, unpack_tar, unpack_zip
from kramabench.workload.blobs import BlobTable, load_blob_table, parse_blob_listing, verify_tree

log = logging.getLogger(__name__)

#: environment variable naming the cache folder (default: the user cache dir of ``kramabench``)
HOME_ENV = "KRAMABENCH_HOME"
#: folders of the repository that are unpacked; everything else of the archive is ignored
KEEP_FOLDERS = ("workload", "data", "solutions")
MANIFEST_NAME = "fetch-manifest.json"
LFS_HEADER = b"version https://git-lfs"
_LFS_MAX_BYTES = 1024  # a pointer file is ~130 bytes; real LFS spec caps it at 1024
_REF_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_CHUNK = 1 << 20


class FetchError(Exception):
    """A fetch that cannot go on; the message is one line that says what and where."""


class ChecksumMismatch(FetchError):
    pass


class ChecksumRequired(FetchError):
    """No pinned checksum for the ref and none given: ``computed`` holds the archive's sha256."""

    def __init__(self, message: str, computed: str) -> None:
        super().__init__(message)
        self.computed = computed


class UnsafeArchive(FetchError):
    pass


class FetchLimits(BaseModel):
    """Size limits of a fetch (the official archive is a few hundred MB)."""

    model_config = ConfigDict(extra="forbid")

    max_archive_bytes: int = Field(4 << 30, gt=0, description="compressed download")
    max_total_bytes: int = Field(16 << 30, gt=0, description="sum of unpacked files")
    max_file_bytes: int = Field(8 << 30, gt=0, description="one unpacked file")
    max_members: int = Field(500_000, gt=0, description="entries in the archive")


class NotStoredFile(BaseModel):
    """A file upstream does not store in the archive: an LFS pointer, or named by tasks but absent."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="relative to the official root, e.g. data/biomedical/input/x.xlsx")
    reason: Literal["lfs-pointer", "missing", "not-stored"] = Field(
        description="lfs-pointer: the archive holds a git-LFS pointer; not-stored: upstream lists the file but "
        "does not store its content; missing: tasks name it, upstream never had it"
    )
    domain: str | None = None
    lfs_oid: str | None = None
    lfs_size: int | None = Field(None, description="size of the real file, as the pointer declares")
    referenced_by: list[str] = Field(
        default_factory=list, description="ids of the tasks naming it (in the task or one of its subtasks)"
    )


class MisspeltSource(BaseModel):
    """A data source that names no file, where a file of a near name exists (``.tsv`` for ``.csv``, ...)."""

    model_config = ConfigDict(extra="forbid")

    source: str
    domain: str
    nearest: str = Field(description="the existing file, relative to the official root")
    referenced_by: list[str] = Field(default_factory=list)


class FetchManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: str
    url: str
    sha256: str
    verification: Literal["pinned", "given", "trusted", "blob-ids"]
    archive_commit: str | None = Field(None, description="commit id GitHub writes into the archive header")
    fetched_at: datetime
    file_count: int
    total_bytes: int
    folders: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(
        default_factory=list, description="archive entries not unpacked (devices, ...)"
    )
    not_stored: list[NotStoredFile] = Field(default_factory=list)
    misspelt: list[MisspeltSource] = Field(
        default_factory=list, description="data sources that name no file but a file of a near name exists"
    )
    blob_listing: str | None = Field(None, description="the git blob listing the files were verified against")
    verified_files: int | None = Field(None, description="files whose git blob id matched upstream's")
    absent: list[str] = Field(
        default_factory=list, description="files upstream stores that the archive lacked"
    )
    unverifiable: list[str] = Field(
        default_factory=list, description="files upstream lists without storing their content: not checkable"
    )


class FetchResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    root: Path
    manifest: FetchManifest
    reused: bool = Field(False, description="True when an earlier complete fetch was found and kept")


class ArchivePin(BaseModel):
    model_config = ConfigDict(extra="allow")

    sha256: str | None = None
    date: str | None = None
    note: str | None = None


class PinTable(BaseModel):
    model_config = ConfigDict(extra="allow")

    repository: str
    url_template: str
    default_ref: str
    refs: dict[str, ArchivePin] = Field(default_factory=dict)


def load_pins() -> PinTable:
    """The pin table shipped with the package (``kramabench/workload/official_pins.json``)."""
    text = resources.files("kramabench.workload").joinpath("official_pins.json").read_text(encoding="utf-8")
    return PinTable.model_validate_json(text)


#: the commit fetched when no ``--ref`` is given (upstream 2025-12-03, corrected answers of Nov 2025)
DEFAULT_REF = "92b7252eb841f84dfa6a5e079551bd8588947655"


def kramabench_home() -> Path:
    """The cache folder: ``$KRAMABENCH_HOME`` if set, else the user cache dir of ``kramabench``."""
    env = os.environ.get(HOME_ENV)
    if env:
        return Path(env).expanduser().resolve()
    import platformdirs

    return Path(platformdirs.user_cache_dir("kramabench", appauthor=False))


def official_root(ref: str | None = None, *, home: Path | None = None) -> Path:
    """Where the official workloads of ``ref`` live once fetched: ``<home>/official/<ref>``.

    This is a workload root in the official layout (``workload/<domain>.json``, ``data/<domain>/input``,
    ``solutions/<domain>/<task>.py``). The folder exists only after ``kramabench fetch kramabench``.
    """
    ref = _check_ref(ref or DEFAULT_REF)
    return (home if home is not None else kramabench_home()) / "official" / ref


def fetched_root(ref: str | None = None, *, home: Path | None = None) -> Path:
    """The root of the fetched official workloads of ``ref``, else a :class:`FetchError` that says what to run.

    Without ``ref``: the default ref's folder when it was fetched, else the one ref fetched (when exactly one
    was). A folder counts as fetched when it holds the fetch manifest or a ``workload/`` folder."""
    root = official_root(ref, home=home)
    if ref is None and not _is_fetched(root):
        base = (home if home is not None else kramabench_home()) / "official"
        others = sorted(p for p in base.iterdir() if _is_fetched(p)) if base.is_dir() else []
        if len(others) == 1:
            return others[0]
    if not _is_fetched(root):
        hint = "kramabench fetch kramabench" + (f" --ref {ref}" if ref else "")
        if home is not None:
            hint += f" --home {home}"
        raise FetchError(
            f"the official KramaBench workloads are not fetched yet (no {root / MANIFEST_NAME}); run: {hint}"
        )
    return root


def _is_fetched(root: Path) -> bool:
    return read_fetch_manifest(root) is not None or (Path(root) / "workload").is_dir()


def read_fetch_manifest(root: Path) -> FetchManifest | None:
    path = Path(root) / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        return FetchManifest.model_validate_json(
            read_bytes(path, limit=SMALL_JSON_BYTES, what="fetch manifest")
        )
    except (ValueError, OSError) as exc:
        log.warning("%s: unreadable fetch manifest (%s)", path, exc)
        return None


def _check_ref(ref: str) -> str:
    if not _REF_RE.match(ref):
        raise FetchError(
            f"invalid ref {ref!r}: give a commit id (or a tag/branch name of letters, digits, '.', '_', '-')"
        )
    return ref


def _count_files(root: Path) -> int:
    n = 0
    for folder in KEEP_FOLDERS:
        base = root / folder
        if base.is_dir():
            for _dirpath, _dirs, files in os.walk(base):
                n += len(files)
    return n


def fetch_official(
    ref: str | None = None,
    *,
    url: str | None = None,
    home: Path | None = None,
    sha256: str | None = None,
    trust: bool = False,
    force: bool = False,
    limits: FetchLimits | None = None,
    pins: Mapping[str, str | None] | None = None,
    progress: bool = True,
    timeout_s: float = 60.0,
    blobs: BlobTable | Path | bool = True,
) -> FetchResult:
    """Download, verify and unpack the official workloads; see the module docstring.

    ``pins`` (ref -> sha256) replaces the shipped pin table (tests use it). ``blobs``: True uses the
    blob listing shipped for ``ref`` (if any), a table or a listing file (``git ls-tree -r -l`` output)
    is used instead, False verifies by sha256 only. A second fetch of a complete
    root returns ``reused=True`` without touching the network unless ``force``.
    """
    pin_table = load_pins()
    ref = _check_ref(ref or pin_table.default_ref or DEFAULT_REF)
    limits = limits or FetchLimits()
    home = Path(home) if home is not None else kramabench_home()
    root = official_root(ref, home=home)
    url = url or pin_table.url_template.format(ref=ref)
    pinned = (dict(pins) if pins is not None else {k: v.sha256 for k, v in pin_table.refs.items()}).get(ref)
    given = sha256.lower().strip() if sha256 else None
    if given is not None and not re.fullmatch(r"[0-9a-f]{64}", given):
        raise FetchError(f"--sha256 {sha256!r} is not a sha256 hex digest (64 hex digits)")
    if given and pinned and given != pinned.lower():
        raise FetchError(f"ref {ref}: the given sha256 {given} differs from the pinned {pinned}; refusing")

    table = _blob_table(blobs, ref)

    existing = read_fetch_manifest(root)
    if existing is not None and not force:
        n = _count_files(root)
        if n == existing.file_count and (given is None or given == existing.sha256):
            return FetchResult(root=root, manifest=existing, reused=True)
        log.warning(
            "%s is incomplete (%d files, manifest says %d): fetching again", root, n, existing.file_count
        )

    official = home / "official"
    downloads = official / ".download"
    downloads.mkdir(parents=True, exist_ok=True)
    try:
        archive = downloads / f"{ref}.tar.gz"
        expected = given or (pinned.lower() if pinned else None)

        digest = sha256_file(archive) if archive.is_file() else None
        if digest is not None and expected is not None and digest != expected:
            archive.unlink()  # a stale or foreign leftover: download afresh
            digest = None
        if digest is None:
            digest = _download(url, archive, limits=limits, progress=progress, timeout_s=timeout_s)

        if expected is not None:
            if digest != expected:
                archive.unlink(missing_ok=True)
                raise ChecksumMismatch(
                    f"checksum mismatch for {url}: expected sha256 {expected}, got {digest}; "
                    "nothing was unpacked (the download was deleted)"
                )
            verification: Literal["pinned", "given", "trusted", "blob-ids"] = "given" if given else "pinned"
        elif table is not None:
            verification = "blob-ids"
        elif trust:
            verification = "trusted"
            log.warning("ref %s: no pinned checksum; trusting the download (sha256 %s)", ref, digest)
        else:
            raise ChecksumRequired(
                f"ref {ref} has no pinned checksum; the downloaded archive has sha256 {digest}. "
                f"Check it, then re-run with --sha256 {digest} (or --trust to accept it unchecked)",
                computed=digest,
            )

        staging = Path(tempfile.mkdtemp(prefix=f".staging-{ref}-", dir=official))
        try:
            stats = _safe_unpack(archive, staging, limits=limits, source=url)
            if stats.archive_commit and re.fullmatch(r"[0-9a-f]{40}", ref) and stats.archive_commit != ref:
                raise FetchError(
                    f"the archive from {url} is of commit {stats.archive_commit}, not of the requested ref {ref}"
                )
            missing_folders = [f for f in ("workload", "data") if not (staging / f).is_dir()]
            if missing_folders:
                raise FetchError(
                    f"the archive from {url} has no {' and no '.join(f + '/' for f in missing_folders)} folder: "
                    "not a KramaBench repository archive"
                )
            check = None
            if verification == "blob-ids":
                assert table is not None
                check = verify_tree(staging, table, KEEP_FOLDERS)
                if not check.ok:
                    raise ChecksumMismatch(
                        f"the archive from {url} is not upstream's {ref} file by file ({table.source}): "
                        f"{check.problem()}; nothing was unpacked"
                    )
                log.info("%s: %d files verified by git blob id", url, check.verified)
            not_stored, misspelt = _not_stored_and_misspelt(staging, table)
            manifest = FetchManifest(
                ref=ref,
                url=url,
                sha256=digest,
                verification=verification,
                archive_commit=stats.archive_commit,
                fetched_at=datetime.now(timezone.utc),
                file_count=stats.files,
                total_bytes=stats.bytes,
                folders=[f for f in KEEP_FOLDERS if (staging / f).is_dir()],
                skipped=stats.skipped,
                not_stored=not_stored,
                misspelt=misspelt,
                blob_listing=table.source if check is not None and table is not None else None,
                verified_files=check.verified if check is not None else None,
                absent=check.absent if check else [],
                unverifiable=check.unverifiable if check else [],
            )
            write_file(staging / MANIFEST_NAME, manifest.model_dump_json(indent=2) + "\n")
            replace_dir(staging, root)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            archive.unlink(missing_ok=True)
            raise
        archive.unlink(missing_ok=True)
    finally:
        with contextlib.suppress(OSError):
            downloads.rmdir()  # only when empty: an unverified download is kept for the next try
    return FetchResult(root=root, manifest=manifest, reused=False)


def _blob_table(blobs: BlobTable | Path | bool, ref: str) -> BlobTable | None:
    if isinstance(blobs, BlobTable):
        return blobs
    if blobs is True:
        return load_blob_table(ref)
    if blobs is False or blobs is None:
        return None
    path = Path(blobs)
    try:
        return parse_blob_listing(read_text(path, limit=256 << 20, what="blob listing"), source=path.name)
    except OSError as exc:
        raise FetchError(f"blob listing {path}: cannot read ({_one_line(exc)})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise FetchError(str(exc)) from None


def _not_stored_and_misspelt(
    root: Path, table: BlobTable | None
) -> tuple[list[NotStoredFile], list[MisspeltSource]]:
    """What upstream does not store (listing entries without content count as ``not-stored``), apart from
    data sources that merely misspell an existing file."""
    found = find_not_stored(root)
    gone = {p for p, e in table.entries.items() if not e.stored} if table is not None else set()
    not_stored: list[NotStoredFile] = []
    misspelt: list[MisspeltSource] = []
    for entry in found:
        if entry.reason == "missing" and entry.path not in gone and entry.domain:
            near = nearest_lake_file(root, entry.domain, entry.path)
            if near is not None:
                lake = _lake_of(root, entry.domain)
                src = entry.path
                if lake is not None:
                    prefix = lake.relative_to(root).as_posix() + "/"
                    src = src[len(prefix) :] if src.startswith(prefix) else src
                misspelt.append(
                    MisspeltSource(
                        source=src, domain=entry.domain, nearest=near, referenced_by=entry.referenced_by
                    )
                )
                continue
        if entry.reason == "missing" and entry.path in gone:
            entry = entry.model_copy(update={"reason": "not-stored"})
        not_stored.append(entry)
    listed = {e.path for e in not_stored}
    for path in sorted(gone - listed):
        top = "/".join(path.split("/")[:2])  # data/<domain>: only domains this copy has
        if not (root / path).exists() and (root / top).is_dir():
            parts = path.split("/")
            domain = parts[1] if parts[0] == "data" and len(parts) > 2 else None
            not_stored.append(NotStoredFile(path=path, reason="not-stored", domain=domain))
    return sorted(not_stored, key=lambda e: (e.reason, e.path)), misspelt


def _near_key(name: str) -> str:
    stem, _, _ext = name.lower().rpartition(".")
    return re.sub(r"[^a-z0-9]", "", stem or name.lower())


def nearest_lake_file(root: Path, domain: str, missing: str) -> str | None:
    """The lake file whose name is nearest to a missing source (same stem with another extension, a case
    or punctuation difference, or a close spelling), relative to ``root``; None when nothing is close."""
    import difflib

    lake = _lake_of(Path(root), domain)
    if lake is None:
        return None
    want = PurePosixPath(missing).name
    if not want:
        return None
    names: dict[str, Path] = {}
    for dirpath, dirs, files in os.walk(lake):
        for name in files + dirs:  # a source may name a folder
            names.setdefault(name, Path(dirpath) / name)
    key = _near_key(want)
    same_stem = sorted(n for n in names if key and _near_key(n) == key)
    if same_stem:
        return names[same_stem[0]].relative_to(root).as_posix()
    lowered = {n.lower(): n for n in names}
    close = difflib.get_close_matches(want.lower(), list(lowered), n=1, cutoff=0.85)
    if close:
        return names[lowered[close[0]]].relative_to(root).as_posix()
    return None


@contextlib.contextmanager
def _progress_bar(total: int | None, label: str, enabled: bool) -> Iterator[Callable[[int], None]]:
    if not enabled:
        yield lambda _n: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    console = Console(stderr=True)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)


def _download(url: str, dest: Path, *, limits: FetchLimits, progress: bool, timeout_s: float) -> str:
    """Stream ``url`` to ``dest`` (via a .part file); returns the sha256 of the bytes."""
    part = dest.with_name(f"{dest.name}.{os.getpid()}.part")  # concurrent fetches do not share it
    h = sha256()
    received = 0
    request = urllib.request.Request(url, headers={"User-Agent": "kramabench-fetch"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as resp, open(part, "wb") as out:
            length = resp.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            if total is not None and total > limits.max_archive_bytes:
                raise UnsafeArchive(
                    f"{url}: the archive is {total} bytes, over the limit of {limits.max_archive_bytes}"
                )
            with _progress_bar(total, "download KramaBench", progress) as advance:
                for chunk in iter(lambda: resp.read(_CHUNK), b""):
                    received += len(chunk)
                    if received > limits.max_archive_bytes:
                        raise UnsafeArchive(
                            f"{url}: the archive is over the limit of {limits.max_archive_bytes} bytes"
                        )
                    h.update(chunk)
                    out.write(chunk)
                    advance(len(chunk))
    except urllib.error.HTTPError as exc:
        part.unlink(missing_ok=True)
        raise FetchError(f"download of {url} failed: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        part.unlink(missing_ok=True)
        reason = getattr(exc, "reason", exc)
        raise FetchError(f"download of {url} failed: {reason}") from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    part.replace(dest)
    log.info("downloaded %s (%d bytes)", url, received)
    return h.hexdigest()


class _UnpackStats(BaseModel):
    files: int = 0
    bytes: int = 0
    archive_commit: str | None = None
    skipped: list[str] = Field(default_factory=list)


def _one_line(exc: BaseException) -> str:
    return clip(one_line(str(exc)), 200, mark="") or type(exc).__name__


class _GitHubLayout:
    """Where the entries of a GitHub-style archive (one top-level folder) go: only the kept folders,
    ``.DS_Store`` skipped (and recorded); an entry outside the top-level folder refuses the archive."""

    def __init__(self) -> None:
        self.top: str | None = None

    def __call__(self, parts: list[str]) -> list[str] | str | None:
        if self.top is None:
            self.top = parts[0]
        elif parts[0] != self.top:
            raise ArchiveRefused(
                f"archive entry {'/'.join(parts)!r} is outside the top-level folder {self.top!r}: not a GitHub "
                "repository archive"
            )
        rel = parts[1:]
        if not rel or rel[0] not in KEEP_FOLDERS:
            return None
        if rel[-1] == ".DS_Store":
            return "/".join(rel)
        return rel


def _safe_unpack(
    archive: Path, dest: Path, *, limits: FetchLimits, source: str | None = None
) -> _UnpackStats:
    """Unpack the kept folders of a GitHub-style archive (one top-level folder) into ``dest``: a tar
    (plain, gzip, bzip2 or xz) or a zip (GitHub's zipball), both by the rules of
    :mod:`kramabench.files.archive` (links inside the tree kept, special files skipped and recorded)."""
    source = source or archive.name
    layout = _GitHubLayout()
    try:
        if is_zip(archive):
            out = unpack_zip(archive, dest, limits=limits, links=True, place=layout)
        else:
            out = unpack_tar(archive, dest, limits=limits, links=True, place=layout)
    except ArchiveRefused as exc:
        raise UnsafeArchive(str(exc)) from None
    except NotAnArchive as exc:
        if isinstance(exc.__cause__, (zipfile.BadZipFile, EOFError)):
            raise FetchError(f"the archive from {source} is broken ({_one_line(exc.__cause__)})") from None
        if "empty file" in str(exc) or "end of file header" in str(exc):  # no entries at all
            raise FetchError(f"the archive from {source} is empty") from None
        raise FetchError(f"the archive from {source} is not a tar archive (gzip, bz2, xz or plain)") from None
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error) as exc:
        raise FetchError(f"the archive from {source} is broken ({_one_line(exc)})") from None
    except OSError as exc:  # a corrupt gzip stream, or the disk (full, permissions)
        raise FetchError(f"unpacking the archive from {source} failed: {_one_line(exc)}") from None
    if layout.top is None:
        raise FetchError(f"the archive from {source} is empty")
    comment = (out.comment or "").strip()
    return _UnpackStats(
        files=out.files,
        bytes=out.bytes,
        archive_commit=comment if re.fullmatch(r"[0-9a-f]{40}", comment) else None,
        skipped=out.skipped,
    )


# --------------------------------------------------------------------------------------- not stored


def _lfs_pointer(path: Path) -> dict[str, str] | None:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _LFS_MAX_BYTES:
            return None
        head = read_bytes(path, limit=_LFS_MAX_BYTES)
    except OSError:
        return None
    if not head.startswith(LFS_HEADER):
        return None
    fields: dict[str, str] = {}
    for line in head.decode("utf-8", "replace").splitlines()[1:]:
        key, _, value = line.partition(" ")
        if key:
            fields[key] = value.strip()
    return fields


def _sources(entries: Any) -> Iterator[tuple[str, str]]:
    """(task id, data source) pairs of a workload JSON list (subtasks' sources count for their task)."""
    if not isinstance(entries, list):
        return
    for task in entries:
        if not isinstance(task, dict):
            continue
        items = [task] + [s for s in task.get("subtasks") or [] if isinstance(s, dict)]
        for item in items:
            ds = item.get("data_sources")
            if isinstance(ds, str):
                ds = [ds]
            if not isinstance(ds, list):
                continue
            for src in ds:
                if isinstance(src, str):
                    yield str(task.get("id", "?")), src


def _names_a_file(source: str) -> bool:
    """True for a path-like source (a file name with an extension, a folder, a glob), not for free text
    such as 'Wollaston Beach' that some official subtasks list as a data source."""
    s = source.strip()
    return bool(re.search(r"\.[A-Za-z0-9]{1,8}$", s)) or "/" in s or any(c in s for c in "*?[")


class _LakeIndex:
    def __init__(self, lake: Path) -> None:
        self.lake = lake
        self.by_name: dict[str, list[Path]] = {}
        for dirpath, dirs, files in os.walk(lake):
            for name in dirs + files:
                self.by_name.setdefault(name.lower(), []).append(Path(dirpath) / name)

    def resolve(self, source: str) -> Path | None:
        s = source.strip().replace("\\", "/")
        if s in ("", ".", "./", "*", "./*"):
            return self.lake
        rel = PurePosixPath(s.lstrip("/"))
        if ".." in rel.parts:
            return None
        if any(c in s for c in "*?["):
            hits = sorted(self.lake.glob(str(rel)))
            if hits:
                return hits[0]
            fixed = [p for p in rel.parts if not any(c in p for c in "*?[")]
            return self.resolve("/".join(fixed)) if fixed and len(fixed) < len(rel.parts) else None
        direct = self.lake / rel
        if direct.exists() or direct.is_symlink():
            return direct
        matches = self.by_name.get(rel.name.lower(), [])
        tail = [p.lower() for p in rel.parts]
        for m in matches:
            if [p.lower() for p in m.relative_to(self.lake).parts[-len(tail) :]] == tail:
                return m
        return matches[0] if matches and len(rel.parts) == 1 else None


def _lake_of(root: Path, domain: str) -> Path | None:
    candidates = [domain]
    if "-" in domain:
        candidates.append(domain.split("-")[0])  # legal-tiny reads the legal lake
    for name in candidates:
        for lake in (root / "data" / name / "input", root / "data" / name):
            if lake.is_dir():
                return lake
    return None


def find_not_stored(root: Path) -> list[NotStoredFile]:
    """Files upstream does not store: LFS pointer files, and data sources of tasks the tree lacks."""
    root = Path(root)
    found: dict[str, NotStoredFile] = {}
    for folder in KEEP_FOLDERS:
        for dirpath, _dirs, files in os.walk(root / folder):
            for name in files:
                path = Path(dirpath) / name
                ptr = _lfs_pointer(path)
                if ptr is None:
                    continue
                rel = path.relative_to(root).as_posix()
                size = ptr.get("size", "")
                parts = rel.split("/")
                found[rel] = NotStoredFile(
                    path=rel,
                    reason="lfs-pointer",
                    domain=parts[1] if parts[0] == "data" and len(parts) > 2 else None,
                    lfs_oid=ptr.get("oid"),
                    lfs_size=int(size) if size.isdigit() else None,
                )
    for wl in sorted((root / "workload").glob("*.json")):
        domain = wl.stem
        try:
            entries = json.loads(read_bytes(wl, limit=WORKLOAD_BYTES, what="workload file"))
        except (OSError, ValueError, RecursionError) as exc:
            log.warning("%s: not readable as JSON (%s); its data sources are not checked", wl, exc)
            continue
        lake = _lake_of(root, domain)
        index = _LakeIndex(lake) if lake is not None else None
        lake_rel = lake.relative_to(root).as_posix() if lake is not None else f"data/{domain}/input"
        for item_id, src in _sources(entries):
            if not _names_a_file(src):
                continue
            hit = index.resolve(src) if index is not None else None
            if hit is not None:
                rel = hit.relative_to(root).as_posix()
                if rel in found and item_id not in found[rel].referenced_by:
                    found[rel].referenced_by.append(item_id)
                continue
            rel = f"{lake_rel}/{src.strip().lstrip('/')}".rstrip("/")
            entry = found.setdefault(rel, NotStoredFile(path=rel, reason="missing", domain=domain))
            if item_id not in entry.referenced_by:
                entry.referenced_by.append(item_id)
    return sorted(found.values(), key=lambda e: (e.reason, e.path))


__all__ = [
    "DEFAULT_REF",
    "HOME_ENV",
    "KEEP_FOLDERS",
    "MANIFEST_NAME",
    "ChecksumMismatch",
    "ChecksumRequired",
    "FetchError",
    "FetchLimits",
    "FetchManifest",
    "FetchResult",
    "MisspeltSource",
    "NotStoredFile",
    "PinTable",
    "UnsafeArchive",
    "fetch_official",
    "fetched_root",
    "find_not_stored",
    "kramabench_home",
    "load_pins",
    "nearest_lake_file",
    "official_root",
    "read_fetch_manifest",
]
