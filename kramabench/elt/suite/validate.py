"""The validator of an ELT suite: every defect as a :class:`~kramabench.workload.models.Finding` naming the
pipeline (``task_id``), the data model (``subtask_id``), the file and the field.

Codes (severity): ``no_sources``, ``no_models``, ``duplicate_table``, ``duplicate_model``, ``format_missing``
(files and s3 need a format), ``source_data_missing``, ``row_count_unknown``, ``evaluation_missing``,
``evaluation_unparsable``, ``ground_truth_missing`` (errors in a complete suite; info in a specs-only one
where it says the data is not there), ``table_not_a_source``, ``source_not_loaded``,
``schema_missing`` (warnings), ``ground_truth_ragged`` (error: a row with another number of fields than the
header, naming the file and the line), ``ground_truth_unreadable`` (error: empty or not UTF-8), and with
``deep``: ``row_count_mismatch`` (error), ``ground_truth_extra_column``, ``ground_truth_missing_column``
(warnings).
"""

from __future__ import annotations

import json
from pathlib import Path

from kramabench.elt.suite.models import DataModel, Pipeline, Suite
from kramabench.files import MB, read_text
from kramabench.workload.models import Finding, Severity


def parse_error(sql: str) -> str | None:
    """DuckDB's parser's complaint about ``sql`` (None: it parses). Nothing is bound or run."""
    import duckdb

    con = duckdb.connect()
    try:
        # the cast: duckdb 1.1 binds a parameter of json_serialize_sql as no type and refuses it
        row = con.execute("SELECT json_serialize_sql(CAST(? AS VARCHAR))", [sql]).fetchone()
        assert row is not None  # a SELECT of one value: one row
        doc = json.loads(row[0])
    finally:
        con.close()
    if doc.get("error"):
        return str(doc.get("error_message") or "syntax error")
    n = len(doc.get("statements") or [])
    if n != 1:
        return f"{n} statements; an evaluation query is one SELECT"
    return None


def count_rows(path: Path) -> int:
    """Rows of a data file (csv with a header, jsonl, parquet), counted by DuckDB."""
    import duckdb

    con = duckdb.connect()
    try:
        if path.suffix.lower() == ".csv":
            q = "SELECT count(*) FROM read_csv(?, header=true, all_varchar=true)"
        elif path.suffix.lower() == ".jsonl":
            q = "SELECT count(*) FROM read_json(?, format='newline_delimited', records=false)"
        else:
            q = "SELECT count(*) FROM read_parquet(?)"
        row = con.execute(q, [str(path)]).fetchone()
        assert row is not None  # count(*): one row
        return int(row[0])
    finally:
        con.close()


def csv_header(path: Path) -> list[str]:
    import csv

    with open(path, newline="", encoding="utf-8-sig") as f:
        return next(csv.reader(f), [])


def ragged_row(path: Path) -> tuple[int, int, int] | None:
    """(line, fields, the header's fields) of the first row of a CSV whose number of fields is not the header's
    (None: every row has the header's). Blank lines are skipped, as ``pandas.read_csv`` skips them. Raises
    ValueError for a file without a header row, OSError/UnicodeDecodeError when it cannot be read."""
    import csv

    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if not header:
            raise ValueError("the file is empty: no header row")
        for row in reader:
            if row and len(row) != len(header):
                return reader.line_num, len(row), len(header)
    return None


class _Findings:
    """The findings about one pipeline, each naming it (``task_id``) and its file (default: ``pipeline.yaml``)."""

    def __init__(self, suite: Suite, p: Pipeline) -> None:
        self.suite = suite
        self.pipeline = p
        self.file = str(p.folder / "pipeline.yaml")
        self.out: list[Finding] = []

    def add(
        self,
        sev: Severity,
        code: str,
        msg: str,
        *,
        field: str | None = None,
        model: str | None = None,
        file: str | None = None,
    ) -> None:
        self.out.append(
            Finding(
                severity=sev,
                code=code,
                domain=self.suite.name,
                task_id=self.pipeline.id,
                subtask_id=model,
                field=field,
                file=file or self.file,
                message=f"pipeline {self.pipeline.id}: {msg}",
            )
        )


def _check_model(findings: _Findings, i: int, m: DataModel, absent: Severity, deep: bool) -> None:
    """The findings about data model ``m``, the ``i``-th of the pipeline (but a duplicate name)."""
    folder = findings.pipeline.folder

    def about(sev: Severity, code: str, msg: str, part: str | None, file: str | None = None) -> None:
        """A finding about ``m`` (``msg`` follows its name), in its field ``part`` (None: none)."""
        field = None if part is None else f"models[{i}].{part}"
        findings.add(sev, code, f"data model {m.name!r}{msg}", field=field, model=m.name, file=file)

    if m.evaluation is None:
        about(
            "error",
            "evaluation_missing",
            f" has no evaluation query (expected evaluation/{m.name}.sql)",
            "evaluation",
        )
    else:
        qpath = folder / m.evaluation
        if not qpath.is_file():
            about(
                "error",
                "evaluation_missing",
                f": evaluation query {m.evaluation} is missing",
                "evaluation",
                str(qpath),
            )
        else:
            err = parse_error(read_text(qpath, limit=16 * MB, what="evaluation query"))
            if err:
                about(
                    "error",
                    "evaluation_unparsable",
                    f": DuckDB cannot parse {m.evaluation}: {err}",
                    "evaluation",
                    str(qpath),
                )
    if m.ground_truth is None or not (folder / m.ground_truth).is_file():
        about(
            absent,
            "ground_truth_missing",
            f" has no ground-truth table (expected ground_truth/{m.name}.csv)",
            "ground_truth",
        )
        return
    gpath = folder / m.ground_truth
    try:  # the original's read_csv refuses a row with more fields and pads one with fewer: never silently
        ragged = ragged_row(gpath)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        about("error", "ground_truth_unreadable", f": {m.ground_truth}: {e}", "ground_truth", str(gpath))
        return
    if ragged is not None:
        line, n, width = ragged
        about(
            "error",
            "ground_truth_ragged",
            f": {m.ground_truth} line {line} has {n} "
            f"field(s), its header {width} (pandas.read_csv, as the original reads it, would "
            f"{'refuse the file, or shift its columns on the first row' if n > width else 'fill the missing fields with NULL'})",
            "ground_truth",
            str(gpath),
        )
    if deep:
        try:
            header = csv_header(gpath)
        except (OSError, UnicodeDecodeError) as e:
            about("error", "ground_truth_unreadable", f": {e}", None, str(gpath))
            return
        hl = {h.lower() for h in header}
        cl = {c.name.lower() for c in m.columns}
        for h in header:
            if cl and h.lower() not in cl:
                about(
                    "warning",
                    "ground_truth_extra_column",
                    f": ground-truth column {h!r} is not among the model's columns",
                    "columns",
                    str(gpath),
                )
        for c in m.columns:
            if c.name.lower() not in hl:
                about(
                    "warning",
                    "ground_truth_missing_column",
                    f": column {c.name!r} is not in the ground truth (it is not checked)",
                    "columns",
                    str(gpath),
                )


def validate_pipeline(suite: Suite, p: Pipeline, *, deep: bool = False) -> list[Finding]:
    findings = _Findings(suite, p)
    add = findings.add
    complete = suite.content == "complete"
    absent: Severity = "error" if complete else "info"
    if not p.sources:
        add("error", "no_sources", "no sources", field="sources")
    if not p.models:
        add("error", "no_models", "no data models", field="models")
    seen: dict[str, str] = {}
    for s in p.sources:
        low = s.table.lower()
        if low in seen:
            add(
                "error",
                "duplicate_table",
                f"source table {s.table!r} appears twice ({seen[low]} and {s.kind})",
                field=f"sources.{s.kind}",
            )
        seen[low] = s.kind
        if s.kind in ("files", "s3") and s.format is None:
            add(
                "error",
                "format_missing",
                f"{s.kind} source {s.table!r} needs a format (csv, jsonl or parquet)",
                field=f"sources.{s.kind}",
            )
        if s.data is None:
            add(
                absent,
                "source_data_missing",
                f"no data file for source table {s.table!r} "
                f"(expected data/{s.table}.{s.format or 'csv|jsonl|parquet'})",
                field=f"sources.{s.kind}",
            )
        if not any(k.lower() == low for k in p.schemas):
            add(
                "warning",
                "schema_missing",
                f"no schemas/{s.table}.csv (the columns of {s.table!r} are not described)",
                field=f"sources.{s.kind}",
            )
    expected = {t.lower(): t for t in p.tables}
    for low, t in expected.items():
        if low not in seen:
            add(
                "warning",
                "table_not_a_source",
                f"expected table {t!r} is not among the sources",
                field=f"tables.{t}",
            )
        if p.tables[t] is None:
            add(
                absent,
                "row_count_unknown",
                f"expected table {t!r} has no row count (stage 1 cannot check it)",
                field=f"tables.{t}",
            )
    for low, kind in seen.items():
        if low not in expected:
            name = next(s.table for s in p.sources if s.table.lower() == low)
            add(
                "warning",
                "source_not_loaded",
                f"source table {name!r} ({kind}) is not among the expected tables; stage 1 does not check it",
                field="tables",
            )
    mseen: set[str] = set()
    for i, m in enumerate(p.models):
        if m.name.lower() in mseen:
            add(
                "error",
                "duplicate_model",
                f"data model {m.name!r} appears twice",
                field=f"models[{i}].name",
                model=m.name,
            )
        mseen.add(m.name.lower())
        _check_model(findings, i, m, absent, deep)
    if deep:
        for s in p.sources:
            declared = p.tables.get(next((t for t in p.tables if t.lower() == s.table.lower()), ""), None)
            if s.data is None or declared is None:
                continue
            dpath = p.folder / s.data
            try:
                have = count_rows(dpath)
            except Exception as e:  # noqa: BLE001 - any reader failure is the file's defect
                add(
                    "error",
                    "source_data_unreadable",
                    f"{s.data}: {type(e).__name__}: {str(e).splitlines()[0]}",
                    field=f"sources.{s.kind}",
                    file=str(dpath),
                )
                continue
            if have != declared:
                add(
                    "error",
                    "row_count_mismatch",
                    f"{s.data} holds {have} rows but tables.{s.table} says {declared}",
                    field=f"tables.{s.table}",
                    file=str(dpath),
                )
    return findings.out


def validate_suite(suite: Suite, *, deep: bool = False) -> list[Finding]:
    out: list[Finding] = []
    for p in suite.pipelines:
        out.extend(validate_pipeline(suite, p, deep=deep))
    return out


def is_failing(findings: list[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)


__all__ = [
    "count_rows",
    "csv_header",
    "is_failing",
    "parse_error",
    "ragged_row",
    "validate_pipeline",
    "validate_suite",
]
