"""The scorer contract: ``score(expected, predicted, answer_type, judge=None) -> Score``.

``value`` is in [0, 1]. A prediction that cannot be parsed scores 0 with the reason in ``details``.
A judge verdict that cannot be parsed makes the score ``unscored`` (``value`` None): reported apart,
never counted as 0.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Score(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: float | None = Field(description="in [0, 1]; None only when unscored")
    metric: str
    details: dict[str, Any] = Field(default_factory=dict)
    unscored: bool = False


__all__ = ["Score"]
