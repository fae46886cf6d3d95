"""``kramabench audit`` (``audit coverage``): which tasks the errata account for, and by which class.

Every task of a workload should carry one reviewed class (an errata file's ``[[review]]``, see
:class:`~kramabench.workload.models.TaskReview`). The coverage counts the tasks per class per domain and
names the tasks not yet accounted for; :func:`verify_derivations` re-runs the evidence (each review's
``derivation``) in the sandbox and checks that it still prints its ``derived`` value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from kramabench.workload.errata import ErrataFile, Erratum, same_json
from kramabench.workload.models import TASK_CLASSES, TaskReview, Workload

if TYPE_CHECKING:
    from kramabench.contracts.sandbox import Sandbox


class DomainCoverage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str
    tasks: int
    by_class: dict[str, int] = Field(
        default_factory=dict, description="class -> tasks (every class, 0 included)"
    )
    not_accounted: list[str] = Field(default_factory=list, description="task ids without a review")
    unknown: list[str] = Field(default_factory=list, description="reviews naming no task of the workload")

    @property
    def accounted(self) -> int:
        return self.tasks - len(self.not_accounted)


class Coverage(BaseModel):
    """Tasks per class per domain (saved by ``audit coverage --json``)."""

    model_config = ConfigDict(extra="forbid")

    errata: str | None
    root: str
    domains: list[DomainCoverage] = Field(default_factory=list)

    @property
    def complete(self) -> bool:
        return all(not d.not_accounted for d in self.domains)


def coverage(workloads: Iterable[Workload], errata: ErrataFile | None, *, root: str = "") -> Coverage:
    """Count the reviewed classes of each workload's tasks (``errata`` None: nothing is accounted for)."""
    out = Coverage(errata=str(errata.path) if errata is not None and errata.path else None, root=root)
    for wl in workloads:
        classes = errata.classes(wl.domain) if errata is not None else {}
        ids = [t.id for t in wl.tasks]
        by_class = dict.fromkeys(TASK_CLASSES, 0)
        for tid in ids:
            if tid in classes:
                by_class[classes[tid]] += 1
        out.domains.append(
            DomainCoverage(
                domain=wl.domain,
                tasks=len(ids),
                by_class=by_class,
                not_accounted=[t for t in ids if t not in classes],
                unknown=sorted(set(classes) - set(ids)),
            )
        )
    return out


class DerivationCheck(BaseModel):
    """One review's derivation, run again."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    task: str
    klass: str
    derived: Any = None
    printed: Any = None
    ok: bool
    detail: str = ""


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return same_json(a, b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return same_json(a, b)


def verify_derivations(
    reviews: Iterable[TaskReview | Erratum], lakes: dict[str, Any], sandbox: Sandbox, *, timeout_s: float = 300.0,
    memory_mb: int = 4096,
) -> list[DerivationCheck]:  # fmt: skip
    """Run each review's (or erratum's) ``derivation`` (lake at ``data/<domain>/input/``) and compare its last
    printed value with ``derived`` (an erratum's: ``new``). ``lakes``: domain -> lake folder; reviews of other domains are skipped."""
    from kramabench.audit.extract import extract_value
    from kramabench.contracts.sandbox import Limits

    out: list[DerivationCheck] = []
    for r in reviews:
        if r.derivation is None or r.domain not in lakes:
            continue
        if isinstance(r, Erratum):  # an erratum's derivation prints its corrected value
            where = f"{r.task} ({r.subtask})" if r.subtask else r.task
            base = dict(domain=r.domain, task=where, klass=f"erratum of {r.field}", derived=r.new)
        else:
            base = dict(domain=r.domain, task=r.task, klass=r.klass, derived=r.derived)
        res = sandbox.run(r.derivation, lakes[r.domain], Limits(wall_timeout_s=timeout_s, memory_mb=memory_mb),
                          workdir_lake=f"data/{r.domain}/input")  # fmt: skip
        if not res.ok:
            tail = (res.stderr or res.explanation or "").strip().splitlines()[-1:] or ["no output"]
            out.append(DerivationCheck(**base, ok=False, detail=f"did not run: {tail[0][:300]}"))
            continue
        lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
        try:  # the convention: the last line is the value as JSON
            value = json.loads(lines[-1]) if lines else None
            found = bool(lines)
        except ValueError:
            ext = extract_value(res.stdout)
            value, found = ext.value, ext.found
        if not found:
            out.append(DerivationCheck(**base, ok=False, detail="printed no value"))
            continue
        ok = _close(value, base["derived"])
        out.append(DerivationCheck(**base, printed=value, ok=ok, detail="" if ok else "prints another value"))
    return out


__all__ = ["Coverage", "DerivationCheck", "DomainCoverage", "coverage", "verify_derivations"]
