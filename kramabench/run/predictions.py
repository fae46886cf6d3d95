"""Scoring a file of predictions against a workload (what ``kramabench score`` does).

Predictions file: JSON lines, one object per task::

    {"task_id": "legal-easy-3", "answer": 13.1628, "subtask_answers": {"legal-easy-3-1": 42}}

* ``answer`` is any JSON value (a number, a string, a list, ``null`` for no answer);
* ``subtask_answers`` (optional) maps official subtask ids to answers;
* a run's ``records.jsonl`` has the same fields and is read as is; a record with a ``subtask_id``
  is the answer to that subtask; of several records of one task with different ``attempt`` numbers (a
  retried task) the highest attempt counts, without a duplicate warning;
* blank lines are skipped; a line that is not a JSON object, or has no ``task_id``, is reported
  (file and line) and skipped; a line without an ``answer`` key (and without subtask answers) is reported
  and scored as no answer; a task id given twice is reported and the last line wins; a UTF-8 byte-order
  mark is ignored, and a file that is one JSON array of such objects is read like JSON lines;
* a prediction for a task the workload does not have is reported (``unknown_task``), and an unknown
  subtask id likewise (``unknown_subtask``).

Scoring: every main task of the selected domains gets a score; a task without a prediction scores 0 with
reason ``missing``. Subtasks are scored when at least one prediction carries subtask answers; then a
subtask without an answer scores 0 (``missing``) too. Subtask scores are summarised apart.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kramabench.contracts.artifacts import Artifact
from kramabench.contracts.scoring import CountsCalls, Score
from kramabench.files import (
    MB,
    FileRefused,
    LongLine,
    check_json_values,
    human_size,
    iter_lines,
    open_regular,
)
from kramabench.scorers.judge import Judge
from kramabench.scorers.paths import LakePaths, canonical_lake_paths
from kramabench.scorers.percent import normalise_percent as rescale_percent
from kramabench.scorers.registry import score
from kramabench.scorers.stats import ScoredItem, Summary, summarize
from kramabench.workload.models import Task, Workload

if TYPE_CHECKING:
    from kramabench.run.floors import FloorCache

logger = logging.getLogger(__name__)


class Prediction(BaseModel):
    model_config = ConfigDict(extra="ignore")

    task_id: str
    domain: str | None = Field(None, description="the domain the line names (a run's records name theirs)")
    answer: Any = None
    subtask_answers: dict[str, Any] = Field(default_factory=dict)
    has_answer: bool = Field(True, description="False when only subtask answers were given")
    has_subtasks: bool = Field(False, description="the line carried subtask answers")
    line: int = 0
    artifacts: list[Artifact] = Field(
        default_factory=list,
        description="files the line names (a run record's artifacts), paths made absolute: "
        "a relative path is read from the predictions file's folder (the run folder for records.jsonl)",
    )


class Problem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(
        description="bad_line, no_task_id, no_answer, duplicate_task, unknown_task, bad_artifact, "
        "unknown_subtask, empty_file"
    )
    message: str
    file: str | None = None
    line: int | None = None
    task_id: str | None = None


#: problems of one code kept (and printed) one by one; further ones are only counted (``problem_counts``)
MAX_PROBLEMS_PER_CODE = 20


class Problems(list[Problem]):
    """The problems of scoring, at most :data:`MAX_PROBLEMS_PER_CODE` of each code kept; ``counts`` has them
    all by code (2 million bad lines make 20 problems and one count, not 2 million warnings)."""

    def __init__(self, items: Iterable[Problem] = ()) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}
        for p in items:
            self.append(p)

    def append(self, p: Problem) -> None:
        n = self.counts.get(p.code, 0)
        self.counts[p.code] = n + 1
        if n < MAX_PROBLEMS_PER_CODE:
            super().append(p)

    def extend(self, items: Iterable[Problem]) -> None:
        for p in items:
            self.append(p)
        extra = items.counts if isinstance(items, Problems) else None
        if extra is not None:  # counted beyond what the other list kept
            kept: dict[str, int] = {}
            for p in items:
                kept[p.code] = kept.get(p.code, 0) + 1
            for code, n in extra.items():
                self.counts[code] = self.counts.get(code, 0) + n - kept.get(code, 0)

    def __add__(self, other: Iterable[Problem]) -> Problems:  # type: ignore[override]
        out = Problems()
        out.extend(self)
        out.extend(other)
        return out

    def left_out(self) -> dict[str, int]:
        """Per code, how many problems were counted but not kept."""
        kept: dict[str, int] = {}
        for p in self:
            kept[p.code] = kept.get(p.code, 0) + 1
        return {c: n - kept.get(c, 0) for c, n in self.counts.items() if n > kept.get(c, 0)}


class PredictionSet(dict[str, Prediction]):
    """Predictions by task id (lines without a domain), plus ``scoped``: by (domain, task id) for lines that name
    their domain (a run's records), so that two domains sharing a task id keep both."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scoped: dict[tuple[str, str], Prediction] = {}
        #: valid predictions read, kept or not (those for tasks the workload lacks are counted, not kept)
        self.n_read = 0

    def for_task(self, domain: str, task_id: str) -> Prediction | None:
        return self.scoped.get((domain, task_id)) or self.get(task_id)

    def all(self) -> Iterator[Prediction]:
        yield from self.values()
        yield from self.scoped.values()

    def __bool__(self) -> bool:
        return bool(len(self) or self.scoped or self.n_read)


class ScoreReport(BaseModel):
    """Everything ``kramabench score --output`` writes."""

    model_config = ConfigDict(extra="forbid")

    workload: str
    domains: list[str]
    predictions: str
    judge: dict[str, Any] | None = None
    items: list[ScoredItem] = Field(default_factory=list)
    summary: Summary
    problems: list[Problem] = Field(default_factory=list)
    problem_counts: dict[str, int] = Field(
        default_factory=dict,
        description=f"problems by code, all of them (``problems`` keeps {MAX_PROBLEMS_PER_CODE} of each)",
    )
    subtasks_scored: bool = False
    comparison: dict[str, Any] | None = None
    gold: str = Field(
        "verified",
        description="the gold of `items` and `summary`: verified (official + errata) or "
        "official (--no-errata)",
    )
    other_gold_items: list[ScoredItem] = Field(
        default_factory=list,
        description="the answers whose gold an erratum changed, scored against the other gold",
    )
    summaries: dict[str, Summary] = Field(
        default_factory=dict, description="by gold (official: the paper-comparable number; verified)"
    )
    floors: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="by gold: the scores of the constant answers (zero, empty, idk) on the same tasks, the bounded "
        "score (numeric-approximate within band) of the predictions and of the constant 0, over n tasks",
    )
    errata_file: str | None = None
    normalise_percent: bool = Field(
        False, description="scored with the percent-scale normalisation (kramabench.scorers.percent)"
    )
    classes: dict[str, str] = Field(
        default_factory=dict, description="task id -> reviewed class (errata review)"
    )
    excluded_unsupported: dict[str, list[str]] = Field(
        default_factory=dict,
        description="--exclude-unsupported: per domain, the tasks the benchmark cannot support "
        "(kramabench.workload.notes) left out of `items` and every summary",
    )


#: deepest nesting of lists and objects accepted in a prediction (a real answer needs a handful of levels;
#: a 100,000-deep list would exhaust the interpreter's stack in the parser or a scorer)
MAX_DEPTH = 64

#: what a predictions line must look like (said when no line does)
EXPECTED_SHAPE = (
    'JSON lines like {"task_id": "<task id>", "answer": <value>, "subtask_answers": {...}} '
    "(or a run's records.jsonl)"
)


#: a JSON string, escapes included (written so that ``re`` runs through its body without backtracking)
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_EMPTY_PAIR = re.compile(r"\[\]|\{\}")


def _depth_scan(text: str, limit: int) -> int:
    """:func:`nesting_depth` one character at a time (any text, however malformed)."""
    depth = deepest = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def _depth_passes(text: str, limit: int) -> int | None:
    """:func:`nesting_depth` of text whose strings are terminated and whose brackets pair up, in a few passes
    of ``re`` (C speed): strings removed, then everything but brackets, then every innermost ``[]``/``{}``
    once per pass, so the number of passes is the depth. None when the text is not like that (an
    unterminated string, mismatched brackets) or nests deeper than ``limit``: :func:`_depth_scan` decides."""
    if '"' in text:
        text = _JSON_STRING.sub("", text)
        if '"' in text:  # an unterminated string
            return None
    brackets = _NOT_BRACKET.sub("", text)
    depth = 0
    while brackets:
        shorter = _EMPTY_PAIR.sub("", brackets)
        if len(shorter) == len(brackets) or depth >= limit:
            return None
        brackets = shorter
        depth += 1
    return depth


def nesting_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """How deep ``[`` and ``{`` nest in JSON ``text`` (strings skipped), counted without recursion and
    stopping once past ``limit``."""
    depth = _depth_passes(text, limit)
    return _depth_scan(text, limit) if depth is None else depth


def _parse(text: str) -> tuple[Any, bool]:
    """json.loads, refusing (ValueError) nesting deeper than :data:`MAX_DEPTH` before parsing; and whether
    the text nests less deep than that (then no value in it is deeper than :func:`_too_deep` allows)."""
    if text.count("[") + text.count("{") < MAX_DEPTH:  # no deeper than its number of brackets
        return json.loads(text), True
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels of lists/objects; not a prediction")
    return json.loads(text), depth < MAX_DEPTH


#: a predictions file that is one JSON array is parsed whole up to this size; a larger one is read as JSON lines
MAX_ARRAY_BYTES = 64 * MB
#: a predictions line longer than this is a problem, never parsed (nor held in memory whole)
MAX_LINE_BYTES = 64 * MB


def _lines(path: Path) -> Iterable[tuple[int, Any, bool]]:
    """(line number, parsed JSON or the ValueError, known to nest less than MAX_DEPTH) of each non-blank
    line, streamed; a file that is one JSON array of objects (a common export, up to :data:`MAX_ARRAY_BYTES`)
    gives its elements, numbered from 1. Not a regular file: :class:`~kramabench.files.FileRefused`."""
    with open_regular(path, what="predictions file") as fh:
        head = fh.read(4096)
        stripped = head.removeprefix(b"\xef\xbb\xbf").lstrip()
        size = os.fstat(fh.fileno()).st_size
        if stripped.startswith(b"[") and size <= MAX_ARRAY_BYTES:
            text = (head + fh.read(MAX_ARRAY_BYTES)).decode("utf-8-sig", errors="replace")
            check_json_values(text, path, what="predictions file")  # a FileRefused: one line, not parsed
            try:
                whole = json.loads(text) if nesting_depth(text) <= MAX_DEPTH + 1 else None
            except (ValueError, RecursionError):
                whole = None
            if isinstance(whole, list):
                yield from ((n, obj, False) for n, obj in enumerate(whole, start=1))
                return
            del text, whole
        fh.seek(0)
        for n, raw, _ended in iter_lines(fh, max_line=MAX_LINE_BYTES):
            if isinstance(raw, LongLine):
                yield (
                    n,
                    ValueError(
                        f"a line of {human_size(raw.size)}, longer than the {human_size(MAX_LINE_BYTES)} "
                        "a prediction may take; not read"
                    ),
                    True,
                )
                continue
            if n == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")  # a BOM (Windows tools) is not data
            if not raw.strip():
                continue
            line = raw.decode("utf-8", errors="replace").rstrip("\r")
            try:
                check_json_values(line, path, what="prediction")
            except FileRefused as e:  # millions of tiny values on one line: gigabytes once parsed
                yield n, ValueError(e.reason), True
                continue
            try:
                obj, shallow = _parse(line)
                yield n, obj, shallow
            except (ValueError, RecursionError) as e:
                yield n, e if isinstance(e, ValueError) else ValueError(f"too deeply nested ({e})"), True


class PredictionsShapeError(ValueError):
    """No line of a predictions file has the expected shape: it is another kind of file."""


def check_shape(path: Path, preds: dict[str, Any], problems: list[Problem]) -> None:
    """Refuse a file of which no line is a prediction (a CSV, ``{id, prediction}`` or ``{task: answer}``
    lines...): scoring it would print a table of zeros. Raises :class:`PredictionsShapeError` (one line)."""
    bad = [p for p in problems if p.code in ("bad_line", "no_task_id")]
    if preds or not bad:
        return
    first = bad[0]
    raise PredictionsShapeError(
        f"{path}: no line is a prediction (line {first.line}: {first.message[:120]}); expected {EXPECTED_SHAPE}"
    )


def _too_deep(obj: Any, limit: int = MAX_DEPTH) -> bool:
    """Nesting of lists/dicts deeper than ``limit``, checked without recursion."""
    stack = [(obj, 1)]
    while stack:
        v, d = stack.pop()
        if d > limit:
            return True
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return False


def read_predictions(
    path: Path, workloads: Iterable[Workload] | None = None
) -> tuple[PredictionSet, Problems]:
    """Read a predictions JSON-lines file, streamed. Bad lines become problems, never exceptions (at most
    :data:`MAX_PROBLEMS_PER_CODE` kept per code, all counted). With ``workloads``, predictions for tasks they
    do not have are reported (``unknown_task``) and not kept: memory follows the workload, not the file.
    A file that is not a regular file is a :class:`~kramabench.files.FileRefused` (an OSError, one line)."""
    preds = PredictionSet()
    problems = Problems()
    seen: dict[tuple[str | None, str], tuple[int, int | None]] = {}
    known: set[str] | None = None
    parents: dict[str, str] = {}
    if workloads is not None:
        known = set()
        for wl in workloads:
            for t in wl.tasks:
                known.add(t.id)
                for st in t.subtasks:
                    parents.setdefault(st.id, t.id)
    f = str(path)
    n_lines = 0
    for n, obj, shallow in _lines(path):
        n_lines += 1
        if isinstance(obj, ValueError):
            problems.append(Problem(code="bad_line", message=f"not JSON: {obj}", file=f, line=n))
            continue
        if not shallow and isinstance(obj, (dict, list)) and _too_deep(obj):
            problems.append(
                Problem(
                    code="bad_line",
                    message=f"nested deeper than {MAX_DEPTH} levels; not a prediction",
                    file=f,
                    line=n,
                )
            )
            continue
        if not isinstance(obj, dict):
            problems.append(
                Problem(
                    code="bad_line", message=f"a JSON {type(obj).__name__}, not an object", file=f, line=n
                )
            )
            continue
        tid = obj.get("task_id")
        if not isinstance(tid, str) or not tid:
            keys = ", ".join(str(k)[:40] for k in list(obj)[:6]) or "none"
            what = "missing" if "task_id" not in obj else f"{type(tid).__name__} {tid!r}"[:40]
            problems.append(
                Problem(
                    code="no_task_id",
                    message=f"no task_id (a non-empty string; here {what}; keys: {keys})",
                    file=f,
                    line=n,
                )
            )
            continue
        preds.n_read += 1
        if known is not None and tid not in known:
            problems.append(_unknown_task(tid, parents.get(tid), tid[:200], file=f, line=n))
            continue
        dom = obj.get("domain")
        dom = dom if isinstance(dom, str) and dom else None
        # keyed by task id (preds) or by (domain, task id) (preds.scoped), as ``key`` below
        store: dict[Any, Prediction] = preds if dom is None else preds.scoped
        key = tid if dom is None else (dom, tid)
        subs = obj.get("subtask_answers")
        if subs is not None and not isinstance(subs, dict):
            problems.append(
                Problem(
                    code="bad_line",
                    message="subtask_answers is not an object; ignored",
                    file=f,
                    line=n,
                    task_id=tid,
                )
            )
            subs = None
        sub_id = obj.get("subtask_id")
        if isinstance(sub_id, str) and sub_id:  # a run record of the subtask setting
            p = store.setdefault(key, Prediction(task_id=tid, domain=dom, line=n, has_answer=False))
            p.subtask_answers[sub_id] = obj.get("answer")
            p.has_subtasks = True
            continue
        if "answer" not in obj and subs is None:
            keys = ", ".join(str(k)[:40] for k in list(obj)[:6])
            problems.append(
                Problem(
                    code="no_answer",
                    message=f"{tid}: no 'answer' key (keys: {keys}); scored as no answer",
                    file=f,
                    line=n,
                    task_id=tid,
                )
            )
        attempt = obj.get("attempt")
        attempt = attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else None
        if (dom, tid) in seen:
            prev_line, prev_attempt = seen[(dom, tid)]
            if attempt is not None and prev_attempt is not None and attempt != prev_attempt:
                # a run's records.jsonl: a retried task has one record per attempt; the latest attempt counts
                if attempt < prev_attempt:
                    continue
            else:
                where = f" of {dom}" if dom else ""
                problems.append(
                    Problem(
                        code="duplicate_task",
                        message=f"second prediction for {tid}{where} (first on "
                        f"line {prev_line}); the last one is used",
                        file=f,
                        line=n,
                        task_id=tid,
                    )
                )
        seen[(dom, tid)] = (n, attempt)
        old = store.get(key)
        p = Prediction(
            task_id=tid,
            domain=dom,
            answer=obj.get("answer"),
            line=n,
            subtask_answers={**(old.subtask_answers if old else {}), **(subs or {})},
            has_subtasks=subs is not None or bool(old and old.has_subtasks),
            has_answer="answer" in obj or subs is None,
            artifacts=_artifacts(obj.get("artifacts"), path, n, tid, problems),
        )
        store[key] = p
    if not n_lines:
        problems.append(
            Problem(
                code="empty_file",
                message="the predictions file holds no prediction; every task is missing",
                file=f,
            )
        )
    return preds, problems


def _artifacts(raw: Any, path: Path, line: int, tid: str, problems: list[Problem]) -> list[Artifact]:
    """A line's artifacts with absolute paths; a malformed entry or a missing file is a problem, left out."""
    if raw is None:
        return []
    out: list[Artifact] = []
    base = Path(path).resolve().parent

    def left_out(message: str) -> None:
        problems.append(Problem(code="bad_artifact", message=message, file=str(path), line=line, task_id=tid))

    for entry in raw if isinstance(raw, list) else [raw]:
        try:
            a = Artifact.model_validate(entry)
        except ValidationError as e:
            left_out(f"{tid}: an artifact entry is not valid ({str(e).splitlines()[0]}); left out")
            continue
        p = Path(a.path)
        p = p if p.is_absolute() else base / p
        if not p.is_file():
            left_out(f"{tid}: artifact {a.name} is not at {p}; left out")
            continue
        out.append(a.model_copy(update={"path": str(p)}))
    return out


def _unknown_task(
    tid: str, parent: str | None, shown: str, file: str | None = None, line: int | None = None
) -> Problem:
    """The problem of a prediction for a task the workloads do not have (``shown``: the id as the problem names
    it); a subtask given as a task (its ``parent`` known) is told where it belongs."""
    hint = f" ({tid!r} is a subtask of {parent}: give it in that task's subtask_answers)" if parent else ""
    return Problem(
        code="unknown_task",
        message=f"prediction for unknown task {shown!r} ignored{hint}",
        file=file,
        line=line,
        task_id=shown,
    )


def _item(domain: str, task: Task, sub_id: str | None, at: str | None, s: Score | None) -> ScoredItem:
    """One scored item; ``s`` None: the prediction is missing (a 0)."""
    if s is None:
        return ScoredItem(
            domain=domain,
            task_id=task.id,
            subtask_id=sub_id,
            answer_type=at,
            value=0.0,
            reason="missing",
            metric=at,
            details={"reason": "missing"},
        )
    return ScoredItem(
        domain=domain,
        task_id=task.id,
        subtask_id=sub_id,
        answer_type=at,
        value=s.value,
        unscored=s.unscored,
        reason=s.details.get("reason"),
        metric=s.metric,
        details=s.details,
    )


def _lake_paths(wl: Workload) -> LakePaths | None:
    """The files of a workload's lake (None when it has none on disk)."""
    lake = wl.lake
    if lake is None or not Path(lake).is_dir():
        return None
    from kramabench.lake import list_lake_files

    try:
        return LakePaths(list_lake_files(Path(lake)))
    except OSError:
        return None


#: one answer to score: (domain, task, subtask id, answer type, gold, (prediction,) or None, query)
_Job = tuple[str, Task, "str | None", Any, Any, "tuple[Any] | None", str]

#: answers scored between two collections of the young generations while scoring (see _young_gc_only)
_YOUNG_GC_EVERY = 1000


@contextmanager
def _young_gc_only() -> Iterator[None]:
    """No full garbage collection while scoring in a loop: the objects alive before (the workload, the
    predictions: millions of list elements on the official answers) are frozen out of the collector, and its
    automatic passes are off; the loop collects the young generations itself every :data:`_YOUNG_GC_EVERY`
    answers, so cyclic garbage stays bounded. Full passes, triggered by what scoring keeps and walking the
    whole heap each time, were a third of the time of scoring the official answers. A caller that froze
    objects itself (``kramabench score``) finds them frozen after, with the scored items: it unfreezes."""
    enabled = gc.isenabled()
    frozen_before = gc.get_freeze_count() > 0
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        if not frozen_before:
            gc.unfreeze()


def score_workloads(
    workloads: Iterable[Workload],
    predictions: dict[str, Prediction],
    *,
    judge: Judge | None = None,
    workers: int = 1,
    progress: Callable[[str], None] | None = None,
    with_subtasks: bool | None = None,
    normalise_percent: bool = False,
) -> tuple[list[ScoredItem], list[Problem], bool]:
    """Score every task (and, if any prediction has subtask answers, every subtask) of the workloads.

    With a judge and ``workers > 1`` answers are scored in a thread pool (judge calls are network-bound);
    the result keeps the workload's order. ``progress`` is called once per answer scored."""
    workloads = list(workloads)
    problems = Problems()
    scoped: dict[tuple[str, str], Prediction] = (
        predictions.scoped if isinstance(predictions, PredictionSet) else {}
    )
    # task id -> the (domain, task) pairs that carry it: two domains of a root may share ids
    owners: dict[str, list[tuple[str, Task]]] = {}
    for wl in workloads:
        for t in wl.tasks:
            owners.setdefault(t.id, []).append((wl.domain, t))
    scored_domains = {wl.domain for wl in workloads}
    unscored_by_id: dict[str, list[tuple[str, Prediction]]] = {}  # lines naming a domain that is not scored
    for (d, scoped_id), q in scoped.items():
        if d not in scored_domains:
            unscored_by_id.setdefault(scoped_id, []).append((d, q))
    subtask_parent: dict[str, str] | None = None
    p: Prediction | None
    every = list(predictions.items()) + [((d, t), p) for (d, t), p in scoped.items()]
    for key, p in every:
        tid = p.task_id if isinstance(key, tuple) else key
        if tid not in owners:
            if subtask_parent is None:
                subtask_parent = {
                    s.id: t.id for pairs in owners.values() for _d, t in pairs for s in t.subtasks
                }
            problems.append(_unknown_task(tid, subtask_parent.get(tid), tid, line=p.line or None))
        else:
            sub_ids = {s.id for _d, t in owners[tid] for s in t.subtasks}
            for sid in p.subtask_answers:
                if sid not in sub_ids:
                    problems.append(
                        Problem(
                            code="unknown_subtask",
                            message=f"{tid}: unknown subtask {sid!r} ignored",
                            line=p.line or None,
                            task_id=tid,
                        )
                    )

    def prediction_for(domain: str, task: Task) -> Prediction | None:
        """The line that answers this task of this domain: one naming the domain, else one without a domain
        (when the id is in one scored domain, or the same task in each), else one naming a domain not scored."""
        p = scoped.get((domain, task.id))
        if p is not None:
            return p
        pairs = owners.get(task.id, [])
        p = predictions.get(task.id)
        if p is None:
            elsewhere = [q for d, q in unscored_by_id.get(task.id, ())]
            p = elsewhere[0] if len(elsewhere) == 1 else None
        if (
            p is not None
            and len(pairs) > 1
            and len({(t.query, json.dumps(t.answer, sort_keys=True, default=str)) for _d, t in pairs}) > 1
        ):
            if domain == pairs[0][0]:  # said once per task id
                doms = ", ".join(d for d, _t in pairs)
                problems.append(
                    Problem(
                        code="ambiguous_task",
                        message=f"task id {task.id!r} names different tasks in "
                        f'{doms}; a prediction without a "domain" is applied to none of them '
                        '(add "domain" to the line)',
                        line=p.line or None,
                        task_id=task.id,
                    )
                )
            return None
        return p

    if with_subtasks is None:
        with_subtasks = any(p.has_subtasks for p in predictions.values()) or any(
            p.has_subtasks for p in scoped.values()
        )
    # one job per answer, in workload order: (domain, task, subtask id, answer type, gold, prediction?, query)
    jobs: list[_Job] = []
    lakes: dict[str, LakePaths | None] = {wl.domain: _lake_paths(wl) for wl in workloads}
    for wl in workloads:
        for task in wl.tasks:
            p = prediction_for(wl.domain, task)
            answered = (p.answer,) if p is not None and p.has_answer else None
            jobs.append((wl.domain, task, None, task.answer_type, task.answer, answered, task.query))
            if with_subtasks:
                for sub in task.subtasks:
                    has = p is not None and sub.id in p.subtask_answers
                    jobs.append(
                        (
                            wl.domain,
                            task,
                            sub.id,
                            sub.answer_type,
                            sub.answer,
                            (p.subtask_answers[sub.id],) if has and p is not None else None,
                            sub.query,
                        )
                    )

    def run(job: _Job) -> ScoredItem:
        domain, task, sub_id, answer_type, gold, pred, query = job
        if pred is None:
            item = _item(domain, task, sub_id, answer_type, None)
        else:
            lake = lakes.get(domain)
            n_paths = 0
            if lake is not None:  # a lake file is the same file whatever prefix names it
                gold, n_gold = canonical_lake_paths(gold, lake)
                answer, n_pred = canonical_lake_paths(pred[0], lake)
                n_paths = n_gold + n_pred
            else:
                answer = pred[0]
            s = score(gold, answer, answer_type, judge, question=query)
            if normalise_percent:
                s = rescale_percent(gold, answer, answer_type, s, judge=judge, question=query)
            if n_paths:
                s.details["lake_paths_normalised"] = n_paths
            item = _item(domain, task, sub_id, answer_type, s)
        if progress:
            progress(sub_id or task.id)
        return item

    if judge is not None and workers > 1 and len(jobs) > 1:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kramabench-score") as pool:
            items = list(pool.map(run, jobs))
    else:
        with _young_gc_only():
            items = []
            for k, job in enumerate(jobs, start=1):
                items.append(run(job))
                if not k % _YOUNG_GC_EVERY:
                    gc.collect(1)
    return items, problems, with_subtasks


def score_other_gold(
    workloads: Iterable[Workload],
    changes: dict[str, dict[Any, Any]],
    predictions: dict[str, Prediction],
    *,
    with_subtasks: bool,
    judge: Judge | None = None,
    workers: int = 1,
    other_name: str = "official",
    normalise_percent: bool = False,
) -> list[ScoredItem]:
    """The answers whose gold differs in the other view of the workloads (``changes`` by domain, as
    :func:`kramabench.workload.gold.changes_for` gives them), scored against that gold; only those."""
    from kramabench.workload.gold import with_gold

    other_wls = []
    absent: list[ScoredItem] = []
    for wl in workloads:
        ch = changes.get(wl.domain) or {}
        if not ch:
            continue
        ids = {k[0] for k in ch if k[1] is None or with_subtasks}
        tasks = [with_gold(t, ch) for t in wl.tasks if t.id in ids]
        other_wls.append(wl.model_copy(update={"tasks": tasks}))
        for (tid, sid), g in ch.items():
            if not g.present and (sid is None or with_subtasks):
                absent.append(
                    ScoredItem(
                        domain=wl.domain,
                        task_id=tid,
                        subtask_id=sid,
                        value=None,
                        unscored=True,
                        reason=f"not in the {other_name} workload",
                        details={"reason": f"not in the {other_name} workload"},
                    )
                )
    if not other_wls:
        return absent
    wanted = {t.id for w in other_wls for t in w.tasks}
    preds = PredictionSet({k: p for k, p in predictions.items() if k in wanted})
    if isinstance(predictions, PredictionSet):
        preds.scoped = {k: p for k, p in predictions.scoped.items() if k[1] in wanted}
    items, _problems, _subs = score_workloads(
        other_wls,
        preds,
        judge=judge,
        workers=workers,
        with_subtasks=with_subtasks,
        normalise_percent=normalise_percent,
    )
    keep = {(w.domain, k) for w in other_wls for k in changes.get(w.domain, {})}
    gone = {(i.domain, i.task_id, i.subtask_id) for i in absent}
    return [i for i in items if (i.domain, (i.task_id, i.subtask_id)) in keep and i.key not in gone] + absent


def items_under(items: list[ScoredItem], other: list[ScoredItem]) -> list[ScoredItem]:
    """``items`` with the ones of ``other`` (scored against the other gold) in their place."""
    by_key = {i.key: i for i in other}
    return [by_key.get(i.key, i) for i in items]


def floors_of(
    items: list[ScoredItem],
    workloads: Iterable[Workload],
    changes: dict[str, dict[Any, Any]] | None = None,
    *,
    cache: FloorCache | None = None,
) -> dict[str, Any]:
    """The floors of the main answers of ``items`` (kramabench.run.floors) against the workloads' gold, or the
    other gold of ``changes``: a dict of the total row's figures. ``cache``: one dict passed to both golds'
    calls scores each unchanged gold once (kramabench.run.floors.FloorCache)."""
    from kramabench.run.floors import FloorEntry, floor_rows_of

    golds: dict[tuple[str, str], tuple[Any, Any]] = {}
    for wl in workloads:
        ch = (changes or {}).get(wl.domain) or {}
        for t in wl.tasks:
            g = ch.get((t.id, None))
            golds[(wl.domain, t.id)] = (
                (g.answer, g.answer_type) if g is not None and g.present else (t.answer, t.answer_type)
            )
    entries = []
    for i in items:
        if i.subtask_id is not None:
            continue
        expected, at = golds.get((i.domain, i.task_id), (None, None))
        entries.append(
            FloorEntry(i.domain, i.task_id, None if i.unscored else i.value, i.metric, expected, at)
        )
    _rows, total = floor_rows_of(entries, cache=cache)
    return {
        "n": total.n,
        **{k: v for k, v in total.floors.items()},
        "bounded": total.system_bounded,
        "zero_bounded": total.floors_bounded.get("zero"),
        "n_numeric": total.n_numeric,
        "numeric_paper": total.numeric_paper,
        "numeric_band": total.numeric_band,
    }


def _count(problems: Iterable[Problem]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in problems:
        out[p.code] = out.get(p.code, 0) + 1
    return out


def build_report(
    *,
    workload_root: Path,
    domains: list[str],
    predictions_path: Path,
    items: list[ScoredItem],
    problems: list[Problem] | Problems,
    subtasks_scored: bool,
    judge: Judge | None = None,
    n_boot: int = 10_000,
    seed: int = 0,
) -> ScoreReport:
    judge_info: dict[str, Any] | None = None
    if judge is not None:
        judge_info = {
            "model": judge.id,
            "prompt_version": judge.prompt_version,
        }
        if isinstance(judge, CountsCalls):
            judge_info["stats"] = dict(judge.stats)
    return ScoreReport(
        workload=str(workload_root),
        domains=domains,
        predictions=str(predictions_path),
        judge=judge_info,
        items=items,
        summary=summarize(items, n_boot=n_boot, seed=seed),
        problems=list(problems),
        problem_counts=dict(
            (problems.counts if isinstance(problems, Problems) else None) or _count(problems)
        ),
        subtasks_scored=subtasks_scored,
    )


__all__ = [
    "Prediction",
    "Problem",
    "ScoreReport",
    "build_report",
    "floors_of",
    "items_under",
    "read_predictions",
    "score_other_gold",
    "score_workloads",
]
