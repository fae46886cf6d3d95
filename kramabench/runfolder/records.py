"""A run's records read and written line by line: the tolerant reader (a line that is not a record is
reported with its line number, never raised; a torn last line is told apart), the followed reader of a run
being written (what is complete so far, read from where the last read stopped), and the one writer of a
records line (:func:`record_line`) with the repair of a torn tail before appending.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from kramabench.contracts.records import Record
from kramabench.contracts.system import OutcomeError
from kramabench.contracts.values import clean_model, clean_optional, clean_text, jsonable
from kramabench.files import (
    LINE_BYTES,
    FileRefused,
    LongLine,
    check_json_values,
    check_regular,
    human_size,
    iter_lines,
    open_append,
    open_regular,
)
from kramabench.runfolder.layout import RECORDS, torn_name

log = logging.getLogger(__name__)


@dataclass
class ReadResult:
    records: list[Record] = field(default_factory=list)
    #: 1-based line numbers that could not be read, with the reason
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    #: the file ended in the middle of a line (a write cut by a crash)
    torn_tail: bool = False


#: a records line longer than this is not read (a record with a model reply of hundreds of MB)
MAX_RECORD_LINE = LINE_BYTES


def iter_records(
    path: Path, *, max_line: int = MAX_RECORD_LINE, parse: Callable[[bytes], Record] | None = None
) -> Iterator[tuple[int, Record | str, bool]]:
    """(line number, the Record or why the line is not one, whether it is the torn last line) of each
    non-blank line of a ``records.jsonl``, streamed (one line in memory at a time, at most ``max_line``
    bytes). ``parse`` turns a line into a Record (default ``Record.model_validate_json``; the report trims
    what it keeps). A missing file yields nothing; one that is not a regular file is a
    :class:`~kramabench.files.FileRefused` (an OSError, one line)."""
    parse = parse or Record.model_validate_json
    path = Path(path)
    if not os.path.lexists(path):
        return
    with open_regular(path, what="records file") as fh:
        for n, raw, ended in iter_lines(fh, max_line=max_line):
            if isinstance(raw, LongLine):
                yield (
                    n,
                    f"a line of {human_size(raw.size)}, longer than the {human_size(max_line)} a record may take; not read",
                    not ended,
                )
                continue
            if not raw.strip():
                continue
            try:
                check_json_values(raw, path, what="record")
            except FileRefused as e:  # a line of millions of tiny values: gigabytes once parsed
                yield n, e.reason, False
                continue
            try:
                yield n, parse(raw), False
            except (ValidationError, ValueError, RecursionError) as e:
                if not ended:
                    yield (
                        n,
                        "torn last line (a write cut short: the run was killed, or the disk was full)",
                        True,
                    )
                else:
                    yield n, f"invalid record: {str(e).splitlines()[0]}", False


def read_records(path: Path) -> ReadResult:
    """Read a ``records.jsonl`` tolerantly: a torn last line or an invalid line is reported, not raised
    (a records file that is not a regular file is a :class:`~kramabench.files.FileRefused`)."""
    out = ReadResult()
    for n, rec, torn in iter_records(path):
        if isinstance(rec, Record):
            out.records.append(rec)
        else:
            out.bad_lines.append((n, rec))
            out.torn_tail = out.torn_tail or torn
    if out.bad_lines:
        for ln, why in out.bad_lines[:20]:
            log.warning("%s line %d: %s", path, ln, why)
        if len(out.bad_lines) > 20:
            log.warning("%s: %d more line(s) that are not records", path, len(out.bad_lines) - 20)
    return out


def repair_torn_tail(path: Path, is_complete: Callable[[bytes], bool]) -> int:
    """Make an append-only JSON-lines file safe to append to after a crash: a last line without its
    newline is either a complete line (``is_complete`` accepts it; the newline is added) or a torn one,
    moved aside to ``<name>.torn`` and cut off, so that the next line never glues onto it. Returns the
    number of bytes cut (0 when nothing was torn)."""
    if not os.path.lexists(path):
        return 0
    if os.path.islink(path):  # a run folder's files are its own: a link there is never followed, never cut
        raise FileRefused(path, "is a symbolic link; a run folder's files are its own: not followed")
    size = check_regular(path, what="records file").st_size  # a FIFO or a device there: refused, one line
    if size == 0:
        return 0
    with open(path, "rb+") as f:
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return 0
        pos, block, cut = size, 1 << 16, 0
        while pos > 0:  # the last newline, reading backwards in blocks
            start = max(0, pos - block)
            f.seek(start)
            i = f.read(pos - start).rfind(b"\n")
            if i >= 0:
                cut = start + i + 1
                break
            pos = start
        n_torn = size - cut
        complete = False
        if n_torn <= MAX_RECORD_LINE:  # a longer tail is no record: never held in memory whole
            f.seek(cut)
            try:
                complete = is_complete(f.read())
            except (ValidationError, ValueError):
                complete = False
        if complete:  # a whole line that only lacks its newline: keep it
            f.seek(0, os.SEEK_END)
            f.write(b"\n")
            f.flush()
            os.fsync(f.fileno())
            return 0
        t = open_append(path.with_name(torn_name(path.name)), follow=False)
        try:
            f.seek(cut)
            while chunk := f.read(1 << 20):
                os.write(t, chunk)
            os.write(t, b"\n")
        finally:
            os.close(t)
        f.truncate(cut)
        f.flush()
        os.fsync(f.fileno())
    log.warning("%s: cut off a torn last line (%d bytes, kept in %s.torn)", path, n_torn, path.name)
    return n_torn


#: what serialising a record whose values are hostile may raise (pydantic's serialisation error is a ValueError)
_UNWRITABLE = (ValueError, TypeError, RecursionError, OverflowError, UnicodeError)


def _line_problem(line: bytes, max_line: int) -> str | None:
    """Why a records line could not be read back (too long, too many values), or None."""
    if len(line) > max_line:
        return f"it would be a line of {human_size(len(line))}, longer than the {human_size(max_line)} a record may take"
    try:
        check_json_values(line, RECORDS, what="record")
    except FileRefused as e:
        return e.reason
    return None


def record_line(record: Record, *, max_line: int = MAX_RECORD_LINE) -> tuple[bytes, str | None]:
    """The records line of ``record`` (its JSON and a newline) and, when it had to be changed, why; never a
    serialisation error, whatever values a task or a model put in it:

    1. the record as it is;
    2. else the record with its values sanitised (:func:`~kramabench.contracts.values.clean_model`: lone
       surrogates escaped, nesting and size bounded);
    3. else, when even that cannot be written or read back (a line too long, too many values), the task's
       *error record*: its key, status, score and metric as they were scored (so that an unwritable record is
       neither a way out of a 0 nor a lost 1), usage, times and artifacts, error kind ``record_error`` saying
       why, without its answer, steps, transcript and details.
    """
    why: str
    try:
        line = (record.model_dump_json() + "\n").encode("utf-8")
        problem = _line_problem(line, max_line)
        if problem is None:
            return line, None
        why = problem
    except _UNWRITABLE as e:
        why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:500]
    try:
        cleaned = clean_model(record)
        line = (cleaned.model_dump_json() + "\n").encode("utf-8")
        problem = _line_problem(line, max_line)
        if problem is None:
            return line, f"its values were sanitised to be written ({why})"
        why = problem
    except _UNWRITABLE as e:
        why = f"{why}; sanitised: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:1000]
    note = (
        f"the record could not be written ({why}); its answer, steps and transcript are left out: see the run's "
        "log and calls.jsonl"
    )
    keep = {
        "run_id",
        "setting",
        "domain",
        "task_id",
        "subtask_id",
        "attempt",
        "status",
        "system",
        "model",
        "answer_type",
        "score",
        "unscored",
        "metric",
        "subtask_scores",
        "usage",
        "wall_s",
        "started_at",
        "finished_at",
        "difficulty",
        "gold",
        "gold_class",
        "artifacts",
    }
    try:
        base = jsonable({k: getattr(record, k) for k in keep})
        error = Record.model_validate(
            {**base, "error": {"kind": "record_error", "message": clean_text(note)}}
        )
    except _UNWRITABLE:  # the kept fields themselves: only the key is left
        error = Record.model_validate(
            {
                "run_id": clean_text(str(record.run_id)),
                "setting": record.setting,
                "domain": clean_text(str(record.domain)),
                "task_id": clean_text(str(record.task_id)),
                "subtask_id": clean_optional(record.subtask_id),
                "attempt": record.attempt,
                "status": "error",
                "system": clean_text(str(record.system)),
                "unscored": True,
                "error": OutcomeError(kind="record_error", message=clean_text(note)),
            }
        )
    return (error.model_dump_json() + "\n").encode("utf-8"), note


__all__ = [
    "MAX_RECORD_LINE", "ReadResult", "iter_records", "read_records", "record_line", "repair_torn_tail",
]  # fmt: skip
