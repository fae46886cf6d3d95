"""Scoring a pipeline's warehouse (a DuckDB file): stage 1 (the loaded tables and their row counts), stage 2
(each data model's evaluation query compared with its ground truth under each comparator), and the
suite's metrics: SRDEL = pipelines passing stage 1 / all pipelines, SRDT = correct data models / all data
models (the paper's denominators: a model of a pipeline that failed stage 1 counts as incorrect).

The warehouse is opened read-only, with DuckDB's access to files, the network and extensions switched off
before any of its content is read: a view in a produced warehouse cannot read the ground truth or any host
file while it is scored.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kramabench.elt.compare import DEFAULT_COMPARATORS, TableResult, failed, get_comparator
from kramabench.elt.compare.original import OriginalUnreadable, render_result
from kramabench.elt.compare.values import Table
from kramabench.elt.suite.models import DataModel, Pipeline, Suite
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
    error: str | None = Field(
        None, description="why the model was not compared (query failed, no ground truth)"
    )

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
        schemas = {
            r[0].lower(): r[0]
            for r in con.execute(
                "SELECT schema_name FROM information_schema.schemata WHERE catalog_name = ?", [catalog]
            ).fetchall()
        }
        if schema.lower() not in schemas:
            raise WarehouseError(
                f"{path}: the warehouse has no schema {schema!r} (schemas: {', '.join(sorted(schemas))})"
            )
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


@contextmanager
def _deadline(con: Any, seconds: float | None) -> Iterator[None]:
    """Interrupt what ``con`` runs after ``seconds`` (a view of the system's that never ends): the statement
    fails with DuckDB's interrupt error."""
    if not seconds:
        yield
        return
    timer = threading.Timer(seconds, con.interrupt)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _why(e: Exception, seconds: float | None) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    if "INTERRUPT" in text.upper():
        return f"took longer than {seconds:g} s (a view that does not end?)" if seconds else "interrupted"
    return text


def stage1(
    con: Any, pipeline: Pipeline, catalog: str, schema: str, *, timeout_s: float | None = None
) -> Stage1:
    # as the original: only base tables count (a view of the source is not a loaded table)
    have = {
        r[0].lower(): r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = ? AND lower(table_schema) = lower(?) "
            "AND table_type = 'BASE TABLE'",
            [catalog, schema],
        ).fetchall()
    }
    views = {
        r[0].lower()
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = ? AND lower(table_schema) = lower(?) "
            "AND table_type <> 'BASE TABLE'",
            [catalog, schema],
        ).fetchall()
    }
    checks: dict[str, TableCheck] = {}
    for t, n in pipeline.tables.items():
        name = have.get(t.lower())
        if name is None:
            why = (
                "a view, not a loaded table (stage 1 counts base tables only, as the original)"
                if t.lower() in views
                else "not in the warehouse"
            )
            checks[t] = TableCheck(expected=n, ok=False, reason=why)
            continue
        try:
            with _deadline(con, timeout_s):
                found = int(
                    con.execute(
                        f"SELECT count(*) FROM {_ident(catalog)}.{_ident(schema)}.{_ident(name)}"
                    ).fetchone()[0]
                )
        except Exception as e:  # noqa: BLE001 - a broken view is the table's failure
            checks[t] = TableCheck(expected=n, ok=False, reason=f"cannot be read: {_why(e, timeout_s)}")
            continue
        ok = n is not None and found == n
        reason = None if ok else ("no expected row count" if n is None else f"{found} rows, {n} expected")
        checks[t] = TableCheck(expected=n, found=found, ok=ok, reason=reason)
    return Stage1(passed=all(c.ok for c in checks.values()), tables=checks)


def read_ground_truth(pipeline: Pipeline, model: str) -> Table:
    """The model's ground truth as the original reads it (``pandas.read_csv``). Raises FileNotFoundError, or
    :class:`~kramabench.elt.compare.original.OriginalUnreadable` naming the file and pandas' reason."""
    m = pipeline.model(model)
    if m.ground_truth is None or not (pipeline.folder / m.ground_truth).is_file():
        raise FileNotFoundError(f"{pipeline.id}: no ground truth for data model {m.name}")
    return Table.from_csv(pipeline.folder / m.ground_truth)


class QueryResult(BaseModel):
    """What a data model's evaluation query returned (or why it failed)."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

    model: str
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    truncated: bool = Field(False, description="the query returned more rows than were read (row_cap)")
    original_csv: str | None = Field(
        None,
        description="the result as ELT-Bench's evaluation writes it: "
        "pandas.read_sql's frame of the rows read, to_csv(index=False)",
    )
    error: str | None = None

    def table(self) -> Table:
        return Table(self.columns, [tuple(r) for r in self.rows], original_csv=self.original_csv)


class WarehouseRead(BaseModel):
    """Everything the scorer reads from a warehouse: stage 1 and (when it passed) each query's result."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

    stage1: Stage1
    queries: list[QueryResult] = Field(default_factory=list)


#: compare(model, expected, actual, comparators) -> comparator name -> result
Compare = Callable[[DataModel, Table, Table, list[str]], dict[str, TableResult]]


def compare_direct(
    model: DataModel, expected: Table, actual: Table, comparators: list[str]
) -> dict[str, TableResult]:
    """Each comparator of :mod:`kramabench.elt.compare` on the pair, with the model's dropped columns."""
    return {c: get_comparator(c).compare(expected, actual, dropped=model.dropped_for(c)) for c in comparators}


def _value_bytes(v: Any) -> int:
    """About the bytes ``v`` takes in the reader's JSON answer (a bound, not an exact count: no JSON is built)."""
    if v is None:
        return 4
    if isinstance(v, str):
        return len(v) + 2
    if isinstance(v, bool):
        return 5
    if isinstance(v, int | float):
        return len(repr(v))
    return len(str(v)) + 2


def _fetch(
    cur: Any, cols: list[str], row_cap: int | None, byte_cap: int | None
) -> tuple[list[list[Any]], list[tuple[Any, ...]], bool, int | None]:
    """The rows of ``cur`` read in batches, made canonical: (rows, more rows than ``row_cap``, None or the bytes read
    when they passed ``byte_cap``: the read stopped there)."""
    rows: list[list[Any]] = []
    raw: list[tuple[Any, ...]] = []
    size = 2
    want = None if row_cap is None else row_cap + 1
    while want is None or len(rows) < want:
        batch = cur.fetchmany(1024 if want is None else min(1024, want - len(rows)))
        if not batch:
            break
        for one, r in zip(batch, Table.from_db(cols, batch).rows, strict=True):
            if byte_cap is not None:
                size += 2 + sum(_value_bytes(v) + 1 for v in r)
                if size > byte_cap:
                    return rows, raw, False, size
            rows.append(list(r))
            raw.append(tuple(one))
    truncated = row_cap is not None and len(rows) > row_cap
    if truncated:
        return rows[:row_cap], raw[:row_cap], True, None
    return rows, raw, False, None


def read_warehouse(
    pipeline: Pipeline,
    warehouse: Path,
    schema: str,
    *,
    row_caps: dict[str, int] | None = None,
    query_timeout_s: float | None = None,
    byte_caps: dict[str, int] | None = None,
) -> WarehouseRead:
    """Stage 1, then (only when it passed) each data model's evaluation query, on a locked-down read-only
    connection. ``row_caps``: model -> the most rows read of its result (more is reported as truncated);
    ``byte_caps``: model -> the most bytes of values read of its result (more fails the model: a result that much
    larger than its ground truth cannot equal it); ``query_timeout_s``: each statement is interrupted after that long
    (its table or model fails, the rest is read)."""
    try:
        con = open_warehouse(warehouse, pipeline.id, schema)
    except WarehouseError as e:
        return WarehouseRead(stage1=Stage1(passed=False, error=str(e)))
    try:
        s1 = stage1(con, pipeline, pipeline.id, schema, timeout_s=query_timeout_s)
        queries: list[QueryResult] = []
        if s1.passed:
            for m in pipeline.models:
                if m.evaluation is None or not (pipeline.folder / m.evaluation).is_file():
                    queries.append(QueryResult(model=m.name, error="no evaluation query"))
                    continue
                try:
                    sql = read_text(pipeline.folder / m.evaluation, limit=16 * MB, what="evaluation query")
                except OSError as e:
                    queries.append(QueryResult(model=m.name, error=f"evaluation query unreadable: {e}"))
                    continue
                cap = (row_caps or {}).get(m.name)
                byte_cap = (byte_caps or {}).get(m.name)
                try:
                    with _deadline(con, query_timeout_s):
                        cur = con.execute(sql)
                        cols = [d[0] for d in cur.description]
                        rows, raw, truncated, over = _fetch(cur, cols, cap, byte_cap)
                except Exception as e:  # noqa: BLE001 - the model's failure, with DuckDB's reason
                    queries.append(
                        QueryResult(
                            model=m.name, error=f"the evaluation query failed: {_why(e, query_timeout_s)}"
                        )
                    )
                    continue
                if over is not None:
                    queries.append(
                        QueryResult(
                            model=m.name,
                            columns=cols,
                            error=(
                                f"the evaluation query's result is larger than {byte_cap:,} bytes (8 times its ground truth and "
                                f"4 MiB; {over:,} bytes read when the read stopped): it cannot equal the ground truth, not "
                                "compared"
                            ),
                        )
                    )
                    continue
                try:
                    original = render_result(cols, raw)
                except Exception as e:  # noqa: BLE001 - the original logs an Error: for the model
                    queries.append(
                        QueryResult(
                            model=m.name,
                            columns=cols,
                            rows=rows,
                            truncated=truncated,
                            error=f"pandas could not frame the result as the original reads it: "
                            f"{type(e).__name__}: {e}",
                        )
                    )
                    continue
                queries.append(
                    QueryResult(
                        model=m.name, columns=cols, rows=rows, truncated=truncated, original_csv=original
                    )
                )
    finally:
        con.close()
    return WarehouseRead(stage1=s1, queries=queries)


#: bytes of the reader's answer beyond the sum of the models' byte caps (stage 1, names, JSON punctuation)
ANSWER_SLACK_BYTES = 4 << 20


def read_warehouse_isolated(
    pipeline: Pipeline,
    warehouse: Path,
    schema: str,
    *,
    row_caps: dict[str, int] | None = None,
    timeout_s: float = 600.0,
    query_timeout_s: float = 120.0,
    memory_mb: int = 4096,
    byte_caps: dict[str, int] | None = None,
) -> WarehouseRead:
    """:func:`read_warehouse` in a child process (``python -m kramabench.elt.read_worker``) with a wall-clock
    and a memory limit: the warehouse is made by the system's code, and its views run while it is read (a
    crafted file that crashes DuckDB, a view that never ends or fills the memory is the task's failure, never
    the run's). Its answer is read as it comes, at most the models' byte caps and :data:`ANSWER_SLACK_BYTES`
    (a larger answer stops the child and fails the read): what a warehouse holds never inflates this process."""
    import os
    import signal
    import threading

    req = {
        "pipeline": pipeline.model_dump(mode="json"),
        "warehouse": str(warehouse),
        "schema": schema,
        "row_caps": row_caps or {},
        "memory_mb": memory_mb,
        "query_timeout_s": query_timeout_s,
        "byte_caps": byte_caps or {},
    }
    limit = sum((byte_caps or {}).values()) + ANSWER_SLACK_BYTES if byte_caps else None
    proc = subprocess.Popen(
        [sys.executable, "-m", "kramabench.elt.read_worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_worker_env(),
        start_new_session=True,
    )
    err_tail = bytearray()
    timed_out = threading.Event()

    def kill() -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def drain_stderr() -> None:
        assert proc.stderr is not None
        for chunk in iter(partial(proc.stderr.read, 1 << 16), b""):
            err_tail.extend(chunk)
            del err_tail[:-8192]

    def on_timeout() -> None:
        timed_out.set()
        kill()

    timer = threading.Timer(timeout_s, on_timeout)
    timer.daemon = True
    reader = threading.Thread(target=drain_stderr, daemon=True)
    reader.start()
    timer.start()
    out = bytearray()
    too_large = False
    try:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(req).encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass
        for chunk in iter(partial(proc.stdout.read, 1 << 16), b""):
            out.extend(chunk)
            if limit is not None and len(out) > limit:
                too_large = True
                kill()
                break
        code = proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            kill()
            proc.wait()
        reader.join(timeout=5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    if timed_out.is_set():
        return WarehouseRead(
            stage1=Stage1(
                passed=False,
                error=f"reading the warehouse took longer than {timeout_s:g} s "
                "(a view that does not end?); not scored",
            )
        )
    if too_large:
        return WarehouseRead(
            stage1=Stage1(
                passed=False,
                error=f"the warehouse reader's answer passed {limit:,} bytes "
                "(more than the data models' results may take); not "
                "scored",
            )
        )
    if code != 0:
        err = bytes(err_tail).decode(errors="replace").strip().splitlines()
        why = err[-1] if err else f"exit code {code}"
        if code < 0:
            why = f"killed by signal {-code}" + (f" ({why})" if err else "")
        return WarehouseRead(stage1=Stage1(passed=False, error=f"the warehouse could not be read: {why}"))
    try:
        return WarehouseRead.model_validate_json(bytes(out))
    except ValueError as e:
        return WarehouseRead(
            stage1=Stage1(passed=False, error=f"the warehouse reader answered nonsense: {e}")
        )


def _worker_env() -> dict[str, str]:
    import os

    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV")
    return {k: v for k, v in os.environ.items() if k in keep}


def score_read(
    pipeline: Pipeline,
    read: WarehouseRead,
    comparators: tuple[str, ...] | list[str] = DEFAULT_COMPARATORS,
    *,
    compare: Compare | None = None,
) -> PipelineScore:
    """Stage 2 from what was read: each query's result against its ground truth under each comparator."""
    comps = list(comparators)
    cmp = compare or compare_direct
    if not read.stage1.passed:
        why = "stage 1 failed: not compared" if read.stage1.error is None else "stage 1 failed"
        return PipelineScore(
            pipeline=pipeline.id,
            stage1=read.stage1,
            comparators=comps,
            models=[ModelScore(model=m.name, error=why) for m in pipeline.models],
        )
    by_model = {q.model.lower(): q for q in read.queries}
    out: list[ModelScore] = []
    for m in pipeline.models:
        try:
            expected = read_ground_truth(pipeline, m.name)
        except (OSError, UnicodeDecodeError, OriginalUnreadable) as e:
            out.append(ModelScore(model=m.name, error=f"ground truth unreadable: {e}"))
            continue
        q = by_model.get(m.name.lower())
        if q is None or q.error is not None:
            msg = q.error if q is not None and q.error is not None else "not read"
            results = (
                {c: failed(c, expected, msg) for c in comps}
                if q is not None and q.error != "no evaluation query"
                else {}
            )
            out.append(ModelScore(model=m.name, error=msg, results=results))
            continue
        out.append(
            ModelScore(
                model=m.name,
                results=cmp(m, expected, q.table(), comps),
                error=f"the query returned more than {len(q.rows)} rows; the rest was not read"
                if q.truncated
                else None,
            )
        )
    return PipelineScore(pipeline=pipeline.id, stage1=read.stage1, models=out, comparators=comps)


def row_caps(pipeline: Pipeline, *, slack: int = 10_000) -> dict[str, int]:
    """The most rows read of each model's result: the ground truth's rows and ``slack`` more (a table that much
    longer is wrong under every comparator)."""
    caps: dict[str, int] = {}
    for m in pipeline.models:
        n = 0
        if m.ground_truth and (pipeline.folder / m.ground_truth).is_file():
            with open(pipeline.folder / m.ground_truth, "rb") as f:
                n = sum(1 for _ in f)
        caps[m.name] = 2 * n + slack
    return caps


def byte_caps(pipeline: Pipeline, *, factor: int = 8, slack: int = 4 << 20) -> dict[str, int]:
    """The most bytes of values read of each model's result: ``factor`` times its ground truth file and ``slack``
    more (JSON spells a CSV's empty cell ``null``: a result that is larger cannot equal the ground truth)."""
    caps: dict[str, int] = {}
    for m in pipeline.models:
        n = 0
        if m.ground_truth and (pipeline.folder / m.ground_truth).is_file():
            n = (pipeline.folder / m.ground_truth).stat().st_size
        caps[m.name] = factor * n + slack
    return caps


def score_pipeline(
    suite: Suite | str,
    pipeline: Pipeline,
    warehouse: Path,
    comparators: tuple[str, ...] | list[str] = DEFAULT_COMPARATORS,
    *,
    isolated: bool = False,
    compare: Compare | None = None,
    timeout_s: float = 600.0,
    query_timeout_s: float = 120.0,
) -> PipelineScore:
    """Stage 1, then (only when it passed) stage 2 of one pipeline's warehouse file. ``suite``: the suite or its
    warehouse schema name. ``isolated``: read the warehouse in a child process with limits
    (:func:`read_warehouse_isolated`; what a run does)."""
    schema = suite if isinstance(suite, str) else suite.schema_name
    caps = row_caps(pipeline)
    sizes = byte_caps(pipeline)
    if isolated:
        read = read_warehouse_isolated(
            pipeline,
            warehouse,
            schema,
            row_caps=caps,
            timeout_s=timeout_s,
            query_timeout_s=query_timeout_s,
            byte_caps=sizes,
        )
    else:
        read = read_warehouse(
            pipeline, warehouse, schema, row_caps=caps, query_timeout_s=query_timeout_s, byte_caps=sizes
        )
    return score_read(pipeline, read, comparators, compare=compare)


def metrics(
    suite: Suite, scores: list[PipelineScore], comparators: tuple[str, ...] | list[str] = DEFAULT_COMPARATORS
) -> SuiteMetrics:
    """SRDEL over the suite's pipelines and SRDT over all its data models; a pipeline without a score counts
    as failed."""
    n_p = len(suite.pipelines)
    n_m = suite.n_models
    ids = {p.id for p in suite.pipelines}
    mine = [s for s in scores if s.pipeline in ids]
    passed = sum(1 for s in mine if s.stage1.passed)
    correct = {c: sum(s.n_correct(c) for s in mine) for c in comparators}
    return SuiteMetrics(
        pipelines=n_p,
        models=n_m,
        stage1_passed=passed,
        srdel=passed / n_p if n_p else 0.0,
        correct=correct,
        srdt={c: (k / n_m if n_m else 0.0) for c, k in correct.items()},
        scored_pipelines=len(mine),
    )


__all__ = [
    "Compare",
    "ModelScore",
    "PipelineScore",
    "QueryResult",
    "Stage1",
    "SuiteMetrics",
    "TableCheck",
    "WarehouseError",
    "WarehouseRead",
    "byte_caps",
    "compare_direct",
    "metrics",
    "open_warehouse",
    "read_ground_truth",
    "read_warehouse",
    "read_warehouse_isolated",
    "row_caps",
    "score_pipeline",
    "score_read",
    "stage1",
]
