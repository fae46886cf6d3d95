"""Which answer of a workload an item is about: the fields every per-answer model starts with."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class AnswerKey(BaseModel):
    """Which answer of a workload: a task's main answer (``subtask_id`` None) or a subtask's."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    task_id: str
    subtask_id: str | None = None

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.domain, self.task_id, self.subtask_id)


__all__ = ["AnswerKey"]
