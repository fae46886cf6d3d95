"""Typed model of an ELT suite: pipelines with their sources, the tables a run must load (stage 1), the data
models it must build (stage 2), their evaluation queries and ground-truth tables.

The on-disk format (``docs/elt.md``)::

    <root>/suite.yaml                       family: elt; name; description; warehouse schema; default errata
    <root>/pipelines/<id>/pipeline.yaml     sources, expected tables (row counts), data models (columns)
    <root>/pipelines/<id>/schemas/<t>.csv   column_name,column_description of each source table (shown)
    <root>/pipelines/<id>/data/<t>.<ext>    the source tables (csv, jsonl or parquet; never shown as such)
    <root>/pipelines/<id>/evaluation/<m>.sql  the query that reads data model <m> (DuckDB SQL)
    <root>/pipelines/<id>/ground_truth/<m>.csv  the expected result of that query
    <root>/errata/<name>.toml               errata sets (corrections with reasons)
    <root>/solutions/<id>/                  reference solution: load.py + a dbt project (optional)

Table and column names compare without regard to letter case, as in the warehouses ELT-Bench targets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.workload.models import Finding

#: the kinds of source a pipeline extracts from (ELT-Bench's postgres, mongodb, custom_api, flat_files, aws_s3)
SourceKind = Literal["postgres", "mongodb", "rest", "files", "s3"]
SOURCE_KINDS: tuple[str, ...] = ("postgres", "mongodb", "rest", "files", "s3")

#: formats a source table's data file may have
DataFormat = Literal["csv", "jsonl", "parquet"]
DATA_FORMATS: tuple[str, ...] = ("csv", "jsonl", "parquet")


class SourceTable(BaseModel):
    """One source table: where it is served from and in which format (files and s3 serve a file)."""

    model_config = ConfigDict(extra="forbid")

    kind: SourceKind
    table: str
    format: DataFormat | None = Field(None, description="files and s3: the format of the served file")
    #: the data file, relative to the pipeline folder (None: absent, e.g. a specs-only converted suite)
    data: str | None = None


class ModelColumn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""


class DataModel(BaseModel):
    """One data model to build, and how it is checked."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    columns: list[ModelColumn] = Field(default_factory=list)
    #: the evaluation query, relative to the pipeline folder (None: none usable; the model cannot be scored)
    evaluation: str | None = None
    #: the ground-truth table (CSV), relative to the pipeline folder (None: absent)
    ground_truth: str | None = None
    #: ground-truth columns left out of the comparison, per comparator (``*``: every comparator), with reasons
    dropped_columns: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="comparator or '*' -> {column: reason} (errata)"
    )

    def dropped_for(self, comparator: str) -> dict[str, str]:
        """Ground-truth columns the given comparator leaves out, with the reason (case-insensitive names)."""
        out = dict(self.dropped_columns.get("*", {}))
        out.update(self.dropped_columns.get(comparator, {}))
        return out


class Pipeline(BaseModel):
    """One ELT task: extract the sources, load them into the warehouse, build the data models."""

    model_config = ConfigDict(extra="forbid")

    id: str
    folder: Path = Field(description="the pipeline's folder in the suite")
    instruction: str | None = Field(None, description="extra instruction for this pipeline (appended)")
    sources: list[SourceTable] = Field(default_factory=list)
    #: stage 1: every table the warehouse must hold after loading, with its row count (None: unknown)
    tables: dict[str, int | None] = Field(default_factory=dict)
    models: list[DataModel] = Field(default_factory=list)
    #: agent-visible schema files (relative to the folder): column names and descriptions of source tables
    schemas: dict[str, str] = Field(default_factory=dict)

    def source(self, table: str) -> SourceTable | None:
        low = table.lower()
        return next((s for s in self.sources if s.table.lower() == low), None)

    def model(self, name: str) -> DataModel:
        low = name.lower()
        for m in self.models:
            if m.name.lower() == low:
                return m
        raise KeyError(f"{self.id}: no data model {name!r}")

    def kinds(self) -> list[str]:
        return [k for k in SOURCE_KINDS if any(s.kind == k for s in self.sources)]


class ErratumApplied(BaseModel):
    model_config = ConfigDict(extra="forbid")

    errata: str = Field(description="the errata set")
    pipeline: str
    model: str | None = None
    action: str
    target: str | None = None
    old: Any = None
    new: Any = None
    comparators: list[str] = Field(default_factory=list)
    reason: str


class Suite(BaseModel):
    """An ELT suite as loaded: its pipelines, what loading found, the errata applied."""

    model_config = ConfigDict(extra="forbid")

    name: str
    root: Path
    description: str = ""
    version: str | None = None
    #: the warehouse schema that loaded tables and data models go to (evaluation queries name it)
    schema_name: str = "main"
    #: "complete": data and ground truth are in the suite; "specs": specifications only (no data)
    content: Literal["complete", "specs"] = "complete"
    pipelines: list[Pipeline] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    errata: list[ErratumApplied] = Field(default_factory=list)
    errata_sets: list[str] = Field(default_factory=list, description="errata sets applied, in order")
    content_hash: str | None = Field(None, description="sha256 over the suite's specification files")

    def pipeline(self, pid: str) -> Pipeline:
        for p in self.pipelines:
            if p.id == pid:
                return p
        raise KeyError(f"{self.name}: no pipeline {pid!r}")

    @property
    def n_models(self) -> int:
        return sum(len(p.models) for p in self.pipelines)


__all__ = [
    "DATA_FORMATS",
    "SOURCE_KINDS",
    "DataFormat",
    "DataModel",
    "ErratumApplied",
    "ModelColumn",
    "Pipeline",
    "SourceKind",
    "SourceTable",
    "Suite",
]
