"""Errata of an ELT suite: reviewed corrections, each with its reason, applied when a suite is loaded.

An errata set is a TOML file ``<root>/errata/<name>.toml``::

    name = "verified"                    # optional (default: the file name)
    description = "..."
    source = "where the corrections come from"
    comparators = ["verified"]           # optional: the comparators whose comparisons see the corrections
                                         # (default: every comparator)

    [[erratum]]
    pipeline = "address"
    model = "states"
    action = "drop_column"               # leave a ground-truth column out of the comparison
    column = "COUNTY_WITH_HIGHEST_AVERAGE_INCOME_PER_HOUSEHOLD"
    reason = "the ground truth cannot be derived from the sources and the description"

    [[erratum]]
    pipeline = "address"
    action = "set_row_count"             # stage 1: the expected row count of a loaded table
    table = "state"
    old = 62
    new = 60
    reason = "..."

    [[erratum]]
    pipeline = "shipping"
    model = "drivers"
    action = "set_evaluation"            # replace the evaluation query (a file relative to the pipeline)
    new = "evaluation/drivers.fixed.sql"
    reason = "..."

An erratum whose target is gone or already holds the new value is not applied and becomes a finding
(``erratum_target_missing``, ``erratum_stale``, ``erratum_obsolete``), as for KramaBench's errata.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kramabench.elt.suite.errors import SuiteError
from kramabench.elt.suite.models import ErratumApplied, Pipeline
from kramabench.files import ERRATA_BYTES, first_error, read_text
from kramabench.workload.models import Finding

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 only
    import tomli as tomllib


class EltErratum(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pipeline: str
    action: Literal["drop_column", "set_row_count", "set_evaluation"]
    model: str | None = None
    column: str | None = None
    table: str | None = None
    old: Any = None
    new: Any = None
    reason: str = Field(min_length=3)

    @model_validator(mode="after")
    def _fields(self) -> EltErratum:
        need = {
            "drop_column": ("model", "column"),
            "set_row_count": ("table", "new"),
            "set_evaluation": ("model", "new"),
        }[self.action]
        missing = [f for f in need if getattr(self, f) is None]
        if missing:
            raise ValueError(f"action {self.action!r} needs {', '.join(missing)}")
        return self


class ErrataSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    path: Path | None = None
    description: str = ""
    source: str = ""
    comparators: list[str] = Field(default_factory=list, description="empty: every comparator")
    errata: list[EltErratum] = Field(default_factory=list, alias="erratum")


def errata_dir(root: Path) -> Path:
    return Path(root) / "errata"


def available_errata(root: Path) -> list[str]:
    d = errata_dir(root)
    return sorted(p.stem for p in d.glob("*.toml")) if d.is_dir() else []


def load_errata_set(root: Path, name: str) -> ErrataSet:
    path = errata_dir(root) / f"{name}.toml"
    if not path.is_file():
        have = ", ".join(available_errata(root)) or "none"
        raise SuiteError(
            f"{path}: no errata set {name!r} in this suite (errata sets: {have})", file=str(path)
        )
    try:
        doc = tomllib.loads(read_text(path, limit=ERRATA_BYTES, what="errata set"))
    except (OSError, tomllib.TOMLDecodeError, RecursionError) as e:
        raise SuiteError(f"{path}: cannot read the errata set: {e}", file=str(path)) from None
    doc.setdefault("name", name)
    try:
        es = ErrataSet.model_validate({**doc, "path": path})
    except ValidationError as e:
        loc, msg, _ = first_error(e)
        n = e.error_count()
        raise SuiteError(
            f"{path}: field {loc}: {msg}" + (f" (and {n - 1} more)" if n > 1 else ""),
            file=str(path),
            field=loc,
        ) from None
    return es


def apply_errata(pipelines: list[Pipeline], es: ErrataSet) -> tuple[list[ErratumApplied], list[Finding]]:
    """Apply one errata set to the pipelines in place; what was applied, and findings for what was not."""
    by_id = {p.id: p for p in pipelines}
    applied: list[ErratumApplied] = []
    findings: list[Finding] = []
    file = str(es.path) if es.path else None

    def finding(code: str, e: EltErratum, msg: str) -> None:
        findings.append(
            Finding(
                severity="warning",
                code=code,
                domain=None,
                task_id=e.pipeline,
                subtask_id=e.model,
                field=e.column or e.table,
                file=file,
                message=f"errata {es.name}: {msg}; not applied",
            )
        )

    def applied_as(e: EltErratum, pipeline: str, **what: Any) -> None:
        applied.append(
            ErratumApplied(errata=es.name, pipeline=pipeline, action=e.action, reason=e.reason, **what)
        )

    for e in es.errata:
        p = by_id.get(e.pipeline)
        if p is None:
            finding("erratum_target_missing", e, f"no pipeline {e.pipeline!r}")
            continue
        if e.action == "set_row_count":
            key = next((t for t in p.tables if t.lower() == str(e.table).lower()), None)
            if key is None:
                finding("erratum_target_missing", e, f"{e.pipeline}: no expected table {e.table!r}")
                continue
            if p.tables[key] == e.new:
                finding("erratum_obsolete", e, f"{e.pipeline}.{key}: the row count is already {e.new}")
                continue
            if e.old is not None and p.tables[key] != e.old:
                finding(
                    "erratum_stale", e, f"{e.pipeline}.{key}: the row count is {p.tables[key]}, not {e.old}"
                )
                continue
            old = p.tables[key]
            p.tables[key] = int(e.new)
            applied_as(e, p.id, target=key, old=old, new=e.new)
            continue
        try:
            m = p.model(str(e.model))
        except KeyError:
            finding("erratum_target_missing", e, f"{e.pipeline}: no data model {e.model!r}")
            continue
        if e.action == "drop_column":
            col = str(e.column)
            names = {c.name.lower() for c in m.columns}
            if names and col.lower() not in names:
                finding("erratum_target_missing", e, f"{e.pipeline}.{m.name}: no column {col!r}")
                continue
            scopes = es.comparators or ["*"]
            if all(col.lower() in {k.lower() for k in m.dropped_columns.get(s, {})} for s in scopes):
                finding("erratum_obsolete", e, f"{e.pipeline}.{m.name}.{col} is already dropped")
                continue
            for s in scopes:
                m.dropped_columns.setdefault(s, {})[col] = e.reason
            applied_as(e, p.id, model=m.name, target=col, comparators=list(es.comparators))
        else:  # set_evaluation
            new = str(e.new)
            if m.evaluation == new:
                finding(
                    "erratum_obsolete", e, f"{e.pipeline}.{m.name}: the evaluation query is already {new}"
                )
                continue
            if e.old is not None and m.evaluation != e.old:
                finding(
                    "erratum_stale",
                    e,
                    f"{e.pipeline}.{m.name}: the evaluation query is {m.evaluation}, not {e.old}",
                )
                continue
            if not (p.folder / new).is_file():
                finding("erratum_target_missing", e, f"{e.pipeline}: no file {new}")
                continue
            old_query = m.evaluation
            m.evaluation = new
            applied_as(e, p.id, model=m.name, target="evaluation", old=old_query, new=new)
    return applied, findings


__all__ = ["EltErratum", "ErrataSet", "apply_errata", "available_errata", "load_errata_set"]
