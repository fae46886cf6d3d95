"""What a run saves: ``results/<run_id>/manifest.json`` and ``records.jsonl`` (one Record per line).

Records are keyed by (setting, task_id, subtask_id, attempt). They are appended atomically, one JSON
line each; resume skips keys that already have a finished record. Every field opens in pandas
(``pandas.read_json(path, lines=True)``). The files themselves are read and written through
:mod:`kramabench.runfolder` (this module is only their schema).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.artifacts import Artifact
from kramabench.contracts.steps import AgentStep
from kramabench.contracts.system import OutcomeError, SettingName, SystemUsage
from kramabench.contracts.values import MAX_DEPTH, jsonable

log = logging.getLogger(__name__)


#: the gold an answer is scored against: ``official`` (the workload files as they are; what the paper scored
#: against) or ``verified`` (official + the reviewed errata)
GoldName = Literal["official", "verified"]


class GoldScore(BaseModel):
    """One answer scored against one gold (a record's other gold: :attr:`Record.other_gold`)."""

    model_config = ConfigDict(extra="forbid")

    gold: GoldName
    expected: Any = None
    answer_type: str | None = None
    score: float | None = None
    unscored: bool = False
    metric: str | None = None
    score_details: dict[str, Any] = Field(default_factory=dict)
    subtask_scores: dict[str, float | None] = Field(default_factory=dict)
    subtask_details: dict[str, dict[str, Any]] = Field(default_factory=dict)


class BenchmarkNote(BaseModel):
    """Why the benchmark itself cannot support a task as written (not the system's doing): a data source
    missing from the lake, one documented absent upstream, a task the errata review classes unreproducible,
    an official solution that needs a module the sandbox lacks. Such a task is run and scored as the paper
    does; the note makes a zero it causes visible (:mod:`kramabench.workload.notes`)."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(
        description="data_source_missing, not_reproducible, data_source_outside_lake, "
        "reviewed_unreproducible, solution_needs_module"
    )
    message: str = Field(description="what is missing, in words (the file, the module)")
    subtask_id: str | None = Field(
        default=None, description="the subtask whose data source it is; None: the task's"
    )


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    setting: SettingName = "end-to-end"
    domain: str
    task_id: str
    subtask_id: str | None = None
    attempt: int = 0
    status: Literal["ok", "error"] = Field(
        description="ok: the system produced an answer; error: see `error`"
    )
    system: str
    model: str | None = None
    answer_type: str | None = None
    expected: Any = None
    answer: Any = None
    score: float | None = Field(default=None, description="in [0,1]; None when unscored")
    unscored: bool = False
    metric: str | None = None
    score_details: dict[str, Any] = Field(default_factory=dict)
    subtask_answers: dict[str, Any] = Field(default_factory=dict)
    subtask_scores: dict[str, float | None] = Field(
        default_factory=dict, description="end-to-end only: subtask answers scored, reported apart"
    )
    pipeline_code: str | None = None
    error: OutcomeError | None = None
    usage: SystemUsage = Field(default_factory=SystemUsage)
    wall_s: float = 0.0
    files_read: list[str] = Field(default_factory=list)
    iterations: int = 0
    transcript: list[dict[str, Any]] = Field(default_factory=list)
    steps: list[AgentStep] = Field(
        default_factory=list,
        description="a multi-step system's steps: thought, code, observation, outcome, tokens, time",
    )
    started_at: datetime | None = None
    finished_at: datetime | None = None
    difficulty: str | None = None
    subtask_details: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="per subtask id: metric, details, expected, unscored"
    )
    gold: GoldName | None = Field(
        default=None,
        description="the gold `expected` and `score` are against: verified (official + errata; the default) or "
        "official (--no-errata); None in records written before both golds were kept (the manifest's "
        "workload.errata tells)",
    )
    other_gold: GoldScore | None = Field(
        default=None,
        description="the same answer scored against the other gold, when an erratum changed this item's gold "
        "(answer or answer type); absent: `score` holds for both golds",
    )
    gold_class: str | None = Field(
        default=None,
        description="the task's class in the errata data (reproduces, gold-defect, ...); None: not classified",
    )
    artifacts: list[Artifact] = Field(
        default_factory=list,
        description="files collected from the system's sessions (paths relative to the run folder)",
    )
    benchmark_notes: list[BenchmarkNote] = Field(
        default_factory=list,
        description="why the benchmark cannot support this task as written (a data source missing from the lake, "
        "...); empty: nothing known (records written before the notes were kept have none)",
    )

    @property
    def unsupported(self) -> bool:
        """The benchmark cannot support the task as written (it has a benchmark note)."""
        return bool(self.benchmark_notes)

    @property
    def key(self) -> tuple[str, str, str | None, int]:
        return (self.setting, self.task_id, self.subtask_id, self.attempt)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    created_at: datetime
    finished_at: datetime | None = None
    command: list[str] = Field(default_factory=list)
    setting: SettingName = "end-to-end"
    workload: dict[str, Any] = Field(
        default_factory=dict, description="name, root, domains, content hashes, version"
    )
    errata_applied: list[dict[str, Any]] = Field(default_factory=list)
    system: str
    system_options: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None
    judge: str | None = None
    sandbox: dict[str, Any] = Field(
        default_factory=dict, description="backend, image, python and package versions"
    )
    packages: dict[str, str] = Field(default_factory=dict)
    git_revision: str | None = None
    seed: int | None = None
    concurrency: int = 1
    status: Literal["running", "finished", "interrupted"] = "running"
    stop_reason: str | None = Field(
        default=None,
        description="why an interrupted run stopped early (SIGTERM or SIGINT received, a fatal model error)",
    )
    interrupted_tasks: list[dict[str, Any]] = Field(
        default_factory=list,
        description="the tasks that were running when the run was interrupted (domain, setting, task_id, "
        "subtask_id): not recorded, --resume runs them again",
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="run options as given (limits, limit, lake view, ...); used by --resume",
    )
    resumed_at: list[datetime] = Field(default_factory=list)
    lake_view: str | None = Field(
        default=None, description="how systems saw the lake: hardlink, copy or direct"
    )
    counts: dict[str, Any] = Field(
        default_factory=dict, description="records, errors, cost at the last update"
    )


def unit_key(r: Record) -> tuple[str, str, str, str | None]:
    """(domain, setting, task id, subtask id): one unit of work. The domain is part of it because two
    domains of a root may share task ids (the official ``legal`` and ``legal-tiny``)."""
    return (r.domain, r.setting, r.task_id, r.subtask_id)


def latest_records(records: list[Record]) -> list[Record]:
    """One record per (domain, setting, task, subtask): the highest attempt (for a retried error)."""
    best: dict[tuple[str, str, str, str | None], Record] = {}
    for r in records:
        k = unit_key(r)
        if k not in best or r.attempt >= best[k].attempt:
            best[k] = r
    return list(best.values())


#: deepest nesting of a system's answer kept in a record (deeper parts are replaced by a note)
MAX_ANSWER_DEPTH = MAX_DEPTH


__all__ = [
    "MAX_ANSWER_DEPTH", "BenchmarkNote", "GoldName", "GoldScore", "Manifest", "Record", "jsonable", "latest_records",
    "unit_key",
]  # fmt: skip
