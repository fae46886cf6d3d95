"""Floors beside a run's score: what the constant answers (``0``, ``""``, ``"I don't know"``) get on the
same tasks and the same gold, and the bounded numeric metric beside the paper's (:mod:`kramabench.scorers.floors`).

Computed from the records alone (their gold, answer type and answer), without any model: every report and
table can show them for free. Only tasks the run scored count (an unscored task is left out of the run's
mean, so it is left out of the floors too); a task's value is the mean over its scored records (end-to-end:
its one record; the subtask setting: its subtasks).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kramabench.contracts.records import Record, latest_records
from kramabench.scorers.floors import CONSTANTS, RAE_BANDS, bounded, floor_scores, rae_of

TOTAL = "Total"


@dataclass
class FloorRow:
    """Means over the scored tasks of one domain (or all: ``Total``), in [0, 1]."""

    name: str
    n: int = 0
    system: float | None = None
    #: the run's score with numeric-approximate answers scored within band (kramabench.scorers.floors.bounded)
    system_bounded: float | None = None
    #: constant name -> mean score of that constant on the same tasks
    floors: dict[str, float] = field(default_factory=dict)
    floors_bounded: dict[str, float] = field(default_factory=dict)
    #: numeric-approximate answers (scalar) among the scored records
    n_numeric: int = 0
    numeric_paper: float | None = None
    numeric_band: float | None = None
    #: RAE bound -> share of numeric-approximate answers with RAE at most that
    numeric_rae: dict[float, float] = field(default_factory=dict)
    numeric_zero_paper: float | None = None


def _value(r: Record) -> float | None:
    if r.unscored or (r.score is None and r.status == "ok"):
        return None
    return float(r.score) if r.score is not None else 0.0


@dataclass
class _Acc:
    sys: list[float] = field(default_factory=list)
    sysb: list[float] = field(default_factory=list)
    fl: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    flb: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))


@dataclass(frozen=True)
class FloorEntry:
    """One scored answer, as the floors need it: ``value`` None when unscored (left out)."""

    domain: str
    task_id: str
    value: float | None
    metric: str | None
    expected: Any
    answer_type: str | None


#: (id of the gold value, its answer type) -> the constants' scores: both golds share the unchanged golds'
#: scores when the caller passes one cache to both (the gold objects stay alive meanwhile, so ids are unique)
FloorCache = dict[tuple[int, str], dict[str, tuple[float, float]]]


def floor_rows(
    records: list[Record], *, setting: str = "end-to-end", cache: FloorCache | None = None
) -> tuple[list[FloorRow], FloorRow]:
    """Rows per domain and the total, over the final main-task records of ``setting`` (for the subtask
    setting, its subtask records grouped per task)."""
    finals = [r for r in latest_records(records) if r.setting == setting]
    if setting != "subtasks":
        finals = [r for r in finals if r.subtask_id is None]
    entries = (
        FloorEntry(r.domain, r.task_id, _value(r), r.metric, r.expected, r.answer_type) for r in finals
    )
    return floor_rows_of(entries, cache=cache)


def floor_rows_of(
    entries: Iterable[FloorEntry], *, cache: FloorCache | None = None
) -> tuple[list[FloorRow], FloorRow]:
    """:func:`floor_rows` over any scored answers (``kramabench score`` passes its scored items); the
    entries of one task (its subtasks) are averaged into the task's value. ``cache``: see :data:`FloorCache`."""
    cache = {} if cache is None else cache
    per_task: dict[tuple[str, str], _Acc] = defaultdict(_Acc)
    numeric: dict[str, list[tuple[float, float]]] = defaultdict(list)  # domain -> (paper score, zero's score)
    for e in entries:
        v = e.value
        if v is None or e.answer_type is None:
            continue
        acc = per_task[(e.domain, e.task_id)]
        acc.sys.append(v)
        b = bounded(v, e.metric)
        acc.sysb.append(v if b is None else b)
        ck = (id(e.expected), e.answer_type)
        fs = cache.get(ck)
        if fs is None:
            fs = cache[ck] = floor_scores(e.expected, e.answer_type)
        for name, (fv, fb) in fs.items():
            acc.fl[name].append(fv)
            acc.flb[name].append(fb)
        if e.metric == "numeric_approximate":
            numeric[e.domain].append((v, fs["zero"][0]))
    by_dom: dict[str, list[_Acc]] = defaultdict(list)
    for (dom, _t), acc in per_task.items():
        by_dom[dom].append(acc)
    rows = [_row(d, by_dom[d], numeric.get(d, [])) for d in sorted(by_dom)]
    total = _row(TOTAL, [a for d in by_dom.values() for a in d], [x for v in numeric.values() for x in v])
    return rows, total


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _row(name: str, accs: list[_Acc], numeric: list[tuple[float, float]]) -> FloorRow:
    row = FloorRow(name=name, n=len(accs))
    if not accs:
        return row
    row.system = _mean([_mean(a.sys) or 0.0 for a in accs])
    row.system_bounded = _mean([_mean(a.sysb) or 0.0 for a in accs])
    for c in CONSTANTS:
        row.floors[c] = _mean([_mean(a.fl[c]) or 0.0 for a in accs]) or 0.0
        row.floors_bounded[c] = _mean([_mean(a.flb[c]) or 0.0 for a in accs]) or 0.0
    if numeric:
        row.n_numeric = len(numeric)
        row.numeric_paper = _mean([v for v, _ in numeric])
        row.numeric_band = _mean([1.0 if bounded(v, "numeric_approximate") else 0.0 for v, _ in numeric])
        raes = [rae_of(v) for v, _ in numeric]
        row.numeric_rae = {
            b: sum(1 for e in raes if e is not None and e <= b + 1e-12) / len(raes) for b in RAE_BANDS
        }
        row.numeric_zero_paper = _mean([z for _, z in numeric])
    return row


__all__ = ["FloorCache", "FloorEntry", "FloorRow", "floor_rows", "floor_rows_of"]
