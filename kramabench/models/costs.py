"""Cost and token totals per task and per run.

A total is only as known as its parts: ``cost_usd`` is None as soon as one billed call had an unknown
price (``cost_usd_known`` then sums the calls whose price is known, ``unpriced_calls`` counts the
others). Cache hits and replayed calls cost 0; failed calls count as calls with no tokens.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from kramabench.contracts.model import Completion
from kramabench.models.recording import CallRecord, load_calls

if TYPE_CHECKING:
    from kramabench.contracts.system import SystemUsage


class CostSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    unpriced_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = Field(0.0, description="None when any billed call had an unknown price")
    cost_usd_known: float = 0.0

    def add(self, item: Completion | CallRecord) -> None:
        self.calls += 1
        if isinstance(item, CallRecord) and item.error is not None:
            self.failed_calls += 1
            return
        self.prompt_tokens += item.usage.prompt_tokens
        self.completion_tokens += item.usage.completion_tokens
        if item.cached:
            self.cached_calls += 1
        if item.cost_usd is None:
            self.unpriced_calls += 1
            self.cost_usd = None
        else:
            self.cost_usd_known += item.cost_usd
            if self.cost_usd is not None:
                self.cost_usd += item.cost_usd

    def merge(self, other: CostSummary) -> None:
        for f in (
            "calls",
            "cached_calls",
            "failed_calls",
            "unpriced_calls",
            "prompt_tokens",
            "completion_tokens",
        ):
            setattr(self, f, getattr(self, f) + getattr(other, f))
        self.cost_usd_known += other.cost_usd_known
        self.cost_usd = (
            None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        )


def summarize(items: Iterable[Completion | CallRecord]) -> CostSummary:
    """Totals over completions (e.g. the calls of one task) or call records."""
    s = CostSummary()
    for item in items:
        s.add(item)
    return s


class RunCosts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    total: CostSummary
    per_task: dict[str, CostSummary]
    per_model: dict[str, CostSummary]


def summarize_calls(records: Iterable[CallRecord]) -> RunCosts:
    """Totals per task key, per model id and overall, over every record given (so for a resumed run
    the calls of an interrupted attempt count too: they were paid for)."""
    total = CostSummary()
    per_task: dict[str, CostSummary] = {}
    per_model: dict[str, CostSummary] = {}
    for rec in records:
        total.add(rec)
        per_task.setdefault(rec.task_key, CostSummary()).add(rec)
        per_model.setdefault(rec.model_id, CostSummary()).add(rec)
    return RunCosts(total=total, per_task=per_task, per_model=per_model)


def summarize_run(run_dir: Path | str) -> RunCosts:
    """Totals of a run from its ``calls.jsonl`` (every call paid for, including superseded attempts)."""
    return summarize_calls(load_calls(run_dir))


def system_usage(completions: Iterable[Completion], wall_s: float = 0.0) -> SystemUsage:
    """The :class:`~kramabench.contracts.system.SystemUsage` of a system's completions (for ``SystemOutput``)."""
    from kramabench.contracts.system import SystemUsage

    s = summarize(completions)
    return SystemUsage(
        prompt_tokens=s.prompt_tokens,
        completion_tokens=s.completion_tokens,
        cost_usd=s.cost_usd,
        model_calls=s.calls,
        cache_hits=s.cached_calls,
        wall_s=wall_s,
        unpriced_calls=s.unpriced_calls,
    )


__all__ = ["CostSummary", "RunCosts", "summarize", "summarize_calls", "summarize_run", "system_usage"]
