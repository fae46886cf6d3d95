"""Metrics a setting declares over a run's records (e.g. an ELT run's SRDEL and SRDT): each a ratio of
counts, so that the run's table, the manifest and the report print them without knowing the setting."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RatioMetric(BaseModel):
    """``numerator / denominator`` over the records of a run, with what it means."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="stable machine name, e.g. 'srdt:verified'")
    label: str = Field(description="as printed, e.g. 'SRDT (verified)'")
    numerator: float = Field(ge=0)
    denominator: float = Field(ge=0)
    description: str = ""
    parts: list[tuple[float, float]] = Field(
        default_factory=list,
        description="(numerator, denominator) of each unit (e.g. each pipeline), for an interval",
    )

    @property
    def value(self) -> float | None:
        return self.numerator / self.denominator if self.denominator else None


__all__ = ["RatioMetric"]
