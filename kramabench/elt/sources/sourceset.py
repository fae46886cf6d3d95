"""Start a pipeline's sources and write its task folder (see the package docstring)."""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kramabench.elt.suite.models import Pipeline
from kramabench.files import write_file
from kramabench.sandbox.jail import JailLimits
from kramabench.sweep import make_tempdir

log = logging.getLogger(__name__)

#: ports inside the session (loopback of the session's own network namespace)
PORTS = {"postgres": 5432, "rest": 8000, "s3": 9000, "mongodb": 27017}


class SourceOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mongod: str | None = Field(
        None,
        description="path of a mongod binary to serve MongoDB sources (with pymongo, the "
        "extra kramabench[mongodb]; default: the collections as JSON-lines files, a deliberate "
        "difference recorded in the manifest)",
    )

    @field_validator("mongod")
    @classmethod
    def _executable(cls, v: str | None) -> str | None:
        if v is None:
            return None
        from kramabench.elt.sources.mongo import MongoUnavailable, check_mongod

        try:
            return str(check_mongod(v))
        except MongoUnavailable as e:
            raise ValueError(str(e)) from None

    s3: Literal["auto", "server", "files"] = Field(
        "auto",
        description="S3 sources: served by an S3-compatible server (moto's server mode, the extra "
        "kramabench[s3]), or as files of the task folder; auto: the server when moto is installed",
    )
    source_memory_mb: int = Field(
        1024,
        ge=64,
        le=65536,
        description="memory of each source server's jail (MB; "
        "PostgreSQL, the REST API, mongod; as root a memory cgroup, else an address-space "
        "limit)",
    )
    source_disk_mb: int = Field(
        1024,
        ge=16,
        le=65536,
        description="disk of each source server's jail (MB): the "
        "size of its data folder and of its /tmp, both in memory (tmpfs)",
    )
    source_max_processes: int = Field(64, ge=8, le=4096, description="processes of each source server's jail")
    s3_max_object_mb: int = Field(
        100, ge=1, le=5120, description="the largest object a task's S3 server accepts (MB)"
    )
    s3_max_total_mb: int = Field(
        400, ge=1, le=20480, description="all the objects a task's S3 server holds (MB)"
    )
    warehouse: str | None = Field(
        None,
        description="the warehouse file, relative to the session workspace (default <pipeline id>.duckdb: "
        "its catalog is then named as ELT-Bench's database, so views that name it resolve when it is scored)",
    )

    def jail_limits(self) -> JailLimits:
        """The limits of each source server's jail."""
        return JailLimits(
            memory_mb=self.source_memory_mb,
            disk_mb=self.source_disk_mb,
            max_processes=self.source_max_processes,
        )

    def warehouse_file(self, pipeline_id: str) -> str:
        return self.warehouse or f"{pipeline_id}.duckdb"

    def s3_served(self) -> bool:
        """Whether S3 sources are served by a server (else they are files of the task folder)."""
        if self.s3 == "files":
            return False
        if self.s3 == "server":
            return True
        from kramabench.elt.sources.s3 import s3_server_available

        return s3_server_available()

    def differences(self, kinds: list[str]) -> list[str]:
        """The deliberate differences from ELT-Bench's set-up of a run with sources of ``kinds``."""
        out = list(ALWAYS_DIFFERENT)
        if "postgres" in kinds:
            out.append(POSTGRES_ROLE)
        if "s3" in kinds:
            out.append(S3_SERVED if self.s3_served() else self.s3_files_difference())
        if "mongodb" in kinds and not self.mongod:
            out.append(MONGODB_AS_FILES)
        return out

    def s3_files_difference(self) -> str:
        """Why S3 sources are files of the task folder: chosen (``s3=files``), or moto is missing."""
        return S3_AS_FILES_CHOSEN if self.s3 == "files" else S3_AS_FILES


#: how every local run differs from the original (docs/elt.md, "What a local run keeps and loses")
ALWAYS_DIFFERENT = (
    "warehouse: an embedded DuckDB file, not Snowflake; the evaluation queries are transpiled to DuckDB (sqlglot)",
    "loading: the system loads the sources with its own code (SQL, Python, dbt); no Airbyte connector is configured",
)
S3_AS_FILES = (
    "s3: the bucket's objects are files of the task folder (s3/<bucket>/<key>), not served by an "
    "S3-compatible server (moto is not installed: pip install 'kramabench[s3]')"
)
S3_AS_FILES_CHOSEN = (
    "s3: the bucket's objects are files of the task folder (s3/<bucket>/<key>), not served by an "
    "S3-compatible server (chosen: -S s3=files)"
)
S3_SERVED = (
    "s3: served by moto's S3-compatible server (in place of LocalStack), S3 only, one per task, object and "
    "total sizes bounded"
)
POSTGRES_ROLE = (
    "postgres: the task's user 'postgres' is a role of its own, not the server's superuser (ELT-Bench's "
    "is): no COPY ... PROGRAM, no server files, no other database"
)
MONGODB_AS_FILES = (
    "mongodb: the collections are JSON-lines files of the task folder "
    "(mongodb/<database>/<collection>.jsonl), not served by mongod (no mongod named)"
)
#: the order differences are listed in (a run's are the union of its tasks', in this order)
DIFFERENCE_ORDER = (*ALWAYS_DIFFERENT, POSTGRES_ROLE, S3_SERVED, S3_AS_FILES, MONGODB_AS_FILES)


def ordered_differences(items: Iterable[str]) -> list[str]:
    """The differences ``items`` once each, in :data:`DIFFERENCE_ORDER` (any other after them, as they come)."""
    unique = list(dict.fromkeys(items))
    rank = {d: i for i, d in enumerate(DIFFERENCE_ORDER)}
    return sorted(unique, key=lambda d: (rank.get(d, len(rank)), unique.index(d)))


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f" {version(dist)}"
    except PackageNotFoundError:
        return ""


@dataclass(frozen=True)
class Service:
    name: str
    port: int
    socket: Path


@dataclass
class SourceSet:
    """The running sources of one pipeline; a context manager (:meth:`start`, :meth:`stop`). ``schema``: the
    warehouse schema the suite's evaluation queries read."""

    pipeline: Pipeline
    schema: str = "main"
    options: SourceOptions = field(default_factory=SourceOptions)
    services: list[Service] = field(default_factory=list)
    #: the folder the system sees (read-only in its session)
    task_dir: Path | None = None
    #: the deliberate differences of this task's set-up from the original (in its record; a run's are the union
    #: of its tasks', in the manifest and the report)
    differences: list[str] = field(default_factory=list)
    #: what served each kind of source of this task (in its record)
    served: dict[str, str] = field(default_factory=dict)
    started_s: float = 0.0
    #: the task's config.yaml as written (sources, in-session endpoints, credentials, the warehouse)
    config: dict[str, Any] = field(default_factory=dict)
    _base: Path | None = None
    _running: list[Any] = field(default_factory=list)

    def start(self) -> SourceSet:
        t0 = time.monotonic()
        # tagged with this process (kramabench-elt-<owner tag>-*): a later command's sweep removes it if we are killed
        self._base = make_tempdir("elt")
        os.chmod(self._base, 0o755)
        self.task_dir = self._base / "task"
        self.task_dir.mkdir()
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        self.started_s = time.monotonic() - t0
        return self

    def _data(self, table: str) -> Path:
        s = self.pipeline.source(table)
        if s is None or s.data is None:
            raise FileNotFoundError(f"pipeline {self.pipeline.id}: no data file for source table {table!r}")
        return self.pipeline.folder / s.data

    def _start(self) -> None:
        p = self.pipeline
        assert self._base is not None and self.task_dir is not None
        by_kind: dict[str, list[Any]] = {}
        for s in p.sources:
            by_kind.setdefault(s.kind, []).append(s)
        cfg: dict[str, Any] = {}
        self.differences.extend(ALWAYS_DIFFERENT)
        if "postgres" in by_kind:
            from kramabench.elt.sources.postgres import USER, PostgresServer

            pg = PostgresServer(self._base / "pg", database=p.id, limits=self.options.jail_limits())
            self._running.append(pg)
            pg.start()
            pg.load_many([(s.table, self._data(s.table)) for s in by_kind["postgres"]])
            self.services.append(Service("postgres", PORTS["postgres"], pg.socket))
            self.differences.append(POSTGRES_ROLE)
            major = pg.bindir.parent.name
            self.served["postgres"] = (
                f"PostgreSQL{' ' + major if major.isdigit() else ''}, a server of the task's "
                "own in a jail, the task's role 'postgres' (not a superuser)"
            )
            # the task's own role and its random password; the superuser's never leaves the runner
            cfg["postgres"] = {
                "config": {
                    "host": "127.0.0.1",
                    "port": PORTS["postgres"],
                    "user": USER,
                    "password": pg.password,
                    "database": p.id,
                    "schema": "public",
                    "tables": [s.table for s in by_kind["postgres"]],
                }
            }
        if "rest" in by_kind:
            from kramabench.elt.sources.rest import RestServer

            rest = RestServer(
                self._base / "rest",
                {s.table: self._data(s.table) for s in by_kind["rest"]},
                limits=JailLimits(
                    memory_mb=min(512, self.options.source_memory_mb),
                    disk_mb=64,
                    max_processes=self.options.source_max_processes,
                ),
            )
            self._running.append(rest)
            rest.start()
            self.services.append(Service("rest", PORTS["rest"], rest.socket))
            self.served["rest"] = "kramabench's REST server (GET /<table>), in a jail of its own"
            cfg["custom_api"] = {
                "config": {
                    "base_url": f"http://127.0.0.1:{PORTS['rest']}",
                    "endpoints": "GET /<table> returns the whole table as a JSON list of "
                    "objects (?offset=&limit= for pages; GET / lists the tables)",
                    "tables": [s.table for s in by_kind["rest"]],
                }
            }
        if "files" in by_kind:
            items = []
            for s in by_kind["files"]:
                rel = f"files/{s.table}.{s.format}"
                self._place(self._data(s.table), self.task_dir / rel)
                items.append({"table": s.table, "format": s.format, "path": rel})
            cfg["flat_files"] = items
            self.served["files"] = "files of the task folder (files/<table>.<format>)"
        if "s3" in by_kind:
            bucket = f"{p.id.replace('_', '-').lower()}-bucket"
            if self.options.s3_served():
                from kramabench.elt.sources.s3 import ACCESS_KEY, REGION, SECRET_KEY, S3Server

                objects: dict[str, Path] = {}
                for s in by_kind["s3"]:
                    key = f"{s.table}.{s.format}"
                    objects[key] = self._base / "s3-objects" / key
                    self._place(self._data(s.table), objects[key])
                srv = S3Server(
                    self._base / "s3",
                    bucket,
                    objects,
                    port=PORTS["s3"],
                    max_object_bytes=self.options.s3_max_object_mb << 20,
                    max_total_bytes=self.options.s3_max_total_mb << 20,
                )
                self._running.append(srv)
                srv.start()
                self.services.append(Service("s3", PORTS["s3"], srv.socket))
                self.differences.append(S3_SERVED)
                self.served["s3"] = f"moto{_version('moto')}'s S3 server (S3 only), in a jail of its own"
                cfg["aws_s3"] = {
                    "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                    "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                    "AWS_DEFAULT_REGION": REGION,
                    "AWS_ENDPOINT_URL": f"http://127.0.0.1:{PORTS['s3']}",
                    "data": [
                        {"table": s.table, "path": f"s3://{bucket}/{s.table}.{s.format}"}
                        for s in by_kind["s3"]
                    ],
                }
            else:
                items = []
                for s in by_kind["s3"]:
                    rel = f"s3/{bucket}/{s.table}.{s.format}"
                    self._place(self._data(s.table), self.task_dir / rel)
                    items.append(
                        {"table": s.table, "path": f"s3://{bucket}/{s.table}.{s.format}", "local_path": rel}
                    )
                self.differences.append(self.options.s3_files_difference())
                self.served["s3"] = f"files of the task folder (s3/{bucket}/<key>)"
                cfg["aws_s3"] = {
                    "data": items,
                    "note": "the bucket's objects are at local_path in this folder",
                }
        if "mongodb" in by_kind:
            if self.options.mongod:
                from kramabench.elt.sources.mongo import MongoServer

                mongo = MongoServer(
                    self.options.mongod, self._base / "mongo", limits=self.options.jail_limits()
                )
                self._running.append(mongo)
                mongo.start()
                for s in by_kind["mongodb"]:
                    mongo.load(p.id, s.table, self._data(s.table))
                self.services.append(Service("mongodb", PORTS["mongodb"], mongo.socket))
                self.served["mongodb"] = f"mongod ({Path(self.options.mongod).name}), in a jail of its own"
                cfg["mongodb"] = {
                    "config": {
                        "connection_string": f"mongodb://127.0.0.1:{PORTS['mongodb']}/?directConnection=true",
                        "database": p.id,
                        "tables": [s.table for s in by_kind["mongodb"]],
                    }
                }
            else:
                items = []
                for s in by_kind["mongodb"]:
                    rel = f"mongodb/{p.id}/{s.table}.jsonl"
                    self._place(self._data(s.table), self.task_dir / rel)
                    items.append(s.table)
                self.differences.append(MONGODB_AS_FILES)
                self.served["mongodb"] = (
                    f"JSON-lines files of the task folder (mongodb/{p.id}/<collection>.jsonl)"
                )
                cfg["mongodb"] = {
                    "config": {
                        "database": p.id,
                        "tables": items,
                        "files": f"mongodb/{p.id}/<collection>.jsonl (one document per line)",
                    }
                }
        cfg["warehouse"] = {
            "type": "duckdb",
            "path": self.options.warehouse_file(p.id),
            "schema": self.schema,
            "database": p.id,
        }
        self._write_public(cfg)

    def _place(self, src: Path, dest: Path) -> None:
        from kramabench.elt.sources.tables import convert

        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix.lower() == dest.suffix.lower():
            shutil.copyfile(src, dest)
        else:
            convert(src, dest)

    def _write_public(self, cfg: dict[str, Any]) -> None:
        import yaml

        assert self.task_dir is not None
        self.config = cfg
        write_file(self.task_dir / "config.yaml", yaml.safe_dump(cfg, sort_keys=False))
        write_spec(self.pipeline, self.task_dir)

    def stop(self) -> None:
        for server in reversed(self._running):
            try:
                server.stop()
            except Exception as e:  # noqa: BLE001 - every source is stopped, whatever one does
                log.warning("stopping a source of %s: %s", self.pipeline.id, e)
        self._running.clear()
        if self._base is not None:
            shutil.rmtree(self._base, ignore_errors=True)
            self._base = None

    def jails(self) -> list[Any]:
        """The jails of the running source servers (:class:`kramabench.sandbox.jail.ServiceJail`), in start order."""
        return [s.jail for s in self._running if s.jail is not None]

    def __enter__(self) -> SourceSet:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def write_spec(pipeline: Pipeline, folder: Path) -> None:
    """What a system is told of a pipeline besides its sources: ``data_model.yaml`` (the models, their
    descriptions and columns) and ``schemas/<table>.csv`` (the columns of each source table); never the
    ground truth, the evaluation queries or the data folder."""
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    models = {
        "models": [
            {
                "name": m.name,
                "description": m.description,
                "columns": [{"name": c.name, "description": c.description} for c in m.columns],
            }
            for m in pipeline.models
        ]
    }
    write_file(folder / "data_model.yaml", yaml.safe_dump(models, sort_keys=False, allow_unicode=True))
    for table, rel in pipeline.schemas.items():
        (folder / "schemas").mkdir(exist_ok=True)
        shutil.copyfile(pipeline.folder / rel, folder / "schemas" / f"{table}.csv")


__all__ = [
    "DIFFERENCE_ORDER",
    "PORTS",
    "Service",
    "SourceOptions",
    "SourceSet",
    "ordered_differences",
    "write_spec",
]
