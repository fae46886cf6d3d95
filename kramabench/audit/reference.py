"""``kramabench audit reference``: do the reference solutions reproduce their own gold?

Each task's reference solution runs in the sandbox the way its author ran it: as a notebook cell (the value of
a last bare expression is shown and read, :mod:`.notebook`) from a folder where its relative paths reach the
lake (:mod:`.layout`), the lake read-only. The answer is read from what it showed (:mod:`.extract`), scored
against the gold with the project's scorers, and every task and subtask gets a verdict:

- ``reproduces``: the scorer gives full marks (approximate types: at least ``REPRODUCE_AT``);
- ``differs``: the solution answered something else (the diff says what);
- ``cannot-run``: no answer; the cause (:mod:`.causes`: missing lake file, missing module, wrong path,
  library version, timeout, ...) is attributed in the benchmark's terms, with its evidence and the
  validator's findings on the same files;
- ``unscored``: the scorer could not decide without an LLM judge (string_approximate paraphrases), or no rule
  read an answer from what the solution showed.

The static gold checks (:mod:`.static`) of the same tasks go in the same :class:`ReferenceAudit`.
"""

from __future__ import annotations

import json
import logging
import os
import posixpath
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from kramabench.audit.causes import (
    ATTRIBUTION,
    CauseKind,
    LakeFacts,
    diagnose,
    missing_path_of,
)
from kramabench.audit.classes import ClassProposal, propose_classes
from kramabench.audit.extract import Extraction, extract_answers
from kramabench.audit.layout import (
    LakePaths,
    infer_layout,
    is_absolute,
    layout_for,
    path_strings,
    prefix_of,
    unmatched,
)
from kramabench.audit.static import StaticFinding, static_checks
from kramabench.audit.verdicts import ItemVerdict, ReadFrom, SolutionRun, Verdict
from kramabench.files import LongLine, clip, keep_tail, lines_of, open_append
from kramabench.workload.models import Task, Workload

if TYPE_CHECKING:
    from kramabench.contracts.model import Model
    from kramabench.contracts.sandbox import Sandbox

log = logging.getLogger(__name__)

#: approximate answer types reproduce at this score or above (numeric: relative error <= ~1%)
REPRODUCE_AT = 0.99
_TAIL = 2000


class ReferenceAudit(BaseModel):
    """What ``kramabench audit reference`` found (saved as ``reference.json``)."""

    model_config = ConfigDict(extra="forbid")

    workload: str
    root: str
    domains: list[str]
    sandbox: str
    extract_model: str | None = None
    created_at: datetime
    runs: list[SolutionRun] = Field(default_factory=list)
    items: list[ItemVerdict] = Field(default_factory=list)
    static: list[StaticFinding] = Field(default_factory=list)
    proposals: list[ClassProposal] = Field(
        default_factory=list, description="the class proposed for each task"
    )

    def tasks(self) -> list[ItemVerdict]:
        return [i for i in self.items if i.subtask_id is None]

    def counts(self, domain: str | None = None, *, subtasks: bool = False) -> dict[str, int]:
        out = {"reproduces": 0, "differs": 0, "cannot-run": 0, "unscored": 0}
        for i in self.items:
            if (i.subtask_id is not None) == subtasks and (domain is None or i.domain == domain):
                out[i.verdict] += 1
        return out


def _tail(text: str) -> str:
    return keep_tail(text, _TAIL)


def solution_of(wl: Workload, task: Task) -> Path | None:
    """Task.solution, else solutions/<domain>/<task>.py (official) or solutions/<task>.py (bundled); only
    inside the workload root."""
    from kramabench.workload.solutions import solution_of as of

    return of(wl, task)


def _short(v: Any, n: int = 120) -> str:
    try:
        text = json.dumps(v, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(v)
    return clip(text, n)


def describe_diff(gold: Any, got: Any, details: dict[str, Any]) -> str:
    """A short account of how ``got`` differs from ``gold``."""
    if isinstance(gold, list) and isinstance(got, list):
        g, p = [str(x) for x in gold], [str(x) for x in got]
        missing, extra = [x for x in g if x not in p], [x for x in p if x not in g]
        if not missing and not extra:
            return "same items, other order" if g != p else "same items"
        parts = []
        if missing:
            parts.append(f"missing {missing[:5]}" + (f" (+{len(missing) - 5})" if len(missing) > 5 else ""))
        if extra:
            parts.append(f"extra {extra[:5]}" + (f" (+{len(extra) - 5})" if len(extra) > 5 else ""))
        return "; ".join(parts)
    text = f"gold {_short(gold)}, printed {_short(got)}"
    if "rel_error" in details and details["rel_error"] is not None:
        text += f" (relative error {details['rel_error']:.3g})"
    if details.get("scale_mismatch"):
        text += f" (off by a factor: {details['scale_mismatch']})"
    if details.get("reason"):
        text += f" ({details['reason']})"
    return text


def judge_item(domain: str, task_id: str, sub_id: str | None, gold: Any, answer_type: str | None,
               ext: Extraction, question: str | None = None) -> ItemVerdict:  # fmt: skip
    """Score one extracted value against the gold and say what that means."""
    from kramabench.scorers.registry import score

    base = dict(
        domain=domain, task_id=task_id, subtask_id=sub_id, answer_type=answer_type, gold=gold, extraction=ext
    )
    if not ext.found:
        # it ran and showed something, but nothing the rules read as an answer of this item (a subtask a solution
        # does not answer, a table): a person or --extract-model reads it
        detail = "no answer read: " + (ext.note or "nothing of the answer's kind in what it showed")
        return ItemVerdict(verdict="unscored", cause_detail=detail, **base)
    s = score(gold, ext.value, answer_type, question=question)
    if s.unscored or s.value is None:
        reason = s.details.get("reason", "unscored")
        return ItemVerdict(verdict="unscored", metric=s.metric, diff=describe_diff(gold, ext.value, s.details),
                           cause_detail=str(reason), **base)  # fmt: skip
    exact = answer_type is None or not answer_type.endswith("_approximate")
    ok = s.value >= 1.0 - 1e-9 if exact else s.value >= REPRODUCE_AT
    return ItemVerdict(verdict="reproduces" if ok else "differs", score=s.value, metric=s.metric,
                       diff=None if ok else describe_diff(gold, ext.value, s.details), **base)  # fmt: skip


class DomainContext:
    """What every task of one workload shares: the lake's paths, what is known absent, the validator's findings."""

    def __init__(self, wl: Workload) -> None:
        from kramabench.workload.sources import LakeInventory

        self.domain = wl.domain
        self.lake = LakePaths.of(LakeInventory(wl.lake))
        self.facts = lake_facts(wl, self.lake)
        self.findings: dict[str, list[Any]] = {}
        for f in wl.findings:
            if f.task_id:
                self.findings.setdefault(f.task_id, []).append(f)


def lake_facts(wl: Workload, lake: LakePaths) -> LakeFacts:
    """The errata's ``[[absent]]`` files of the domain and what the shipped upstream listing says of its lake
    (the listing only when most of the lake's files are in it: an official domain)."""
    from kramabench.audit.classes import upstream_not_stored
    from kramabench.workload.blobs import load_blob_table
    from kramabench.workload.fetch import DEFAULT_REF
    from kramabench.workload.loader import documented_absent

    try:
        absent = sorted({a.path for a in documented_absent(wl.root, wl.domain)})
    except Exception:  # noqa: BLE001 - an unreadable errata file: the loader already said so
        absent = []
    table = load_blob_table(DEFAULT_REF)
    prefix = f"data/{wl.domain}/input/"
    listed = sorted(p[len(prefix) :] for p in table.under([prefix])) if table is not None else []
    known = set(listed)
    official = bool(listed) and sum(f in known for f in lake.files) >= max(1, len(lake.files) // 2)
    return LakeFacts(domain=wl.domain, documented_absent=absent,
                     not_stored=upstream_not_stored(wl.domain) if official else [],
                     upstream=listed if official else None, upstream_ref=DEFAULT_REF if official else None)  # fmt: skip


def _read_output(stdout: str, value: str | None) -> tuple[str, ReadFrom | None]:
    """What a notebook shows of a cell: its printed text, then the value of its last expression."""
    printed = stdout or ""
    if value is None:
        return printed, "printed" if printed.strip() else None
    if not printed.strip():
        return value, "value"
    return printed.rstrip("\n") + "\n" + value + "\n", "printed+value"


def audit_task(wl: Workload, task: Task, sandbox: Sandbox, *, timeout_s: float, memory_mb: int,
               extract_model: Model | None = None, context: DomainContext | None = None) -> tuple[SolutionRun, list[ItemVerdict]]:  # fmt: skip
    """Run one task's solution (notebook-style, from where its paths resolve) and judge the task and each
    subtask."""
    from kramabench.audit.notebook import run_notebook

    ctx = context or DomainContext(wl)
    sol = solution_of(wl, task)
    run = SolutionRun(domain=wl.domain, task_id=task.id, solution=str(sol) if sol else None)
    keys: dict[str, tuple[str | None, Any, str | None, str]] = {
        "main-task": (None, task.answer, task.answer_type, task.query)
    }
    for i, st in enumerate(task.subtasks, start=1):
        keys[f"subtask-{i}"] = (st.id, st.answer, st.answer_type, st.query)

    def all_cannot(cause: CauseKind, detail: str) -> list[ItemVerdict]:
        return [
            ItemVerdict(
                domain=wl.domain,
                task_id=task.id,
                subtask_id=sid,
                verdict="cannot-run",
                cause=cause,
                cause_detail=detail,
                attributed_to=ATTRIBUTION[cause],
                gold=gold,
                answer_type=at,
            )  # fmt: skip
            for sid, gold, at, _q in keys.values()
        ]

    def cannot(cause: CauseKind, detail: str) -> tuple[SolutionRun, list[ItemVerdict]]:
        run.cause, run.cause_detail, run.attributed_to = cause, detail, ATTRIBUTION[cause]
        return run, all_cannot(cause, detail)

    if sol is None or not sol.is_file():
        return cannot("no-solution", f"no reference solution for {task.id}")
    try:
        from kramabench.workload.solutions import read_solution

        code = read_solution(sol)
    except OSError as exc:
        return cannot("no-solution", f"{sol}: cannot read ({exc})")
    strings = path_strings(code)
    layout, _absolute = infer_layout(code, ctx.lake, wl.domain, strings=strings)
    nb = run_notebook(sandbox, wl.lake, code, layout, timeout_s=timeout_s, memory_mb=memory_mb, name=sol.name)
    res = nb.result
    if not res.ok and not res.timed_out and not res.oom and res.exit_code is not None:
        # the error names a path of the lake under another layout (``../../input/x.xlsx``): run from there
        path = missing_path_of(res.stderr)
        head = prefix_of(path, ctx.lake, wl.domain) if path else None
        tried = {posixpath.normpath(p or ".") for p in (layout.prefix, *layout.also)}
        if head is not None and not is_absolute(head) and posixpath.normpath(head or ".") not in tried:
            again = layout_for(
                [head, layout.prefix, *layout.also], wl.domain, why=f"the path its error names ({path!r})"
            )
            if again is not None:
                second = run_notebook(sandbox, wl.lake, code, again, timeout_s=timeout_s, memory_mb=memory_mb,
                                      name=sol.name)  # fmt: skip
                if second.result.exit_code is not None or second.result.timed_out or second.result.oom:
                    layout, nb, res = again, second, second.result
    run.layout = layout
    run.exit_code, run.timed_out, run.wall_s = res.exit_code, res.timed_out, res.wall_s
    run.stdout_tail, run.stderr_tail, run.files_read = (
        _tail(res.stdout),
        _tail(res.stderr),
        list(res.files_read),
    )
    run.value = _tail(nb.value) if nb.value is not None else None
    if not res.ok:
        if res.exit_code is None and not res.timed_out and not res.oom:
            # the program never ran: the sandbox's trouble, not the solution's
            return cannot("sandbox-error", res.explanation or "the sandbox did not start the program")
        d = diagnose(res.stderr, exit_code=res.exit_code, timed_out=res.timed_out, oom=res.oom, layout=layout,
                     lake=ctx.lake, domain=wl.domain, lake_dir=wl.lake, unmatched=unmatched(strings, layout, ctx.lake),
                     files_read=res.files_read, findings=ctx.findings.get(task.id, []), facts=ctx.facts)  # fmt: skip
        run.evidence, run.findings, run.cause_files, run.upstream = (
            d.evidence,
            d.findings,
            d.files,
            d.upstream,
        )
        return cannot(d.cause, d.detail)
    output, run.read_from = _read_output(res.stdout, nb.value)
    if run.read_from is None:
        return cannot("prints-nothing", "the solution ran, printed nothing, and its last line is no expression with a "
                      "value")  # fmt: skip
    types = {k: v[2] for k, v in keys.items()}
    questions = {k: v[3] for k, v in keys.items()}
    extracted = extract_answers(output, types, model=extract_model, question=questions)
    items = [
        judge_item(wl.domain, task.id, sid, gold, at, extracted[key], q)
        for key, (sid, gold, at, q) in keys.items()
    ]
    return run, items


def audit_reference(
    workloads: Iterable[Workload],
    sandbox: Sandbox,
    *,
    workload_name: str,
    root: Path,
    sandbox_name: str,
    timeout_s: float = 600.0,
    memory_mb: int = 4096,
    concurrency: int = 2,
    extract_model: Model | None = None,
    extract_model_id: str | None = None,
    task_ids: Iterable[str] | None = None,
    on_done: Callable[[SolutionRun, list[ItemVerdict]], None] | None = None,
    done: dict[tuple[str, str], tuple[SolutionRun, list[ItemVerdict]]] | None = None,
) -> ReferenceAudit:
    """Run and judge every task's solution of ``workloads``; add the static checks.

    ``done`` ((domain, task id) -> outcome, e.g. from :func:`read_progress`) is kept, not run again.
    """
    workloads = list(workloads)
    wanted = set(task_ids) if task_ids is not None else None
    done = dict(done or {})
    all_jobs = [(wl, t) for wl in workloads for t in wl.tasks if wanted is None or t.id in wanted]
    jobs = [(wl, t) for wl, t in all_jobs if (wl.domain, t.id) not in done]
    audit = ReferenceAudit(workload=workload_name, root=str(root), domains=[w.domain for w in workloads],
                           sandbox=sandbox_name, extract_model=extract_model_id,
                           created_at=datetime.now(timezone.utc))  # fmt: skip
    lock = threading.Lock()
    results: dict[tuple[str, str], tuple[SolutionRun, list[ItemVerdict]]] = dict(done)
    contexts = {wl.domain: DomainContext(wl) for wl in workloads}

    def one(job: tuple[Workload, Task]) -> None:
        wl, task = job
        try:
            out = audit_task(wl, task, sandbox, timeout_s=timeout_s, memory_mb=memory_mb, extract_model=extract_model,
                             context=contexts[wl.domain])  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - one task's trouble is recorded, the audit goes on
            log.exception("%s: audit failed", task.id)
            run = SolutionRun(
                domain=wl.domain, task_id=task.id, cause="crash", cause_detail=f"audit error: {exc}"
            )
            out = (run, [ItemVerdict(domain=wl.domain, task_id=task.id, verdict="cannot-run", cause="crash",
                                     cause_detail=run.cause_detail, gold=task.answer)])  # fmt: skip
        with lock:
            results[(wl.domain, task.id)] = out
            if on_done is not None:
                on_done(*out)

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        list(pool.map(one, jobs))
    for wl, task in all_jobs:  # workload order, whatever order they finished in
        run, items = results[(wl.domain, task.id)]
        audit.runs.append(run)
        audit.items.extend(items)
    for wl in workloads:
        audit.static.extend(static_checks(wl, task_ids=wanted))
    absent = {
        d: sorted(set(c.facts.documented_absent) | set(c.facts.not_stored)) for d, c in contexts.items()
    }
    audit.proposals = propose_classes(audit.runs, audit.items, audit.static, workloads, absent=absent)
    return audit


class ProgressLine(BaseModel):
    """One finished task, appended to ``progress.jsonl`` as soon as it is judged (resume reads it)."""

    model_config = ConfigDict(extra="forbid")

    run: SolutionRun
    items: list[ItemVerdict]


def append_progress(path: Path, run: SolutionRun, items: list[ItemVerdict]) -> None:
    fd = open_append(path, follow=False)  # a regular file only
    try:
        os.write(fd, (ProgressLine(run=run, items=items).model_dump_json() + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def read_progress(path: Path) -> dict[tuple[str, str], tuple[SolutionRun, list[ItemVerdict]]]:
    """Tasks finished by an earlier, interrupted audit (a torn last line is ignored)."""
    out: dict[tuple[str, str], tuple[SolutionRun, list[ItemVerdict]]] = {}
    if not os.path.lexists(path):
        return out
    for _n, line, _ended in lines_of(path, what="audit progress file"):
        if isinstance(line, LongLine):
            continue
        try:
            p = ProgressLine.model_validate_json(line)
        except ValueError:
            continue
        out[(p.run.domain, p.run.task_id)] = (p.run, p.items)
    return out


__all__ = [
    "REPRODUCE_AT",
    "ProgressLine",
    "append_progress",
    "read_progress",
    "DomainContext",
    "ItemVerdict",
    "ReadFrom",
    "ReferenceAudit",
    "SolutionRun",
    "Verdict",
    "audit_reference",
    "audit_task",
    "describe_diff",
    "judge_item",
    "lake_facts",
]
