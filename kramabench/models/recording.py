"""Record every model call of a run, so that the run can be replayed offline.

What the runner does (the whole API)::

    from kramabench.models import recording

    recorder = recording.CallRecorder(run_dir)          # appends to <run_dir>/calls.jsonl
    ...
    # in the worker thread that solves (and scores) one task:
    with recording.scope(task_key, recorder):          # e.g. task_key = "end-to-end/archeology-easy-1"
        output = system.solve(task_input)               # every Model.complete(...) inside is recorded
        ...judge calls, if they should be replayable too (same scope, or a scope of their own)
    ...
    recorder.close()                                    # flush + fsync (also a context manager)

A scope numbers the calls made inside it (0, 1, 2, ...); ``replay/<run_dir>`` serves the recorded
answer of call ``i`` of task ``k`` in a later run that enters ``scope(k)`` again and makes the same
calls in the same order. The scope lives in a :mod:`contextvars` variable: it is per thread, and a
thread pool does not inherit it, so enter it inside the worker. A system that issues calls from its own
threads must run them in ``contextvars.copy_context()`` (they then share the numbering, whose order
is only reproducible when the calls are made in a deterministic order).

Calls outside any scope work normally and are not recorded. One JSON line per finished call (success
or final error), written under a lock and flushed at once, so an interrupted run keeps its calls;
:func:`load_calls` reads them back (the last line wins for a repeated (task_key, call_index), as after a
resumed task). The lines open in pandas: ``pandas.read_json(run_dir / "calls.jsonl", lines=True)``.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.model import AttemptFailure, ChatMessage, ModelOptions, Usage
from kramabench.contracts.values import clean_model, clean_text, jsonable
from kramabench.files import LongLine, human_size, iter_lines, open_append, open_regular, sha256_hex
from kramabench.models.cache import answer_options
from kramabench.runfolder import CALLS, MAX_RECORD_LINE, repair_torn_tail

logger = logging.getLogger(__name__)

CALLS_FILE = CALLS


def request_hash(messages: list[ChatMessage], options: ModelOptions) -> str:
    """SHA-256 of the messages and the options that shape the answer (not the model: a replay serves
    the recorded answer whatever model id the replaying run uses)."""
    payload = jsonable({"messages": [m.model_dump() for m in messages], "options": answer_options(options)})
    raw = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return sha256_hex(raw)


class CallErrorInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str
    message: str
    attempts: int = 1


class CallRecord(BaseModel):
    """One model call as stored in ``calls.jsonl``."""

    model_config = ConfigDict(
        extra="forbid", protected_namespaces=()
    )  # model_* fields (pydantic < 2.10 warned)

    task_key: str
    call_index: int
    request_hash: str
    model_id: str
    provider: str
    model: str
    base_url: str | None = None
    messages: list[ChatMessage]
    options: dict[str, Any]
    text: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    latency_s: float = 0.0
    finish_reason: str | None = None
    response_model: str | None = None
    cached: bool = False
    attempts: int = 0
    failed_attempts: list[AttemptFailure] = Field(
        default_factory=list, description="attempts that failed and were tried again (a timeout, a 429, ...)"
    )
    cut_from_chars: int | None = Field(
        default=None, description="the reply was this long; `text` holds its first part"
    )
    error: CallErrorInfo | None = None
    started_at: datetime


class RecordsCalls(Protocol):
    """Where a scope's calls go: :class:`CallRecorder` (a run's ``calls.jsonl``), or a list a Ray worker sends back."""

    def write(self, record: CallRecord) -> None: ...


class CallRecorder:
    """Appends :class:`CallRecord` lines to ``<run_dir>/calls.jsonl``; thread-safe."""

    def __init__(self, run_dir: Path | str, filename: str = CALLS_FILE) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.run_dir / filename
        self._lock = threading.Lock()
        # a line torn by a killed run is moved aside (calls.jsonl.torn), so the next call starts a new line
        repair_torn_tail(self.path, lambda raw: CallRecord.model_validate_json(raw) is not None)
        # a regular file only (a FIFO would block, a device swallow the calls); closed in close()
        self._fh = os.fdopen(open_append(self.path, follow=False), "a", encoding="utf-8")

    def write(self, record: CallRecord) -> None:
        """Append one call. Its values are sanitised when they cannot be written as they are (a lone surrogate, a
        nesting too deep: :func:`~kramabench.contracts.values.clean_model`); a call that still cannot be is written
        without its messages and reply, its error saying why: every call has its line."""
        line = call_line(record)
        with self._lock:
            if self._fh.closed:
                raise RuntimeError(f"call recorder for {self.path} is closed")
            self._fh.write(line)
            self._fh.flush()

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.flush()
                try:
                    os.fsync(self._fh.fileno())
                except OSError:
                    pass
                self._fh.close()

    def __enter__(self) -> CallRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_UNWRITABLE = (ValueError, TypeError, RecursionError, OverflowError, UnicodeError)


def call_line(record: CallRecord) -> str:
    """The ``calls.jsonl`` line of a call (see :meth:`CallRecorder.write`)."""
    try:
        return record.model_dump_json() + "\n"
    except _UNWRITABLE as e:
        why = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}"[:500]
    try:
        cleaned = clean_model(record)
        line = cleaned.model_dump_json() + "\n"
        logger.warning(
            "call %s #%s: its values were sanitised to be written (%s)",
            cleaned.task_key,
            cleaned.call_index,
            why,
        )
        return line
    except _UNWRITABLE as e:
        why = f"{why}; sanitised: {type(e).__name__}: {(str(e).splitlines() or [''])[0]}"[:1000]

    def text(v: object) -> str:
        return clean_text(v if isinstance(v, str) else repr(v))[:1000]

    started = record.started_at if isinstance(record.started_at, datetime) else datetime.now(timezone.utc)
    index = record.call_index if isinstance(record.call_index, int) else -1
    bare = CallRecord(
        task_key=text(record.task_key),
        call_index=index,
        request_hash=text(record.request_hash),
        model_id=text(record.model_id),
        provider=text(record.provider),
        model=text(record.model),
        messages=[],
        options={},
        started_at=started,
        error=CallErrorInfo(
            kind="other",
            message=f"the call could not be recorded ({clean_text(why)}); its "
            "messages and reply are left out",
        ),
    )
    logger.warning(
        "call %s #%s: %s", bare.task_key, bare.call_index, bare.error.message if bare.error else why
    )
    return bare.model_dump_json() + "\n"


@dataclass
class CallScope:
    """The calls of one task: its key, its recorder and the running call index."""

    task_key: str
    recorder: RecordsCalls | None = None
    _next: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: replay notes of the calls made in this scope (a replayed call served although an observation differed)
    notes: list[str] = field(default_factory=list)

    def add_note(self, note: str) -> None:
        with self._lock:
            self.notes.append(note)

    def next_index(self) -> int:
        with self._lock:
            i = self._next
            self._next += 1
            return i

    @property
    def calls_made(self) -> int:
        return self._next


_scope: contextvars.ContextVar[CallScope | None] = contextvars.ContextVar(
    "kramabench_call_scope", default=None
)


@contextmanager
def scope(task_key: str, recorder: RecordsCalls | None = None) -> Iterator[CallScope]:
    """Number (and, with a recorder, record) the model calls made inside, under ``task_key``."""
    if not task_key:
        raise ValueError("a call scope needs a non-empty task key")
    s = CallScope(task_key=task_key, recorder=recorder)
    token = _scope.set(s)
    try:
        yield s
    finally:
        _scope.reset(token)


def current_scope() -> CallScope | None:
    return _scope.get()


@dataclass(frozen=True)
class CallInfo:
    """The call being made right now (set around a provider's ``complete``; read by replay)."""

    task_key: str | None
    call_index: int | None
    request_hash: str


_call: contextvars.ContextVar[CallInfo | None] = contextvars.ContextVar(
    "kramabench_current_call", default=None
)


def current_call() -> CallInfo | None:
    return _call.get()


@contextmanager
def _calling(info: CallInfo) -> Iterator[None]:
    token = _call.set(info)
    try:
        yield
    finally:
        _call.reset(token)


#: a calls.jsonl line longer than this is skipped (a call record holds one reply, capped by the recorder)
MAX_CALL_LINE = MAX_RECORD_LINE


def load_calls(run_dir: Path | str, filename: str = CALLS_FILE) -> list[CallRecord]:
    """All call records of a run, in file order. A truncated last line (a killed run) is skipped with a
    warning; any other bad line is an error naming the file and line."""
    path = Path(run_dir) / filename
    out: list[CallRecord] = []
    bad: list[int] = []
    with open_regular(path, what="calls file") as fh:  # streamed; a FIFO or a device: FileRefused, one line
        for n, line, ended in iter_lines(fh, max_line=MAX_CALL_LINE):
            if isinstance(line, LongLine):
                logger.warning(
                    "%s:%d: a line of %s, longer than a call record may be; skipped",
                    path,
                    n,
                    human_size(line.size),
                )
                bad.append(n)
                continue
            if not line.strip():
                continue
            try:
                out.append(CallRecord.model_validate_json(line))
            except ValueError as exc:
                if not ended:
                    logger.warning("%s:%d: incomplete last line skipped (interrupted run?)", path, n)
                    continue
                logger.debug("%s:%d: not a call record: %s", path, n, exc)
                bad.append(n)
    if bad:
        # e.g. a torn line an older version glued the next call onto: those calls are not replayed (the tasks
        # that made them get a replay_mismatch), every other call is
        logger.warning(
            "%s: %d line(s) are not call records and are skipped (lines %s)",
            path,
            len(bad),
            ", ".join(map(str, bad[:10])),
        )
    if bad and not out:
        raise ValueError(f"{path}: no line is a call record (lines {', '.join(map(str, bad[:5]))} are not)")
    return out


__all__ = [
    "CALLS_FILE",
    "CallErrorInfo",
    "CallInfo",
    "CallRecord",
    "CallRecorder",
    "CallScope",
    "call_line",
    "current_call",
    "current_scope",
    "load_calls",
    "request_hash",
    "scope",
]
