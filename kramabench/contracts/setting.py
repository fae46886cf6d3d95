"""The setting contract: what a work item is, what the system is asked, how its output is scored.

A setting implements :class:`Setting` (subclass :class:`SettingDefaults`, or ``kramabench.run.BaseSetting``
which adds the paraphrase judge, for the defaults) and is registered under
the entry-point group ``kramabench.settings``. It sees a run through :class:`SettingContext`, a task through
:class:`TaskSpec` (the workload's task: :class:`kramabench.workload.Task` or a family's subclass of it), the
task's lake through :class:`LakeView` and one work item as a :class:`WorkItem`; the optional members are the
protocols below (checked with ``isinstance``). What each member does: :mod:`kramabench.run.settings`, which
holds the built-in settings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from kramabench.contracts.answers import KeyFunctionality
from kramabench.contracts.metrics import RatioMetric
from kramabench.contracts.model import Model
from kramabench.contracts.records import Record
from kramabench.contracts.scoring import NamedJudge
from kramabench.contracts.stage import RemoteStage
from kramabench.contracts.system import SubtaskInput, SystemOutput, TaskInput, TaskKind

#: (setting, task id, subtask id, attempt)
RecordKey = tuple[str, str, "str | None", int]

#: the family of a setting that does not say (the KramaBench layout)
DEFAULT_FAMILY = "kramabench"


class QuestionSpec(Protocol):
    """What a task and a subtask both are to a setting: a question with its gold answer."""

    @property
    def id(self) -> str: ...
    @property
    def query(self) -> str: ...
    @property
    def answer(self) -> Any: ...  # the gold: a JSON value
    @property
    def answer_type(self) -> str | None: ...


class SubtaskSpec(QuestionSpec, Protocol):
    """A subtask as a setting reads it (:class:`kramabench.workload.Subtask`)."""

    @property
    def step(self) -> str | None: ...


class TaskSpec(QuestionSpec, Protocol):
    """A task as a setting reads it (:class:`kramabench.workload.Task`; a family's tasks subclass it)."""

    @property
    def subtasks(self) -> Sequence[SubtaskSpec]: ...
    @property
    def key_functionalities(self) -> Sequence[KeyFunctionality]: ...
    @property
    def solution(self) -> str | None: ...


class WorkloadSpec(Protocol):
    """A loaded workload as a setting reads it (:class:`kramabench.workload.Workload`)."""

    @property
    def domain(self) -> str: ...
    @property
    def tasks(self) -> Sequence[TaskSpec]: ...


class LakeView(Protocol):
    """The lake a system sees for one task (:class:`kramabench.run.lakeview.View`): its folder and its files,
    relative to it."""

    @property
    def path(self) -> Path: ...
    @property
    def files(self) -> Sequence[str]: ...


@dataclass(frozen=True)
class TaskRef:
    """The identity of one work item, resolvable from its token by privileged systems only."""

    setting: str
    domain: str
    task_id: str
    subtask_id: str | None
    #: reference solution file (absolute) if the workload has one
    solution: Path | None
    #: where official solutions expect the lake, relative to their working directory
    workdir_lake: str
    #: subtask key given to the system ("subtask-1", ...) -> official subtask id
    subtask_keys: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SettingContext:
    """What a setting may use of the run: never the Runner, the store or the workload list."""

    #: end-to-end: also pose the subtask questions (answers scored apart); off, as in the paper
    pose_subtasks: bool = False
    #: the judge built by the setting's ``make_judge`` (None: no judge configured)
    judge: NamedJudge | None = None
    #: the system is a privileged built-in (it knows the official subtask numbering)
    privileged: bool = False
    #: score an answer 100x off the gold as its rescaled value when the question asks for a percentage
    #: (kramabench.scorers.percent; off: the paper's scoring)
    normalise_percent: bool = False


@dataclass
class WorkItem:
    """One unit of work: a task (or one of its subtasks) of one attempt, with what its system gets."""

    key: RecordKey
    domain: str
    task: TaskSpec
    subtask: SubtaskSpec | None
    attempt: int
    input: TaskInput
    ref: TaskRef
    call_key: str = ""
    started_at: datetime | None = None
    #: an outcome known without calling the system (a setting's ``presolved``, e.g. a task not judgeable)
    presolved: SystemOutput | None = None

    @property
    def label(self) -> str:
        """The unit as a person names it: ``legal/legal-easy-1`` (``/<subtask id>`` for a subtask), what
        messages about its model calls say (its call key is an opaque hash)."""
        sub = self.key[2]
        return f"{self.domain}/{self.key[1]}" + (f"/{sub}" if sub else "")


@runtime_checkable
class Setting(Protocol):
    """An evaluation setting (see :mod:`kramabench.run.settings` for what each member does)."""

    name: str
    default_judge: str | None
    #: its score depends on the gold answers (end-to-end, subtasks): an item whose gold an erratum changed is
    #: scored against the official and the verified gold; False (pipeline-design) scores it once
    scores_answers: bool
    #: what the system is asked (``question``: a value; ``elt``: a warehouse); the runner writes it into every
    #: TaskInput (``TaskInput.kind``)
    task_kind: TaskKind

    def units(self, task: TaskSpec) -> Sequence[SubtaskSpec | None]: ...

    def task_input(
        self,
        ctx: SettingContext,
        task: TaskSpec,
        unit: SubtaskSpec | None,
        view: LakeView,
        token: str,
        keys: dict[str, str],
    ) -> TaskInput: ...

    def presolved(self, task: TaskSpec, unit: SubtaskSpec | None) -> SystemOutput | None: ...

    def make_judge(self, model: Model) -> NamedJudge: ...

    def score(self, ctx: SettingContext, item: WorkItem, out: SystemOutput) -> dict[str, Any]: ...


class SettingDefaults:
    """Defaults of a setting, for subclassing (a setting may also implement :class:`Setting` whole): no default
    judge, nothing presolved, the workloads of KramaBench's layout, a question to answer, one work item per task.

    :meth:`task_input` is the one place a system's input is made: asked the question :meth:`question` gives, over
    the lake :meth:`lake` gives, with the subtasks :meth:`posed_subtasks` gives, the specification files
    :meth:`spec_files` names and the outputs :meth:`outputs` names (default: none). ``make_judge`` and ``score``
    are the subclass's (:class:`kramabench.run.BaseSetting` adds the paraphrase judge)."""

    name = ""
    default_judge: str | None = None
    family = DEFAULT_FAMILY
    scores_answers = True
    task_kind: TaskKind = "question"

    def presolved(self, task: TaskSpec, unit: SubtaskSpec | None) -> SystemOutput | None:
        return None

    def units(self, task: TaskSpec) -> Sequence[SubtaskSpec | None]:
        """One work item: the task itself."""
        return [None]

    def task_input(
        self,
        ctx: SettingContext,
        task: TaskSpec,
        unit: SubtaskSpec | None,
        view: LakeView,
        token: str,
        keys: dict[str, str],
    ) -> TaskInput:
        query, parent_query = self.question(task, unit)
        lake_root, files = self.lake(task, view)
        return TaskInput(
            query=query,
            parent_query=parent_query,
            lake_root=lake_root,
            files=files,
            setting=self.name,
            kind=self.task_kind,
            subtasks=self.posed_subtasks(ctx, task, keys),
            token=token,
            spec_files=self.spec_files(files),
            outputs=self.outputs(task),
        )

    def question(self, task: TaskSpec, unit: SubtaskSpec | None) -> tuple[str, str | None]:
        """The question the system is asked and the question it is part of (default: the task's own, none)."""
        return task.query, None

    def lake(self, task: TaskSpec, view: LakeView) -> tuple[Path, list[str]]:
        """The lake's folder the system gets and its files, relative to it (default: the task's lake view)."""
        return view.path, list(view.files)

    def posed_subtasks(
        self, ctx: SettingContext, task: TaskSpec, keys: dict[str, str]
    ) -> list[SubtaskInput] | None:
        """The subtasks posed with the task's question (default: none)."""
        return None

    def spec_files(self, files: list[str]) -> list[str]:
        """The lake's files that specify the task, shown whole by agents (default: none)."""
        return []

    def outputs(self, task: TaskSpec) -> list[str]:
        """The session's files that are the task's answer, collected before it ends (default: none)."""
        return []


@runtime_checkable
class ForFamily(Protocol):
    """Optional: the workload family (kramabench.workload.families) whose workloads the setting runs."""

    family: str


@runtime_checkable
class Configurable(Protocol):
    """Optional: options a run gives the setting (``--setting-option key=value``), validated by its model."""

    #: the validated options model (``extra="forbid"``: an unknown option is refused, naming the valid ones)
    options_model: type[BaseModel]

    def with_options(self, options: BaseModel) -> Setting:
        """A setting like this one, with these options."""
        ...


@runtime_checkable
class Staged(Protocol):
    """Optional: what must run around one item's solving (services started for the task)."""

    def stage(self, item: WorkItem) -> AbstractContextManager[TaskInput]: ...


@runtime_checkable
class RemoteStaged(Protocol):
    """Optional, with :class:`Staged`: the stage can be entered on the worker that solves the item, on any
    machine (the Ray executor)."""

    def remote_stage(self, item: WorkItem) -> RemoteStage: ...

    def staged_remotely(self, item: WorkItem, info: dict[str, Any]) -> None: ...


@runtime_checkable
class Summarized(Protocol):
    """Optional: the setting's own metrics over a run's records."""

    def summary(self, records: list[Record]) -> list[RatioMetric]: ...


@runtime_checkable
class Floored(Protocol):
    """Optional: the setting's own floor (what no work at all scores on the same tasks, and why), in place of
    the constant answers' floors."""

    def floor_note(self, records: list[Record]) -> str | None: ...


@runtime_checkable
class Described(Protocol):
    """Optional: what the manifest records about the setting for a run (``options.setting_info``)."""

    def describe(self, workloads: Sequence[WorkloadSpec]) -> dict[str, Any]: ...


@runtime_checkable
class Differing(Protocol):
    """Optional: the deliberate differences from the original set-up of the tasks that ran, from their records
    (what served each task; None when no record says)."""

    def differences(self, records: list[Record]) -> list[str] | None: ...


__all__ = [
    "DEFAULT_FAMILY",
    "Configurable",
    "Described",
    "Differing",
    "Floored",
    "ForFamily",
    "LakeView",
    "QuestionSpec",
    "RecordKey",
    "RemoteStaged",
    "Setting",
    "SettingContext",
    "SettingDefaults",
    "Staged",
    "SubtaskSpec",
    "Summarized",
    "TaskRef",
    "TaskSpec",
    "WorkItem",
    "WorkloadSpec",
]
