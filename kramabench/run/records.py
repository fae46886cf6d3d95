"""What a run saves: ``results/<run_id>/manifest.json`` and ``records.jsonl`` (one Record per line).

Records are keyed by (setting, task_id, subtask_id, attempt). They are appended atomically, one JSON
line each; resume skips keys that already have a finished record. Every field opens in pandas
(``pandas.read_json(path, lines=True)``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.systems.base import OutcomeError, Setting, SystemUsage


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    setting: Setting = "end-to-end"
    domain: str
    task_id: str
    subtask_id: str | None = None
    attempt: int = 0
    status: Literal["ok", "error"] = Field(description="ok: the system produced an answer; error: see `error`")
    system: str
    model: str | None = None
    answer_type: str | None = None
    expected: Any = None
    answer: Any = None
    score: float | None = Field(None, description="in [0,1]; None when unscored")
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
    started_at: datetime | None = None
    finished_at: datetime | None = None
    difficulty: str | None = None
    subtask_details: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="per subtask id: metric, details, expected, unscored"
    )

    @property
    def key(self) -> tuple[str, str, str | None, int]:
        return (self.setting, self.task_id, self.subtask_id, self.attempt)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    created_at: datetime
    finished_at: datetime | None = None
    command: list[str] = Field(default_factory=list)
    setting: Setting = "end-to-end"
    workload: dict[str, Any] = Field(default_factory=dict, description="name, root, domains, content hashes, version")
    errata_applied: list[dict[str, Any]] = Field(default_factory=list)
    system: str
    system_options: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None
    judge: str | None = None
    sandbox: dict[str, Any] = Field(default_factory=dict, description="backend, image, python and package versions")
    packages: dict[str, str] = Field(default_factory=dict)
    git_revision: str | None = None
    seed: int | None = None
    concurrency: int = 1
    status: Literal["running", "finished", "interrupted"] = "running"
    stop_reason: str | None = Field(None, description="why an interrupted run stopped early (a fatal model error)")
    options: dict[str, Any] = Field(
        default_factory=dict, description="run options as given (limits, limit, lake view, ...); used by --resume"
    )
    resumed_at: list[datetime] = Field(default_factory=list)
    lake_view: str | None = Field(None, description="how systems saw the lake: hardlink, copy or direct")
    counts: dict[str, Any] = Field(default_factory=dict, description="records, errors, cost at the last update")


__all__ = ["Manifest", "Record"]
