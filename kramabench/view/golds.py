"""Both golds in the viewer, computed as the report computes them (:mod:`kramabench.run.golds`,
:mod:`kramabench.run.floors`): each run's score against the official gold (the workload files as they are:
the paper-comparable number) and against the verified gold (official + errata), the floors beside them
(constant ``0``, an empty answer, ``"I don't know"``) and the bounded numeric metric, and for one record
its expected value and score under each gold with the task's reviewed class.

Records are plain JSON objects here; where the run's code is needed (a record written before both golds
were kept, scored again against the official gold; the floors) the record is read into
:class:`~kramabench.contracts.Record` with only the fields scoring needs. A record that does not validate
is left out of the floors and counted in a note, never an exception.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from kramabench.runfolder.golds import GOLD_TITLES, GOLDS, OFFICIAL, VERIFIED, other_gold, workload_gold
from kramabench.runfolder.typed import json_object, manifest_of, scoring_record
from kramabench.view.rows import natural_key, record_value

if TYPE_CHECKING:
    from kramabench.contracts.records import Manifest, Record
    from kramabench.view.rows import Row

log = logging.getLogger(__name__)

#: the settings in the order a run's main setting is chosen (the report's order)
SETTING_ORDER = ("end-to-end", "pipeline-design", "subtasks")
#: the report's row label of a run's total (part of the bootstrap's seed)
TOTAL = "Total"


def manifest_gold(manifest: dict[str, Any] | None) -> str:
    """The gold a run loaded, from its manifest object (:func:`kramabench.runfolder.golds.workload_gold`)."""
    return workload_gold((manifest or {}).get("workload"))


def _value(r: Record) -> float | None:
    return record_value(r.status, r.score, r.unscored)


def official_of_old(
    rec: dict[str, Any], manifest: dict[str, Any] | None, model: Manifest | None
) -> tuple[float | None, bool]:
    """A verified record written before both golds were kept, whose gold an erratum changed: its value against
    the official gold, scored again as the report does (without a judge). (value, whether it could be)."""
    from kramabench.run.golds import records_under

    r = scoring_record(rec)
    if r is None:
        return None, False
    view = records_under([r], OFFICIAL, model)
    return _value(view.records[0]), True


def record_golds(rec: dict[str, Any], manifest: dict[str, Any] | None) -> dict[str, Any]:
    """One record under each gold, for the task page: per gold the expected value, answer type, score,
    unscored, metric and score details, and where it comes from (``recorded``: the record holds it;
    ``same``: no erratum changes this item, so both golds give the same; ``rescored``: an old record scored
    again here against the official gold)."""
    from kramabench.run.golds import records_under

    named = rec.get("gold")
    mine = named if isinstance(named, str) and named in GOLDS else manifest_gold(manifest)
    other = other_gold(mine)
    r = scoring_record(rec)
    cls = rec.get("gold_class") if isinstance(rec.get("gold_class"), str) else None
    out: dict[str, Any] = {"run_gold": mine, "gold_class": cls, "golds": {}, "note": None}
    if r is None:
        og = rec.get("other_gold") if isinstance(rec.get("other_gold"), dict) else None
        out["golds"][mine] = _gold_doc(rec, "recorded")
        out["golds"][other] = (
            _gold_doc(og, "recorded") if og and og.get("gold") == other else {**_gold_doc(rec, "same")}
        )
        out["note"] = "the record does not read as a kramabench record; its fields are shown as they are"
        return out
    model = manifest_of(manifest)
    for g in GOLDS:
        view = records_under([r], g, model)
        x = view.records[0]
        if g == mine:
            how = "recorded"
        elif r.other_gold is not None and r.other_gold.gold == g:
            how = "recorded"
        elif (x.expected, x.score, x.answer_type) != (r.expected, r.score, r.answer_type):
            how = "rescored"
        else:
            how = "same"
        out["golds"][g] = {
            "expected": x.expected,
            "answer_type": x.answer_type,
            "score": x.score,
            "unscored": x.unscored,
            "value": _value(x),
            "metric": x.metric,
            "score_details": x.score_details,
            "subtask_scores": x.subtask_scores,
            "source": how,
            "notes": view.notes,
        }
    return out


def _gold_doc(d: dict[str, Any] | None, how: str) -> dict[str, Any]:
    d = d or {}
    return {
        "expected": d.get("expected"),
        "answer_type": d.get("answer_type"),
        "score": d.get("score"),
        "unscored": d.get("unscored") is True,
        "value": None,
        "metric": d.get("metric"),
        "score_details": d.get("score_details"),
        "subtask_scores": d.get("subtask_scores"),
        "source": how,
        "notes": [],
    }


# -- a run's numbers -------------------------------------------------------------------------------------


def main_setting(rows: list[Row]) -> str:
    """The setting a run's score is of, as the report chooses it: the first of :data:`SETTING_ORDER` the run
    has, else the first its records name (an ELT run: ``elt``)."""
    settings = {r.setting for r in rows}
    for s in SETTING_ORDER:
        if s in settings:
            return s
    return min(rows, key=lambda r: r.i).setting if rows else "end-to-end"


def task_values(rows: list[Row], gold: str) -> dict[tuple[str, str], float | None]:
    """(domain, task id) -> the task's value under ``gold`` (the mean of its scored rows; None: none scored),
    as the report's ``task_scores``, in the report's order (tasks as their first record is in the file)."""
    groups: dict[tuple[str, str], list[float | None]] = {}
    for r in sorted(rows, key=lambda r: (r.unit_first, r.i)):
        groups.setdefault((r.domain, r.task_id), []).append(r.value_under(gold))
    out: dict[tuple[str, str], float | None] = {}
    for k, vals in groups.items():
        scored = [v for v in vals if v is not None]
        out[k] = sum(sorted(scored)) / len(scored) if scored else None  # as the report sums them
    return out


def interval(values: dict[tuple[str, str], float | None], *cell: str) -> dict[str, Any]:
    """THE score of a set of tasks with its 95% interval, for every number the viewer shows (the run list, a
    run's header, the score of what a filter keeps, the tables by domain and by difficulty, the floors panel):
    ``values`` maps each task (domain, task id) to its score (None: unscored, counted apart, never averaged
    in). :func:`kramabench.scorers.stats.mean_ci`, the report's: one seed and one order of the tasks, so the same per-task
    scores give the same digits on every surface (``cell`` names the report's cell it is, for the reader)."""
    from kramabench.scorers.stats import mean_ci

    ci = mean_ci(values)
    return {
        "score": ci.mean,
        "ci_low": ci.lo,
        "ci_high": ci.hi,
        "n_scored": ci.n,
        "n_unscored": ci.n_unscored,
        "tasks": len(values),
    }


def gold_scores(rows: list[Row]) -> dict[str, Any]:
    """Both numbers of a run, as the report's golds section has them: the main setting's tasks, each task the
    mean of its scored rows, the mean over tasks with its 95% bootstrap interval (:func:`interval`, as the
    report's: the same digits); and how many tasks the two golds score differently."""
    setting = main_setting(rows)
    main = [r for r in rows if r.setting == setting]
    out: dict[str, Any] = {"setting": setting}
    per: dict[str, dict[tuple[str, str], float | None]] = {}
    for g in GOLDS:
        per[g] = vals = task_values(main, g)
        out[g] = interval(vals, setting, TOTAL, g)
    a, b = per[OFFICIAL], per[VERIFIED]
    out["changed"] = sum(1 for k in set(a) | set(b) if a.get(k) != b.get(k))
    return out


def breakdown(rows: list[Row]) -> dict[str, Any]:
    """The report's tables of a run by domain and by difficulty (the difficulty in the task id, as the report
    reads it), under both golds: each cell the mean task score with its interval (:func:`interval`, the
    report's), the last one the whole run (Total)."""
    from kramabench.workload.models import difficulty_from_id

    setting = main_setting(rows)
    main = [r for r in rows if r.setting == setting]
    per = {g: task_values(main, g) for g in GOLDS}
    domains = sorted({d for d, _t in per[VERIFIED]}, key=natural_key)
    level_of = {k: difficulty_from_id(k[1]).value for k in per[VERIFIED]}
    levels = [lv for lv in ("easy", "medium", "hard", "unknown") if lv in set(level_of.values())]

    def cells(keep: Any, *seed: str) -> dict[str, Any]:
        return {g: interval({k: v for k, v in per[g].items() if keep(k)}, setting, *seed) for g in GOLDS}

    total = cells(lambda k: True, TOTAL)
    by_domain = [{"label": d, **cells(lambda k, d=d: k[0] == d, d)} for d in domains]
    by_level = [{"label": lv, **cells(lambda k, lv=lv: level_of[k] == lv, "difficulty", lv)} for lv in levels]
    return {
        "setting": setting,
        "domains": [*by_domain, {"label": TOTAL, **total}],
        "difficulties": [*by_level, {"label": TOTAL, **total}] if set(levels) - {"unknown"} else [],
    }


def kept_scores(rows: list[Row], setting: str) -> dict[str, Any]:
    """The score of the tasks a filter keeps (``rows``: the records it keeps), under both golds, computed as the
    whole run's is (the run's main ``setting``, the attempts that count, each task the mean of its records),
    with :func:`interval`: a filter that keeps one cell of the report's tables (one domain) gets its digits."""
    main = [r for r in rows if r.setting == setting and r.latest]
    out: dict[str, Any] = {"setting": setting}
    for g in GOLDS:
        out[g] = interval(task_values(main, g), setting, "filtered")
    return out


def floors_panel(f: Any) -> dict[str, Any]:
    """The floors of a run (a :class:`~kramabench.view.runs.RunFollower`) under each gold, computed by
    :func:`kramabench.run.floors.floor_rows` from its records (the main setting's attempts that count, read
    again from ``records.jsonl``), as the report's golds section shows them."""
    from kramabench.run.floors import FloorEntry, floor_rows_of
    from kramabench.run.golds import both_golds
    from kramabench.run.settings import setting_floor_note
    from kramabench.scorers.floors import BAND_THRESHOLD, FLOOR_TITLES, RAE_BANDS

    rows = f.snapshot()
    setting = main_setting(rows)
    main = [r for r in rows if r.setting == setting and (setting == "subtasks" or r.subtask_id is None)]
    records: list[Record] = []
    bad = 0
    for rec in f.read_records(main):
        r = scoring_record(rec) if rec is not None else None
        if r is None:
            bad += 1
        else:
            records.append(r)
    manifest = f.manifest
    views = both_golds(records, manifest_of(manifest))
    cache, canon = f.floor_cache()
    golds: dict[str, Any] = {}
    # a setting that states its own floor (an ELT pipeline's: an empty warehouse) has no constant-answer floors
    floor_note = setting_floor_note(setting, records) if setting else None
    for g in GOLDS:
        if floor_note is not None:
            golds[g] = {"n": 0, "floors": {}, "floors_bounded": {}, "numeric_rae": {}}
            continue
        # the floors of kramabench.run.floors.floor_rows (the report's), over the attempts that count; each gold
        # value replaced by one object per distinct value, so that the run's cache of the constants' scores
        # (keyed by the value's identity) holds across versions: a growing run scores only its new golds
        entries = (
            FloorEntry(r.domain, r.task_id, _value(r), r.metric, _canonical(canon, r.expected), r.answer_type)
            for r in views[g].records
        )
        _rows, total = floor_rows_of(entries, cache=cache)
        golds[g] = {
            "n": total.n,
            "system": total.system,
            "system_bounded": total.system_bounded,
            "floors": dict(total.floors),
            "floors_bounded": dict(total.floors_bounded),
            "n_numeric": total.n_numeric,
            "numeric_paper": total.numeric_paper,
            "numeric_band": total.numeric_band,
            "numeric_rae": {f"{k:g}": v for k, v in total.numeric_rae.items()},
            "numeric_zero_paper": total.numeric_zero_paper,
        }
    classes: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    for r in main:
        if r.gold_class and (r.domain, r.task_id) not in seen:
            seen.add((r.domain, r.task_id))
            classes[r.gold_class] = classes.get(r.gold_class, 0) + 1
    wl = json_object((manifest or {}).get("workload"))
    notes = [n for g in GOLDS for n in views[g].notes]
    if bad:
        notes.append(f"{bad} record(s) do not read as kramabench records: left out of the floors")
    return {
        "setting": setting,
        "floors_apply": setting != "pipeline-design" and floor_note is None,
        "floor_note": floor_note,
        "run_gold": manifest_gold(manifest),
        "titles": GOLD_TITLES,
        "floor_titles": FLOOR_TITLES,
        "band_threshold": BAND_THRESHOLD,
        "rae_bands": [f"{b:g}" for b in RAE_BANDS],
        "golds": golds,
        "scores": gold_scores(rows),
        "classes": dict(sorted(classes.items(), key=lambda kv: natural_key(kv[0]))),
        "errata_file": errata_file if isinstance(errata_file := wl.get("errata_file"), dict) else None,
        "notes": notes,
        "version": f.version,
    }


def _canonical(canon: dict[Any, Any], v: Any) -> Any:
    """One object per distinct JSON value (the key of the floors' cache is the value's identity)."""
    import json

    if v is None or isinstance(v, str | int | float | bool):
        key: Any = (type(v).__name__, v)
    else:
        try:
            key = json.dumps(v, sort_keys=True, default=str)
        except (TypeError, ValueError, RecursionError):
            return v
    return canon.setdefault(key, v)


__all__ = [
    "GOLD_TITLES",
    "SETTING_ORDER",
    "breakdown",
    "floors_panel",
    "gold_scores",
    "interval",
    "kept_scores",
    "main_setting",
    "manifest_gold",
    "official_of_old",
    "record_golds",
    "task_values",
]
