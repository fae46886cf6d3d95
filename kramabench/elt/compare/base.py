"""The comparator contract: a ground-truth table against a produced one, with per-column diagnostics."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from kramabench.elt.compare.original import OriginalUnreadable
from kramabench.elt.compare.values import Table
from kramabench.files import clip

#: samples of differing values kept per column / per kind of row difference
SAMPLES = 5

ColumnStatus = Literal["matched", "mismatched", "missing", "dropped"]


class ColumnResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="the ground-truth column")
    status: ColumnStatus
    compared: int = Field(0, description="value pairs compared")
    mismatches: int = 0
    samples: list[dict[str, Any]] = Field(default_factory=list, description="row, expected, actual")
    normalised: list[str] = Field(default_factory=list, description="normalisations applied to this column")
    reason: str | None = Field(None, description="why dropped (an erratum) or why it could not be compared")


class TableResult(BaseModel):
    """One data model compared under one comparator."""

    model_config = ConfigDict(extra="forbid")

    comparator: str
    correct: bool
    rows_expected: int = 0
    rows_actual: int = 0
    missing_rows: int = Field(0, description="ground-truth rows the produced table lacks")
    extra_rows: int = Field(0, description="produced rows the ground truth lacks")
    missing_samples: list[dict[str, Any]] = Field(default_factory=list)
    extra_samples: list[dict[str, Any]] = Field(default_factory=list)
    columns: list[ColumnResult] = Field(default_factory=list)
    key: list[str] = Field(default_factory=list, description="columns the rows were aligned on (verified)")
    unfixed_correct: bool | None = Field(
        None,
        description="elt-bench: the verdict of the original code itself, "
        "without the named fixes (None: not applicable)",
    )
    error: str | None = Field(None, description="the table could not be read or compared")

    @property
    def matched_columns(self) -> list[str]:
        return [c.name for c in self.columns if c.status == "matched"]

    @property
    def unmatched_columns(self) -> list[str]:
        return [c.name for c in self.columns if c.status == "mismatched"]

    @property
    def missing_columns(self) -> list[str]:
        return [c.name for c in self.columns if c.status == "missing"]


@runtime_checkable
class Comparator(Protocol):
    name: str
    description: str

    def compare(
        self, expected: Table, actual: Table, *, dropped: dict[str, str] | None = None
    ) -> TableResult: ...


def failed(comparator: str, expected: Table, error: str) -> TableResult:
    """The result for a table that could not be produced or read: every column missing."""
    return TableResult(
        comparator=comparator,
        correct=False,
        rows_expected=len(expected),
        error=error,
        columns=[ColumnResult(name=c, status="missing") for c in expected.columns],
    )


def unreadable(comparator: str, expected: Table, actual: Table, why: str) -> TableResult:
    """The result for a table ELT-Bench's CSV round trip cannot read (``why``): every column missing."""
    return TableResult(
        comparator=comparator,
        correct=False,
        rows_expected=len(expected),
        rows_actual=len(actual),
        error=why,
        columns=[ColumnResult(name=c, status="missing", reason=why) for c in expected.columns],
    )


def originals(comparator: str, expected: Table, actual: Table) -> tuple[Table, Table] | TableResult:
    """Both tables through ELT-Bench's CSV round trip (:meth:`Table.original`), or, when pandas refuses one, the
    result that says so (:func:`unreadable`)."""
    try:
        exp = expected.original()
    except OriginalUnreadable as e:
        return unreadable(comparator, expected, actual, f"the ground truth: {e}")
    try:
        act = actual.original()
    except OriginalUnreadable as e:
        return unreadable(comparator, exp, actual, f"the produced table: {e}")
    return exp, act


class RoundTripComparator(ABC):
    """A :class:`Comparator` of both tables as ELT-Bench's CSV round trip reads them (:func:`originals`): a table
    pandas refuses is the result that says so (:meth:`refused`); a subclass compares the two tables read
    (:meth:`compare_read`)."""

    name: str
    description: str

    def compare(
        self, expected: Table, actual: Table, *, dropped: dict[str, str] | None = None
    ) -> TableResult:
        read = originals(self.name, expected, actual)
        if isinstance(read, TableResult):
            return self.refused(read)
        return self.compare_read(*read, dropped=dropped)

    def refused(self, result: TableResult) -> TableResult:
        """The result for a table the round trip cannot read (as :func:`originals` made it)."""
        return result

    @abstractmethod
    def compare_read(self, expected: Table, actual: Table, *, dropped: dict[str, str] | None) -> TableResult:
        """``expected`` against ``actual``, both as the round trip read them."""


def sample_value(v: Any) -> Any:
    return clip(v, 201) if isinstance(v, str) and len(v) > 200 else v


__all__ = [
    "SAMPLES",
    "ColumnResult",
    "ColumnStatus",
    "Comparator",
    "RoundTripComparator",
    "TableResult",
    "failed",
    "originals",
    "sample_value",
    "unreadable",
]
