"""What a run saves: ``results/<run_id>/manifest.json`` and ``records.jsonl`` (one Record per line).

Records are keyed by (setting, task_id, subtask_id, attempt). They are appended atomically, one JSON
line each; resume skips keys that already have a finished record. Every field opens in pandas
(``pandas.read_json(path, lines=True)``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kramabench.contracts.system import OutcomeError, SettingName, SystemUsage

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


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    setting: SettingName = "end-to-end"
    domain: str
    task_id: str
    subtask_id: str | None = None
    attempt: int = 0
    status: Literal["ok", "error"] = Field(description="ok: the system produced an answer; error: see `error`")
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
        None, description="the task's class in the errata data (reproduces, gold-defect, ...); None: not classified"
    )

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
    workload: dict[str, Any] = Field(default_factory=dict, description="name, root, domains, content hashes, version")
    errata_applied: list[dict[str, Any]] = Field(default_factory=list)
    system: str
    system_options: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None
    judge: str | None = None
    sandbox: dict[str, Any] = Field(default_factory=dict, description="backend, image, python and package versions")
    packages: dict[str, str] = Field(default_factory=dict)
    git_revision: str | None = None
    seed: int | None = None
    concurrency: int = 1
    status: Literal["running", "finished", "interrupted"] = "running"
    stop_reason: str | None = Field(None, description="why an interrupted run stopped early (a fatal model error)")
    options: dict[str, Any] = Field(
        default_factory=dict, description="run options as given (limits, limit, lake view, ...); used by --resume"
    )
    resumed_at: list[datetime] = Field(default_factory=list)
    lake_view: str | None = Field(None, description="how systems saw the lake: hardlink, copy or direct")
    counts: dict[str, Any] = Field(default_factory=dict, description="records, errors, cost at the last update")


@dataclass
class ReadResult:
    records: list[Record] = field(default_factory=list)
    #: 1-based line numbers that could not be read, with the reason
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    #: the file ended in the middle of a line (a write cut by a crash)
    torn_tail: bool = False


def read_records(path: Path) -> ReadResult:
    """Read a ``records.jsonl`` tolerantly: a torn last line or an invalid line is reported, not raised."""
    out = ReadResult()
    if not path.exists():
        return out
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        out.torn_tail = True
    lines = data.split(b"\n")
    for i, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            out.records.append(Record.model_validate_json(raw))
        except (ValidationError, ValueError) as e:
            reason = "torn last line (the run was killed while writing it)" if (
                i == len(lines) and out.torn_tail
            ) else f"invalid record: {str(e).splitlines()[0]}"
            out.bad_lines.append((i, reason))
    if out.bad_lines:
        for ln, why in out.bad_lines:
            log.warning("%s line %d: %s", path, ln, why)
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

    if not data.strip():
        raise ValueError(f"{path}: the manifest is empty (the run folder is damaged); start a new run")
    try:
        doc = json.loads(data)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: the manifest is not text (binary bytes); start a new run") from None
    except json.JSONDecodeError as e:
        # the data ends inside the JSON (its end reached, or a string never closed: json names its start)
        cut = e.pos >= len(data.rstrip()) - 1 or e.msg.startswith("Unterminated string")
        what = "is cut short (it ends in the middle of its JSON)" if cut else f"is not valid JSON ({e.msg})"
        raise ValueError(f"{path}: the manifest {what} at line {e.lineno}, column {e.colno}; the run folder is "
                         "damaged (a copy cut short, a full disk): restore the file or start a new run") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: the manifest holds a JSON {type(doc).__name__}, not an object; start a new run")
    try:
        return Manifest.model_validate(doc)
    except ValidationError as e:
        probs = []
        for er in e.errors()[:3]:
            loc = ".".join(str(x) for x in er.get("loc", ())) or "(top)"
            probs.append(f"field '{loc}' is missing" if er.get("type") == "missing" else f"field '{loc}': {er.get('msg')}")
        more = f" and {e.error_count() - 3} more" if e.error_count() > 3 else ""
        raise ValueError(f"{path}: the manifest is not one kramabench can read: {'; '.join(probs)}{more}") from None


def repair_torn_tail(path: Path, is_complete: Callable[[bytes], bool]) -> int:
    """Make an append-only JSON-lines file safe to append to after a crash: a last line without its
    newline is either a complete line (``is_complete`` accepts it; the newline is added) or a torn one,
    moved aside to ``<name>.torn`` and cut off, so that the next line never glues onto it. Returns the
    number of bytes cut (0 when nothing was torn)."""
    import os

    if not path.exists() or path.stat().st_size == 0:
        return 0
    size = path.stat().st_size
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
        f.seek(cut)
        torn = f.read()
        try:
            complete = is_complete(torn)
        except (ValidationError, ValueError):
            complete = False
        if complete:  # a whole line that only lacks its newline: keep it
            f.seek(0, os.SEEK_END)
            f.write(b"\n")
            f.flush()
            os.fsync(f.fileno())
            return 0
        with open(path.with_name(path.name + ".torn"), "ab") as t:
            t.write(torn + b"\n")
        f.truncate(cut)
        f.flush()
        os.fsync(f.fileno())
    log.warning("%s: cut off a torn last line (%d bytes, kept in %s.torn)", path, len(torn), path.name)
    return len(torn)


#: deepest nesting of a system's answer kept in a record (deeper parts are replaced by a note)
MAX_ANSWER_DEPTH = 64


def jsonable(v: Any, depth: int = 0) -> Any:
    """Make a system's value JSON-safe (numpy scalars, tuples, sets, NaN kept as float); nesting deeper
    than :data:`MAX_ANSWER_DEPTH` becomes a note (a 100,000-deep list must not exhaust the stack)."""
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if depth >= MAX_ANSWER_DEPTH and isinstance(v, dict | list | tuple | set | frozenset):
        return f"<nested deeper than {MAX_ANSWER_DEPTH} levels: cut>"
    if isinstance(v, dict):
        return {str(k): jsonable(x, depth + 1) for k, x in v.items()}
    if isinstance(v, list | tuple | set | frozenset):
        return [jsonable(x, depth + 1) for x in v]
    item = getattr(v, "item", None)  # numpy scalar
    if callable(item):
        try:
            return jsonable(item(), depth)
        except (TypeError, ValueError):
            pass
    tolist = getattr(v, "tolist", None)  # numpy array, pandas Series
    if callable(tolist):
        try:
            return jsonable(tolist(), depth)
        except (TypeError, ValueError):
            pass
    if isinstance(v, Path):
        return str(v)
    return repr(v)


__all__ = ["GoldName", "GoldScore", "Manifest", "ReadResult", "Record", "jsonable", "parse_manifest", "repair_torn_tail", "latest_records", "read_records", "unit_key"]
