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
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kramabench.contracts.artifacts import Artifact
from kramabench.workload.models import Task, Workload
from scorers.judge import Judge
from scorers.paths import LakePaths, canonical_lake_paths
from scorers.registry import score
from scorers.stats import ScoredItem, Summary, summarize

logger = logging.getLogger(__name__)


class Prediction(BaseModel):
    model_config = ConfigDict(extra="ignore")

    task_id: str
    answer: Any = None
    subtask_answers: dict[str, Any] = Field(default_factory=dict)
    has_answer: bool = Field(True, description="False when only subtask answers were given")
    has_subtasks: bool = Field(False, description="the line carried subtask answers")
    line: int = 0
    artifacts: list[Artifact] = Field(
        default_factory=list, description="files the line names (a run record's artifacts), paths made absolute: "
        "a relative path is read from the predictions file's folder (the run folder for records.jsonl)"
    )


class Problem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="bad_line, no_task_id, no_answer, duplicate_task, unknown_task, bad_artifact, "
                      "unknown_subtask, empty_file")
    message: str
    file: str | None = None
    line: int | None = None
    task_id: str | None = None


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
    subtasks_scored: bool = False
    comparison: dict[str, Any] | None = None


#: deepest nesting of lists and objects accepted in a prediction (a real answer needs a handful of levels;
#: a 100,000-deep list would exhaust the interpreter's stack in the parser or a scorer)
MAX_DEPTH = 64

#: what a predictions line must look like (said when no line does)
EXPECTED_SHAPE = ('JSON lines like {"task_id": "<task id>", "answer": <value>, "subtask_answers": {...}} '
                  "(or a run's records.jsonl)")


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


def _lines(path: Path) -> Iterable[tuple[int, Any, bool]]:
    """(line number, parsed JSON or the ValueError, known to nest less than MAX_DEPTH) of each non-blank
    line; a file that is one JSON array of objects (a common export) gives its elements, numbered from 1."""
    text = Path(path).read_bytes().decode("utf-8-sig", errors="replace")  # a BOM (Windows tools) is not data
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            whole = json.loads(text) if nesting_depth(text) <= MAX_DEPTH + 1 else None
        except (ValueError, RecursionError):
            whole = None
        if isinstance(whole, list):
            yield from ((n, obj, False) for n, obj in enumerate(whole, start=1))
            return
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
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


def read_predictions(path: Path) -> tuple[dict[str, Prediction], list[Problem]]:
    """Read a predictions JSON-lines file. Bad lines become problems, never exceptions."""
    preds: dict[str, Prediction] = {}
    problems: list[Problem] = []
    seen: dict[str, tuple[int, int | None]] = {}
    f = str(path)
    n_lines = 0
    for n, obj, shallow in _lines(path):
        n_lines += 1
        if isinstance(obj, ValueError):
            problems.append(Problem(code="bad_line", message=f"not JSON: {obj}", file=f, line=n))
            continue
        if not shallow and isinstance(obj, (dict, list)) and _too_deep(obj):
            problems.append(Problem(code="bad_line", message=f"nested deeper than {MAX_DEPTH} levels; not a prediction",
                                    file=f, line=n))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(code="bad_line", message=f"a JSON {type(obj).__name__}, not an object",
                                    file=f, line=n))
            continue
        tid = obj.get("task_id")
        if not isinstance(tid, str) or not tid:
            keys = ", ".join(str(k) for k in list(obj)[:6]) or "none"
            what = "missing" if "task_id" not in obj else f"{type(tid).__name__} {tid!r}"[:40]
            problems.append(Problem(code="no_task_id", message=f"no task_id (a non-empty string; here {what}; "
                                    f"keys: {keys})", file=f, line=n))
            continue
        subs = obj.get("subtask_answers")
        if subs is not None and not isinstance(subs, dict):
            problems.append(Problem(code="bad_line", message="subtask_answers is not an object; ignored",
                                    file=f, line=n, task_id=tid))
            subs = None
        sub_id = obj.get("subtask_id")
        if isinstance(sub_id, str) and sub_id:  # a run record of the subtask setting
            p = preds.setdefault(tid, Prediction(task_id=tid, line=n, has_answer=False))
            p.subtask_answers[sub_id] = obj.get("answer")
            p.has_subtasks = True
            continue
        if "answer" not in obj and subs is None:
            keys = ", ".join(str(k) for k in list(obj)[:6])
            problems.append(Problem(code="no_answer", message=f"{tid}: no 'answer' key (keys: {keys}); scored as "
                                    "no answer", file=f, line=n, task_id=tid))
        attempt = obj.get("attempt")
        attempt = attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else None
        if tid in seen:
            prev_line, prev_attempt = seen[tid]
            if attempt is not None and prev_attempt is not None and attempt != prev_attempt:
                # a run's records.jsonl: a retried task has one record per attempt; the latest attempt counts
                if attempt < prev_attempt:
                    continue
            else:
                problems.append(Problem(code="duplicate_task", message=f"second prediction for {tid} (first on line "
                                        f"{prev_line}); the last one is used", file=f, line=n, task_id=tid))
        seen[tid] = (n, attempt)
        old = preds.get(tid)
        p = Prediction(task_id=tid, answer=obj.get("answer"), line=n,
                       subtask_answers={**(old.subtask_answers if old else {}), **(subs or {})},
                       has_subtasks=subs is not None or bool(old and old.has_subtasks),
                       has_answer="answer" in obj or subs is None,
                       artifacts=_artifacts(obj.get("artifacts"), path, n, tid, problems))
        preds[tid] = p
    if not n_lines:
        problems.append(Problem(code="empty_file", message="the predictions file holds no prediction; every task "
                                "is missing", file=f))
    return preds, problems


def _artifacts(raw: Any, path: Path, line: int, tid: str, problems: list[Problem]) -> list[Artifact]:
    """A line's artifacts with absolute paths; a malformed entry or a missing file is a problem, left out."""
    if raw is None:
        return []
    out: list[Artifact] = []
    base = Path(path).resolve().parent
    for entry in raw if isinstance(raw, list) else [raw]:
        try:
            a = Artifact.model_validate(entry)
        except ValidationError as e:
            problems.append(Problem(code="bad_artifact", message=f"{tid}: an artifact entry is not valid "
                                    f"({str(e).splitlines()[0]}); left out", file=str(path), line=line, task_id=tid))
            continue
        p = Path(a.path)
        p = p if p.is_absolute() else base / p
        if not p.is_file():
            problems.append(Problem(code="bad_artifact", message=f"{tid}: artifact {a.name} is not at {p}; left out",
                                    file=str(path), line=line, task_id=tid))
            continue
        out.append(a.model_copy(update={"path": str(p)}))
    return out


def _item(domain: str, task: Task, sub_id: str | None, answer_type: Any, s: Any = None, missing: bool = False) -> ScoredItem:
    at = answer_type.value if hasattr(answer_type, "value") else answer_type
    if missing:
        return ScoredItem(domain=domain, task_id=task.id, subtask_id=sub_id, answer_type=at, value=0.0,
                          reason="missing", metric=at, details={"reason": "missing"})
    return ScoredItem(domain=domain, task_id=task.id, subtask_id=sub_id, answer_type=at, value=s.value,
                      unscored=s.unscored, reason=s.details.get("reason"), metric=s.metric, details=s.details)


def _lake_paths(wl: Workload) -> LakePaths | None:
    """The files of a workload's lake (None when it has none on disk)."""
    lake = getattr(wl, "lake", None)
    if lake is None or not Path(lake).is_dir():
        return None
    from kramabench.lake import list_lake_files

    try:
        return LakePaths(list_lake_files(Path(lake)))
    except OSError:
        return None


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
) -> tuple[list[ScoredItem], list[Problem], bool]:
    """Score every task (and, if any prediction has subtask answers, every subtask) of the workloads.

    With a judge and ``workers > 1`` answers are scored in a thread pool (judge calls are network-bound);
    the result keeps the workload's order. ``progress`` is called once per answer scored."""
    workloads = list(workloads)
    problems: list[Problem] = []
    known: dict[str, Task] = {t.id: t for wl in workloads for t in wl.tasks}
    for tid, p in predictions.items():
        if tid not in known:
            parent = next((t.id for t in known.values() if any(s.id == tid for s in t.subtasks)), None)
            hint = f" ({tid!r} is a subtask of {parent}: give it in that task's subtask_answers)" if parent else ""
            problems.append(Problem(code="unknown_task", message=f"prediction for unknown task {tid!r} ignored{hint}",
                                    line=p.line or None, task_id=tid))
        else:
            sub_ids = {s.id for s in known[tid].subtasks}
            for sid in p.subtask_answers:
                if sid not in sub_ids:
                    problems.append(Problem(code="unknown_subtask", message=f"{tid}: unknown subtask {sid!r} ignored",
                                            line=p.line or None, task_id=tid))
    with_subtasks = any(p.has_subtasks for p in predictions.values())
    # one job per answer, in workload order: (domain, task, subtask id, answer type, gold, prediction?, query)
    jobs: list[tuple[str, Task, str | None, Any, Any, tuple[Any] | None, str]] = []
    lakes: dict[str, Any] = {wl.domain: _lake_paths(wl) for wl in workloads}
    for wl in workloads:
        for task in wl.tasks:
            p = predictions.get(task.id)
            answered = (p.answer,) if p is not None and p.has_answer else None
            jobs.append((wl.domain, task, None, task.answer_type, task.answer, answered, task.query))
            if with_subtasks:
                for sub in task.subtasks:
                    has = p is not None and sub.id in p.subtask_answers
                    jobs.append((wl.domain, task, sub.id, sub.answer_type, sub.answer,
                                 (p.subtask_answers[sub.id],) if has else None, sub.query))

    def run(job: tuple) -> ScoredItem:
        domain, task, sub_id, answer_type, gold, pred, query = job
        if pred is None:
            item = _item(domain, task, sub_id, answer_type, missing=True)
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


def build_report(
    *,
    workload_root: Path,
    domains: list[str],
    predictions_path: Path,
    items: list[ScoredItem],
    problems: list[Problem],
    subtasks_scored: bool,
    judge: Judge | None = None,
    n_boot: int = 10_000,
    seed: int = 0,
) -> ScoreReport:
    judge_info = None
    if judge is not None:
        judge_info = {"model": getattr(judge, "id", None), "prompt_version": getattr(judge, "prompt_version", None)}
        stats = getattr(judge, "stats", None)
        if isinstance(stats, dict):
            judge_info["stats"] = dict(stats)
    return ScoreReport(
        workload=str(workload_root),
        domains=domains,
        predictions=str(predictions_path),
        judge=judge_info,
        items=items,
        summary=summarize(items, n_boot=n_boot, seed=seed),
        problems=problems,
        subtasks_scored=subtasks_scored,
    )


__all__ = ["Prediction", "Problem", "ScoreReport", "build_report", "read_predictions", "score_workloads"]
