"""The scoring contracts: a :class:`Score`, the :class:`Scorer` of one answer type (entry-point group
``kramabench.scorers``, name = answer type) and the :class:`Judge` a scorer may ask.

``Score.value`` is in [0, 1]. A prediction that cannot be parsed scores 0 with the reason in ``details``. A judge
verdict that cannot be parsed makes the score ``unscored`` (``value`` None): reported apart, never counted as 0.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class Score(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: float | None = Field(description="in [0, 1]; None only when unscored")
    metric: str
    details: dict[str, Any] = Field(default_factory=dict)
    unscored: bool = False


class Verdict(BaseModel):
    """A paraphrase judge's verdict on one answer (``equivalent`` None: its reply could not be read)."""

    model_config = ConfigDict(extra="forbid")

    equivalent: bool | None
    reason: str = ""
    raw: str = ""
    cached: bool = False


@runtime_checkable
class NamedJudge(Protocol):
    """What every judge a setting makes has (the paraphrase judge, the design judge): its model's id and its
    prompt's version, which go into score details and the manifest."""

    id: str
    prompt_version: str


@runtime_checkable
class Judge(NamedJudge, Protocol):
    """What a scorer needs from a judge: whether a predicted answer says the same as the gold."""

    def paraphrase(self, question: str | None, expected: str, predicted: str) -> Verdict: ...


@runtime_checkable
class CountsCalls(Protocol):
    """A judge that counts its calls (``calls``, ``cache_hits``, ``errors``, ``cost_usd``...): a run's manifest
    records ``stats`` under ``counts.judge``. The built-in paraphrase and design judges are."""

    stats: dict[str, Any]


@runtime_checkable
class Scorer(Protocol):
    """The scorer of one answer type: any callable of this shape (a function is one). ``expected`` and
    ``predicted`` are JSON values (the gold, the system's answer); never raises for bad data (an unparsable
    answer scores 0 with the reason in ``details``)."""

    def __call__(
        self,
        expected: Any,
        predicted: Any,
        *,
        judge: Judge | None = None,
        question: str | None = None,
        diagnostics: bool = True,
    ) -> Score: ...


__all__ = ["CountsCalls", "Judge", "NamedJudge", "Score", "Scorer", "Verdict"]
