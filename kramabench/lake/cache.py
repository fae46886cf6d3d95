"""On-disk cache of lake entries, keyed by file content hash, reader version and reader options.

Two layers:

- ``stat/<root-key>.json``: (relative path, size, mtime_ns) -> content hash, so that a second build of
  an unchanged lake opens no lake file at all;
- ``entries/<options-key>/<hh>/<hash>.json``: the :class:`FileEntry` of that content (path-free).

Writes are atomic (temporary file + rename); a corrupt cache file is ignored and rewritten.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
from pathlib import Path

from kramabench.files import SMALL_JSON_BYTES, FileRefused, read_bytes, write_file

from .models import READER_VERSION, FileEntry, LakeOptions

log = logging.getLogger(__name__)

ENV_CACHE_DIR = "KRAMABENCH_LAKE_CACHE"


def default_cache_dir() -> Path:
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("kramabench")) / "lake"


def options_key(options: LakeOptions) -> str:
    raw = json.dumps({"reader": READER_VERSION, "options": options.model_dump()}, sort_keys=True)
    return hashlib.blake2b(raw.encode(), digest_size=8).hexdigest()


def _atomic_write(path: Path, text: str) -> None:
    write_file(path, text, regular_only=True)  # never through a link or into a device planted in the cache


def _read(path: Path) -> bytes:
    """A cache file's bytes: a regular file of at most 64 MB (else an OSError naming it); missing:
    FileNotFoundError."""
    try:
        return read_bytes(path, limit=SMALL_JSON_BYTES, what="lake cache file")
    except FileRefused as e:
        if e.errno == errno.ENOENT:
            raise FileNotFoundError(str(e)) from None
        raise


StatMemo = dict[str, tuple[int, int, str]]


class LakeCache:
    def __init__(self, directory: Path, options: LakeOptions) -> None:
        self.directory = Path(directory)
        self.options = options
        self.key = options_key(options)

    # -- stat memo ----------------------------------------------------------------------------------
    def _memo_path(self, root: Path) -> Path:
        k = hashlib.blake2b(str(root.resolve()).encode(), digest_size=10).hexdigest()
        return self.directory / "stat" / f"{k}.json"

    def load_memo(self, root: Path) -> StatMemo:
        p = self._memo_path(root)
        try:
            raw = json.loads(_read(p))
            return {rel: (int(v[0]), int(v[1]), str(v[2])) for rel, v in raw.get("files", {}).items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, IndexError, AttributeError, RecursionError) as e:
            log.warning("ignoring unreadable lake cache memo %s: %s", p, e)
            return {}

    def save_memo(self, root: Path, memo: StatMemo) -> None:
        data = {"root": str(root.resolve()), "files": {k: list(v) for k, v in sorted(memo.items())}}
        try:
            _atomic_write(self._memo_path(root), json.dumps(data))
        except OSError as e:
            log.warning("could not write lake cache memo: %s", e)

    # -- the same memo by file identity (device, inode): a lake seen through hard links elsewhere (the
    # runner's lake views live in a new temporary folder per run) is recognised without reading it again
    def _inode_path(self) -> Path:
        return self.directory / "stat" / "inodes.json"

    def load_inode_memo(self) -> dict[str, tuple[int, int, str]]:
        p = self._inode_path()
        try:
            raw = json.loads(_read(p))
            return {k: (int(v[0]), int(v[1]), str(v[2])) for k, v in raw.items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, IndexError, AttributeError) as e:
            log.warning("ignoring unreadable lake cache memo %s: %s", p, e)
            return {}

    def save_inode_memo(self, memo: dict[str, tuple[int, int, str]]) -> None:
        try:
            _atomic_write(self._inode_path(), json.dumps({k: list(v) for k, v in memo.items()}))
        except OSError as e:
            log.warning("could not write lake cache memo: %s", e)

    # -- entries ------------------------------------------------------------------------------------
    def _entry_path(self, digest: str) -> Path:
        return self.directory / "entries" / self.key / digest[:2] / f"{digest}.json"

    def get(self, digest: str) -> FileEntry | None:
        p = self._entry_path(digest)
        try:
            return FileEntry.model_validate_json(_read(p))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            log.warning("ignoring corrupt lake cache entry %s: %s", p, e)
            return None

    def put(self, entry: FileEntry) -> None:
        if not entry.content_hash:
            return
        stored = entry.model_copy(update={"path": ""})
        try:
            _atomic_write(self._entry_path(entry.content_hash), stored.model_dump_json())
        except OSError as e:
            log.warning("could not write lake cache entry: %s", e)


__all__ = ["ENV_CACHE_DIR", "LakeCache", "default_cache_dir", "options_key"]
