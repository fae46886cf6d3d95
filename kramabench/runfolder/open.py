"""Opening a run folder's files as a reader that never writes: never through a symbolic link, only a
regular file (a FIFO or a device planted there is refused, never blocks)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class NotRegular(OSError):
    """The path is not a regular file (a folder, a FIFO, a device)."""


def open_nofollow(path: Path | str) -> int:
    """A read-only descriptor of a regular file, never through a symbolic link (ELOOP otherwise)."""
    fd = os.open(
        path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    )
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegular(errno.EINVAL, "not a regular file")
    return fd


def why_unreadable(exc: OSError) -> str:
    """Why :func:`open_nofollow` failed, in words."""
    if isinstance(exc, NotRegular):
        return "not a regular file; not read"
    if exc.errno == errno.ELOOP:
        return "a symbolic link; not read"
    return exc.strerror or str(exc)


__all__ = ["NotRegular", "open_nofollow", "why_unreadable"]
