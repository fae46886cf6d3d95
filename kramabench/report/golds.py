"""Both golds and the floors of each run, for the report's headline section.

For every run: its main-setting score against the official gold (the workload files; the number
comparable with the paper) and against the verified gold (official + errata), each beside the floors
(the scores of the constant answers ``0``, ``""`` and ``"I don't know"`` on the same tasks) and beside
the bounded numeric metric (numeric-approximate answers scored 1 within the paper's band, else 0).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kramabench.contracts.records import Record
from kramabench.report.load import RunData
from kramabench.report.tables import TOTAL, cell_stat, task_scores
from kramabench.report.unsupported import unsupported_text
from kramabench.run.floors import FloorCache, FloorRow, floor_rows
from kramabench.run.golds import GOLD_TITLES, GOLDS, OFFICIAL, VERIFIED, both_golds, run_gold
from kramabench.run.settings import setting_floor_note
from kramabench.scorers.stats import MeanCI


@dataclass
class GoldColumn:
    gold: str
    score: MeanCI
    floors: FloorRow
    #: tasks whose score differs from the other gold's
    changed: int = 0


@dataclass
class RunGolds:
    index: int
    label: str
    run_id: str
    setting: str
    #: the gold the run loaded (verified, or official with --no-errata)
    run_gold: str
    columns: dict[str, GoldColumn]
    #: the errata file the run applied (path, sha256), None when none
    errata_file: dict[str, Any] | None = None
    #: reviewed class -> number of the run's tasks in it (``Record.gold_class``)
    classes: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: floors are shown for settings scored against gold answers (not pipeline-design)
    floors_apply: bool = True
    #: the setting's own floor, said in place of the constant answers' (kramabench.run.settings.Floored)
    floor_note: str | None = None
    #: the run was scored with --normalise-percent (kramabench.scorers.percent)
    normalise_percent: bool = False
    #: answers off from the gold by a factor 100 (``scale_mismatch``), and how many of them were rescaled
    scale_mismatch: int = 0
    percent_normalised: int = 0
    #: what the report says of the tasks the benchmark cannot support (kramabench.report.unsupported); "" for none
    unsupported: str = ""


def attach_golds(runs: list[RunData]) -> str:
    """Give each run both gold views (``run.golds``) and make ``run.records`` the report's main view: the
    verified gold, unless every run was a --no-errata run (then the official one). Returns that gold."""
    main = OFFICIAL if runs and all(run_gold(r.manifest) == OFFICIAL for r in runs) else VERIFIED
    for run in runs:
        if not run.golds:
            run.golds = {name: view for name, view in both_golds(run.records, run.manifest).items()}
        run.records = run.golds[main].records
        run.gold = main
    return main


def run_golds(run: RunData, index: int, setting: str) -> RunGolds:
    cols: dict[str, GoldColumn] = {}
    per_gold: dict[str, dict[tuple[str, str], float | None]] = {}
    cache: FloorCache = {}  # the golds both views share are scored once
    floor_note = setting_floor_note(setting, run.outcomes(setting))
    for g in GOLDS:
        recs = [r for r in run.under(g).outcomes(setting)]
        scores = task_scores(recs)
        per_gold[g] = scores
        # a setting that states its own floor has no constant-answer floors to compute
        total = (
            FloorRow(TOTAL) if floor_note is not None else floor_rows(recs, setting=setting, cache=cache)[1]
        )
        cols[g] = GoldColumn(gold=g, score=cell_stat(scores), floors=total)
    a, b = per_gold[OFFICIAL], per_gold[VERIFIED]
    changed = sum(1 for k in set(a) | set(b) if a.get(k) != b.get(k))
    for c in cols.values():
        c.changed = changed
    classes = Counter({(r.domain, r.task_id): r.gold_class for r in run.outcomes(setting)}.values())
    notes = list(run.gold_notes) + [n for g in GOLDS for n in run.golds[g].notes]
    main = run.outcomes(setting)
    opts = (run.manifest.options.get("config") or {}).get("options") or {}
    return RunGolds(
        index=index,
        label=run.label,
        run_id=run.run_id,
        setting=setting,
        run_gold=run_gold(run.manifest),
        columns=cols,
        errata_file=run.manifest.workload.get("errata_file"),
        classes={k: v for k, v in classes.items() if k},
        notes=notes,
        floors_apply=setting != "pipeline-design" and floor_note is None,
        floor_note=floor_note,
        normalise_percent=bool(opts.get("normalise_percent", False)),
        scale_mismatch=sum(1 for r in main if (r.score_details or {}).get("scale_mismatch")),
        percent_normalised=sum(1 for r in main if (r.score_details or {}).get("percent_normalised")),
        unsupported=unsupported_text(run, short=True),
    )


@dataclass
class GoldLine:
    """One row of the golds section: a label and its text under each gold (``kind`` styles it: system,
    floor, bounded, numeric, info)."""

    kind: str
    label: str
    official: str
    verified: str
    #: the values behind the texts (for colouring), None where none
    values: tuple[float | None, float | None] = (None, None)


def other_records(run: RunData) -> dict[tuple[str, str, str, str | None, int], Record]:
    """The run's records against the other gold than its main view, by (domain, setting, task, subtask,
    attempt): for the task rows' second score."""
    other = OFFICIAL if run.gold == VERIFIED else VERIFIED
    v = run.golds.get(other)
    if v is None:
        return {}
    return {(r.domain, *r.key): r for r in v.records}


def record_notes(r: Record) -> list[str]:
    """Short notes of a record's score worth a glance in a task row (``scale_mismatch: x100``, ...)."""
    from kramabench.scorers.percent import scale_label

    d = r.score_details or {}
    out = []
    if scale_label(d):
        out.append(f"scale_mismatch: {scale_label(d)}")
    if d.get("percent_normalised"):
        out.append(f"percent normalised: {d['percent_normalised']}")
    if d.get("rescored"):
        out.append("rescored without a judge")
    if r.benchmark_notes:
        out.append(
            "the benchmark cannot support it: " + ", ".join(dict.fromkeys(n.code for n in r.benchmark_notes))
        )
    return out


CAPTION = (
    "The run's main-setting score against the official gold (the answers as the workload files hold them, "
    "as the paper scored: the paper-comparable number) and against the verified gold (the official gold with "
    "the reviewed errata applied). Floors: what a constant answer gets on the same tasks, scored by the same "
    "scorers without any model (a paraphrase that only a judge could accept counts 0). Bounded: "
    "numeric-approximate answers score 1 within the paper's band (1/(1+RAE) > 0.9, i.e. RAE < 11.1%, the "
    "threshold the paper uses to match approximate list items) and 0 otherwise; shown beside the paper's "
    "1/(1+RAE), never instead."
)


def gold_lines(rg: RunGolds) -> list[GoldLine]:
    from kramabench.report import fmt
    from kramabench.scorers.floors import BAND_THRESHOLD, FLOOR_TITLES, RAE_BANDS

    o, v = rg.columns[OFFICIAL], rg.columns[VERIFIED]

    def pair(f: Callable[[GoldColumn], float | None]) -> tuple[str, str, tuple[float | None, float | None]]:
        a, b = f(o), f(v)
        return (fmt.pct(a) if a is not None else "–", fmt.pct(b) if b is not None else "–", (a, b))

    def ci(c: GoldColumn) -> str:
        return fmt.cell_text(c.score)

    lines = [GoldLine("system", "this run", ci(o), ci(v), (o.score.mean, v.score.mean))]
    if rg.floors_apply and (o.floors.n or v.floors.n):
        for k in FLOOR_TITLES:

            def floor_of(c: GoldColumn, k: str = k) -> float | None:
                return c.floors.floors.get(k) if c.floors.n else None

            a, b, vals = pair(floor_of)
            lines.append(GoldLine("floor", f"floor: {FLOOR_TITLES[k]}", a, b, vals))
        if o.floors.n_numeric or v.floors.n_numeric:
            a, b, vals = pair(lambda c: c.floors.system_bounded)
            lines.append(
                GoldLine(
                    "bounded",
                    f"this run, bounded (numeric within band, 1/(1+RAE) > {BAND_THRESHOLD:g})",
                    a,
                    b,
                    vals,
                )
            )
            a, b, vals = pair(lambda c: c.floors.floors_bounded.get("zero"))
            lines.append(GoldLine("floor", "floor: constant 0, bounded", a, b, vals))
            n = (
                f"{o.floors.n_numeric} / {v.floors.n_numeric}"
                if o.floors.n_numeric != v.floors.n_numeric
                else str(v.floors.n_numeric)
            )
            a, b, vals = pair(lambda c: c.floors.numeric_paper)
            lines.append(
                GoldLine(
                    "numeric", f"numeric-approximate answers (n={n}): paper's mean 1/(1+RAE)", a, b, vals
                )
            )
            a, b, vals = pair(lambda c: c.floors.numeric_zero_paper)
            lines.append(GoldLine("numeric", "… constant 0 on them, paper's metric", a, b, vals))
            a, b, vals = pair(lambda c: c.floors.numeric_band)
            lines.append(GoldLine("numeric", "… within band (RAE < 11.1%)", a, b, vals))
            for bound in RAE_BANDS:

                def within(c: GoldColumn, bound: float = bound) -> float | None:
                    return c.floors.numeric_rae.get(bound)

                a, b, vals = pair(within)
                lines.append(GoldLine("numeric", f"… RAE ≤ {bound:.0%}", a, b, vals))
    if rg.floor_note:
        lines.append(GoldLine("floor", "floor", "", rg.floor_note))
    if rg.unsupported:
        lines.append(
            GoldLine(
                "info",
                "tasks the benchmark cannot support",
                "",
                f"{rg.unsupported}; listed under “Tasks the benchmark cannot support”",
            )
        )
    changed = v.changed
    lines.append(GoldLine("info", "tasks scored differently by the two golds", "", str(changed)))
    ef = rg.errata_file
    if ef:
        lines.append(
            GoldLine("info", "errata file", "", f"{ef.get('path')} (sha256 {str(ef.get('sha256'))[:12]})")
        )
    else:
        lines.append(
            GoldLine(
                "info",
                "errata file",
                "",
                "none applied" + (" (--no-errata run)" if rg.run_gold == OFFICIAL else ""),
            )
        )
    if rg.scale_mismatch or rg.normalise_percent:
        text = f"{rg.scale_mismatch} answer(s) are the gold times or divided by 100 (scale_mismatch); " + (
            f"{rg.percent_normalised} rescored as right (--normalise-percent)"
            if rg.normalise_percent
            else "scored as the paper does (--normalise-percent would rescale them)"
        )
        lines.append(GoldLine("info", "percent scale", "", text))
    if rg.classes:
        text = " · ".join(f"{k} {n}" for k, n in sorted(rg.classes.items()))
        lines.append(GoldLine("info", "tasks by reviewed class", "", text))
    return lines


__all__ = [
    "CAPTION",
    "GOLD_TITLES",
    "GoldColumn",
    "GoldLine",
    "RunGolds",
    "attach_golds",
    "gold_lines",
    "other_records",
    "record_notes",
    "run_golds",
]
