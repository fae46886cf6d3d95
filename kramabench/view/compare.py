"""Two or more runs on the same tasks: per-task scores side by side, the tasks where they differ first, and
each run against the first with the paired difference and its interval (:func:`kramabench.scorers.stats.paired_comparison`,
the same one ``kramabench score --baseline`` and the report use)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kramabench.runfolder.golds import GOLDS, OFFICIAL, VERIFIED
from kramabench.view.query import MAX_LIMIT, search_terms, strict
from kramabench.view.rows import Row, natural_key, outcome_of
from kramabench.view.runs import RunFollower

#: the keys of a comparison whose values come in the URL comma-separated
_LIST_KEYS = frozenset({"runs", "domain"})

#: a task is "different" when its scores differ by more than this (or its outcomes differ)
EPS = 1e-9


class CompareQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    runs: list[str] = Field(min_length=2, max_length=12)
    setting: str | None = None
    domain: list[str] = Field(default_factory=list)
    q: str = ""
    only: str = Field("all", pattern="^(all|differ|same)$")
    gold: str | None = Field(
        None,
        pattern="^(official|verified)$",
        description="the gold the task cells show "
        "(default: verified, or official when every run is a --no-errata run)",
    )
    offset: int = Field(0, ge=0)
    limit: int = Field(100, ge=1, le=MAX_LIMIT)

    @field_validator("runs", "domain", mode="before")
    @classmethod
    def _csv(cls, v: Any) -> list[str]:
        if isinstance(v, list):
            return [x for item in v for x in str(item).split(",") if x]
        return [x for x in str(v or "").split(",") if x]

    @field_validator("runs")
    @classmethod
    def _distinct(cls, v: list[str]) -> list[str]:
        twice = sorted({x for x in v if v.count(x) > 1})
        if twice:
            raise ValueError(f"the same run twice ({', '.join(twice)}): a comparison needs different runs")
        return v

    @classmethod
    def lenient(cls, params: dict[str, list[str]]) -> tuple[CompareQuery, list[dict[str, str]]]:
        """The comparison with the filter keys it cannot use left out (and named); the runs must be right."""
        from kramabench.view.query import lenient

        cls.parse({"runs": params.get("runs", [])})  # the runs: a QueryError naming what is wrong with them
        return lenient(cls, params, _LIST_KEYS, "not an option of the comparison")

    @classmethod
    def parse(cls, params: dict[str, list[str]]) -> CompareQuery:
        return strict(cls, params, _LIST_KEYS, "not an option of the comparison")


def _cell(r: Row | None, gold: str) -> dict[str, Any]:
    if r is None:
        return {"present": False}
    v = r.value_under(gold)
    return {
        "present": True,
        "i": r.i,
        "value": v,
        "outcome": outcome_of(r.status, v),
        "error_kind": r.error_kind,
        "answer": r.answer,
        "official": r.official,
        "verified": r.verified,
        "gold_changed": r.gold_changed,
    }


def _differs(cells: list[Row | None], gold: str) -> bool:
    if any(c is None for c in cells):
        return True
    vals_all = [c.value_under(gold) for c in cells if c is not None]
    outcomes = {outcome_of(c.status, c.value_under(gold)) for c in cells if c is not None}
    vals = [v for v in vals_all if v is not None]
    return len(outcomes) > 1 or (bool(vals) and max(vals) - min(vals) > EPS)


def compare(runs: list[RunFollower], query: CompareQuery) -> dict[str, Any]:
    from kramabench.scorers.stats import ScoredItem, paired_comparison

    per_run: list[dict[tuple[str, str, str | None], Row]] = []
    settings: Counter[str] = Counter()
    snaps = [f.snapshot() for f in runs]
    for rows in snaps:
        settings.update(r.setting for r in rows)
    setting = query.setting or (settings.most_common(1)[0][0] if settings else "end-to-end")
    for rows in snaps:
        per_run.append({(r.domain, r.task_id, r.subtask_id): r for r in rows if r.setting == setting})
    keys = sorted(
        {k for d in per_run for k in d},
        key=lambda k: (natural_key(k[0]), natural_key(k[1]), natural_key(k[2] or "")),
    )
    subtasks = setting == "subtasks"

    def items(d: dict[tuple[str, str, str | None], Row], g: str) -> list[ScoredItem]:
        return [
            ScoredItem(
                domain=r.domain,
                task_id=r.task_id,
                subtask_id=r.subtask_id,
                answer_type=r.answer_type,
                value=r.value_under(g),
                unscored=r.value_under(g) is None,
            )
            for r in d.values()
            if (r.subtask_id is not None) == subtasks
        ]

    summaries = [f.summary() for f in runs]
    gold = query.gold or (
        OFFICIAL if summaries and all(s.get("run_gold") == OFFICIAL for s in summaries) else VERIFIED
    )
    # each run after the first against the first, under each gold (``pairs``: under the gold the cells show)
    pairs_by_gold: dict[str, list[dict[str, Any]]] = {}
    for g in GOLDS:
        base = items(per_run[0], g)
        pairs_by_gold[g] = []
        for k in range(1, len(runs)):
            pc = paired_comparison(items(per_run[k], g), base, subtasks=subtasks)
            pairs_by_gold[g].append(
                {"run": runs[k].name, "baseline": runs[0].name, "gold": g, **pc.model_dump()}
            )

    rows_out: list[dict[str, Any]] = []
    n_differ = 0
    words = search_terms(query.q)
    for key in keys:
        cells = [d.get(key) for d in per_run]
        differ = _differs(cells, gold)
        n_differ += differ
        if query.domain and key[0] not in query.domain:
            continue
        if query.only == "differ" and not differ or query.only == "same" and differ:
            continue
        if words and not any(all(w in c.text for w in words) for c in cells if c is not None):
            continue
        vals = [v for c in cells if c is not None and (v := c.value_under(gold)) is not None]
        first = next(c for c in cells if c is not None)
        rows_out.append(
            {
                "domain": key[0],
                "task_id": key[1],
                "subtask_id": key[2],
                "answer_type": first.answer_type,
                "differ": differ,
                "spread": (max(vals) - min(vals)) if len(vals) > 1 else 0.0,
                "cells": [_cell(c, gold) for c in cells],
            }
        )
    # the tasks where the runs differ first, the widest spread first; then task order (kept by the stable sort)
    rows_out.sort(key=lambda r: (not r["differ"], -r["spread"]))
    return {
        "setting": setting,
        "settings": dict(settings),
        "runs": summaries,
        "gold": gold,
        "pairs": pairs_by_gold[gold],
        "pairs_by_gold": pairs_by_gold,
        "n_tasks": len(keys),
        "n_differ": n_differ,
        "total": len(rows_out),
        "offset": query.offset,
        "rows": rows_out[query.offset : query.offset + query.limit],
        "domains": sorted({k[0] for k in keys}, key=natural_key),
    }


__all__ = ["CompareQuery", "compare"]
