"""Score tables of a report: a generic :class:`Table` of mean-with-CI cells, and the builders that fill it.

Builders are plain functions ``(runs) -> list[Table]`` kept in :data:`TABLE_BUILDERS`; the renderers
(markdown, HTML) draw any :class:`Table`, so a new table shape (e.g. the paper's Table 6: rows = system
variant x setting, columns = models) is one more builder registered with :func:`register_table`.

Scoring rules (the same everywhere in the report):

- a record is *unscored* when ``Record.unscored`` is set, or it has no score although the system
  answered (``status == "ok"``); unscored items are counted apart and never averaged in as 0;
- a record with ``status == "error"`` and no score counts as 0 (the failure is shown with its error kind);
- a task's score in a setting is the mean of its scored records there (end-to-end: one record;
  subtask setting: its subtasks); the final attempt of each record key is used;
- a cell is the mean over tasks, with a 95% percentile-bootstrap interval; Total pools all tasks.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from kramabench.contracts.records import Record
from kramabench.report.load import RunData
from kramabench.scorers.stats import MeanCI, mean_ci, ratio_ci

SETTING_ORDER = ["end-to-end", "pipeline-design", "subtasks"]
SETTING_TITLES = {
    "end-to-end": "End-to-end",
    "pipeline-design": "Pipeline design",
    "subtasks": "Subtask implementation",
}
TOTAL = "Total"


def natural_key(text: str) -> list[object]:
    return [int(p) if p.isdigit() else p.lower() for p in re.split(r"(\d+)", text or "")]


def is_unscored(r: Record) -> bool:
    return bool(r.unscored) or (r.score is None and r.status == "ok")


def record_value(r: Record) -> float | None:
    """The score counted for a record (error without score: 0), or None when unscored."""
    if is_unscored(r):
        return None
    return float(r.score) if r.score is not None else 0.0


@dataclass
class Row:
    label: str
    cells: list[MeanCI]
    run_index: int | None = None
    sublabel: str = ""
    #: one value per ``Table.key_headers`` (e.g. system, model); empty: the label is the only key column
    keys: list[str] = field(default_factory=list)

    def key_cells(self, n: int) -> list[str]:
        if len(self.keys) == n:
            return list(self.keys)
        return [self.label, *[""] * (n - 1)]


@dataclass
class Table:
    key: str
    title: str
    columns: list[str]
    rows: list[Row]
    caption: str = ""
    key_headers: list[str] = field(default_factory=lambda: ["System", "Model"])
    percent: bool = True
    notes: list[str] = field(default_factory=list)
    #: draw the table as grouped bars in the report's plots
    plot: bool = True

    def best_rows(self) -> list[set[int]]:
        """Per column: the rows with the highest mean (empty when fewer than two rows have a value)."""
        out: list[set[int]] = []
        for j in range(len(self.columns)):
            vals = [(mean, i) for i, row in enumerate(self.rows) if (mean := row.cells[j].mean) is not None]
            if len(vals) < 2:
                out.append(set())
                continue
            top = max(v for v, _ in vals)
            out.append({i for v, i in vals if v == top})
        return out


def task_scores(records: Iterable[Record]) -> dict[tuple[str, str], float | None]:
    """(domain, task id) -> the task's score (mean of its scored records), None when none is scored."""
    groups: dict[tuple[str, str], list[float | None]] = defaultdict(list)
    for r in records:
        groups[(r.domain, r.task_id)].append(record_value(r))
    out: dict[tuple[str, str], float | None] = {}
    for k, vals in groups.items():
        scored = [v for v in vals if v is not None]
        out[k] = sum(sorted(scored)) / len(scored) if scored else None  # one sum whatever the file order
    return out


def cell_stat(values: Mapping[tuple[str, str], float | None] | list[float | None]) -> MeanCI:
    """A cell: the mean of the tasks' scores (``{(domain, task id): score}``; None: unscored, counted apart)
    with its interval from :func:`kramabench.scorers.stats.bootstrap_ci`, the one every surface prints (no seed of the
    run's own: the same per-task scores give the same interval in every table)."""
    if isinstance(values, Mapping):
        return mean_ci(values)
    scored = [v for v in values if v is not None]
    return mean_ci(scored, n_unscored=len(values) - len(scored))


def domains_of(runs: Iterable[RunData], setting: str | None = None) -> list[str]:
    return sorted({r.domain for run in runs for r in run.outcomes(setting)}, key=natural_key)


#: how a table title names the gold its scores are against
GOLD_LABELS = {"verified": "verified gold", "official": "official gold (paper-comparable)"}


def domain_table(
    runs: list[RunData], setting: str = "end-to-end", *, gold: str | None = None, main: bool = True
) -> Table | None:
    """The paper's Table 4 shape: rows = runs (system and model), columns = domains + Total. ``gold``: the
    gold the runs' records are against (named in the title); ``main`` False: a second table of the same
    setting (another gold), not plotted."""
    present = [(i, run) for i, run in enumerate(runs) if run.outcomes(setting)]
    if not present:
        return None
    domains = domains_of([run for _, run in present], setting)
    rows = []
    for i, run in present:
        scores = task_scores(run.outcomes(setting))
        cells = []
        for d in domains:
            cells.append(cell_stat({k: v for k, v in scores.items() if k[0] == d}))
        cells.append(cell_stat(scores))
        rows.append(Row(label=run.label, cells=cells, run_index=i, sublabel=run.run_id, keys=list(run.keys)))
    title = f"{SETTING_TITLES.get(setting, setting)}: score by domain"
    if gold in GOLD_LABELS:
        title += f" · {GOLD_LABELS[gold]}"
    caption = (
        "Mean score per task in %, with a 95% bootstrap interval and the number of scored tasks. "
        "Total is the mean over all tasks of the run (as the paper's Overall), not the mean of the domain "
        "columns. Unscored tasks are counted apart, never as 0."
    )
    if gold == "official":
        caption += " Scored against the official gold: the answers as the workload files hold them, as the paper scored."
    elif gold == "verified":
        caption += " Scored against the verified gold: the official gold with the reviewed errata applied."
    key = f"domains-{setting}" if main else f"domains-{setting}-{gold}"
    return Table(key=key, title=title, columns=[*domains, TOTAL], rows=rows, caption=caption, plot=main)


DIFFICULTY_ORDER = ["easy", "medium", "hard", "unknown"]


def difficulty_table(runs: list[RunData], setting: str = "end-to-end") -> Table | None:
    """Rows = runs, columns = difficulty (from the task id, e.g. ``legal-hard-3``) + Total."""
    from kramabench.workload.models import difficulty_from_id

    present = [(i, run) for i, run in enumerate(runs) if run.outcomes(setting)]
    if not present:
        return None
    per_run = []
    levels: set[str] = set()
    for i, run in present:
        scores = task_scores(run.outcomes(setting))
        by_level: dict[str, list[float | None]] = defaultdict(list)
        for (_dom, task), v in scores.items():
            level = difficulty_from_id(task).value
            by_level[level].append(v)
            levels.add(level)
        per_run.append((i, run, scores, by_level))
    if levels <= {"unknown"}:
        return None
    columns = [lv for lv in DIFFICULTY_ORDER if lv in levels]
    rows = []
    for i, run, scores, by_level in per_run:
        cells = [cell_stat(by_level.get(lv, [])) for lv in columns]
        cells.append(cell_stat(scores))
        rows.append(Row(label=run.label, cells=cells, run_index=i, sublabel=run.run_id, keys=list(run.keys)))
    return Table(
        key=f"difficulty-{setting}",
        title=f"{SETTING_TITLES.get(setting, setting)}: score by difficulty",
        columns=[*columns, TOTAL],
        rows=rows,
        caption="Mean task score in % by the difficulty in the task id, with 95% bootstrap intervals.",
        plot=False,
    )


def subtask_score_table(runs: list[RunData]) -> Table | None:
    """Scores of the subtask answers given with end-to-end answers (``Record.subtask_scores``), apart."""
    present = []
    for i, run in enumerate(runs):
        recs = [r for r in run.outcomes("end-to-end") if r.subtask_scores]
        if recs:
            present.append((i, run, recs))
    if not present:
        return None
    domains = sorted({r.domain for _, _, recs in present for r in recs}, key=natural_key)
    rows = []
    for i, run, recs in present:
        cells = []
        for d in [*domains, TOTAL]:
            vals = [v for r in recs if d in (TOTAL, r.domain) for v in r.subtask_scores.values()]
            cells.append(cell_stat(vals))
        rows.append(Row(label=run.label, cells=cells, run_index=i, sublabel=run.run_id, keys=list(run.keys)))
    return Table(
        key="subtask-scores",
        title="Subtask answers given with end-to-end answers",
        columns=[*domains, TOTAL],
        rows=rows,
        caption=(
            "Mean score of the subtask answers in %, over all subtasks (not per task); reported apart from "
            "the main-task scores and never mixed into them."
        ),
        plot=False,
    )


def _score_label(runs: list[RunData], setting: str) -> tuple[str, str] | None:
    """(label, note) of a setting's score when every run of it declares one (``options.setting_info``:
    ``score_label``, ``score_note``; e.g. an ELT run's primary comparator), else None."""
    labels = set()
    for run in runs:
        if not run.outcomes(setting) or run.manifest.setting != setting:
            continue
        info = (run.manifest.options or {}).get("setting_info") or {}
        if not info.get("score_label"):
            return None
        labels.add((str(info["score_label"]), str(info.get("score_note") or "")))
    if not labels:
        return None
    if len(labels) == 1:
        return labels.pop()
    return "score", "Each run's score as it names it: " + " ".join(sorted(n for _, n in labels))


TableBuilder = Callable[[list[RunData]], list[Table]]


def _setting_tables(runs: list[RunData]) -> list[Table]:
    """One domain table per setting, and for settings scored against gold answers a second one against the
    other gold (both golds side by side: the report's main gold first)."""
    settings = {s for run in runs for s in run.settings()}
    order = [s for s in SETTING_ORDER if s in settings] + sorted(settings - set(SETTING_ORDER))
    main = runs[0].gold if runs and all(r.golds for r in runs) else None
    out = []
    for s in order:
        label = _score_label(runs, s)
        if label is not None:  # a setting scored against no gold answers (ELT): one table, its score named
            t = domain_table(runs, s)
            if t is not None:
                t.caption += " " + label[1]
                t.title = f"{SETTING_TITLES.get(s, s)}: {label[0]} by domain"
                out.append(t)
            continue
        t = domain_table(runs, s, gold=main if s != "pipeline-design" else None)
        if t is not None:
            out.append(t)
        if main is not None and s != "pipeline-design":
            other = "official" if main == "verified" else "verified"
            t2 = domain_table([r.under(other) for r in runs], s, gold=other, main=False)
            if t2 is not None:
                out.append(t2)
    return out


def metric_table(runs: list[RunData], setting: str) -> Table | None:
    """The metrics a setting declares (e.g. an ELT run's SRDEL and SRDT; :class:`kramabench.run.settings.Summarized`):
    rows = runs, columns = metrics, each cell the ratio with a 95% bootstrap interval over the units (pipelines).
    None when the setting declares none or is not installed here."""
    from kramabench.run.settings import setting_metrics

    per_run = []
    for i, run in enumerate(runs):
        outcomes = run.outcomes(setting)
        metrics = setting_metrics(setting, outcomes) if outcomes else None
        if metrics:
            per_run.append((i, run, metrics))
    if not per_run:
        return None
    labels: list[str] = []
    described: dict[str, str] = {}
    for _i, _run, metrics in per_run:
        for m in metrics:
            if m.label not in labels:
                labels.append(m.label)
                described[m.label] = m.description
    rows = []
    for i, run, metrics in per_run:
        by = {m.label: m for m in metrics}
        cells = []
        for label in labels:
            got = by.get(label)
            if got is None or got.value is None:
                cells.append(MeanCI(None, None, None, 0))
                continue
            lo, hi = ratio_ci(got.parts) if got.parts else (None, None)
            cells.append(MeanCI(got.value, lo, hi, len(got.parts) or int(got.denominator)))
        rows.append(Row(label=run.label, cells=cells, run_index=i, sublabel=run.run_id, keys=list(run.keys)))
    caption = (
        "Metrics the setting declares over each run, in %, with a 95% bootstrap interval over the units "
        "and n the number of units. " + " ".join(f"{k}: {v}." for k, v in described.items() if v)
    )
    return Table(
        key=f"metrics-{setting}",
        title=f"{SETTING_TITLES.get(setting, setting)}: metrics",
        columns=labels,
        rows=rows,
        caption=caption,
    )


def _metric_tables(runs: list[RunData]) -> list[Table]:
    settings = {s for run in runs for s in run.settings()}
    order = [s for s in SETTING_ORDER if s in settings] + sorted(settings - set(SETTING_ORDER))
    return [t for s in order if (t := metric_table(runs, s)) is not None]


def _difficulty_tables(runs: list[RunData]) -> list[Table]:
    t = difficulty_table(runs, "end-to-end")
    return [t] if t is not None else []


def _subtask_tables(runs: list[RunData]) -> list[Table]:
    t = subtask_score_table(runs)
    return [t] if t is not None else []


#: table builders in report order; add more with :func:`register_table`
TABLE_BUILDERS: list[TableBuilder] = [_setting_tables, _metric_tables, _difficulty_tables, _subtask_tables]


def register_table(builder: TableBuilder, *, position: int | None = None) -> None:
    if position is None:
        TABLE_BUILDERS.append(builder)
    else:
        TABLE_BUILDERS.insert(position, builder)


def build_tables(runs: list[RunData]) -> list[Table]:
    return [t for b in TABLE_BUILDERS for t in b(runs)]


__all__ = [
    "SETTING_ORDER",
    "SETTING_TITLES",
    "TABLE_BUILDERS",
    "TOTAL",
    "Row",
    "Table",
    "TableBuilder",
    "build_tables",
    "cell_stat",
    "domain_table",
    "difficulty_table",
    "metric_table",
    "domains_of",
    "is_unscored",
    "natural_key",
    "record_value",
    "register_table",
    "subtask_score_table",
    "task_scores",
]
