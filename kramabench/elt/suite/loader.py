"""Load an ELT suite from its folder (format: :mod:`kramabench.elt.suite.models`).

A defect of one pipeline (a YAML error, a field of the wrong type, an unknown source kind) leaves that
pipeline out with an ``error`` :class:`~kramabench.workload.models.Finding` naming the pipeline, the file
and the field; only a suite that cannot be read at all (no ``suite.yaml``) raises :class:`SuiteError`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kramabench.elt.suite.errata import apply_errata, available_errata, load_errata_set
from kramabench.elt.suite.errors import SuiteError
from kramabench.elt.suite.models import (
    DATA_FORMATS,
    SOURCE_KINDS,
    DataModel,
    ModelColumn,
    Pipeline,
    SourceTable,
    Suite,
)
from kramabench.files import ERRATA_BYTES, MB, OutsideRoot, inside, read_bytes, read_text, sha256
from kramabench.workload.models import Finding, Severity

SUITE_FILE = "suite.yaml"
PIPELINE_FILE = "pipeline.yaml"
FAMILY = "elt"


def is_suite(root: Path) -> bool:
    """Whether ``root`` is an ELT suite (its ``suite.yaml`` says ``family: elt``)."""
    path = Path(root) / SUITE_FILE
    if not path.is_file():
        return False
    try:
        doc = _yaml(path)
    except SuiteError:
        return True  # it claims to be one; loading says what is wrong
    return isinstance(doc, dict) and doc.get("family") == FAMILY


def _yaml(path: Path) -> Any:
    import yaml

    try:  # a regular file of at most 16 MB (a FIFO or /dev/zero is refused in one line)
        text = read_text(path, limit=16 * MB, what="suite file")
    except OSError as e:
        raise SuiteError(f"{path}: cannot read: {e.strerror or e}", file=str(path)) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise SuiteError(f"{path}: not valid YAML{where}: {problem}", file=str(path)) from None


def load_suite(
    root: Path, *, errata: bool | list[str] = True, validate: bool = True, deep: bool = False
) -> Suite:
    """Load the suite at ``root``.

    ``errata``: True applies the suite's ``default_errata``, False none, a list names the sets to apply.
    ``validate``: add the validator's findings. ``deep``: the validator also counts the rows of every data
    file and reads every ground-truth header (slower on large suites).
    """
    root = Path(root)
    spath = root / SUITE_FILE
    if not root.is_dir():
        raise SuiteError(f"{root}: no such folder", file=str(root))
    if not spath.is_file():
        raise SuiteError(
            f"{spath}: missing; an ELT suite has a suite.yaml (family: elt) and pipelines/<id>/",
            file=str(spath),
        )
    doc = _yaml(spath)
    if not isinstance(doc, dict):
        raise SuiteError(
            f"{spath}: the top level is {type(doc).__name__}; expected a mapping", file=str(spath)
        )
    if doc.get("family") != FAMILY:
        raise SuiteError(
            f"{spath}: field family is {doc.get('family')!r}; an ELT suite says 'family: elt'",
            file=str(spath),
            field="family",
        )
    findings: list[Finding] = []
    name = str(doc.get("name") or root.name)
    schema = str(doc.get("schema") or "main")
    content = doc.get("content", "complete")
    if content not in ("complete", "specs"):
        raise SuiteError(
            f"{spath}: field content is {content!r}; expected 'complete' or 'specs'",
            file=str(spath),
            field="content",
        )
    default_errata = doc.get("default_errata") or []
    if not isinstance(default_errata, list) or not all(isinstance(x, str) for x in default_errata):
        raise SuiteError(
            f"{spath}: field default_errata must be a list of errata set names",
            file=str(spath),
            field="default_errata",
        )

    pdir = root / "pipelines"
    ids = sorted(p.name for p in pdir.iterdir() if p.is_dir()) if pdir.is_dir() else []
    if not ids:
        findings.append(
            Finding(
                severity="error",
                code="no_pipelines",
                domain=name,
                file=str(pdir),
                message="the suite has no pipelines (expected pipelines/<id>/pipeline.yaml)",
            )
        )
    digest = sha256()
    digest.update(read_bytes(spath, limit=16 * MB, what="suite file"))
    pipelines: list[Pipeline] = []
    for pid in ids:
        p, fs = _load_pipeline(pdir / pid, name, digest)
        findings.extend(fs)
        if p is not None:
            pipelines.append(p)

    suite = Suite(
        name=name,
        root=root,
        description=str(doc.get("description") or ""),
        version=str(doc["version"]) if doc.get("version") is not None else None,
        schema_name=schema,
        content=content,
        pipelines=pipelines,
        findings=findings,
    )
    sets = default_errata if errata is True else ([] if errata is False else list(errata))
    for es_name in sets:
        es = load_errata_set(root, es_name)
        applied, fs = apply_errata(suite.pipelines, es)
        for f in fs:
            f.domain = name
        suite.errata.extend(applied)
        suite.findings.extend(fs)
        suite.errata_sets.append(es.name)
        digest.update(read_bytes(es.path, limit=ERRATA_BYTES, what="errata set") if es.path else b"")
    suite.content_hash = digest.hexdigest()
    if validate:
        from kramabench.elt.suite.validate import validate_suite

        suite.findings.extend(validate_suite(suite, deep=deep))
    return suite


def _err(
    suite: str, pid: str, file: Path, field: str | None, code: str, msg: str, severity: Severity = "error"
) -> Finding:
    return Finding(
        severity=severity, code=code, domain=suite, task_id=pid, field=field, file=str(file), message=msg
    )


def _find_file(folder: Path, stem: str, exts: tuple[str, ...]) -> str | None:
    """``<folder>/<stem>.<ext>`` for the first ext that exists, matched without regard to case."""
    if not folder.is_dir():
        return None
    low = {p.name.lower(): p.name for p in folder.iterdir() if p.is_file()}
    for ext in exts:
        hit = low.get(f"{stem.lower()}.{ext}")
        if hit:
            return f"{folder.name}/{hit}"
    return None


def _outside(folder: Path, rel: str | None) -> str | None:
    """Why ``rel`` (a path a pipeline names, relative to its folder) leads out of the folder, or None. Stricter
    than :func:`~kramabench.files.inside`: with links followed it must stay in the pipeline folder's real
    folder, a linked ``data/`` or ``schemas/`` included (their files are served to the task: a ``data ->
    /home/me`` link must not serve that folder). A pipeline folder that is itself a link is fine."""
    if rel is None:
        return None
    try:
        path = inside(folder, rel)
    except OutsideRoot as e:
        return str(e)
    real_root = os.path.realpath(folder)
    real = os.path.realpath(path)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        return "leads out of the pipeline folder through a symbolic link"
    return None


def _load_pipeline(folder: Path, suite: str, digest: Any) -> tuple[Pipeline | None, list[Finding]]:
    pid = folder.name
    path = folder / PIPELINE_FILE
    out: list[Finding] = []

    def left_out(field: str | None, code: str, message: str) -> tuple[None, list[Finding]]:
        return None, [*out, _err(suite, pid, path, field, code, message)]

    def note(field: str | None, code: str, message: str, severity: Severity = "error") -> None:
        out.append(_err(suite, pid, path, field, code, message, severity))

    if not path.is_file():
        return left_out(
            None,
            "pipeline_file_missing",
            f"pipeline {pid}: {PIPELINE_FILE} is missing; the pipeline is left out",
        )
    try:
        doc = _yaml(path)
    except SuiteError as e:
        return left_out(None, "pipeline_unreadable", f"pipeline {pid}: {e}; left out")
    digest.update(read_bytes(path, limit=16 * MB, what="pipeline file"))
    if not isinstance(doc, dict):
        return left_out(
            None,
            "pipeline_unreadable",
            f"pipeline {pid}: the top level is {type(doc).__name__}, not a mapping; left out",
        )
    unknown = sorted(set(doc) - {"id", "instruction", "sources", "tables", "models"})
    for k in unknown:
        note(k, "unknown_field", f"pipeline {pid}: unknown field {k!r} (ignored)", "warning")
    if doc.get("id") is not None and str(doc["id"]) != pid:
        return left_out(
            "id",
            "id_mismatch",
            f"pipeline {pid}: field id is {doc['id']!r} but the folder is {pid!r}; left out",
        )
    instruction = doc.get("instruction")
    if instruction is not None and not isinstance(instruction, str):
        return left_out(
            "instruction", "bad_field", f"pipeline {pid}: field instruction must be text; left out"
        )

    # sources
    sources: list[SourceTable] = []
    raw_sources = doc.get("sources") or {}
    if not isinstance(raw_sources, dict):
        return left_out(
            "sources",
            "bad_field",
            f"pipeline {pid}: field sources must map a source kind ({', '.join(SOURCE_KINDS)}) "
            "to a list of tables; left out",
        )
    for kind, items in raw_sources.items():
        field = f"sources.{kind}"
        if kind not in SOURCE_KINDS:
            return left_out(
                field,
                "unknown_source_kind",
                f"pipeline {pid}: unknown source kind {kind!r} (known: {', '.join(SOURCE_KINDS)}); left out",
            )
        if not isinstance(items, list):
            return left_out(
                field, "bad_field", f"pipeline {pid}: field {field} must be a list of tables; left out"
            )
        for i, it in enumerate(items):
            f_i = f"{field}[{i}]"
            if isinstance(it, str):
                table, fmt = it, None
            elif isinstance(it, dict) and isinstance(it.get("table"), str) and set(it) <= {"table", "format"}:
                table, fmt = it["table"], it.get("format")
            else:
                return left_out(
                    f_i,
                    "bad_field",
                    f"pipeline {pid}: {f_i} must be a table name or {{table, format}}; left out",
                )
            if fmt is not None and fmt not in DATA_FORMATS:
                return left_out(
                    f"{f_i}.format",
                    "bad_format",
                    f"pipeline {pid}: {f_i}: format {fmt!r} is not one of {', '.join(DATA_FORMATS)}; "
                    "left out",
                )
            exts = ((fmt,) if fmt else ()) + tuple(e for e in DATA_FORMATS if e != fmt)  # served as `format`
            data = _find_file(folder / "data", table, exts)
            why = _outside(folder, data)
            if why is not None:  # a link in data/ that leads out of the pipeline folder: never served
                note(
                    f_i,
                    "path_outside_pipeline",
                    f"pipeline {pid}: {f_i}: {data} {why}; the table is served without data",
                )
                data = None
            sources.append(SourceTable(kind=kind, table=table, format=fmt, data=data))

    # stage 1 tables
    raw_tables = doc.get("tables") or {}
    if not isinstance(raw_tables, dict):
        return left_out(
            "tables",
            "bad_field",
            f"pipeline {pid}: field tables must map each table to its row count; left out",
        )
    tables: dict[str, int | None] = {}
    for t, n in raw_tables.items():
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
            return left_out(
                f"tables.{t}",
                "bad_row_count",
                f"pipeline {pid}: tables.{t}: row count {n!r} is not a whole number >= 0; left out",
            )
        tables[str(t)] = n

    # data models
    raw_models = doc.get("models") or []
    if not isinstance(raw_models, list):
        return left_out("models", "bad_field", f"pipeline {pid}: field models must be a list; left out")
    models: list[DataModel] = []
    for i, m in enumerate(raw_models):
        f_i = f"models[{i}]"
        if not isinstance(m, dict) or not isinstance(m.get("name"), str) or not m["name"].strip():
            return left_out(f"{f_i}.name", "bad_field", f"pipeline {pid}: {f_i} needs a name; left out")
        mname = m["name"].strip()
        extra = sorted(set(m) - {"name", "description", "columns", "evaluation", "ground_truth"})
        for k in extra:
            note(
                f"{f_i}.{k}",
                "unknown_field",
                f"pipeline {pid}: model {mname}: unknown field {k!r} (ignored)",
                "warning",
            )
        cols_raw = m.get("columns") or []
        if not isinstance(cols_raw, list):
            return left_out(
                f"{f_i}.columns",
                "bad_field",
                f"pipeline {pid}: model {mname}: columns must be a list; left out",
            )
        cols: list[ModelColumn] = []
        for j, c in enumerate(cols_raw):
            if isinstance(c, str):
                cols.append(ModelColumn(name=c))
            elif isinstance(c, dict) and isinstance(c.get("name"), str):
                desc = c.get("description", "")
                cols.append(ModelColumn(name=c["name"], description=str(desc or "")))
            else:
                return left_out(
                    f"{f_i}.columns[{j}]",
                    "bad_field",
                    f"pipeline {pid}: model {mname}: columns[{j}] needs a name; left out",
                )
        evaluation = m.get("evaluation")
        if evaluation is None:
            evaluation = _find_file(folder / "evaluation", mname, ("sql",))
        gt = m.get("ground_truth")
        if gt is None:
            gt = _find_file(folder / "ground_truth", mname, ("csv",))
        for key, val in (("evaluation", evaluation), ("ground_truth", gt)):
            if val is not None and not isinstance(val, str):
                return left_out(
                    f"{f_i}.{key}",
                    "bad_field",
                    f"pipeline {pid}: model {mname}: {key} must be a path; left out",
                )
            why = _outside(folder, val)
            if why is not None:  # every path a pipeline names stays in its folder: never read from the host
                return left_out(
                    f"{f_i}.{key}",
                    "path_outside_pipeline",
                    f"pipeline {pid}: model {mname}: {key} {val!r} {why}: it must lie inside "
                    "the pipeline folder; left out",
                )
        models.append(
            DataModel(
                name=mname,
                description=str(m.get("description") or ""),
                columns=cols,
                evaluation=evaluation,
                ground_truth=gt,
            )
        )
    schemas: dict[str, str] = {}
    sdir = folder / "schemas"
    if sdir.is_dir():
        for f in sorted(sdir.glob("*.csv")):
            if _outside(folder, f"schemas/{f.name}") is None:
                schemas[f.stem] = f"schemas/{f.name}"
    for f in sorted(folder.glob("evaluation/*.sql")):
        if _outside(folder, f"evaluation/{f.name}") is None:
            try:
                digest.update(read_bytes(f, limit=16 * MB, what="evaluation query"))
            except OSError:
                pass  # the scorer says why it cannot read it
    return Pipeline(
        id=pid,
        folder=folder,
        instruction=instruction,
        sources=sources,
        tables=tables,
        models=models,
        schemas=schemas,
    ), out


__all__ = ["FAMILY", "PIPELINE_FILE", "SUITE_FILE", "available_errata", "is_suite", "load_suite"]
