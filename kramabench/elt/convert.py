"""Convert ELT-Bench's official layout into an ELT suite (:mod:`kramabench.elt.suite`).

Input (upstream's repository layout)::

    <src>/elt-bench/<db>/config.yaml         sources (postgres, mongodb, custom_api, flat_files, aws_s3)
    <src>/elt-bench/<db>/data_model.yaml     data models (name, description, columns)
    <src>/elt-bench/<db>/schemas/<t>.csv     source table columns
    <src>/evaluation/<db>/<model>.sql        evaluation query (Snowflake SQL)
    <src>/evaluation/table.json              expected row count of every loaded table (stage 1)

and, when given, the data (``data/<db>/<table>.<ext>``) and ground truth (``gt/<db>/<model>.csv``) laid out
by :mod:`kramabench.elt.fetch`. Output: ``<dest>/suite.yaml``, ``pipelines/<db>/...``, the ``verified``
errata set and ``conversion.json`` (every query's transpilation; the ones that failed, with the reason).
Snowflake's connection settings and Airbyte's ids are not carried over: a local run has no such stage.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kramabench.elt.sqlconv import transpile
from kramabench.elt.suite.errors import SuiteError
from kramabench.files import MB, SMALL_JSON_BYTES, read_text, write_file

#: ELT-Bench's source kinds -> ours
KIND = {
    "postgres": "postgres",
    "mongodb": "mongodb",
    "custom_api": "rest",
    "flat_files": "files",
    "aws_s3": "s3",
}

OFFICIAL_DESCRIPTION = (
    "ELT-Bench (arXiv 2504.04808): 100 pipelines that extract sources (PostgreSQL, MongoDB, a REST API, flat "
    "files, S3), load them into a warehouse and build 203 data models; converted to run locally (DuckDB "
    "warehouse, sources started by the run)."
)


@dataclass
class ConversionReport:
    pipelines: int = 0
    models: int = 0
    transpiled: int = 0
    #: (pipeline, model, reason) of every evaluation query that could not be transpiled
    failed: list[tuple[str, str, str]] = field(default_factory=list)
    #: (pipeline, remark) of defects met on the way (typos of field names, case differences)
    remarks: list[tuple[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "pipelines": self.pipelines,
            "models": self.models,
            "transpiled": self.transpiled,
            "failed": [{"pipeline": p, "model": m, "reason": r} for p, m, r in self.failed],
            "remarks": [{"pipeline": p, "remark": r} for p, r in self.remarks],
        }


def _yaml(path: Path) -> Any:
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise SuiteError(f"{path}: cannot read: {str(e).splitlines()[0]}", file=str(path)) from None


def _dump(path: Path, doc: Any) -> None:
    import yaml

    write_file(path, yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120))


def _ext(path: str) -> str | None:
    low = path.lower().rsplit("?", 1)[0]
    for e in ("csv", "jsonl", "parquet"):
        if low.endswith("." + e):
            return e
    return None


def _sources(db: str, cfg: dict[str, Any], report: ConversionReport) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for key, kind in KIND.items():
        if key not in cfg:
            continue
        block = cfg[key]
        if key in ("postgres", "mongodb", "custom_api"):
            tables = ((block or {}).get("config") or {}).get("tables") or []
            out[kind] = [str(t) for t in tables]
        elif key == "flat_files":
            out[kind] = [
                {"table": str(e["table"]), "format": e.get("format") or _ext(str(e.get("path", "")))}
                for e in block or []
            ]
        else:  # aws_s3
            items = []
            for e in (block or {}).get("data") or []:
                fmt = _ext(str(e.get("path", "")))
                if fmt is None:
                    report.remarks.append(
                        (db, f"s3 table {e.get('table')}: no format in its path {e.get('path')}")
                    )
                items.append({"table": str(e["table"]), "format": fmt})
            out[kind] = items
    unknown = sorted(set(cfg) - set(KIND) - {"Airbyte", "snowflake"})
    for k in unknown:
        report.remarks.append((db, f"config.yaml: unknown source kind {k!r} left out"))
    return out


def convert_official(
    src: Path,
    dest: Path,
    *,
    data: Path | None = None,
    ground_truth: Path | None = None,
    version: str | None = None,
) -> ConversionReport:
    """Write the suite converted from the official layout at ``src`` into ``dest`` (replaced)."""
    src, dest = Path(src), Path(dest)
    specs = src / "elt-bench"
    evaluation = src / "evaluation"
    if not specs.is_dir() or not (evaluation / "table.json").is_file():
        raise SuiteError(
            f"{src}: not ELT-Bench's layout (expected elt-bench/<db>/ and evaluation/table.json)",
            file=str(src),
        )
    try:
        counts = json.loads(read_text(evaluation / "table.json", limit=SMALL_JSON_BYTES))
    except (OSError, ValueError) as e:
        raise SuiteError(f"{evaluation / 'table.json'}: {e}", file=str(evaluation / "table.json")) from None
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "pipelines").mkdir(parents=True)
    report = ConversionReport()
    complete = data is not None and ground_truth is not None
    for dbdir in sorted(p for p in specs.iterdir() if p.is_dir()):
        db = dbdir.name
        cfg = _yaml(dbdir / "config.yaml") or {}
        dm = _yaml(dbdir / "data_model.yaml") or {}
        out = dest / "pipelines" / db
        models = []
        for m in dm.get("models") or []:
            desc = m.get("description")
            if desc is None and "descrption" in m:  # upstream's typo in one data_model.yaml
                desc = m["descrption"]
                report.remarks.append(
                    (
                        db,
                        f"data_model.yaml: model {m.get('name')} spells 'description' "
                        "as 'descrption' (read as the description)",
                    )
                )
            name = str(m["name"])
            entry: dict[str, Any] = {
                "name": name,
                "description": str(desc or "").strip(),
                "columns": [
                    {"name": str(c["name"]), "description": str(c.get("description") or "").strip()}
                    for c in m.get("columns") or []
                ],
            }
            report.models += 1
            qfile = evaluation / db / f"{name}.sql"
            if qfile.is_file():
                original = read_text(qfile, limit=16 * MB, what="evaluation query")
                write_file(out / "evaluation" / f"{name}.snowflake.sql", original)
                t = transpile(original)
                if t.sql is None:
                    report.failed.append((db, name, t.reason or "unknown"))
                    entry["evaluation"] = None
                else:
                    report.transpiled += 1
                    write_file(out / "evaluation" / f"{name}.sql", t.sql)
            else:
                report.failed.append((db, name, f"no evaluation query evaluation/{db}/{name}.sql upstream"))
            if complete and ground_truth is not None:
                g = ground_truth / db / f"{name}.csv"
                if g.is_file():
                    (out / "ground_truth").mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(g, out / "ground_truth" / f"{name}.csv")
            models.append(entry)
        tables = counts.get(db) or {}
        if not tables:
            report.remarks.append((db, "evaluation/table.json has no row counts for this database"))
        doc = {"id": db, "sources": _sources(db, cfg, report), "tables": dict(tables), "models": models}
        _dump(out / "pipeline.yaml", doc)
        if (dbdir / "schemas").is_dir():
            shutil.copytree(dbdir / "schemas", out / "schemas")
        if complete and data is not None and (data / db).is_dir():
            shutil.copytree(data / db, out / "data")
        report.pipelines += 1
    suite = {
        "family": "elt",
        "name": "elt-bench",
        "description": OFFICIAL_DESCRIPTION,
        "version": version,
        "schema": "airbyte_schema",
        "content": "complete" if complete else "specs",
        "default_errata": ["verified"],
    }
    _dump(dest / "suite.yaml", suite)
    (dest / "errata").mkdir()
    shutil.copyfile(Path(__file__).parent / "official" / "verified.toml", dest / "errata" / "verified.toml")
    write_file(dest / "conversion.json", json.dumps(report.as_json(), indent=2) + "\n")
    return report


__all__ = ["ConversionReport", "convert_official"]
