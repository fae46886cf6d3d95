"""Scoring a pipeline's warehouse (a DuckDB file): stage 1 (the loaded tables and their row counts), stage 2
(each data model's evaluation query compared with its ground truth under each comparator), and the
suite's metrics: SRDEL = pipelines passing stage 1 / all pipelines, SRDT = correct data models / all data
models (the paper's denominators: a model of a pipeline that failed stage 1 counts as incorrect).

The warehouse is opened read-only, with DuckDB's access to files, the network and extensions switched off
before any of its content is read: a view in a produced warehouse cannot read the ground truth or any host
file while it is scored.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kramabench.elt.compare import DEFAULT_COMPARATORS, TableResult, failed, get_comparator
from kramabench.elt.compare.values import Table
from kramabench.elt.suite.models import Pipeline, Suite
from kramabench.files import MB, read_text

log = logging.getLogger(__name__)


class TableCheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    expected: int | None
    found: int | None = Field(None, description="rows in the warehouse (None: no such table)")
    ok: bool
    reason: str | None = None


class Stage1(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passed: bool
    tables: dict[str, TableCheck] = Field(default_factory=dict)
    error: str | None = None


class ModelScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    #: comparator name -> result (absent when stage 2 did not run: stage 1 failed)
    results: dict[str, TableResult] = Field(default_factory=dict)
    error: str | None = Field(None, description="why the model was not compared (query failed, no ground truth)")

    def correct(self, comparator: str) -> bool:
        r = self.results.get(comparator)
        return bool(r and r.correct)


class PipelineScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pipeline: str
    stage1: Stage1
    models: list[ModelScore] = Field(default_factory=list)
    comparators: list[str] = Field(default_factory=list)

    def n_correct(self, comparator: str) -> int:
        return sum(1 for m in self.models if m.correct(comparator))


class SuiteMetrics(BaseModel):
    """SRDEL and SRDT (per comparator) over a suite, with the paper's denominators."""

    model_config = ConfigDict(extra="forbid")

    pipelines: int
    models: int
    stage1_passed: int
    srdel: float
    correct: dict[str, int] = Field(default_factory=dict)
    srdt: dict[str, float] = Field(default_factory=dict)
    scored_pipelines: int = Field(0, description="pipelines with a score (the rest count as failed)")


class WarehouseError(RuntimeError):
    """The warehouse file cannot be opened (absent, not a DuckDB file, no such schema)."""


def open_warehouse(path: Path, catalog: str, schema: str) -> Any:
    """A locked-down, read-only DuckDB connection with ``path`` attached as ``catalog`` and ``schema`` as the
    default schema (so ``<catalog>.<schema>.<t>`` and a bare ``<t>`` both name a warehouse table)."""
    import duckdb

    path = Path(path)
    if not path.is_file():
        raise WarehouseError(f"no warehouse file at {path}")
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute(f"ATTACH {_lit(str(path))} AS {_ident(catalog)} (READ_ONLY)")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        schemas = {r[0].lower(): r[0] for r in con.execute(
            "SELECT schema_name FROM information_schema.schemata WHERE catalog_name = ?", [catalog]).fetchall()}
        if schema.lower() not in schemas:
            raise WarehouseError(f"{path}: the warehouse has no schema {schema!r} (schemas: {', '.join(sorted(schemas))})")
        con.execute(f"USE {_ident(catalog)}.{_ident(schemas[schema.lower()])}")
    except duckdb.Error as e:
        con.close()
        raise WarehouseError(f"{path}: not a usable DuckDB warehouse: {str(e).splitlines()[0]}") from None
    except WarehouseError:
        con.close()
        raise
    return con


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def stage1(con: Any, pipeline: Pipeline, catalog: str, schema: str) -> Stage1:
    have = {r[0].lower(): r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = ? AND lower(table_schema) = lower(?)",
        [catalog, schema]).fetchall()}
    checks: dict[str, TableCheck] = {}
    for t, n in pipeline.tables.items():
        name = have.get(t.lower())
        if name is None:
            checks[t] = TableCheck(expected=n, ok=False, reason="not in the warehouse")
            continue
        try:
            found = int(con.execute(f"SELECT count(*) FROM {_ident(catalog)}.{_ident(schema)}.{_ident(name)}").fetchone()[0])
        except Exception as e:  # noqa: BLE001 - a broken view is the table's failure
            checks[t] = TableCheck(expected=n, ok=False, reason=f"cannot be read: {str(e).splitlines()[0]}")
            continue
        ok = n is not None and found == n
        reason = None if ok else ("no expected row count" if n is None else f"{found} rows, {n} expected")
        checks[t] = TableCheck(expected=n, found=found, ok=ok, reason=reason)
    return Stage1(passed=bool(checks) and all(c.ok for c in checks.values()), tables=checks)


def read_ground_truth(pipeline: Pipeline, model: str) -> Table:
    m = pipeline.model(model)
    if m.ground_truth is None or not (pipeline.folder / m.ground_truth).is_file():
        raise FileNotFoundError(f"{pipeline.id}: no ground truth for data model {m.name}")
    return Table.from_csv(pipeline.folder / m.ground_truth)


def run_query(con: Any, sql: str) -> Table:
    cur = con.execute(sql)
    cols = [d[0] for d in cur.description]
    return Table.from_db(cols, cur.fetchall())


def stage2(con: Any, pipeline: Pipeline, comparators: tuple[str, ...] | list[str] = DEFAULT_COMPARATORS) -> list[ModelScore]:
    out: list[ModelScore] = []
    for m in pipeline.models:
        try:
            expected = read_ground_truth(pipeline, m.name)
        except (OSError, UnicodeDecodeError) as e:
            out.append(ModelScore(model=m.name, error=f"ground truth unreadable: {e}"))
            continue
        if m.evaluation is None or not (pipeline.folder / m.evaluation).is_file():
            out.append(ModelScore(model=m.name, error="no evaluation query"))
            continue
        try:
            sql = read_text(pipeline.folder / m.evaluation, limit=16 * MB, what="evaluation query")
        except OSError as e:
            out.append(ModelScore(model=m.name, error=f"evaluation query unreadable: {e}"))
            continue
        try:
            actual = run_query(con, sql)
        except Exception as e:  # noqa: BLE001 - the model's failure, with DuckDB's reason
            msg = f"the evaluation query failed: {str(e).splitlines()[0]}"
            out.append(ModelScore(model=m.name, error=msg,
                                  results={c: failed(c, expected, msg) for c in comparators}))
            continue
        results = {c: get_comparator(c).compare(expected, actual, dropped=m.dropped_for(c)) for c in comparators}
        out.append(ModelScore(model=m.name, results=results))
    return out


def score_pipeline(suite: Suite, pipeline: Pipeline, warehouse: Path,
                   comparators: tuple[str, ...] | list[str] = DEFAULT_COMPARATORS) -> PipelineScore:
    """Stage 1, then (only when it passed) stage 2 of one pipeline's warehouse file."""
    comps = list(comparators)
    try:
        con = open_warehouse(warehouse, pipeline.id, suite.schema_name)
    except WarehouseError as e:
        return PipelineScore(pipeline=pipeline.id, comparators=comps, stage1=Stage1(passed=False, error=str(e)),
                             models=[ModelScore(model=m.name, error="stage 1 failed") for m in pipeline.models])
    try:
        s1 = stage1(con, pipeline, pipeline.id, suite.schema_name)
        if not s1.passed:
            models = [ModelScore(model=m.name, error="stage 1 failed: not compared") for m in pipeline.models]
        else:
            models = stage2(con, pipeline, comps)
    finally:
        con.close()
    return PipelineScore(pipeline=pipeline.id, stage1=s1, models=models, comparators=comps)


def metrics(suite: Suite, scores: list[PipelineScore],
            comparators: tuple[str, ...] | list[str] = DEFAULT_COMPARATORS) -> SuiteMetrics:
    """SRDEL over the suite's pipelines and SRDT over all its data models; a pipeline without a score counts
    as failed."""
    n_p = len(suite.pipelines)
    n_m = suite.n_models
    ids = {p.id for p in suite.pipelines}
    mine = [s for s in scores if s.pipeline in ids]
    passed = sum(1 for s in mine if s.stage1.passed)
    correct = {c: sum(s.n_correct(c) for s in mine) for c in comparators}
    return SuiteMetrics(pipelines=n_p, models=n_m, stage1_passed=passed, srdel=passed / n_p if n_p else 0.0,
                        correct=correct, srdt={c: (k / n_m if n_m else 0.0) for c, k in correct.items()},
                        scored_pipelines=len(mine))


__all__ = [
    "ModelScore", "PipelineScore", "Stage1", "SuiteMetrics", "TableCheck", "WarehouseError", "metrics",
    "open_warehouse", "read_ground_truth", "run_query", "score_pipeline", "stage1", "stage2",
]
