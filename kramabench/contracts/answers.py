"""Answer types and key functionalities: what a task's answer is scored as, and what its pipeline is
judged on. The workload loader fills them in; the scorers and judges read them; neither imports the other.
A task holds its answer type as a plain string (``numeric_exact``, or a plug-in scorer's name);
:class:`AnswerType` names the built-in ones.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class AnswerType(str, Enum):
    STRING_EXACT = "string_exact"
    STRING_APPROXIMATE = "string_approximate"
    NUMERIC_EXACT = "numeric_exact"
    NUMERIC_APPROXIMATE = "numeric_approximate"
    LIST_EXACT = "list_exact"
    LIST_APPROXIMATE = "list_approximate"

    @property
    def kind(self) -> Literal["string", "numeric", "list"]:
        return self.value.split("_")[0]  # type: ignore[return-value]

    @property
    def approximate(self) -> bool:
        return self.value.endswith("_approximate")


#: name -> built-in answer type
_BUILTIN: dict[str, AnswerType] = {a.value: a for a in AnswerType}


def builtin_answer_type(name: str | None) -> AnswerType | None:
    """The built-in :class:`AnswerType` a task's ``answer_type`` (a plain string) names; None for the name of
    an answer type a plug-in scorer registers (or for none)."""
    return _BUILTIN.get(name) if name else None


class KeyFunctionality(BaseModel):
    """A step a correct pipeline must implement (judged in the pipeline-design setting)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    description: str
    derived: bool = Field(default=False, description="True when derived from a subtask's `step` text")


__all__ = ["AnswerType", "KeyFunctionality", "builtin_answer_type"]
