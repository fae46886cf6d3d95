"""What ``audit reference`` finds of one task: the run of its solution and the verdict of each answer."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.audit.causes import Attribution, CauseKind, UpstreamSays
from kramabench.audit.extract import Extraction
from kramabench.audit.layout import PathLayout
from kramabench.scorers.keys import AnswerKey

Verdict = Literal["reproduces", "differs", "cannot-run", "unscored"]
ReadFrom = Literal["printed", "value", "printed+value"]


class ItemVerdict(AnswerKey):
    """The verdict of one task (``subtask_id`` None) or subtask."""

    verdict: Verdict
    cause: CauseKind | None = None
    cause_detail: str | None = None
    attributed_to: Attribution | None = Field(None, description="cannot-run: what the cause is put down to")
    answer_type: str | None = None
    gold: Any = None
    extraction: Extraction | None = None
    score: float | None = None
    metric: str | None = None
    diff: str | None = Field(None, description="what differs, in words (differs only)")


class SolutionRun(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str
    task_id: str
    solution: str | None = None
    exit_code: int | None = None
    timed_out: bool = False
    wall_s: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    files_read: list[str] = Field(default_factory=list)
    layout: PathLayout | None = Field(
        None, description="where the solution looks for the lake and where it ran"
    )
    value: str | None = Field(
        None,
        description="the value of its last line when that is a bare expression, as a "
        "notebook shows it (repr: a DataFrame's text, a scalar's repr)",
    )
    read_from: ReadFrom | None = Field(
        None,
        description="what the answer was read from: what it printed, the value "
        "of its last expression (it printed nothing else), or both (the value last)",
    )
    cause: CauseKind | None = None
    cause_detail: str | None = None
    attributed_to: Attribution | None = None
    evidence: list[str] = Field(
        default_factory=list, description="what shows the cause (files, patterns, upstream)"
    )
    findings: list[str] = Field(
        default_factory=list, description="the validator's findings on the files concerned"
    )
    cause_files: list[str] = Field(
        default_factory=list, description="the lake files or patterns the cause concerns"
    )
    upstream: UpstreamSays | None = Field(
        None,
        description="missing-lake-file: what the errata and the upstream listing say of the missing file",
    )


__all__ = ["ItemVerdict", "ReadFrom", "SolutionRun", "Verdict"]
