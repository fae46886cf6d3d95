"""How far can the Auditor be trusted? ``k`` runs on a labelled set, agreement with the labels.

The labelled set of a workload is ``<root>/audit_check/labels.json``: for each case a task id, the
answer and code of a system that failed it, and the true label (attribution, category, sub-kind).
Each of the ``k`` runs audits every case afresh (the model cache is off, so runs are independent
requests); agreement with the labels is Cohen's kappa over all (run, case) pairs, at the attribution
level and at the category level, beside plain accuracy and the flip rate (cases whose verdict changes
between runs).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from kramabench.audit.auditor import AuditorOptions, AuditReport, FailureCase
from kramabench.audit.failures import Auditing, run_sessions, solution_text
from kramabench.files import SMALL_JSON_BYTES, read_bytes
from kramabench.workload.solutions import solution_of

if TYPE_CHECKING:
    from kramabench.contracts.model import Model
    from kramabench.contracts.sandbox import Sandbox

LABELS_PATH = "audit_check/labels.json"


class Label(BaseModel):
    model_config = ConfigDict(extra="forbid")

    attribution: str
    category: str
    sub_kind: str | None = None


class LabelledCase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str
    task_id: str
    system_answer: Any = None
    system_code: str | None = None
    label: Label
    note: str | None = None


class CaseAgreement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str
    label: Label
    verdicts: list[tuple[str, str | None]] = Field(
        default_factory=list, description="(attribution, category) per run"
    )

    @property
    def flipped(self) -> bool:
        return len(set(self.verdicts)) > 1


class ReliabilityResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    auditor: str
    k: int
    cases: list[CaseAgreement] = Field(default_factory=list)
    kappa_attribution: float | None = None
    kappa_category: float | None = None
    accuracy_attribution: float | None = None
    accuracy_category: float | None = None
    flip_rate: float | None = None
    reports: list[AuditReport] = Field(default_factory=list)


def cohen_kappa(pairs: Sequence[tuple[Hashable, Hashable]]) -> float | None:
    """Cohen's kappa of (rater A, rater B) label pairs over any number of classes; None when undefined."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    ca, cb = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(ca[c] * cb.get(c, 0) for c in ca) / (n * n)
    if expected >= 1.0:
        return 1.0 if observed >= 1.0 else None
    return (observed - expected) / (1 - expected)


def load_labels(root: Path) -> list[LabelledCase]:
    path = Path(root) / LABELS_PATH
    if not os.path.lexists(path):
        raise FileNotFoundError(f"{path}: no labelled set (expected {LABELS_PATH} in the workload root)")
    data = json.loads(read_bytes(path, limit=SMALL_JSON_BYTES, what="labelled set"))
    return [LabelledCase.model_validate(c) for c in data.get("cases", [])]


def labelled_failure_cases(
    root: Path, labelled: list[LabelledCase], *, errata: bool = True
) -> list[FailureCase]:
    """The auditor's view of each labelled case (gold, question, reference solution from the workload)."""
    from kramabench.scorers.registry import score
    from kramabench.workload import load_workload

    workloads: dict[str, Any] = {}
    out = []
    for c in labelled:
        wl = workloads.get(c.domain) or workloads.setdefault(
            c.domain, load_workload(root, c.domain, errata=errata)
        )
        task = wl.task(c.task_id)
        sol = solution_of(wl, task)
        s = score(task.answer, c.system_answer, task.answer_type, question=task.query)
        out.append(FailureCase(
            domain=c.domain, task_id=c.task_id, question=task.query,
            answer_type=task.answer_type, gold=task.answer,
            system="labelled", system_answer=c.system_answer, system_code=c.system_code, score=s.value,
            score_details=s.details,
            reference_solution=solution_text(sol),
            data_sources=task.data_sources or [], lake=wl.lake,
            subtasks=[{"id": st.id, "query": st.query, "gold": st.answer} for st in task.subtasks],
        ))  # fmt: skip
    return out


def check_reliability(
    root: Path, model: Model, sandbox: Sandbox, *, auditor: str, k: int = 3, concurrency: int = 2,
    options: AuditorOptions | None = None,
) -> ReliabilityResult:  # fmt: skip
    labelled = load_labels(root)
    cases = labelled_failure_cases(root, labelled)
    result = ReliabilityResult(auditor=auditor, k=k)
    agreements = [CaseAgreement(task_id=c.task_id, label=c.label) for c in labelled]
    how = Auditing(model, sandbox, auditor, options, concurrency)
    for _run in range(k):
        reports, _ = run_sessions(cases, how)
        for agreement, rep in zip(agreements, reports, strict=True):
            agreement.verdicts.append((rep.attribution, rep.category))
        result.reports.extend(reports)
    result.cases = agreements
    attr_pairs = [(a.label.attribution, v[0]) for a in agreements for v in a.verdicts]
    cat_pairs = [(a.label.category, v[1] or "none") for a in agreements for v in a.verdicts]
    result.kappa_attribution = cohen_kappa(attr_pairs)
    result.kappa_category = cohen_kappa(cat_pairs)
    if attr_pairs:
        result.accuracy_attribution = sum(a == b for a, b in attr_pairs) / len(attr_pairs)
        result.accuracy_category = sum(a == b for a, b in cat_pairs) / len(cat_pairs)
    if agreements and k > 1:
        result.flip_rate = sum(a.flipped for a in agreements) / len(agreements)
    return result


__all__ = [
    "LABELS_PATH",
    "CaseAgreement",
    "Label",
    "LabelledCase",
    "ReliabilityResult",
    "check_reliability",
    "cohen_kappa",
    "labelled_failure_cases",
    "load_labels",
]
