"""The ``elt`` setting (entry point ``kramabench.settings: elt``): one work item per pipeline of an ELT suite.

* ``task_input``: the pipeline's instruction and its specification (``data_model.yaml``, ``schemas/``); the
  warehouse file is the task's output (``TaskInput.outputs``);
* ``stage(item)``: just before the pipeline is solved its sources start (:class:`~kramabench.elt.sources.SourceSet`:
  PostgreSQL, the REST API, files, S3, MongoDB) and the system gets the full task folder as its lake
  (``config.yaml`` with the in-session endpoints and credentials) and the services to forward into its
  sessions (``TaskInput.services``); they stop when the system returns;
* ``score``: the warehouse the system collected (``artifacts/<unit>/<pipeline id>.duckdb``) is read in a child
  process with limits (stage 1; stage 2 runs each evaluation query) and each data model is scored through the
  ``table`` answer-type scorer under both comparators. The record's score is the share of the pipeline's
  data models that are correct under the primary comparator (``elt-bench``, the paper's rules); its details
  hold stage 1, every model's result under every comparator (per-column diagnostics) and the sources;
* ``summary(records)``: SRDEL (pipelines passing stage 1 / pipelines) and SRDT per comparator (correct data
  models / data models), over the run's pipelines, as the paper counts them;
* ``describe``: the comparators and the deliberate differences of this run's sources from the original
  (recorded in the manifest, listed in the report).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kramabench.contracts.metrics import RatioMetric
from kramabench.contracts.session import ServiceForward
from kramabench.contracts.system import OutcomeError, SystemOutput, TaskInput
from kramabench.elt.compare import DEFAULT_COMPARATORS, TableResult, failed
from kramabench.elt.compare.values import Table
from kramabench.elt.family import ANSWER_TYPE, FAMILY
from kramabench.elt.scoring import ModelScore, PipelineScore, Stage1, score_pipeline
from kramabench.elt.sources import SourceOptions, SourceSet
from kramabench.elt.suite.models import DataModel

log = logging.getLogger(__name__)

#: the comparator whose verdicts make a record's score (both are always computed and printed)
PRIMARY = "elt-bench"


def _listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def _via_scorer(model: DataModel, expected: Table, actual: Table, comparators: list[str]) -> dict[str, TableResult]:
    """Each comparator's result on one data model, through the ``table`` answer-type scorer of the registry."""
    import scorers
    from kramabench.elt.compare.scorer import TableExpectation

    exp = TableExpectation(table=expected, comparators=list(comparators), primary=comparators[0],
                           dropped={c: model.dropped_for(c) for c in comparators})
    sc = scorers.score(exp, actual, ANSWER_TYPE)
    results = sc.details.get("results") if isinstance(sc.details, dict) else None
    if isinstance(results, dict) and all(c in results for c in comparators):
        return {c: TableResult.model_validate(results[c]) for c in comparators}
    why = sc.details.get("reason") or sc.details.get("error") if isinstance(sc.details, dict) else None
    if sc.unscored or sc.value is None:
        return {c: failed(c, expected, f"the table scorer gave no verdict: {why or 'unscored'}") for c in comparators}
    # a replaced scorer that gives one verdict and no per-comparator results
    return {c: TableResult(comparator=c, correct=sc.value == 1.0, rows_expected=len(expected),
                           rows_actual=len(actual), error=None if sc.value == 1.0 else (why or "wrong"))
            for c in comparators}


class EltSetting:
    """See the module docstring."""

    name = "elt"
    family = FAMILY
    default_judge: str | None = None

    def __init__(self, options: SourceOptions | None = None, *, comparators: tuple[str, ...] = DEFAULT_COMPARATORS,
                 primary: str = PRIMARY) -> None:
        self.options = options or SourceOptions()
        self.comparators = list(comparators)
        self.primary = primary
        self._staged: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    # -- the work items -----------------------------------------------------------------------------
    def units(self, task: Any) -> list[Any | None]:
        return [None]

    def task_input(self, ctx: Any, task: Any, unit: Any | None, view: Any, token: str, keys: dict[str, str]) -> TaskInput:
        prefix = f"{task.id}/"
        return TaskInput(query=task.query, lake_root=Path(view.path) / task.id, setting=self.name, token=token,
                         files=[f[len(prefix):] for f in view.files if f.startswith(prefix)],
                         outputs=[self.options.warehouse_file(task.id)])

    def presolved(self, task: Any, unit: Any | None) -> SystemOutput | None:
        return None

    def make_judge(self, model: Any) -> Any:
        from scorers.judge import ModelJudge

        return ModelJudge(model)

    # -- the sources around the solving -------------------------------------------------------------
    @contextmanager
    def stage(self, item: Any) -> Iterator[TaskInput]:
        task = item.task
        sources = SourceSet(task.pipeline, task.schema_name, self.options).start()
        try:
            assert sources.task_dir is not None
            info = {"started_s": round(sources.started_s, 3), "kinds": task.pipeline.kinds(),
                    "differences": list(sources.differences)}
            with self._lock:
                self._staged[item.input.token] = info
            services = [ServiceForward(name=s.name, port=s.port, socket=s.socket) for s in sources.services]
            yield item.input.model_copy(update={"lake_root": sources.task_dir, "files": _listing(sources.task_dir),
                                                "services": services})
        finally:
            sources.stop()

    # -- scoring ------------------------------------------------------------------------------------
    def _warehouse(self, item: Any, out: SystemOutput) -> tuple[Path | None, str | None]:
        name = self.options.warehouse_file(item.task.id)
        unit = item.input.artifacts_dir
        if unit is None:
            return None, "the run gave the task no artifacts folder"
        unit = Path(unit).resolve()
        for a in out.artifacts:
            if a.name != name:
                continue
            p = Path(a.path)
            p = (p if p.is_absolute() else unit / p).resolve()
            if p.is_relative_to(unit) and p.is_file():
                return p, None
        return None, (f"the system collected no {name} (it must leave the warehouse in its session's working "
                      "directory and collect it)")

    def score(self, ctx: Any, item: Any, out: SystemOutput) -> dict[str, Any]:
        task = item.task
        p = task.pipeline
        with self._lock:
            staged = self._staged.pop(item.input.token, None)
        error = out.error
        warehouse, why = self._warehouse(item, out)
        if warehouse is None:
            if error is None:
                error = OutcomeError(kind="no_warehouse", message=why or "no warehouse")
            ps = PipelineScore(pipeline=p.id, comparators=self.comparators,
                               stage1=Stage1(passed=False, error=why),
                               models=[ModelScore(model=m.name, error="stage 1 failed") for m in p.models])
        else:
            ps = score_pipeline(task.schema_name, p, warehouse, self.comparators, isolated=True, compare=_via_scorer)
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
        found = {t: c.found for t, c in ps.stage1.tables.items()}
        answer = {"warehouse": self.options.warehouse_file(p.id) if warehouse is not None else None, "tables": found,
                  "models_correct": {c: [m.model for m in ps.models if m.correct(c)] for c in self.comparators}}
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
    def summary(self, records: list[Any]) -> list[RatioMetric]:
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
        out = [RatioMetric(key="srdel", label="SRDEL", numerator=sum(a for a, _ in stage1), denominator=len(stage1),
                           parts=stage1, description="pipelines whose warehouse holds every source table with its "
                           "row count (stage 1) / pipelines")]
        for c in self.comparators:
            out.append(RatioMetric(key=f"srdt:{c}", label=f"SRDT ({c})", numerator=sum(a for a, _ in models[c]),
                                   denominator=sum(b for _, b in models[c]), parts=models[c],
                                   description=f"data models correct under the {c} comparator / data models (a model "
                                   "of a pipeline that failed stage 1 counts as incorrect)"))
        return out

    def describe(self, workloads: list[Any]) -> dict[str, Any]:
        kinds = sorted({k for w in workloads for t in w.tasks for k in t.pipeline.kinds()})
        return {
            "comparators": self.comparators,
            "primary_comparator": self.primary,
            "source_kinds": kinds,
            "warehouse": self.options.warehouse or "<pipeline id>.duckdb",
            "differences": self.options.differences(kinds),
        }


__all__ = ["PRIMARY", "EltSetting"]
