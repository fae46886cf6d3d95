"""Files kramabench is given: bounded reads of regular files, safe writes, paths kept inside their root.

One place for each: :func:`read_bytes`/:func:`open_regular` (every read), :func:`write_file`/
:func:`open_append` (every write), :func:`inside` (every path a workload names). Standard library only.
"""

from kramabench.files.paths import OutsideRoot, check_relative, inside
from kramabench.files.read import (
    ERRATA_BYTES,
    JSON_VALUES,
    LINE_BYTES,
    MANIFEST_BYTES,
    MB,
    SMALL_JSON_BYTES,
    SOLUTION_BYTES,
    WORKLOAD_BYTES,
    FileRefused,
    LongLine,
    check_json_values,
    check_regular,
    human_size,
    iter_lines,
    kind_of,
    lines_of,
    open_regular,
    read_bytes,
    read_text,
)
from kramabench.files.write import (
    check_writable_dir,
    copy_keeping_holes,
    ensure_dir,
    fd_of,
    open_append,
    temp_path,
    write_file,
)

__all__ = [
    "ERRATA_BYTES",
    "JSON_VALUES",
    "LINE_BYTES",
    "MANIFEST_BYTES",
    "MB",
    "SMALL_JSON_BYTES",
    "SOLUTION_BYTES",
    "WORKLOAD_BYTES",
    "FileRefused",
    "LongLine",
    "OutsideRoot",
    "check_json_values",
    "check_regular",
    "check_relative",
    "check_writable_dir",
    "copy_keeping_holes",
    "ensure_dir",
    "fd_of",
    "human_size",
    "inside",
    "iter_lines",
    "kind_of",
    "lines_of",
    "open_append",
    "open_regular",
    "read_bytes",
    "read_text",
    "temp_path",
    "write_file",
]
