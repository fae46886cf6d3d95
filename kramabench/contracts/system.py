"""The system contract: what a system under test receives and returns.

A system never receives a task id, answers, data_sources or reference solutions: :class:`TaskInput`
holds the question, the lake and its file list only. An error is an outcome (:class:`OutcomeError` in
:class:`SystemOutput`), not an exception that ends a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.artifacts import Artifact
from kramabench.contracts.session import Mount, ServiceForward
from kramabench.contracts.steps import AgentStep
from kramabench.contracts.values import CleanText

#: the name of an evaluation setting: a built-in ("end-to-end", "pipeline-design", "subtasks") or one a plug-in
#: registers under the entry-point group ``kramabench.settings``; not a closed list.
SettingName = str

#: what a task asks of a system, which decides how an agent puts it to its model (its role, how the task ends):
#: ``question``: a value answering ``query``, scored against the gold (KramaBench's settings); ``elt``: an ELT
#: pipeline whose result is the warehouse file of ``outputs`` (extract, load, model, verify); the final answer only
#: ends the task. A setting declares its kind (``Setting.task_kind``) and the runner writes it into every
#: ``TaskInput``. A closed list: a system writes its prompts per kind, so a new kind is a change of the contract.
TaskKind = Literal["question", "elt"]


class SubtaskInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="opaque key to answer under (e.g. 'subtask-1'); not the official id")
    query: str


class TaskInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str
    lake_root: Path = Field(description="the data lake, read-only")
    files: list[str] = Field(default_factory=list, description="lake files, relative to lake_root")
    setting: SettingName = "end-to-end"
    kind: TaskKind = Field(
        default="question", description="what the task asks (TaskKind): the setting's task_kind"
    )
    subtasks: list[SubtaskInput] | None = None
    parent_query: str | None = Field(
        default=None, description="in the subtask setting: the end-to-end question"
    )
    hint_files: list[str] | None = None
    spec_files: list[str] = Field(
        default_factory=list,
        description="files of the lake (relative paths) that specify the task, e.g. an ELT "
        "task's config.yaml, data_model.yaml and schemas/: an agent shows them whole when they fit its prompt budget "
        "(and says so when they are cut), before the other files",
    )
    token: str = Field(
        default="", description="opaque per-run handle; only privileged built-ins can resolve it"
    )
    artifacts_dir: Path | None = Field(
        default=None,
        description="the host folder where this task's sessions collect files (Sandbox.session(artifacts_dir=...)); "
        "set by the runner: an opaque staging folder, moved into results/<run_id>/artifacts/<unit>/ with the record",
    )
    environment: str | None = Field(
        default=None,
        description="notes on the task's environment a setting gives the system for its prompt (services "
        "reachable in the session, tools to use, where the task's files are); None: nothing beyond the lake",
    )
    services: list[ServiceForward] = Field(
        default_factory=list,
        description="host services the system's sessions forward (Sandbox.session(services=...))",
    )
    mounts: list[Mount] = Field(
        default_factory=list,
        description="more read-only host paths for the system's sessions (Sandbox.session(mounts=...))",
    )
    secrets: list[str] = Field(
        default_factory=list,
        exclude=True,
        repr=False,
        description="values of the task's own credentials (an ELT task's random PostgreSQL password): the system "
        "reads them where the task's files hold them, and never shows them to a model or writes them into what is "
        "recorded (an agent masks each wherever it appears, as [MASKED]); never serialised",
    )
    outputs: list[str] = Field(
        default_factory=list,
        description="files of the session workspace (relative paths) that the task's answer is, e.g. an ELT task's "
        "warehouse file and its write-ahead log: collect them all (Session.collect) before the session ends; one "
        "that does not exist is refused ('no such file or folder'), which the setting judges, not the system",
    )


class OutcomeError(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str = Field(description="e.g. model_error, sandbox_error, no_answer, parse_error, system_crash")
    message: CleanText = Field(
        description="in plain words (sanitised: it may quote a model's or a task's text)"
    )


class SystemUsage(BaseModel):
    model_config = ConfigDict(
        extra="forbid", protected_namespaces=()
    )  # model_* fields (pydantic < 2.10 warned)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = Field(
        default=0.0, description="None when a call had no known price (see unpriced_calls)"
    )
    model_calls: int = 0
    cache_hits: int = 0
    wall_s: float = 0.0
    unpriced_calls: int = Field(
        default=0,
        description="model calls without a known price (cost_usd is then None); 0 in "
        "records written before it was counted",
    )


class SystemOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: Any = None
    pipeline_code: str | None = None
    subtask_answers: dict[str, Any] = Field(default_factory=dict)
    transcript: list[dict[str, Any]] = Field(default_factory=list)
    usage: SystemUsage = Field(default_factory=SystemUsage)
    files_read: list[str] = Field(default_factory=list)
    iterations: int = 0
    error: OutcomeError | None = None
    artifacts: list[Artifact] = Field(
        default_factory=list, description="what the system's sessions collected"
    )
    steps: list[AgentStep] = Field(default_factory=list, description="a multi-step system's steps, in order")


@runtime_checkable
class System(Protocol):
    name: str

    def solve(self, task: TaskInput) -> SystemOutput: ...


@runtime_checkable
class Closeable(Protocol):
    """Optional for a system: ``close()`` is called once when the run (or a Ray worker) is done with it."""

    def close(self) -> None: ...


@runtime_checkable
class Configured(Protocol):
    """Optional for a system: ``options`` is its validated options model, defaults included; the run's
    manifest records it (``options.system_options_effective``)."""

    options: BaseModel


__all__ = [
    "Closeable",
    "Configured",
    "OutcomeError",
    "SettingName",
    "SubtaskInput",
    "System",
    "SystemOutput",
    "SystemUsage",
    "TaskInput",
    "TaskKind",
]
