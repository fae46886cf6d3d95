"""The end-of-run table: score per domain (mean over main tasks) with a 95% CI, errors and cost.

Only end-to-end main-task records count towards the domain score; subtask scores are summarised in a
separate column and never mixed in. Unscored tasks (e.g. a judge verdict that could not be parsed) are
left out of the mean and counted apart. Errors count as 0 (the task was not solved).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from kramabench.contracts.metrics import RatioMetric
from kramabench.contracts.records import Record
from kramabench.run.store import latest_records
from scorers.design import judge_cost
from scorers.stats import TOTAL, bootstrap_ci, format_ci, format_pct, ratio_ci


@dataclass
class DomainRow:
    domain: str
    n: int
    scored: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    errors: int
    unscored: int
    cost_usd: float | None
    cost_unknown: int
    subtask_mean: float | None
    subtask_n: int
    #: the design judge's calls (pipeline-design), apart from the system's cost; None: no judge called
    judge_cost_usd: float | None = None
    judge_cost_unknown: int = 0


def domain_table(records: list[Record], *, setting: str = "end-to-end") -> tuple[list[DomainRow], DomainRow]:
    """Rows per domain and a total row (mean over all main tasks, the paper's formula)."""
    finals = [r for r in latest_records(records) if r.setting == setting]
    recs = [r for r in finals if r.subtask_id is None] if setting != "subtasks" else per_task(finals)
    by_dom: dict[str, list[Record]] = defaultdict(list)
    for r in recs:
        by_dom[r.domain].append(r)
    rows = [_row(d, by_dom[d]) for d in sorted(by_dom)]
    return rows, _row(TOTAL, recs)


def per_task(records: list[Record]) -> list[Record]:
    """Subtask setting: one record per task whose score is the mean over its scored subtasks (unscored when
    none is scored; an error when every subtask is one), cost and tokens summed."""
    groups: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for r in records:
        groups[(r.domain, r.task_id)].append(r)
    out = []
    for group in groups.values():
        scored = [r.score for r in group if not r.unscored and r.score is not None]
        costs = [r.usage.cost_usd for r in group]
        usage = group[0].usage.model_copy(update={
            "prompt_tokens": sum(r.usage.prompt_tokens for r in group),
            "completion_tokens": sum(r.usage.completion_tokens for r in group),
            "cost_usd": None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
        })
        out.append(group[0].model_copy(update={
            "subtask_id": None,
            "score": sum(scored) / len(scored) if scored else None,
            "unscored": not scored,
            "status": "error" if all(r.status == "error" for r in group) else "ok",
            "usage": usage,
        }))
    return out


def _row(name: str, recs: list[Record]) -> DomainRow:
    vals = [r.score for r in recs if not r.unscored and r.score is not None]
    sub = [v for r in recs for v in r.subtask_scores.values() if v is not None]
    costs = [r.usage.cost_usd for r in recs]
    mean = sum(vals) / len(vals) if vals else None
    lo, hi = bootstrap_ci(vals) if vals else (None, None)
    judged = [c for ok, c in (judge_cost(r.score_details) for r in recs) if ok]
    return DomainRow(
        domain=name,
        n=len(recs),
        scored=len(vals),
        mean=mean,
        ci_low=lo,
        ci_high=hi,
        errors=sum(1 for r in recs if r.status == "error"),
        unscored=sum(1 for r in recs if r.unscored or r.score is None),
        cost_usd=sum(c for c in costs if c is not None) if recs else None,
        cost_unknown=sum(1 for c in costs if c is None),
        subtask_mean=sum(sub) / len(sub) if sub else None,
        subtask_n=len(sub),
        judge_cost_usd=sum(c for c in judged if c is not None) if judged else None,
        judge_cost_unknown=sum(1 for c in judged if c is None),
    )


def render_table(rows: list[DomainRow], total: DomainRow, *, title: str = "", width: int | None = None):
    """A rich Table of the rows (scores in %, as the paper prints them).

    ``width``: the terminal's; under 110 columns the table is compact (light rules, short headings) so
    that no cell is cut.
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    compact = width is not None and width < 110
    t = Table(title=title or None, box=box.SIMPLE_HEAD if compact else box.HEAVY_HEAD, padding=(0, 1 if not compact else 0),
              collapse_padding=compact, pad_edge=not compact)
    heads = (("domain", "n", "score %", "95% CI", "err", "unsc.", "subt. %", "cost $") if compact else
             ("domain", "tasks", "score %", "95% CI", "errors", "unscored", "subtasks %", "cost $"))
    for i, col in enumerate(heads):
        t.add_column(col, justify="left" if i == 0 else "right", no_wrap=True)
    judged = any(r.judge_cost_usd is not None for r in [*rows, total])
    if judged:
        t.add_column("judge $" if compact else "judge cost $", justify="right", no_wrap=True)
    for r in [*rows, total]:
        extra = [_cost(r, compact, judge=True)] if judged else []
        t.add_row(
            Text(r.domain),  # a file name, not markup
            str(r.n),
            format_pct(r.mean),
            format_ci(r.ci_low, r.ci_high),
            str(r.errors),
            str(r.unscored),
            f"{format_pct(r.subtask_mean)} (n={r.subtask_n})" if r.subtask_mean is not None else "–",
            _cost(r, compact=compact),
            *extra,
            end_section=r is rows[-1] if rows else False,
        )
    if compact and total.cost_unknown:
        t.caption = "cost ≥x (+N?): N tasks made calls without a known price"
    return t


def render_metrics(metrics: list[RatioMetric], *, title: str = "", width: int | None = None):
    """A rich Table of a setting's own metrics (:class:`~kramabench.contracts.RatioMetric`): value in %, 95%
    bootstrap interval over the units, the counts, what each means."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    compact = width is not None and width < 110
    t = Table(title=title or None, box=box.SIMPLE_HEAD if compact else box.HEAVY_HEAD)
    for i, col in enumerate(("metric", "%", "95% CI", "count", "what it counts")):
        t.add_column(col, justify="left" if i in (0, 4) else "right", no_wrap=i < 4, overflow="fold")
    for m in metrics:
        lo, hi = ratio_ci(m.parts) if m.parts else (None, None)
        t.add_row(Text(m.label), format_pct(m.value), format_ci(lo, hi), f"{m.numerator:g}/{m.denominator:g}",
                  Text(m.description))
    return t


def _cost(r: DomainRow, compact: bool = False, *, judge: bool = False) -> str:
    cost, unknown = (r.judge_cost_usd, r.judge_cost_unknown) if judge else (r.cost_usd, r.cost_unknown)
    if cost is None:
        return "-"
    s = f"{cost:.4f}"
    if unknown:
        s = f"≥{s} (+{unknown}?)" if compact else f"≥{s} ({unknown} unknown)"
    return s


__all__ = ["DomainRow", "domain_table", "per_task", "render_metrics", "render_table"]
