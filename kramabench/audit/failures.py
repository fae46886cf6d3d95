"""``kramabench audit failures RUN_DIR --auditor MODEL``: an Auditor session per failed task of a run.

A failed task is an end-to-end (or subtasks-setting) main-task record that is an error or scored below
full marks (approximate types: below ``REPRODUCE_AT``). Each session's :class:`AuditReport` is appended
to ``<out>/failures.jsonl`` as soon as it is done, so an interrupted audit resumes where it stopped
(reports already there are kept unless ``force``); model replies go through the model cache, so a re-run
of a session costs nothing. Sessions run concurrently (``concurrency``).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from kramabench.audit.auditor import AuditorOptions, AuditReport, FailureCase, audit_case
from kramabench.audit.reference import REPRODUCE_AT
from kramabench.files import FileRefused, LongLine, lines_of, open_append, write_file
from kramabench.workload.solutions import read_solution, solution_of

if TYPE_CHECKING:
    from kramabench.contracts.model import Model
    from kramabench.contracts.records import Manifest, Record
    from kramabench.contracts.sandbox import Sandbox

log = logging.getLogger(__name__)

REPORTS_NAME = "failures.jsonl"


class FailuresAudit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_dir: str | None = None
    auditor: str
    reports: list[AuditReport] = Field(default_factory=list)
    reused: int = Field(0, description="reports found from an earlier, interrupted audit")

    @property
    def undecided(self) -> int:
        return sum(1 for r in self.reports if r.attribution == "undecided")

    @property
    def benchmark_share(self) -> float | None:
        return (
            sum(r.attribution == "benchmark" for r in self.reports) / len(self.reports)
            if self.reports
            else None
        )


def is_failure(record: Record) -> bool:
    if record.subtask_id is not None or record.setting == "pipeline-design":
        return False
    if record.status == "error":
        return True
    if record.score is None:
        return False  # unscored: not a failure the audit can explain
    exact = not str(record.answer_type or "").endswith("_approximate")
    return record.score < (1 - 1e-9 if exact else REPRODUCE_AT)


def _session(record: Record) -> tuple[str, str]:
    """(output or error, a short account of the system's session) from a record."""
    lines: list[str] = []
    output = ""
    for e in record.transcript or []:
        kind = e.get("type") or e.get("kind")
        if kind == "execution" or kind == "sandbox":
            status = "timed out" if e.get("timed_out") else f"exit {e.get('exit_code')}"
            lines.append(
                f"attempt {e.get('iteration', 1)}: ran, {status}, answer found: {e.get('answer_found', '?')}"
            )
            output = (e.get("stdout_tail") or "") + ("\n" + e["stderr_tail"] if e.get("stderr_tail") else "")
        elif kind == "no_code":
            lines.append(f"attempt {e.get('iteration')}: no code in the reply")
        elif kind == "model_call" and e.get("error"):
            lines.append(f"attempt {e.get('iteration')}: model error {e.get('error')}")
    if record.error is not None:
        output = f"{record.error.kind}: {record.error.message}\n{output}".strip()
    return output, "\n".join(lines)


def failure_cases(
    run_dir: Path, *, task_ids: Iterable[str] | None = None
) -> tuple[list[FailureCase], Manifest]:
    """The failures of a run as auditor cases, and the run's manifest."""
    from kramabench.contracts.records import latest_records
    from kramabench.runfolder import RunFolder, read_manifest, read_records
    from kramabench.workload import load_workload

    manifest = read_manifest(run_dir)
    records = latest_records(read_records(RunFolder(Path(run_dir)).records).records)
    wanted = set(task_ids) if task_ids else None
    root = Path(manifest.workload.get("root", ""))
    errata = bool(manifest.workload.get("errata", True))
    workloads: dict[str, Any] = {}
    cases = []
    for r in records:
        if not is_failure(r) or (wanted is not None and r.task_id not in wanted):
            continue
        wl = workloads.get(r.domain)
        if wl is None:
            wl = workloads[r.domain] = load_workload(root, r.domain, errata=errata)
        task = wl.task(r.task_id)
        sol = solution_of(wl, task)
        output, session = _session(r)
        cases.append(FailureCase(
            domain=r.domain, task_id=r.task_id, question=task.query,
            answer_type=task.answer_type, gold=task.answer, system=r.system,
            system_answer=r.answer, system_code=r.pipeline_code, system_output=output[-3000:], transcript=session,
            score=r.score, score_details=r.score_details,
            reference_solution=solution_text(sol),
            data_sources=task.data_sources or [], lake=wl.lake,
            subtasks=[{"id": s.id, "query": s.query, "gold": s.answer} for s in task.subtasks],
        ))  # fmt: skip
    return cases, manifest


def solution_text(sol: Path | None) -> str | None:
    """A reference solution's code for the auditor's prompt (a regular file inside the workload root, read
    with a bound), else None."""
    if sol is None:
        return None
    try:
        return read_solution(sol, errors="replace")
    except FileRefused:
        return None


def read_reports(path: Path) -> list[AuditReport]:
    out: list[AuditReport] = []
    if not os.path.lexists(path):
        return out
    for n, line, _ended in lines_of(path, what="audit reports file"):
        if isinstance(line, LongLine) or not line.strip():
            continue
        try:
            out.append(AuditReport.model_validate_json(line))
        except ValueError as exc:
            log.warning(
                "%s line %d: unreadable report (%s): the case is audited again", path, n, str(exc)[:120]
            )
    return out


@dataclass(frozen=True)
class Auditing:
    """Who audits the cases and how: the Auditor's model and sandbox, its name in the reports, its options
    and how many sessions run at once."""

    model: Model
    sandbox: Sandbox
    auditor: str
    options: AuditorOptions | None = None
    concurrency: int = 2


def run_sessions(
    cases: list[FailureCase],
    how: Auditing,
    *,
    out_path: Path | None = None,
    force: bool = False,
    on_done: Callable[[AuditReport, bool], None] | None = None,
) -> tuple[list[AuditReport], int]:
    """Audit ``cases`` (resuming from ``out_path``); returns the reports in case order and how many were reused."""
    auditor = how.auditor
    done: dict[str, AuditReport] = {}
    if out_path is not None and not force:
        done = {r.id: r for r in read_reports(out_path) if r.auditor == auditor}
    lock = threading.Lock()
    results: dict[str, AuditReport] = {}
    if out_path is not None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        if force and out_path.exists():
            out_path.unlink()

    def one(case: FailureCase) -> None:
        rid = f"{case.domain}/{case.task_id}"
        if rid in done:
            rep, reused = done[rid], True
        else:
            try:
                rep = audit_case(case, how.model, how.sandbox, how.options, auditor=auditor)
            except Exception as exc:  # noqa: BLE001 - one session's trouble is recorded, the audit goes on
                log.exception("%s: auditor session failed", rid)
                rep = AuditReport(id=rid, domain=case.domain, task_id=case.task_id, auditor=auditor,
                                  problems=[f"session error: {type(exc).__name__}: {exc}"])  # fmt: skip
            reused = False
        with lock:
            results[rid] = rep
            if not reused and out_path is not None:
                fd = open_append(out_path, follow=False)  # a regular file only
                try:
                    os.write(fd, (rep.model_dump_json() + "\n").encode("utf-8"))
                finally:
                    os.close(fd)
            if on_done is not None:
                on_done(rep, reused)

    with ThreadPoolExecutor(max_workers=max(1, how.concurrency)) as pool:
        list(pool.map(one, cases))
    ordered = [results[f"{c.domain}/{c.task_id}"] for c in cases]
    return ordered, sum(1 for c in cases if f"{c.domain}/{c.task_id}" in done)


def audit_failures(
    run_dir: Path,
    model: Model,
    sandbox: Sandbox,
    *,
    auditor: str,
    out_dir: Path | None = None,
    options: AuditorOptions | None = None,
    concurrency: int = 2,
    force: bool = False,
    task_ids: Iterable[str] | None = None,
    on_done: Callable[[AuditReport, bool], None] | None = None,
) -> FailuresAudit:
    """Audit every failure of the run in ``run_dir``; reports go to ``<out_dir>/failures.jsonl``."""
    cases, _manifest = failure_cases(Path(run_dir), task_ids=task_ids)
    out_dir = Path(out_dir) if out_dir is not None else Path(run_dir) / "audit"
    how = Auditing(model, sandbox, auditor, options, concurrency)
    reports, reused = run_sessions(cases, how, out_path=out_dir / REPORTS_NAME, force=force, on_done=on_done)
    audit = FailuresAudit(run_dir=str(run_dir), auditor=auditor, reports=reports, reused=reused)
    write_file(out_dir / "failures.json",
               json.dumps({"run_dir": str(run_dir), "auditor": auditor, "failures": len(reports),
                           "benchmark_share": audit.benchmark_share, "undecided": audit.undecided}, indent=1) + "\n",
               regular_only=True)  # fmt: skip
    return audit


__all__ = [
    "REPORTS_NAME",
    "Auditing",
    "FailuresAudit",
    "audit_failures",
    "failure_cases",
    "is_failure",
    "read_reports",
    "run_sessions",
]
