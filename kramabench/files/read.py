"""Bounded reads of regular files: the one way kramabench reads a file it is given.

Every file a command reads (a manifest, ``records.jsonl``, a workload or errata file, a predictions file,
a solution, a cache...) is opened here. Anything that is not a regular file (a FIFO that would block, a
device such as ``/dev/zero`` that never ends, a folder, a socket) is refused before a byte is read, and a
regular file larger than the caller's bound is refused by its size (and read at most to the bound, should
it grow meanwhile). The refusal is a :class:`FileRefused`, an :class:`OSError` whose ``strerror`` is the
reason in plain words and whose ``str()`` is one line naming the file::

    data = read_bytes(path, limit=MANIFEST_BYTES, what="manifest")
    with open_regular(path, what="records file") as fh:
        for number, line in iter_lines(fh, max_line=RECORD_LINE_BYTES):
            ...
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

#: bounds of the files kramabench reads whole (a file above its bound is refused, never read)
MB = 1 << 20
WORKLOAD_BYTES = 64 * MB  # a domain's task file (the official ones are at most 2 MB)
MANIFEST_BYTES = 64 * MB
ERRATA_BYTES = 16 * MB
SOLUTION_BYTES = 8 * MB  # a reference solution (a Python file)
SMALL_JSON_BYTES = 64 * MB  # a cache index, a spec, an audit result, a baseline score file
#: a line longer than this in a JSON-lines file (records, predictions, calls) is skipped as too long
LINE_BYTES = 256 * MB


class FileRefused(OSError):
    """A file that is not read: not a regular file, too large, or not there. ``str()`` is one line:
    ``<path>: <reason>``; ``strerror`` is the reason alone (what ``except OSError as e: e.strerror`` shows)."""

    def __init__(self, path: Path | str, reason: str, code: int = errno.EINVAL) -> None:
        super().__init__(code, reason, str(path))
        self.path = Path(path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


#: how a file is named in a message, by the test of its ``st_mode`` (the first that holds)
_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISREG, "a regular file"),
)


def kind_of(mode: int) -> str:
    """How a file of ``st_mode`` is named in a message: "a folder", "a FIFO (named pipe)", ..."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def human_size(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


def _of(what: str | None) -> str:
    return f"allowed for a {what}" if what else "allowed here"


def check_regular(path: Path | str, *, what: str | None = None) -> os.stat_result:
    """The ``stat`` of ``path`` (links followed) when it is a regular file; else :class:`FileRefused`.
    A missing file is a :class:`FileRefused` with ``errno.ENOENT`` (``isinstance(e, OSError)``)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FileRefused(path, f"no such {what or 'file'}", errno.ENOENT) from None
    except NotADirectoryError:
        raise FileRefused(
            path, f"no such {what or 'file'} (a parent is not a folder)", errno.ENOTDIR
        ) from None
    except PermissionError:
        raise FileRefused(path, "permission denied", errno.EACCES) from None
    except OSError as e:
        raise FileRefused(path, f"cannot read: {e.strerror or e}", e.errno or errno.EIO) from None
    if not stat.S_ISREG(st.st_mode):
        code = errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL
        raise FileRefused(path, f"is {kind_of(st.st_mode)}, not a regular file", code)
    return st


def open_regular(path: Path | str, *, what: str | None = None, limit: int | None = None) -> BinaryIO:
    """A binary file object of ``path``, which must be a regular file (of at most ``limit`` bytes when
    given). Opened without blocking (a FIFO swapped in after the check cannot hang the open) and checked
    again on the open descriptor."""
    check_regular(path, what=what)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except PermissionError:
        raise FileRefused(path, "permission denied", errno.EACCES) from None
    except OSError as e:
        raise FileRefused(path, f"cannot read: {e.strerror or e}", e.errno or errno.EIO) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(path, f"is {kind_of(st.st_mode)}, not a regular file")
        if limit is not None and st.st_size > limit:
            raise FileRefused(
                path, f"is {human_size(st.st_size)}, more than the {human_size(limit)} {_of(what)}; not read",
                errno.EFBIG,
            )  # fmt: skip
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: Path | str, *, limit: int, what: str | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; else :class:`FileRefused` (one line)."""
    with open_regular(path, what=what, limit=limit) as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as e:
            raise FileRefused(path, f"cannot read: {e.strerror or e}", e.errno or errno.EIO) from None
    if len(data) > limit:  # it grew while being read
        raise FileRefused(path, f"holds more than the {human_size(limit)} {_of(what)}; not read", errno.EFBIG)
    return data


def read_text(
    path: Path | str, *, limit: int, what: str | None = None, encoding: str = "utf-8", errors: str = "strict"
) -> str:
    """:func:`read_bytes` decoded; bytes that are not ``encoding`` are a :class:`FileRefused` naming the byte
    (with ``errors="strict"``)."""
    data = read_bytes(path, limit=limit, what=what)
    try:
        return data.decode(encoding, errors)
    except UnicodeDecodeError as e:
        raise FileRefused(
            path, f"not {encoding.upper()} text (byte {e.start}: {data[e.start : e.start + 1]!r})"
        ) from None


#: JSON values (objects, lists, items) a file parsed whole may hold: about 500 MB of Python objects at most
JSON_VALUES = 8_000_000


def check_json_values(
    data: bytes | str, path: Path | str, *, what: str | None = None, limit: int = JSON_VALUES
) -> None:
    """Refuse (:class:`FileRefused`) JSON text that would become more than ``limit`` Python objects when parsed:
    a 64 MB file of ``[]`` is 20 million lists, gigabytes of memory. Counted at C speed (brackets and commas,
    strings included: an over-estimate), before parsing."""
    if len(data) <= limit:
        return
    if isinstance(data, str):
        n = data.count("{") + data.count("[") + data.count(",")
    else:
        n = data.count(b"{") + data.count(b"[") + data.count(b",")
    if n > limit:
        raise FileRefused(
            path,
            f"holds about {n:,} JSON values, more than the {limit:,} {_of(what)}; not parsed",
            errno.EFBIG,
        )


class LongLine:
    """Stands for a line longer than the bound in :func:`iter_lines`: its length, never its bytes."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        self.size = size

    def __repr__(self) -> str:
        return f"LongLine({self.size})"


def iter_lines(
    fh: BinaryIO, *, max_line: int = LINE_BYTES, chunk: int = 1 << 20
) -> Iterator[tuple[int, bytes | LongLine, bool]]:
    """(1-based line number, the line without its newline or a :class:`LongLine`, whether it ended with a
    newline) of a binary stream, holding at most ``max_line`` bytes of one line in memory: a longer line is
    skipped to its end and given as a :class:`LongLine`."""
    n = 0
    buf = bytearray()
    skipping = 0  # > 0: the current line is too long; bytes skipped so far
    while True:
        block = fh.read(chunk)
        if not block:
            break
        start = 0
        while True:
            i = block.find(b"\n", start)
            if i < 0:
                part = block[start:]
                if skipping:
                    skipping += len(part)
                elif len(buf) + len(part) > max_line:
                    skipping = len(buf) + len(part)
                    buf.clear()
                else:
                    buf += part
                break
            n += 1
            part = block[start:i]
            if skipping or len(buf) + len(part) > max_line:
                yield n, LongLine(skipping + len(buf) + len(part)), True
                skipping = 0
            else:
                buf += part
                yield n, bytes(buf), True
            buf.clear()
            start = i + 1
    if skipping:
        yield n + 1, LongLine(skipping), False
    elif buf:
        yield n + 1, bytes(buf), False


def lines_of(
    path: Path | str, *, what: str | None = None, max_line: int = LINE_BYTES
) -> Iterator[tuple[int, bytes | LongLine, bool]]:
    """:func:`iter_lines` of a regular file (a JSON-lines file: records, reports, progress), streamed; a file
    that is not regular is a :class:`FileRefused` raised at the first ``next()``."""
    with open_regular(path, what=what) as fh:
        yield from iter_lines(fh, max_line=max_line)


__all__ = [
    "ERRATA_BYTES", "JSON_VALUES", "LINE_BYTES", "MANIFEST_BYTES", "MB", "SMALL_JSON_BYTES", "SOLUTION_BYTES", "WORKLOAD_BYTES",
    "FileRefused", "LongLine", "check_json_values", "check_regular", "human_size", "iter_lines", "kind_of", "lines_of", "open_regular", "read_bytes",
    "read_text",
]  # fmt: skip
