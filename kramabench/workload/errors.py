"""The one exception of the workload package: input that cannot be used at all."""

from __future__ import annotations

import errno
from pathlib import Path

from kramabench.files import FileRefused


class WorkloadError(Exception):
    """A workload that cannot be loaded (missing file, invalid JSON, wrong top level, missing lake).

    The message is one line naming the file (and, where it applies, the task and field); the CLI prints
    it as is and exits with code 2. Defects that leave the workload usable are findings, not errors.
    """

    def __init__(self, message: str, *, file: str | None = None) -> None:
        super().__init__(message)
        self.file = file


def refused(e: FileRefused, path: Path, what: str) -> WorkloadError:
    """The error of a file of the workload (``what``: "workload file") that could not be read."""
    if e.errno == errno.ENOENT:
        return WorkloadError(f"{path}: {what} not found", file=str(path))
    if e.errno == errno.EISDIR:
        return WorkloadError(f"{path}: is a folder, not {_article(what)} {what}", file=str(path))
    return WorkloadError(str(e), file=str(path))


def _article(what: str) -> str:
    return "an" if what[:1] in "aeiou" else "a"


__all__ = ["WorkloadError", "refused"]
