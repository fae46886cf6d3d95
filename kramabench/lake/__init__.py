"""Data-lake index: inventory, per-format readers, type-annotated snippets, content-keyed cache.

>>> index = LakeIndex.build(Path("data/legal/input"))          # cached on disk by content hash
>>> print(index.render(budget_tokens=8000, path_prefix="/lake").text)
"""

from .cache import ENV_CACHE_DIR, LakeCache, default_cache_dir
from .index import BuildStats, LakeIndex, build_index, is_junk, list_lake_files
from .models import READER_VERSION, ColumnInfo, FileEntry, LakeOptions, TableInfo
from .render import Rendered, estimate_tokens, render_entries
from .whole import WholeFile, whole_files

__all__ = [
    "ENV_CACHE_DIR",
    "READER_VERSION",
    "BuildStats",
    "ColumnInfo",
    "FileEntry",
    "LakeCache",
    "LakeIndex",
    "LakeOptions",
    "Rendered",
    "TableInfo",
    "WholeFile",
    "build_index",
    "default_cache_dir",
    "estimate_tokens",
    "is_junk",
    "list_lake_files",
    "render_entries",
    "whole_files",
]
