"""The end-of-run table: score per domain (mean over main tasks) with a 95% CI, errors and cost.

Only end-to-end main-task records count towards the domain score; subtask scores are summarised in a
separate column and never mixed in. Unscored tasks (e.g. a judge verdict that could not be parsed) are
left out of the mean and counted apart. Errors count as 0 (the task was not solved).

Both golds side by side (:mod:`kramabench.run.golds`): ``mean`` is the score against the verified gold
(official + errata), ``official_mean`` against the official gold (the workload files: the number
comparable with the paper). :func:`floors_text` gives the floors line printed under the table.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kramabench.contracts.cost import format_cost, unpriced_calls
from kramabench.contracts.metrics import RatioMetric
from kramabench.contracts.records import Manifest, Record
from kramabench.contracts.text import safe_text
from kramabench.run.floors import FloorCache, FloorRow
from kramabench.run.golds import OFFICIAL, VERIFIED, both_golds
from kramabench.run.store import latest_records
from kramabench.scorers.design import judge_cost
from kramabench.scorers.stats import TOTAL, bootstrap_ci, canonical_mean, format_ci, format_pct, ratio_ci

if TYPE_CHECKING:  # rich is imported when a table is drawn
    from rich.table import Table


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
    #: records with a call of no known price (their cost is unknown)
    cost_unknown: int
    subtask_mean: float | None
    subtask_n: int
    #: the design judge's calls (pipeline-design), apart from the system's cost; None: no judge called
    judge_cost_usd: float | None = None
    judge_cost_unknown: int = 0
    #: the same tasks scored against the official gold (the paper-comparable number)
    official_mean: float | None = None
    official_ci_low: float | None = None
    official_ci_high: float | None = None
    #: tasks whose score differs between the two golds (an erratum changed their gold)
    gold_changed: int = 0
    #: model calls without a known price (the cost is then unknown)
    unpriced_calls: int = 0


def _main_records(records: list[Record], setting: str) -> list[Record]:
    finals = [r for r in latest_records(records) if r.setting == setting]
    return [r for r in finals if r.subtask_id is None] if setting != "subtasks" else per_task(finals)


def domain_table(
    records: list[Record], *, setting: str = "end-to-end", manifest: Manifest | None = None
) -> tuple[list[DomainRow], DomainRow]:
    """Rows per domain and a total row (mean over all main tasks, the paper's formula); ``mean`` against the
    verified gold, ``official_mean`` against the official one (``manifest``: the run's, for records written
    before both golds were kept)."""
    views = both_golds(records, manifest)
    recs = _main_records(views[VERIFIED].records, setting)
    official = _main_records(views[OFFICIAL].records, setting)
    by_dom: dict[str, list[Record]] = defaultdict(list)
    off_dom: dict[str, list[Record]] = defaultdict(list)
    for r in recs:
        by_dom[r.domain].append(r)
    for r in official:
        off_dom[r.domain].append(r)
    rows = [_with_official(_row(d, by_dom[d]), off_dom[d], by_dom[d]) for d in sorted(by_dom)]
    return rows, _with_official(_row(TOTAL, recs), official, recs)


def _with_official(row: DomainRow, official: list[Record], verified: list[Record]) -> DomainRow:
    vals = [r.score for r in official if not r.unscored and r.score is not None]
    row.official_mean = canonical_mean(vals) if vals else None
    row.official_ci_low, row.official_ci_high = bootstrap_ci(vals) if vals else (None, None)
    ver = {(r.domain, r.task_id): (r.score, r.unscored) for r in verified}
    row.gold_changed = sum(1 for r in official if ver.get((r.domain, r.task_id)) != (r.score, r.unscored))
    return row


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
        usage = group[0].usage.model_copy(
            update={
                "prompt_tokens": sum(r.usage.prompt_tokens for r in group),
                "completion_tokens": sum(r.usage.completion_tokens for r in group),
                "cost_usd": None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
                "unpriced_calls": sum(unpriced_calls(r.usage) for r in group),
            }
        )
        out.append(
            group[0].model_copy(
                update={
                    "subtask_id": None,
                    "score": sum(sorted(scored)) / len(scored) if scored else None,
                    "unscored": not scored,
                    "status": "error" if all(r.status == "error" for r in group) else "ok",
                    "usage": usage,
                }
            )
        )
    return out


def _row(name: str, recs: list[Record]) -> DomainRow:
    vals = [r.score for r in recs if not r.unscored and r.score is not None]
    sub = [v for r in recs for v in r.subtask_scores.values() if v is not None]
    costs = [r.usage.cost_usd for r in recs]
    mean = canonical_mean(vals) if vals else None
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
        unpriced_calls=sum(unpriced_calls(r.usage) for r in recs),
    )


def render_table(
    rows: list[DomainRow],
    total: DomainRow,
    *,
    title: str = "",
    width: int | None = None,
    score_label: str | None = None,
    score_note: str | None = None,
) -> Table:
    """A rich Table of the rows (scores in %, as the paper prints them).

    ``width``: the terminal's; under 110 columns the table is compact (light rules, short headings) so
    that no cell is cut. ``score_label``: what the score column shows, for a setting that scores against no
    gold answers (its ``describe`` says it: e.g. ``elt-bench %``, the primary comparator's score); the table
    then has that one score column (no verified/official golds) and ``score_note`` as its caption.
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    compact = width is not None and width < 130
    t = Table(
        title=safe_text(title) or None,
        box=box.SIMPLE_HEAD if compact else box.HEAVY_HEAD,
        padding=(0, 1 if not compact else 0),
        collapse_padding=compact,
        pad_edge=not compact,
    )
    has_subs = any(r.subtask_mean is not None for r in [*rows, total])
    subs = has_subs and not compact  # compact: the subtask answers' total goes into the caption
    golds = score_label is None
    heads = (["domain", "n", "verified" if score_label is None else score_label, "95% CI", *(["official"] if golds else []), "err",
              "uns.", "cost $"] if compact else
             ["domain", "tasks", "verified %" if score_label is None else score_label, "95% CI", *(["official %"] if golds else []),
              "errors", "unscored", *(["subtasks %"] if subs else []), "cost $"])  # fmt: skip
    for i, col in enumerate(heads):
        t.add_column(col, justify="left" if i == 0 else "right", no_wrap=True)
    judged = any(r.judge_cost_usd is not None for r in [*rows, total])
    if judged:
        t.add_column("judge $" if compact else "judge cost $", justify="right", no_wrap=True)
    for r in [*rows, total]:
        extra = [_cost(r, compact, judge=True)] if judged else []
        sub = (
            [f"{format_pct(r.subtask_mean)} (n={r.subtask_n})" if r.subtask_mean is not None else "–"]
            if subs
            else []
        )
        official = [format_pct(r.official_mean)] if golds else []
        t.add_row(
            Text(safe_text(r.domain)),  # a file name: shown, not markup, not a terminal's command
            str(r.n),
            format_pct(r.mean),
            format_ci(r.ci_low, r.ci_high),
            *official,
            str(r.errors),
            str(r.unscored),
            *sub,
            _cost(r, compact=compact),
            *extra,
            end_section=r is rows[-1] if rows else False,
        )
    notes = (
        [
            "verified: official gold + errata; official: the workload files' gold, the number comparable with "
            "the paper"
            + (
                f" ({total.gold_changed} task(s) score differently)"
                if total.gold_changed
                else " (the same for every task here)"
            )
        ]
        if golds
        else ([score_note] if score_note else [])
    )
    if compact:
        notes.append(
            "scores in %"
            + (
                f"; subtask answers (scored apart): {format_pct(total.subtask_mean)}% (n={total.subtask_n})"
                if has_subs
                else ""
            )
        )
    if compact and (total.cost_unknown or total.judge_cost_unknown):
        notes.append("cost unknown (N?): N model calls without a known price")
    t.caption = "\n".join(notes)
    return t


def render_metrics(metrics: list[RatioMetric], *, title: str = "", width: int | None = None) -> Table:
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
        t.add_row(
            Text(m.label),
            format_pct(m.value),
            format_ci(lo, hi),
            f"{m.numerator:g}/{m.denominator:g}",
            Text(m.description),
        )
    return t


def floors_text(
    records: list[Record], *, setting: str = "end-to-end", manifest: Manifest | None = None
) -> list[str]:
    """Lines printed under the table: the floors (the scores of constant answers on the same tasks) against
    each gold (one line when they agree), and the bounded numeric metric beside the paper's 1/(1+RAE)
    (kramabench.run.floors)."""
    from kramabench.run.floors import floor_rows
    from kramabench.run.settings import setting_floor_note
    from kramabench.scorers.floors import BAND_THRESHOLD, FLOOR_TITLES

    if setting == "pipeline-design":
        return []
    note = setting_floor_note(setting, [r for r in latest_records(records) if r.setting == setting])
    if note is not None:  # the setting's own floor: constant answers are none for it
        return [note]
    views = both_golds(records, manifest)
    cache: FloorCache = {}  # the golds both views share are scored once
    totals = {g: floor_rows(views[g].records, setting=setting, cache=cache)[1] for g in (VERIFIED, OFFICIAL)}
    if not totals[VERIFIED].n:
        return []

    def key(t: FloorRow) -> tuple[int, dict[str, float], float | None, dict[str, float]]:
        return (t.n, t.floors, t.system_bounded, t.floors_bounded)

    same = key(totals[VERIFIED]) == key(totals[OFFICIAL])
    classes = Counter(
        {
            (r.domain, r.task_id): r.gold_class
            for r in views[VERIFIED].records
            if r.setting == setting and r.gold_class
        }.values()
    )
    out = []
    for g in (VERIFIED,) if same else (VERIFIED, OFFICIAL):
        tot = totals[g]
        which = "both golds" if same else f"{g} gold"
        floors = " · ".join(f"{FLOOR_TITLES[k]} {format_pct(v)}%" for k, v in tot.floors.items())
        out.append(f"floors ({which}, the same {tot.n} tasks): {floors}")
        if tot.n_numeric:
            out.append(
                f"  bounded score ({which}; numeric-approximate answers score 1 within band, 1/(1+RAE) > "
                f"{BAND_THRESHOLD:g}, else 0): this run {format_pct(tot.system_bounded)}% · constant 0 "
                f"{format_pct(tot.floors_bounded['zero'])}%"
            )
    if classes:
        out.append(
            "tasks by reviewed class (errata): " + " · ".join(f"{k} {n}" for k, n in sorted(classes.items()))
        )
    return out


def _cost(r: DomainRow, compact: bool = False, *, judge: bool = False) -> str:
    """The cost cell: USD; "unknown (N unpriced calls)" when a price is missing, never a partial sum that
    looks like the whole (kramabench.contracts.cost)."""
    if judge:
        cost, unknown, what = r.judge_cost_usd, r.judge_cost_unknown, "judged task"
    else:
        cost, unknown, what = (
            r.cost_usd,
            max(r.unpriced_calls, r.cost_unknown) if r.cost_unknown else 0,
            "call",
        )
    if cost is None and not unknown:
        return "-"
    if not unknown:
        return f"{cost:.4f}"
    return format_cost(cost, unknown, short=compact, what=what)


__all__ = ["DomainRow", "domain_table", "floors_text", "per_task", "render_metrics", "render_table"]
