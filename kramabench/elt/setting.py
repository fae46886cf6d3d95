"""The ``elt`` setting (entry point ``kramabench.settings: elt``): one work item per pipeline of an ELT suite.

* ``task_input``: the pipeline's instruction and its specification (``data_model.yaml``, ``schemas/``; named in
  ``TaskInput.spec_files``, which agents show whole); the warehouse file is the task's output
  (``TaskInput.outputs``); ``task_kind`` ``elt``: agents put the task as building a warehouse;
* ``stage(item)``: just before the pipeline is solved its sources start (:class:`~kramabench.elt.sources.SourceSet`:
  PostgreSQL, the REST API, files, S3, MongoDB) and the system gets the full task folder as its lake
  (``config.yaml`` with the in-session endpoints and credentials) and the services to forward into its
  sessions (``TaskInput.services``); they stop when the system returns. On Ray (``remote_stage``) the same
  happens on the worker that solves the pipeline, from the pipeline's data shipped to its node;
* ``score``: the warehouse the system collected (``artifacts/<unit>/<pipeline id>.duckdb``) is read in a child
  process with limits (stage 1; stage 2 runs each evaluation query) and each data model is scored through the
  ``table`` answer-type scorer under both comparators. The record's score is the share of the pipeline's
  data models that are correct under the primary comparator (``elt-bench``, the original's comparison); its details
  hold stage 1, every model's result under every comparator (per-column diagnostics) and the sources;
* ``summary(records)``: SRDEL (pipelines passing stage 1 / pipelines) and SRDT per comparator (correct data
  models / data models), over the run's pipelines, as the paper counts them;
* ``describe``: the comparators and the deliberate differences of the run's set-up from the original, those of
  the tasks it runs (recorded in the manifest, listed in the report); ``differences(records)``: at the run's end,
  those of the tasks that ran, from their records (each record names what served each of its sources and its
  own differences: ``score_details.sources``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, Field

from kramabench.contracts.metrics import RatioMetric
from kramabench.contracts.model import Model
from kramabench.contracts.records import Record
from kramabench.contracts.scoring import NamedJudge
from kramabench.contracts.session import ServiceForward
from kramabench.contracts.setting import (
    LakeView,
    SettingContext,
    SettingDefaults,
    SubtaskSpec,
    TaskSpec,
    WorkItem,
    WorkloadSpec,
)
from kramabench.contracts.stage import RemoteStage
from kramabench.contracts.system import OutcomeError, SystemOutput, TaskInput, TaskKind
from kramabench.elt.compare import DEFAULT_COMPARATORS, TableResult, failed
from kramabench.elt.compare.values import Table
from kramabench.elt.family import ANSWER_TYPE, EltTask
from kramabench.elt.scoring import ModelScore, PipelineScore, Stage1, score_pipeline
from kramabench.elt.sources import SourceOptions, SourceSet, ordered_differences
from kramabench.elt.suite import FAMILY
from kramabench.elt.suite.models import DataModel, Pipeline
from kramabench.files import sha256_file

log = logging.getLogger(__name__)

#: the comparator whose verdicts make a record's score (both are always computed and printed)
PRIMARY: Final = "elt-bench"
#: the error kind of a pipeline left out by its findings (kramabench.elt.family.EltTask.left_out)
LEFT_OUT = "invalid_pipeline"


def _listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def spec_files(files: list[str]) -> list[str]:
    """The files of a task folder that specify the task (``TaskInput.spec_files``: an agent shows them whole):
    ``config.yaml``, ``data_model.yaml``, then ``schemas/`` in order."""
    return [f for f in ("config.yaml", "data_model.yaml") if f in files] + sorted(
        f for f in files if f.startswith("schemas/")
    )


def _via_scorer(
    model: DataModel, expected: Table, actual: Table, comparators: list[str]
) -> dict[str, TableResult]:
    """Each comparator's result on one data model, through the ``table`` answer-type scorer of the registry."""
    from kramabench import scorers
    from kramabench.elt.compare.scorer import TableExpectation

    exp = TableExpectation(
        table=expected,
        comparators=list(comparators),
        primary=comparators[0],
        dropped={c: model.dropped_for(c) for c in comparators},
    )
    sc = scorers.score(exp, actual, ANSWER_TYPE)
    results = sc.details.get("results") if isinstance(sc.details, dict) else None
    if isinstance(results, dict) and all(c in results for c in comparators):
        return {c: TableResult.model_validate(results[c]) for c in comparators}
    why = sc.details.get("reason") or sc.details.get("error") if isinstance(sc.details, dict) else None
    if sc.unscored or sc.value is None:
        return {
            c: failed(c, expected, f"the table scorer gave no verdict: {why or 'unscored'}")
            for c in comparators
        }
    # a replaced scorer that gives one verdict and no per-comparator results
    return {
        c: TableResult(
            comparator=c,
            correct=sc.value == 1.0,
            rows_expected=len(expected),
            rows_actual=len(actual),
            error=None if sc.value == 1.0 else (why or "wrong"),
        )
        for c in comparators
    }


class EltOptions(SourceOptions):
    """The ``elt`` setting's options (``--setting-option key=value``): how the sources are served (s3, mongod,
    the warehouse file's name) and how the warehouse is scored."""

    comparator: Literal["elt-bench", "verified"] = Field(
        PRIMARY,
        description="the comparator whose verdicts make a record's score (both are always computed and "
        "printed with SRDT)",
    )
    query_timeout_s: float = Field(
        120.0,
        gt=0,
        le=3600,
        description="seconds each statement of the scorer's read of "
        "a warehouse may take (a view that does not end fails its table or model)",
    )


def credential_keys(cfg: dict[str, Any]) -> list[str]:
    """Where the task's ``config.yaml`` holds credentials, as dotted keys (``postgres.config.password``)."""
    keys = []
    if "password" in cfg.get("postgres", {}).get("config", {}):
        keys.append("postgres.config.password")
    keys += [
        f"aws_s3.{k}" for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if k in cfg.get("aws_s3", {})
    ]
    return keys


def environment_notes(cfg: dict[str, Any], pipeline_id: str, warehouse: str) -> str:
    """What a system's prompt is told of an ELT task's environment (``TaskInput.environment``): the sources as
    reachable from its session, which values of ``config.yaml`` are credentials (named, never shown: the password is
    random per task, and a prompt that held it would differ in every run, so a recorded run could not be replayed
    nor a cached answer found), the warehouse to write, the tools; written from the task's ``config.yaml``."""
    lines = [
        "This is an ELT task: its result is the DuckDB warehouse file you build, not a value you answer.",
        "The sources (config.yaml in the task folder names them) are reachable from your code in this session "
        "only:",
    ]
    if "postgres" in cfg:
        pg = cfg["postgres"]["config"]
        lines.append(
            f"- PostgreSQL at {pg['host']}:{pg['port']} (user {pg['user']}, its password in config.yaml, "
            f"database {pg['database']}, schema {pg['schema']}; tables {', '.join(pg['tables'])}): psycopg "
            "in Python, or the psql command where it is installed"
        )
    if "custom_api" in cfg:
        api = cfg["custom_api"]["config"]
        lines.append(
            f"- a REST API at {api['base_url']}: GET {api['base_url']}/<table> returns the whole table as a "
            f"JSON list of objects (tables {', '.join(api['tables'])})"
        )
    if cfg.get("flat_files"):
        lines.append("- flat files in the task folder: " + ", ".join(f["path"] for f in cfg["flat_files"]))
    if "aws_s3" in cfg:
        s3 = cfg["aws_s3"]
        if "AWS_ENDPOINT_URL" in s3:
            lines.append(
                f"- S3 at {s3['AWS_ENDPOINT_URL']} (region {s3.get('AWS_DEFAULT_REGION', 'us-east-1')}, its "
                "access key and secret in config.yaml): objects "
                + ", ".join(d["path"] for d in s3["data"])
                + " (boto3 in Python)"
            )
        else:
            lines.append(
                "- S3 objects, as files of the task folder: "
                + ", ".join(f"{d['path']} at {d['local_path']}" for d in s3["data"])
            )
    if "mongodb" in cfg:
        mc = cfg["mongodb"]["config"]
        if "connection_string" in mc:
            lines.append(
                f"- MongoDB at {mc['connection_string']} (database {mc['database']}; collections "
                f"{', '.join(mc['tables'])}): pymongo in Python"
            )
        else:
            lines.append(
                f"- MongoDB collections as JSON-lines files of the task folder: {mc['files']} (collections "
                f"{', '.join(mc['tables'])})"
            )
    keys = credential_keys(cfg)
    if keys:
        lines.append(
            f"Credentials: {', '.join(keys)} in config.yaml. Their values are never shown to you: [MASKED] "
            "stands for them in the files and in your code's output. Your code reads them from config.yaml."
        )
    schema = cfg.get("warehouse", {}).get("schema", "main")
    lines += [
        f"Write the warehouse to the file {warehouse} in your working directory (its database is then named "
        f"{pipeline_id}), schema {schema}: load every source table under its own name with all of its rows, then "
        "build each data model of data_model.yaml as a table or view of the same schema, named as the model, with "
        "the columns it lists.",
        "Tools: Python with duckdb, psycopg, pymongo, boto3 and requests; the dbt command with the DuckDB adapter "
        "(dbt-duckdb: a profile of type duckdb whose path is the warehouse file). Only one process may write the "
        "warehouse at a time: close your own DuckDB connection before running dbt.",
        "The warehouse file is collected when you end the task: make sure it holds everything by then.",
    ]
    return "\n".join(lines)


@contextmanager
def open_sources(
    pipeline: Pipeline, schema: str, options: SourceOptions
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """A pipeline's sources started (:class:`SourceSet`) for the time of the block: yields the task input's
    updates (the task folder as the lake, its files, the services to forward, the environment notes) and what
    the record keeps of the sources (start time, kinds, differences)."""
    sources = SourceSet(pipeline, schema, options).start()
    try:
        assert sources.task_dir is not None
        info = {
            "started_s": round(sources.started_s, 3),
            "kinds": pipeline.kinds(),
            "served": dict(sources.served),
            "differences": list(sources.differences),
        }
        services = [ServiceForward(name=s.name, port=s.port, socket=s.socket) for s in sources.services]
        files = _listing(sources.task_dir)
        pg = sources.config.get("postgres", {}).get("config", {})
        update = {
            "lake_root": sources.task_dir,
            "files": files,
            "spec_files": spec_files(files),
            "services": services,
            # the random password: masked wherever an agent would show it
            "secrets": [pg["password"]] if pg.get("password") else [],
            "environment": environment_notes(
                sources.config, pipeline.id, options.warehouse_file(pipeline.id)
            ),
        }
        yield update, info
    finally:
        sources.stop()


@contextmanager
def enter_remote_stage(
    payload: dict[str, Any], folder: Path
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """:meth:`EltSetting.remote_stage`'s stage on the worker: the pipeline's sources started from ``folder`` (its
    ``data/`` and ``schemas/`` as shipped to this node), with the run's options (checked here: a ``mongod``
    this node lacks is the task's setup error)."""
    pipeline = Pipeline.model_validate(payload["pipeline"]).model_copy(update={"folder": Path(folder)})
    options = EltOptions.model_validate(payload["options"])
    with open_sources(pipeline, str(payload["schema"]), options) as staged:
        yield staged


def elt_task(task: TaskSpec) -> EltTask:
    """``task`` as the ELT pipeline it is (the elt setting runs only the workloads of the elt family)."""
    if not isinstance(task, EltTask):
        raise TypeError(f"the elt setting runs ELT pipelines: task {task.id} is a {type(task).__name__}")
    return task


class EltSetting(SettingDefaults):
    """See the module docstring."""

    name = "elt"
    family = FAMILY
    #: the system builds a warehouse (its agents' prompts say so: extract, load, model, verify, then finish)
    task_kind: TaskKind = "elt"
    #: the official/verified gold views are KramaBench's; an ELT suite's corrections apply per comparator
    scores_answers = False

    options_model = EltOptions

    def __init__(self, options: EltOptions | None = None) -> None:
        self.options = options or EltOptions()
        self.comparators = list(DEFAULT_COMPARATORS)
        self.primary = self.options.comparator
        self._staged: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def with_options(self, options: BaseModel) -> EltSetting:
        return EltSetting(EltOptions.model_validate(options.model_dump()))

    # -- the work items (one per pipeline: SettingDefaults.units) ---------------------------------------
    def lake(self, task: TaskSpec, view: LakeView) -> tuple[Path, list[str]]:
        """The pipeline's task folder and its files."""
        prefix = f"{task.id}/"
        return Path(view.path) / task.id, [f[len(prefix) :] for f in view.files if f.startswith(prefix)]

    def spec_files(self, files: list[str]) -> list[str]:
        return spec_files(files)

    def outputs(self, task: TaskSpec) -> list[str]:
        """The warehouse file and its write-ahead log (DuckDB replays it when the scorer opens the file, so a
        warehouse whose connection was never closed is read whole)."""
        name = self.options.warehouse_file(task.id)
        return [name, f"{name}.wal"]

    def presolved(self, task: TaskSpec, unit: SubtaskSpec | None) -> SystemOutput | None:
        """A pipeline left out by its findings: failed, without asking the system (it counts in SRDEL/SRDT)."""
        why = elt_task(task).left_out
        if why:
            return SystemOutput(error=OutcomeError(kind=LEFT_OUT, message=f"the pipeline cannot run: {why}"))
        return None

    def make_judge(self, model: Model) -> NamedJudge:
        from kramabench.scorers.judge import ModelJudge

        return ModelJudge(model)

    # -- the sources around the solving -------------------------------------------------------------
    @contextmanager
    def stage(self, item: WorkItem) -> Iterator[TaskInput]:
        task = elt_task(item.task)
        with open_sources(task.pipeline, task.schema_name, self.options) as (update, info):
            with self._lock:
                self._staged[item.input.token] = info
            yield item.input.model_copy(update=update)

    def remote_stage(self, item: WorkItem) -> RemoteStage:
        """How a Ray worker starts the task's sources itself (:func:`enter_remote_stage`, the same
        :class:`SourceSet` as here): the pipeline without its row counts, evaluation queries and ground truth,
        and the files the sources serve (``data/``, ``schemas/``) shipped by content."""
        task = elt_task(item.task)
        p = task.pipeline
        files = sorted({s.data for s in p.sources if s.data} | set(p.schemas.values()))
        public = p.model_copy(
            update={
                "tables": {},
                "folder": Path("."),
                "models": [
                    m.model_copy(update={"evaluation": None, "ground_truth": None, "dropped_columns": {}})
                    for m in p.models
                ],
            }
        )
        return RemoteStage(
            enter=f"{__name__}:enter_remote_stage",
            name=p.id,
            folder=p.folder,
            files=tuple(files),
            payload={
                "pipeline": public.model_dump(mode="json"),
                "schema": task.schema_name,
                "options": self.options.model_dump(mode="json"),
            },
        )

    def staged_remotely(self, item: WorkItem, info: dict[str, Any]) -> None:
        with self._lock:
            self._staged[item.input.token] = dict(info)

    # -- scoring ------------------------------------------------------------------------------------
    def _warehouse(self, item: WorkItem, out: SystemOutput) -> tuple[Path | None, str | None]:
        """The warehouse file the system collected: the artifact named as ``config.yaml`` says, a regular file
        whose content is what the session's ``collect`` copied (its sha256)."""
        name = self.options.warehouse_file(item.task.id)
        for a in out.artifacts:
            if a.name != name:
                continue
            p = Path(a.path)
            if not p.is_absolute() and item.input.artifacts_dir is not None:
                p = Path(item.input.artifacts_dir) / p
            if p.is_symlink() or not p.is_file():
                continue
            if sha256_file(p) == a.sha256:
                return p, None
            return None, f"{name}: the file at {p} is not the one the session collected (sha256 differs)"
        return None, (
            f"the system collected no {name} (it must leave the warehouse in its session's working "
            "directory and collect it: TaskInput.outputs)"
        )

    def score(self, ctx: SettingContext, item: WorkItem, out: SystemOutput) -> dict[str, Any]:
        task = elt_task(item.task)
        p = task.pipeline
        with self._lock:
            staged = self._staged.pop(item.input.token, None)
        error = out.error
        left_out = task.left_out
        warehouse, why = (None, f"left out: {left_out}") if left_out else self._warehouse(item, out)
        if warehouse is None:
            if error is None:
                error = OutcomeError(kind="no_warehouse", message=why or "no warehouse")
            ps = PipelineScore(
                pipeline=p.id,
                comparators=self.comparators,
                stage1=Stage1(passed=False, error=why),
                models=[ModelScore(model=m.name, error="stage 1 failed") for m in p.models],
            )
        else:
            ps = score_pipeline(
                task.schema_name,
                p,
                warehouse,
                self.comparators,
                isolated=True,
                compare=_via_scorer,
                query_timeout_s=self.options.query_timeout_s,
            )
        n = len(p.models)
        correct = {c: ps.n_correct(c) for c in self.comparators}
        details: dict[str, Any] = {
            "comparator": self.primary,
            "stage1_passed": ps.stage1.passed,
            "n_models": n,
            "correct": correct,
            "stage1": ps.stage1.model_dump(mode="json"),
            "models": [m.model_dump(mode="json") for m in ps.models],
        }
        if staged is not None:
            details["sources"] = staged
        if left_out:
            details["left_out"] = left_out
        found = {t: c.found for t, c in ps.stage1.tables.items()}
        answer = {
            "warehouse": self.options.warehouse_file(p.id) if warehouse is not None else None,
            "tables": found,
            "models_correct": {c: [m.model for m in ps.models if m.correct(c)] for c in self.comparators},
        }
        return {
            "answer_type": ANSWER_TYPE,
            "expected": {"tables": dict(p.tables), "models": [m.name for m in p.models]},
            "answer": answer,
            "status": "error" if error is not None else "ok",
            "error": error,
            "score": correct[self.primary] / n if n else 0.0,
            "unscored": False,
            "metric": f"data models correct ({self.primary})",
            "score_details": details,
        }

    # -- what a run declares ------------------------------------------------------------------------
    def summary(self, records: list[Record]) -> list[RatioMetric]:
        """SRDEL and SRDT per comparator over the records of a run (one per pipeline, its last attempt)."""
        stage1: list[tuple[float, float]] = []
        models: dict[str, list[tuple[float, float]]] = {c: [] for c in self.comparators}
        for r in records:
            d = r.score_details or {}
            exp = r.expected if isinstance(r.expected, dict) else {}
            n = int(d.get("n_models", len(exp.get("models") or [])))
            stage1.append((1.0 if d.get("stage1_passed") else 0.0, 1.0))
            for c in self.comparators:
                models[c].append((float((d.get("correct") or {}).get(c, 0)), float(n)))
        out = [
            RatioMetric(
                key="srdel",
                label="SRDEL",
                numerator=sum(a for a, _ in stage1),
                denominator=len(stage1),
                parts=stage1,
                description="pipelines whose warehouse holds every source table with its "
                "row count (stage 1) / pipelines",
            )
        ]
        for c in self.comparators:
            out.append(
                RatioMetric(
                    key=f"srdt:{c}",
                    label=f"SRDT ({c})",
                    numerator=sum(a for a, _ in models[c]),
                    denominator=sum(b for _, b in models[c]),
                    parts=models[c],
                    description=f"data models correct under the {c} comparator / data models (a model "
                    "of a pipeline that failed stage 1 counts as incorrect)",
                )
            )
        return out

    def floor_note(self, records: list[Record]) -> str | None:
        """The floor of ELT records: what an empty warehouse scores on the same pipelines. Constant answers
        (``0``, ``""``, ``"I don't know"``) are not warehouses, so they are no floor here. An empty warehouse
        holds no table: it passes stage 1 only for a pipeline that expects none, and it holds no data model, so
        every model's evaluation query fails (SRDT 0)."""
        recs = [r for r in records if r.subtask_id is None]
        if not recs:
            return None
        exp = [r.expected if isinstance(r.expected, dict) else {} for r in recs]
        # a pipeline left out by its findings fails whatever the warehouse holds
        stage1 = sum(
            1
            for r, e in zip(recs, exp, strict=True)
            if not e.get("tables") and not (r.score_details or {}).get("left_out")
        )
        models = sum(len(e.get("models") or []) for e in exp)
        return (
            f"floor (the same {len(recs)} pipelines): an empty warehouse scores 0.0% (SRDEL "
            f"{100 * stage1 / len(recs):.1f}%: no expected table is in it; SRDT 0/{models}: no data model is); "
            'constant answers (0, "", "I don\'t know") are not warehouses and are no floor here'
        )

    def differences(self, records: list[Record]) -> list[str] | None:
        """The deliberate differences of the tasks that ran: the union of their records' (``score_details.sources``,
        what the task's set-up had), in a fixed order; None when no record says (no task's sources started)."""
        said: list[Any] = [((r.score_details or {}).get("sources") or {}).get("differences") for r in records]
        said = [d for d in said if isinstance(d, list)]
        if not said:
            return None
        return ordered_differences(str(x) for d in said for x in d)

    def describe(self, workloads: Sequence[WorkloadSpec]) -> dict[str, Any]:
        tasks = [(w.domain, elt_task(t)) for w in workloads for t in w.tasks]
        kinds = sorted({k for _, t in tasks if not t.left_out for k in t.pipeline.kinds()})
        left = [
            {"domain": domain, "task_id": t.id, "models": len(t.pipeline.models), "reason": t.left_out}
            for domain, t in tasks
            if t.left_out
        ]
        return {
            # the end-of-run table's score column: no gold views here, the primary comparator's share, named
            "score_label": f"{self.primary} %",
            "score_note": (
                f"{self.primary} %: the share of each pipeline's data models correct under the "
                f"{self.primary} comparator ("
                + (
                    "ELT-Bench's own comparison, two named fixes"
                    if self.primary == "elt-bench"
                    else "ELT-Bench-Verified's rules"
                )
                + "); SRDEL and SRDT "
                "of both comparators below"
            ),
            "left_out": left,
            "comparators": self.comparators,
            "primary_comparator": self.primary,
            "source_kinds": kinds,
            "warehouse": self.options.warehouse or "<pipeline id>.duckdb",
            "differences": self.options.differences(kinds),
            "options": self.options.model_dump(mode="json"),
        }


__all__ = [
    "LEFT_OUT",
    "PRIMARY",
    "EltOptions",
    "EltSetting",
    "elt_task",
    "enter_remote_stage",
    "open_sources",
]
