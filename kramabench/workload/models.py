"""Typed model of a workload: tasks, subtasks, key functionalities, answer types, findings.

The shapes follow the official KramaBench layout (``workload/<domain>.json``: a list of tasks, each with
subtasks). Loading is tolerant: a defect of a file becomes a :class:`Finding`, never an exception, and
the affected field is normalised (``data_sources`` given as a string becomes a one-element list) or set
to ``None`` (an unknown ``answer_type``).
"""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from kramabench import plugins
from kramabench.contracts.answers import AnswerType, KeyFunctionality


class _InstalledAnswerTypes:
    """JSON schema of an answer type: a built-in :class:`AnswerType`, or one of the answer types the installed
    plug-in scorers register (never any string)."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict[str, Any]:
        builtin, _string = handler(core_schema)["anyOf"]
        extra = sorted(set(plugins.names("scorers")) - {a.value for a in AnswerType})
        return {"anyOf": [builtin, {"type": "string", "enum": extra}]} if extra else builtin


def _as_given(value: Any) -> Any:
    return value


#: the name of an answer type, a plain string: a built-in :class:`AnswerType`'s (a member given becomes its
#: name) or one a plug-in scorer registers (the loader accepts only installed ones). The validator passes the
#: value on unchanged: it is there for the JSON schema, which lists the names (built-in ones as the enum).
AnswerTypeName = Annotated[
    str, BeforeValidator(_as_given, json_schema_input_type=AnswerType | str), _InstalledAnswerTypes
]


class Difficulty(str, Enum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"
    UNKNOWN = "unknown"


_DIFFICULTY_OF = {d.value: d for d in Difficulty}
_DIFFICULTY_RE = re.compile(r"^[^-]+(?:-[^-]+)*?-(easy|medium|hard)-\d+", re.IGNORECASE)


def difficulty_from_id(task_id: str) -> Difficulty:
    """``legal-hard-22`` -> HARD; ids without a difficulty part give UNKNOWN."""
    m = _DIFFICULTY_RE.match(task_id or "")
    return _DIFFICULTY_OF[m.group(1).lower()] if m else Difficulty.UNKNOWN


Severity = Literal["error", "warning", "info"]


class Finding(BaseModel):
    """One defect (or remark) about a workload, as reported by the loader and the validator."""

    model_config = ConfigDict(extra="forbid")

    severity: Severity
    code: str = Field(description="stable machine-readable kind, e.g. 'answer_type_mismatch'")
    domain: str | None = None
    task_id: str | None = None
    subtask_id: str | None = None
    field: str | None = None
    message: str
    suggestion: str | None = None
    file: str | None = None

    @property
    def where(self) -> str:
        return self.subtask_id or self.task_id or self.file or self.domain or "-"


class Subtask(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    query: str = ""
    step: str | None = None
    answer: Any = None
    answer_type: AnswerTypeName | None = None
    data_sources: list[str] | None = None


class Task(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    query: str = ""
    answer: Any = None
    answer_type: AnswerTypeName | None = None
    difficulty: Difficulty = Difficulty.UNKNOWN
    data_sources: list[str] | None = None
    subtasks: list[Subtask] = Field(default_factory=list)
    key_functionalities: list[KeyFunctionality] = Field(default_factory=list)
    runtime: float | None = None
    solution: str | None = Field(
        None, description="path of the reference solution, relative to the workload root (if known)"
    )


#: the reviewed class of a task's gold (an errata file's ``[[review]]``; docs/audit.md "Task classes")
TaskClass = Literal["reproduces", "gold-defect", "solution-defect", "ambiguous", "unreproducible"]
TASK_CLASSES: tuple[str, ...] = (
    "reproduces",
    "gold-defect",
    "solution-defect",
    "ambiguous",
    "unreproducible",
)


class TaskReview(BaseModel):
    """The reviewed class of one task, with the evidence a reviewer can re-run (``[[review]]``).

    - ``reproduces``: the reference solution reproduces the gold (``derived``: what it printed);
    - ``gold-defect``: the gold is wrong; the erratum of the ``answer`` field carries the corrected value,
      ``derivation`` is the code that computes it from the lake, ``derived`` what it printed, ``evidence``
      the step of the reference solution or the words of the question that show the defect;
    - ``solution-defect``: the gold is right, the reference solution is wrong or prints prose (``why``);
      no erratum of the main answer;
    - ``ambiguous``: the question admits several answers (``accept``); ``scorer_accepts`` says whether the
      scorer should accept each of them;
    - ``unreproducible``: the task reads a lake file absent upstream (``absent``, each an ``[[absent]]``).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    domain: str
    task: str
    klass: TaskClass = Field(alias="class")
    why: str = Field(min_length=3, description="the finding, in words")
    evidence: str | None = Field(None, description="which step of the solution or the question shows it")
    derivation: str | None = Field(
        None,
        description="Python run from the workload root (the lake at data/<domain>/input/); prints the value",
    )
    derived: Any = Field(None, description="what the derivation (or, for reproduces, the solution) printed")
    accept: list[Any] = Field(default_factory=list, description="ambiguous: the answers the question admits")
    scorer_accepts: bool | None = Field(
        None, description="ambiguous: whether the scorer should accept them all"
    )
    absent: list[str] = Field(default_factory=list, description="unreproducible: lake files absent upstream")

    @model_validator(mode="after")
    def _evidence_of_class(self) -> TaskReview:
        need: list[str] = []
        if self.klass == "gold-defect":
            need = [n for n in ("evidence", "derivation", "derived") if getattr(self, n) is None]
        elif self.klass == "ambiguous":
            if len(self.accept) < 2:
                need.append("accept (at least two answers)")
            if self.scorer_accepts is None:
                need.append("scorer_accepts")
        elif self.klass == "unreproducible" and not self.absent:
            need.append("absent (the lake files that are missing)")
        if need:
            raise ValueError(f"class {self.klass!r} needs {', '.join(need)}")
        return self


class ErratumApplied(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str
    subtask_id: str | None = Field(None, description="the subtask corrected (None: the task itself)")
    field: str
    old: Any = None
    new: Any = None
    reason: str


class Workload(BaseModel):
    """One domain of a workload root: its tasks, data lake and what loading found."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    root: Path = Field(description="workload root holding workload/ and data/")
    source: Path = Field(description="the JSON file the tasks were read from")
    lake: Path = Field(description="the data lake folder, <root>/data/<domain>/input")
    tasks: list[Task] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    errata: list[ErratumApplied] = Field(default_factory=list)
    reviews: list[TaskReview] = Field(
        default_factory=list,
        description="the reviewed class of each task, from the errata applied (``[[review]]``)",
    )
    content_hash: str | None = Field(None, description="sha256 of the workload JSON file as read")

    def task(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(f"{self.domain}: no task with id {task_id!r}")

    def review_of(self, task_id: str) -> TaskReview | None:
        """The reviewed class of a task (None: not yet accounted for, or no errata applied)."""
        return next((r for r in self.reviews if r.task == task_id), None)

    @property
    def n_subtasks(self) -> int:
        return sum(len(t.subtasks) for t in self.tasks)


__all__ = [
    "AnswerType",
    "Difficulty",
    "ErratumApplied",
    "TASK_CLASSES",
    "TaskClass",
    "TaskReview",
    "Finding",
    "KeyFunctionality",
    "Severity",
    "Subtask",
    "Task",
    "Workload",
    "difficulty_from_id",
]
