"""Build the index of a lake: walk it, skip junk, describe each file (from the cache when unchanged)."""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import stat as statmod
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import dataclass, field
from multiprocessing.context import BaseContext
from pathlib import Path

from kramabench.contracts import interrupt

from .cache import LakeCache, default_cache_dir
from .models import FileEntry, LakeOptions
from .readers import read_entry
from .render import RenderCache, Rendered, render_entries
from .sniff import scan_file

log = logging.getLogger(__name__)

JUNK_NAMES = {".DS_Store", "Thumbs.db", "ehthumbs.db", "desktop.ini", "Desktop.ini", ".localized", "Icon\r"}
JUNK_DIRS = {
    "__MACOSX",
    ".ipynb_checkpoints",
    ".git",
    ".svn",
    ".hg",
    "__pycache__",
    ".Trashes",
    ".Spotlight-V100",
    ".fseventsd",
}


def is_junk(name: str) -> bool:
    """OS and editor droppings: never part of a lake."""
    return (
        name in JUNK_NAMES
        or name.startswith("._")  # AppleDouble resource forks
        or name.startswith("~$")  # Office lock files
        or (name.startswith(".~lock.") and name.endswith("#"))  # LibreOffice lock files
        or (name.startswith(".") and name.endswith((".swp", ".swo")))  # vim swap files
    )


def walk_lake(root: Path) -> tuple[list[str], list[str], list[str]]:
    """Folders and files of ``root`` (recursive, sorted, '/'-separated relative paths) without junk, and
    the names left out because they are not valid UTF-8 (shown with ``\\xNN`` escapes).

    A name that is not UTF-8 (a zip made on another system) cannot be written into a prompt, a JSON
    record or a manifest; such a file or folder is left out and named in the third list.

    Symbolic links never lead out of the lake: a linked folder is walked only when it resolves to a
    folder inside ``root`` that is not one of the folders it sits in (so a link to ``..`` or ``/etc``,
    or a loop, is left out); linked files are listed as they are (:func:`inside_lake` tells where they lead).
    """
    root = Path(root)
    real_root = os.path.realpath(root)
    chains: dict[str, frozenset[str]] = {
        str(root): frozenset({real_root})
    }  # walked path -> real folders above it
    dirs: list[str] = []
    out: list[str] = []
    bad: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        chain = chains.pop(dirpath, frozenset())
        rel_dir = os.path.relpath(dirpath, root)
        keep = []
        for d in sorted(dirnames):
            if d in JUNK_DIRS or d.startswith("._"):
                continue
            if not _utf8(d):
                bad.append(_printable(d if rel_dir == "." else f"{rel_dir}/{d}") + "/")
                continue
            full = os.path.join(dirpath, d)
            real = os.path.realpath(full)
            if os.path.islink(full) and (real in chain or not _within(real, real_root)):
                log.debug("lake %s: folder link %s leads out of the lake or loops; left out", root, full)
                continue
            chains[full] = chain | {real}
            keep.append(d)
        dirnames[:] = keep
        if rel_dir != ".":
            dirs.append(rel_dir.replace(os.sep, "/"))
        for name in filenames:
            if is_junk(name):
                continue
            rel = (name if rel_dir == "." else f"{rel_dir}/{name}").replace(os.sep, "/")
            (out if _utf8(name) else bad).append(rel if _utf8(name) else _printable(rel))
    dirs.sort()
    out.sort()
    bad.sort()
    if bad:
        log.warning("lake %s: %d name(s) not valid UTF-8 left out: %s", root, len(bad), ", ".join(bad[:5]))
    return dirs, out, bad


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(name: str) -> str:
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _within(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def inside_lake(root: Path, rel: str) -> Path | None:
    """The real path of ``root/rel`` when it lies inside the lake (links resolved), else None."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(root, rel))
    return Path(real) if _within(real, real_root) and real != real_root else None


def list_lake_files(root: Path) -> list[str]:
    """Files of ``root`` (recursive, sorted, '/'-separated relative paths) without junk; see :func:`walk_lake`."""
    return walk_lake(root)[1]


def _describe(args: tuple[str, str, LakeOptions]) -> FileEntry:
    root, rel, options = args
    path = Path(root) / rel
    try:
        scan = scan_file(path, options.head_bytes)
    except OSError as e:
        return FileEntry(path=rel, format="unknown", error=f"could not read: {e.strerror or e}")
    entry = read_entry(path, rel, scan, options)
    if scan.size > _COLLECT_AFTER_BYTES:
        # a big file's parse (an HTML DOM, a JSON tree) leaves millions of objects, some in reference
        # cycles: free them now, before the next file's parse piles its own on top (the memory bound)
        gc.collect()
    return entry


_COLLECT_AFTER_BYTES = 1 << 20


@dataclass
class BuildStats:
    files: int = 0
    read: int = 0
    from_cache: int = 0
    errors: int = 0
    seconds: float = 0.0
    skipped_junk: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class LakeIndex:
    """The inventory of one lake: an entry per file, in path order."""

    root: Path
    options: LakeOptions
    entries: list[FileEntry]
    stats: BuildStats = field(default_factory=BuildStats)
    _by_path: dict[str, FileEntry] = field(default_factory=dict, repr=False)
    _render_cache: RenderCache = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_path = {e.path: e for e in self.entries}

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, rel: str) -> FileEntry | None:
        return self._by_path.get(rel)

    @property
    def total_size(self) -> int:
        return sum(e.size for e in self.entries)

    def render(
        self,
        files: Iterable[str] | None = None,
        *,
        budget_tokens: int = 12000,
        path_prefix: str = "",
        max_rows: int | None = None,
        content: bool = True,
        style: str = "rich",
    ) -> Rendered:
        """Prompt text for ``files`` (default: all) within ``budget_tokens``; see :func:`render_entries`
        (``style``: ``"paper"`` or ``"rich"``)."""
        if files is None:
            chosen = self.entries
        else:
            chosen = []
            for rel in files:
                e = self._by_path.get(rel)
                chosen.append(
                    e if e is not None else FileEntry(path=rel, error="could not read: not in the lake index")
                )
        return render_entries(
            chosen,
            budget_tokens=budget_tokens,
            path_prefix=path_prefix,
            max_rows=min(max_rows or self.options.max_rows, self.options.max_rows),
            content=content,
            cache=self._render_cache,
            style=style,
            root=self.root,
        )

    @classmethod
    def build(
        cls,
        root: Path | str,
        options: LakeOptions | None = None,
        *,
        cache_dir: Path | str | None | bool = None,
        workers: int | None = None,
        files: Iterable[str] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> LakeIndex:
        """Index ``root``.

        ``cache_dir``: None = the default cache folder, False = no cache, else that folder.
        ``workers``: processes for files that must be read (default: up to the CPU count when many).
        ``files``: restrict to these relative paths (default: every non-junk file).
        """
        t0 = time.perf_counter()
        root = Path(root)
        options = options or LakeOptions()
        if not root.is_dir():
            raise NotADirectoryError(f"lake folder not found: {root}")
        cache = (
            None
            if cache_dir is False
            else LakeCache(
                default_cache_dir() if cache_dir is None or cache_dir is True else Path(cache_dir), options
            )
        )
        bad_names: list[str] = []
        if files is not None:
            rels = list(files)
        else:
            _, rels, bad_names = walk_lake(root)
        stats = BuildStats(files=len(rels) + len(bad_names))
        memo = cache.load_memo(root) if cache else {}
        new_memo = dict(memo)
        inodes = cache.load_inode_memo() if cache else {}
        new_inodes = dict(inodes)
        ident_of: dict[str, str] = {}
        entries: dict[str, FileEntry] = {}
        todo: list[str] = []
        stat_of: dict[str, tuple[int, int]] = {}
        for rel in rels:
            path = root / rel
            try:
                st = path.stat()
            except OSError as e:
                entries[rel] = FileEntry(path=rel, error=f"could not read: {e.strerror or e}")
                continue
            if not statmod.S_ISREG(st.st_mode):
                entries[rel] = FileEntry(
                    path=rel, size=0, format="special", error="could not read: not a regular file"
                )
                continue
            if (
                inside_lake(root, rel) is None
            ):  # a link (or a '..' in an explicit path) leading out of the lake
                entries[rel] = FileEntry(
                    path=rel,
                    size=st.st_size,
                    error="could not read: symbolic link to a file outside the lake",
                )
                continue
            stat_of[rel] = (st.st_size, st.st_mtime_ns)
            ident_of[rel] = f"{st.st_dev}:{st.st_ino}"
            hit = memo.get(rel)
            if not (hit and hit[0] == st.st_size and hit[1] == st.st_mtime_ns):
                hit = inodes.get(ident_of[rel])  # the same file under another path (a hard link)
            if cache and hit and hit[0] == st.st_size and hit[1] == st.st_mtime_ns:
                cached = cache.get(hit[2])
                if cached is not None:
                    entries[rel] = cached.model_copy(update={"path": rel, "size": st.st_size})
                    stats.from_cache += 1
                    new_memo[rel] = (st.st_size, st.st_mtime_ns, hit[2])
                    continue
            todo.append(rel)
        if todo:
            fresh = _read_many(root, todo, options, workers, progress)
            for rel, entry in zip(todo, fresh, strict=True):
                entries[rel] = entry
                stats.read += 1
                if entry.content_hash and cache:
                    cache.put(entry)
                    size, mtime = stat_of[rel]
                    new_memo[rel] = (size, mtime, entry.content_hash)
                    new_inodes[ident_of[rel]] = (size, mtime, entry.content_hash)
        if cache:
            for rel in list(new_memo):
                if rel not in stat_of:
                    del new_memo[rel]
            if new_memo != memo:
                cache.save_memo(root, new_memo)
            if new_inodes != inodes:
                cache.save_inode_memo(new_inodes)
        for name in bad_names:
            entries[name] = FileEntry(
                path=name, error="could not read: the name is not valid UTF-8 (left out of the lake)"
            )
        ordered = [entries[r] for r in sorted(entries)]
        stats.errors = sum(1 for e in ordered if e.error)
        stats.seconds = time.perf_counter() - t0
        return cls(root=root, options=options, entries=ordered, stats=stats)


def _read_many(
    root: Path,
    rels: list[str],
    options: LakeOptions,
    workers: int | None,
    progress: Callable[[int, int], None] | None,
) -> list[FileEntry]:
    if workers is None:
        workers = min(os.cpu_count() or 1, 8) if len(rels) >= 16 else 1
    jobs = [(str(root), rel, options) for rel in rels]
    out: list[FileEntry] = []
    if workers <= 1:
        for i, job in enumerate(jobs):
            out.append(_describe(job))
            if progress:
                progress(i + 1, len(jobs))
        return out
    try:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context())
    except (OSError, RuntimeError) as e:  # no process pool here (sandboxed interpreter...): sequential
        return _sequential(jobs, e)
    size = max(1, len(jobs) // (workers * 8))
    try:
        futures = [pool.submit(_describe_many, jobs[i : i + size]) for i in range(0, len(jobs), size)]
        for fut in futures:
            while True:  # a wait that SIGINT/SIGTERM cuts short (a big lake takes minutes)
                interrupt.check("indexing the lake")
                try:
                    got = fut.result(timeout=interrupt.POLL_S)
                    break
                except FuturesTimeout:
                    pass
            for entry in got:
                out.append(entry)
                if progress:
                    progress(len(out), len(jobs))
        pool.shutdown(wait=True)
        return out
    except BaseException as e:
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            proc.kill()  # a reader in the middle of a big file is not waited for
        pool.shutdown(wait=False, cancel_futures=True)
        if isinstance(e, OSError | RuntimeError) and not isinstance(e, interrupt.Interrupted):
            return _sequential(jobs, e)  # the pool broke (a reader killed...): the files one by one
        raise


def _describe_many(jobs: list[tuple[str, str, LakeOptions]]) -> list[FileEntry]:
    return [_describe(job) for job in jobs]


def _sequential(jobs: list[tuple[str, str, LakeOptions]], e: BaseException) -> list[FileEntry]:
    why = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
    log.warning("lake index: no reader processes here (%s); reading the files one by one", why)
    return [_describe(j) for j in jobs]


def _pool_context() -> BaseContext | None:
    """Where the readers' processes come from: a fork server (one single-threaded process, started once, with
    this module imported), never a fork of this process. A run indexes lakes while its other threads work,
    and a child forked while one of them is importing a module inherits that module's import lock held by a
    thread it does not have: its first import of the module waits forever, and so does the index (seen: a
    run that never made its first model call). Elsewhere (no fork server): the platform's default."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


# the function form of LakeIndex.build (same arguments, same index)
build_index = LakeIndex.build


__all__ = [
    "JUNK_DIRS",
    "JUNK_NAMES",
    "BuildStats",
    "LakeIndex",
    "build_index",
    "inside_lake",
    "is_junk",
    "list_lake_files",
    "walk_lake",
]
