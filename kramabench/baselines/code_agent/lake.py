"""The lake index of each lake an agent sees, built once per lake (and cached on disk across runs)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Protocol

from kramabench.lake import LakeIndex, LakeOptions


class IndexOptions(Protocol):
    """What an agent's options say of its lake indexes."""

    @property
    def snippet_rows(self) -> int: ...
    @property
    def lake_cache_dir(self) -> Path | None: ...
    @property
    def use_lake_cache(self) -> bool: ...


class LakeIndexes:
    """Thread-safe: concurrent tasks on one lake wait for one build."""

    def __init__(self, *, max_rows: int, cache_dir: Path | None, use_cache: bool) -> None:
        self.max_rows = max_rows
        self.cache: Path | bool | None = cache_dir if use_cache else False
        self._indexes: dict[str, LakeIndex] = {}
        self._lock = threading.Lock()
        self._lake_locks: dict[str, threading.Lock] = {}

    @classmethod
    def of(cls, options: IndexOptions) -> LakeIndexes:
        """The indexes an agent's options ask for (rows per snippet, the cache folder, whether to cache)."""
        return cls(
            max_rows=options.snippet_rows, cache_dir=options.lake_cache_dir, use_cache=options.use_lake_cache
        )

    def get(self, lake_root: Path) -> LakeIndex:
        key = str(Path(lake_root).resolve())
        with self._lock:
            idx = self._indexes.get(key)
            if idx is not None:
                return idx
            lake_lock = self._lake_locks.setdefault(key, threading.Lock())
        with lake_lock:
            with self._lock:
                idx = self._indexes.get(key)
            if idx is None:
                idx = LakeIndex.build(lake_root, LakeOptions(max_rows=self.max_rows), cache_dir=self.cache)
                with self._lock:
                    self._indexes[key] = idx
        return idx


__all__ = ["IndexOptions", "LakeIndexes"]
