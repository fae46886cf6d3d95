"""What a run saves: ``results/<run_id>/manifest.json`` and ``records.jsonl`` (one Record per line).

Records are keyed by (setting, task_id, subtask_id, attempt). They are appended atomically, one JSON
line each; resume skips keys that already have a finished record. Every field opens in pandas
(``pandas.read_json(path, lines=True)``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kramabench.contracts.artifacts import Artifact
from kramabench.contracts.steps import AgentStep
from kramabench.contracts.system import OutcomeError, SettingName, SystemUsage
from kramabench.contracts.values import MAX_DEPTH, clean_model, clean_optional, clean_text, jsonable
from kramabench.files import (
    LINE_BYTES,
    FileRefused,
    LongLine,
    check_json_values,
    check_regular,
    error_where,
    human_size,
    iter_lines,
    open_append,
    open_regular,
)

log = logging.getLogger(__name__)


#: the gold an answer is scored against: ``official`` (the workload files as they are; what the paper scored
#: against) or ``verified`` (official + the reviewed errata)
GoldName = Literal["official", "verified"]


class GoldScore(BaseModel):
    """One answer scored against one gold (a record's other gold: :attr:`Record.other_gold`)."""

    model_config = ConfigDict(extra="forbid")

    gold: GoldName
    expected: Any = None
    answer_type: str | None = None
    score: float | None = None
    unscored: bool = False
    metric: str | None = None
    score_details: dict[str, Any] = Field(default_factory=dict)
    subtask_scores: dict[str, float | None] = Field(default_factory=dict)
    subtask_details: dict[str, dict[str, Any]] = Field(default_factory=dict)


class BenchmarkNote(BaseModel):
    """Why the benchmark itself cannot support a task as written (not the system's doing): a data source
    missing from the lake, one documented absent upstream, a task the errata review classes unreproducible,
    an official solution that needs a module the sandbox lacks. Such a task is run and scored as the paper
    does; the note makes a zero it causes visible (:mod:`kramabench.workload.notes`)."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(
        description="data_source_missing, not_reproducible, data_source_outside_lake, "
        "reviewed_unreproducible, solution_needs_module"
    )
    message: str = Field(description="what is missing, in words (the file, the module)")
    subtask_id: str | None = Field(None, description="the subtask whose data source it is; None: the task's")


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    setting: SettingName = "end-to-end"
    domain: str
    task_id: str
    subtask_id: str | None = None
    attempt: int = 0
    status: Literal["ok", "error"] = Field(
        description="ok: the system produced an answer; error: see `error`"
    )
    system: str
    model: str | None = None
    answer_type: str | None = None
    expected: Any = None
    answer: Any = None
    score: float | None = Field(None, description="in [0,1]; None when unscored")
    unscored: bool = False
    metric: str | None = None
    score_details: dict[str, Any] = Field(default_factory=dict)
    subtask_answers: dict[str, Any] = Field(default_factory=dict)
    subtask_scores: dict[str, float | None] = Field(
        default_factory=dict, description="end-to-end only: subtask answers scored, reported apart"
    )
    pipeline_code: str | None = None
    error: OutcomeError | None = None
    usage: SystemUsage = Field(default_factory=SystemUsage)
    wall_s: float = 0.0
    files_read: list[str] = Field(default_factory=list)
    iterations: int = 0
    transcript: list[dict[str, Any]] = Field(default_factory=list)
    steps: list[AgentStep] = Field(
        default_factory=list,
        description="a multi-step system's steps: thought, code, observation, outcome, tokens, time",
    )
    started_at: datetime | None = None
    finished_at: datetime | None = None
    difficulty: str | None = None
    subtask_details: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="per subtask id: metric, details, expected, unscored"
    )
    gold: GoldName | None = Field(
        None,
        description="the gold `expected` and `score` are against: verified (official + errata; the default) or "
        "official (--no-errata); None in records written before both golds were kept (the manifest's "
        "workload.errata tells)",
    )
    other_gold: GoldScore | None = Field(
        None,
        description="the same answer scored against the other gold, when an erratum changed this item's gold "
        "(answer or answer type); absent: `score` holds for both golds",
    )
    gold_class: str | None = Field(
        None,
        description="the task's class in the errata data (reproduces, gold-defect, ...); None: not classified",
    )
    artifacts: list[Artifact] = Field(
        default_factory=list,
        description="files collected from the system's sessions (paths relative to the run folder)",
    )
    benchmark_notes: list[BenchmarkNote] = Field(
        default_factory=list,
        description="why the benchmark cannot support this task as written (a data source missing from the lake, "
        "...); empty: nothing known (records written before the notes were kept have none)",
    )

    @property
    def unsupported(self) -> bool:
        """The benchmark cannot support the task as written (it has a benchmark note)."""
        return bool(self.benchmark_notes)

    @property
    def key(self) -> tuple[str, str, str | None, int]:
        return (self.setting, self.task_id, self.subtask_id, self.attempt)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    created_at: datetime
    finished_at: datetime | None = None
    command: list[str] = Field(default_factory=list)
    setting: SettingName = "end-to-end"
    workload: dict[str, Any] = Field(
        default_factory=dict, description="name, root, domains, content hashes, version"
    )
    errata_applied: list[dict[str, Any]] = Field(default_factory=list)
    system: str
    system_options: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None
    judge: str | None = None
    sandbox: dict[str, Any] = Field(
        default_factory=dict, description="backend, image, python and package versions"
    )
    packages: dict[str, str] = Field(default_factory=dict)
    git_revision: str | None = None
    seed: int | None = None
    concurrency: int = 1
    status: Literal["running", "finished", "interrupted"] = "running"
    stop_reason: str | None = Field(
        None,
        description="why an interrupted run stopped early (SIGTERM or SIGINT received, a fatal model error)",
    )
    interrupted_tasks: list[dict[str, Any]] = Field(
        default_factory=list,
        description="the tasks that were running when the run was interrupted (domain, setting, task_id, "
        "subtask_id): not recorded, --resume runs them again",
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="run options as given (limits, limit, lake view, ...); used by --resume",
    )
    resumed_at: list[datetime] = Field(default_factory=list)
    lake_view: str | None = Field(None, description="how systems saw the lake: hardlink, copy or direct")
    counts: dict[str, Any] = Field(
        default_factory=dict, description="records, errors, cost at the last update"
    )


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


def unit_key(r: Record) -> tuple[str, str, str, str | None]:
    """(domain, setting, task id, subtask id): one unit of work. The domain is part of it because two
    domains of a root may share task ids (the official ``legal`` and ``legal-tiny``)."""
    return (r.domain, r.setting, r.task_id, r.subtask_id)


def latest_records(records: list[Record]) -> list[Record]:
    """One record per (domain, setting, task, subtask): the highest attempt (for a retried error)."""
    best: dict[tuple[str, str, str, str | None], Record] = {}
    for r in records:
        k = unit_key(r)
        if k not in best or r.attempt >= best[k].attempt:
            best[k] = r
    return list(best.values())


def parse_manifest(data: bytes, path: Path | str) -> Manifest:
    """A manifest from its bytes; problems in plain words: empty, cut short, not JSON, missing or bad fields."""
    import json
    import re

    if not data.strip():
        raise ValueError(f"{path}: the manifest is empty (the run folder is damaged); start a new run")
    try:
        check_json_values(data, path, what="manifest")
    except FileRefused as e:
        raise ValueError(str(e)) from None
    try:
        doc = json.loads(data)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: the manifest is not text (binary bytes); start a new run") from None
    except json.JSONDecodeError as e:
        rest = data.rstrip()[
            e.pos :
        ]  # the file ends inside a string, a number or a literal (null, true): cut
        cut = (
            len(rest) <= 1
            or e.msg.startswith("Unterminated string")
            or bool(re.fullmatch(rb"[-+.\w]+", rest))
        )
        what = "is cut short (it ends in the middle of its JSON)" if cut else f"is not valid JSON ({e.msg})"
        raise ValueError(
            f"{path}: the manifest {what} at line {e.lineno}, column {e.colno}; the run folder is "
            "damaged (a copy cut short, a full disk): restore the file or start a new run"
        ) from None
    if not isinstance(doc, dict):
        raise ValueError(
            f"{path}: the manifest holds a JSON {type(doc).__name__}, not an object; start a new run"
        )
    try:
        return Manifest.model_validate(doc)
    except ValidationError as e:
        probs = []
        for er in e.errors()[:3]:
            loc = error_where(er) or "(top)"
            probs.append(
                f"field '{loc}' is missing"
                if er.get("type") == "missing"
                else f"field '{loc}': {er.get('msg')}"
            )
        more = f" and {e.error_count() - 3} more" if e.error_count() > 3 else ""
        raise ValueError(
            f"{path}: the manifest is not one kramabench can read: {'; '.join(probs)}{more}"
        ) from None


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
        t = open_append(path.with_name(path.name + ".torn"), follow=False)
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
        check_json_values(line, "records.jsonl", what="record")
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
        error = Record(
            run_id=clean_text(str(record.run_id)),
            setting=record.setting,
            domain=clean_text(str(record.domain)),
            task_id=clean_text(str(record.task_id)),
            subtask_id=clean_optional(record.subtask_id),
            attempt=record.attempt,
            status="error",
            system=clean_text(str(record.system)),
            unscored=True,
            error=OutcomeError(kind="record_error", message=clean_text(note)),
        )
    return (error.model_dump_json() + "\n").encode("utf-8"), note


#: deepest nesting of a system's answer kept in a record (deeper parts are replaced by a note)
MAX_ANSWER_DEPTH = MAX_DEPTH


__all__ = [
    "MAX_RECORD_LINE", "BenchmarkNote", "GoldName", "GoldScore", "Manifest", "ReadResult", "Record", "iter_records",
    "jsonable", "latest_records", "parse_manifest", "read_records", "record_line", "repair_torn_tail", "unit_key",
]  # fmt: skip
