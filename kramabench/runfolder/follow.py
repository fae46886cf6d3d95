"""``records.jsonl`` followed as it is written, for a reader that shows any record kramabench (or a plug-in,
or another version) may write: each complete line read once, from where the last read stopped, into a
:class:`RecordLine` (its place in the file and its JSON object) or a :class:`LineProblem` (its line number
and why it is not a record), never an exception. A last line without its newline is left for the next read
(``tail_bytes``); a file replaced or cut (a resume cut a torn line off) is read again from its start."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kramabench.runfolder.layout import RECORDS
from kramabench.runfolder.open import open_nofollow, why_unreadable

#: bytes of records.jsonl read by one poll; the rest is read by the next (a huge file appears in steps)
MAX_READ_BYTES = 256 << 20
#: a single record line longer than this is skipped with a note
MAX_LINE_BYTES = 64 << 20


@dataclass(frozen=True)
class RecordLine:
    """A line of ``records.jsonl`` that is a record object (a JSON object with a text ``task_id``)."""

    line: int
    offset: int
    length: int
    doc: dict[str, Any]


@dataclass(frozen=True)
class LineProblem:
    """A line of a run's file that is not a record: the file's name in the run folder, the line's 1-based
    number and why (it is skipped)."""

    line: int
    message: str
    file: str = RECORDS


@dataclass
class TailRead:
    """What one :meth:`RecordsTail.poll` found: ``reset`` when what was read before no longer holds (the file
    was replaced, cut or removed: start over), the new complete lines (parsed one at a time as they are
    iterated: a read of hundreds of MB never holds all its records at once), and ``problem`` when the file
    cannot be read at all."""

    reset: bool = False
    lines: Iterable[RecordLine | LineProblem] = ()
    problem: str | None = None


def record_doc(raw: bytes) -> dict[str, Any] | str:
    """A records line as a record object, or why it is not one (in words, ending in ``skipped``)."""
    try:
        rec = json.loads(raw)
    except UnicodeDecodeError:
        return "not UTF-8 text; skipped"
    except json.JSONDecodeError as e:
        return f"not JSON ({e.msg} at column {e.colno}); skipped"
    except RecursionError:
        return "nested too deeply; skipped"
    if not isinstance(rec, dict):
        return f"a JSON {type(rec).__name__}, not a record object; skipped"
    if not isinstance(rec.get("task_id"), str):
        return "a JSON object without a task_id; skipped"
    return rec


class RecordsTail:
    """The records file of ``run_dir`` followed: :meth:`poll` returns the lines completed since the last call."""

    def __init__(
        self, run_dir: Path, *, max_read: int = MAX_READ_BYTES, max_line: int = MAX_LINE_BYTES
    ) -> None:
        self.path = Path(run_dir) / RECORDS
        self.max_read = max_read
        self.max_line = max_line
        self._clear()

    def _clear(self) -> None:
        #: bytes read and lines counted so far; bytes of a last line not yet ended
        self.offset = 0
        self.lineno = 0
        self.tail_bytes = 0
        self._ino: int | None = None

    @property
    def started(self) -> bool:
        """Whether anything of the file was read (a reset then forgets it)."""
        return self._ino is not None

    def poll(self) -> TailRead:
        try:
            fd = open_nofollow(self.path)
        except FileNotFoundError:
            out = TailRead(reset=self.started)
            self._clear()
            return out
        except OSError as e:
            self._clear()
            return TailRead(reset=True, problem=f"cannot read: {why_unreadable(e)}")
        out = TailRead()
        try:
            st = os.fstat(fd)
            if self._ino is not None and (st.st_ino != self._ino or st.st_size < self.offset):
                self._clear()  # replaced or cut (a resume cut a torn line off): read again
                out.reset = True
            self._ino = st.st_ino
            if st.st_size == self.offset + self.tail_bytes:
                return out
            with os.fdopen(os.dup(fd), "rb") as f:
                f.seek(self.offset)
                data = f.read(min(st.st_size - self.offset, self.max_read))
        finally:
            os.close(fd)
        out.lines = self._take(data)
        return out

    def _take(self, data: bytes) -> Iterable[RecordLine | LineProblem]:
        """Count ``data`` as read (the complete lines; a last line without its newline is left for the next
        poll) and give its lines, parsed as they are iterated."""
        end = data.rfind(b"\n")
        if end < 0:
            self.tail_bytes = len(data)
            if len(data) <= self.max_line:
                return ()
            # no newline for too long: skip what there is
            self.lineno += 1
            self.offset += len(data)
            self.tail_bytes = 0
            return (LineProblem(self.lineno, f"a line longer than {self.max_line} bytes; skipped"),)
        complete, self.tail_bytes = data[: end + 1], len(data) - end - 1
        offset, lineno = self.offset, self.lineno
        self.offset += len(complete)
        self.lineno += complete.count(b"\n")
        return self._lines(complete, offset, lineno)

    def _lines(self, complete: bytes, offset: int, lineno: int) -> Iterator[RecordLine | LineProblem]:
        pos, n = 0, len(complete)
        while pos < n:
            nl = complete.index(b"\n", pos)
            raw = complete[pos:nl]
            start = offset + pos
            pos = nl + 1
            lineno += 1
            if not raw.strip():
                continue
            if len(raw) > self.max_line:
                yield LineProblem(lineno, f"a line of {len(raw)} bytes (over {self.max_line}); skipped")
                continue
            doc = record_doc(raw)
            if isinstance(doc, str):
                yield LineProblem(lineno, doc)
            else:
                yield RecordLine(lineno, start, len(raw), doc)


def read_docs_at(run_dir: Path, places: list[tuple[int, int, str]]) -> Iterator[dict[str, Any] | None]:
    """The record objects at (offset, length, task id) of ``records.jsonl``, read again in one pass in the
    order given (None for a line that changed since it was read, or a file that cannot be read)."""
    try:
        fd = open_nofollow(Path(run_dir) / RECORDS)
    except OSError:
        for _ in places:
            yield None
        return
    with os.fdopen(fd, "rb") as f:
        for offset, length, task_id in places:
            f.seek(offset)
            doc = record_doc(f.read(length))
            yield doc if isinstance(doc, dict) and doc["task_id"] == task_id else None


def read_doc_at(
    run_dir: Path, line: int, offset: int, length: int, task_id: str
) -> tuple[dict[str, Any] | None, str | None]:
    """The record object of line ``line`` (at ``offset``, ``length`` bytes), read again; None and why when it
    cannot be (the file cannot be read, or the line changed since it was read)."""
    try:
        fd = open_nofollow(Path(run_dir) / RECORDS)
    except OSError as e:
        return None, f"{RECORDS}: cannot read: {why_unreadable(e)}"
    try:
        with os.fdopen(os.dup(fd), "rb") as f:
            f.seek(offset)
            raw = f.read(length)
    finally:
        os.close(fd)
    doc = record_doc(raw)
    if isinstance(doc, str) or doc["task_id"] != task_id:
        return None, f"{RECORDS} line {line} changed since it was read; reload the page"
    return doc, None


__all__ = [
    "MAX_LINE_BYTES", "MAX_READ_BYTES", "LineProblem", "RecordLine", "RecordsTail", "TailRead", "read_doc_at",
    "read_docs_at", "record_doc",
]  # fmt: skip
