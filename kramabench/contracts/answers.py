"""Answer types and key functionalities: what a task's answer is scored as, and what its pipeline is
judged on. The workload loader fills them in; the scorers and judges read them; neither imports the other.
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


def answer_type_name(answer_type: AnswerType | str | None) -> str | None:
    """An answer type as the plain string records, scores and reports hold (``numeric_exact``; a plug-in's own
    name as it is; None for none): what a task's ``answer_type`` (a built-in :class:`AnswerType` or a plug-in
    scorer's name) is written as."""
    return answer_type.value if isinstance(answer_type, AnswerType) else answer_type


class KeyFunctionality(BaseModel):
    """A step a correct pipeline must implement (judged in the pipeline-design setting)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    description: str
    derived: bool = Field(default=False, description="True when derived from a subtask's `step` text")


__all__ = ["AnswerType", "KeyFunctionality", "answer_type_name"]
