"""The paper's Table 6 shape: rows = system variant x setting, columns = models.

One cell is the mean task score (with a 95% bootstrap interval) of one system in one setting with one
model, over all tasks of the runs that match:

* end-to-end: the main-task score; pipeline design: the fraction of key functionalities the judge found
  implemented; subtask implementation: the mean over the task's subtask answers (setting ``subtasks``).
  Subtask answers given *with* end-to-end answers are not used here (they have their own table);
* several runs of the same system, setting and model (e.g. one per domain) are pooled; a task present in
  more than one of them counts once, with the mean of its scores (noted under the table);
* unscored tasks (no key functionalities, an unparsable judge) are counted apart, never as 0;
* the column of a run without a model (e.g. ``reference``) is headed ``–``.

The table is built when at least one run holds records of a setting other than end-to-end (with only
end-to-end runs it would repeat the Total column of the domain table).
"""

from __future__ import annotations

from collections import defaultdict

from kramabench.report.load import RunData
from kramabench.report.tables import (
    SETTING_ORDER,
    SETTING_TITLES,
    Row,
    Table,
    cell_stat,
    natural_key,
    register_table,
    task_scores,
)
from kramabench.scorers.stats import MeanCI

NO_MODEL = "–"


def settings_table(runs: list[RunData]) -> Table | None:
    """The Table-6 shape over ``runs`` (None when no run has a non-end-to-end setting)."""
    settings = {r.setting for run in runs for r in run.records}
    if not settings - {"end-to-end"}:
        return None
    # (system, setting, model) -> (domain, task) -> scores from each run; the runs contributing
    cells: dict[tuple[str, str, str], dict[tuple[str, str], list[float | None]]] = defaultdict(
        lambda: defaultdict(list)
    )
    sources: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    first_run: dict[tuple[str, str], int] = {}
    judges: dict[str, set[str]] = defaultdict(set)
    for i, run in enumerate(runs):
        system = run.manifest.system
        model = run.manifest.model or NO_MODEL
        for setting in run.settings():
            outcomes = run.outcomes(setting)
            if not outcomes:
                continue
            key = (system, setting, model)
            for task, v in task_scores(outcomes).items():
                cells[key][task].append(v)
            sources[key].append(run.run_id)
            first_run.setdefault((system, setting), i)
            if setting == "pipeline-design":
                found = {str(r.score_details.get("judge")) for r in outcomes if r.score_details.get("judge")}
                judges[model].update(found or ({run.manifest.judge} if run.manifest.judge else set()))
    models = sorted({m for (_s, _st, m) in cells}, key=lambda m: (m == NO_MODEL, natural_key(m)))
    order = {s: n for n, s in enumerate(SETTING_ORDER)}
    row_keys = sorted(
        {(s, st) for (s, st, _m) in cells}, key=lambda k: (first_run[k], order.get(k[1], len(order)), k[1])
    )
    rows: list[Row] = []
    notes: list[str] = []
    for system, setting in row_keys:
        stats: list[MeanCI] = []
        for m in models:
            per_task = cells.get((system, setting, m))
            if not per_task:
                stats.append(MeanCI(None, None, None, 0, 0))
                continue
            values: list[float | None] = []
            for scores in per_task.values():
                scored = [v for v in scores if v is not None]
                values.append(sum(scored) / len(scored) if scored else None)
            stats.append(cell_stat(values))
            runs_of = sources[(system, setting, m)]
            dup = sum(1 for s in per_task.values() if len(s) > 1)
            if len(runs_of) > 1:
                notes.append(
                    f"{system} · {SETTING_TITLES.get(setting, setting)} · {m}: pooled from runs "
                    f"{', '.join(runs_of)}" + (f" ({dup} task(s) in several runs, averaged)" if dup else "")
                )
        rows.append(
            Row(
                label=f"{system} · {SETTING_TITLES.get(setting, setting)}",
                cells=stats,
                run_index=first_run[(system, setting)],
                keys=[system, SETTING_TITLES.get(setting, setting)],
            )
        )
    for m, js in sorted(judges.items()):
        if js:
            notes.append(f"pipeline design with {m} judged by {', '.join(sorted(js))}")
    caption = (
        "Mean task score in % per system, setting and model (the paper's Table 6 shape), with a 95% bootstrap "
        "interval and the number of scored tasks. End-to-end: the answer's score; pipeline design: the share "
        "of key functionalities the judge found implemented; subtask implementation: the mean over the "
        "task's subtasks, each posed on its own. Unscored tasks are counted apart, never as 0."
    )
    return Table(
        key="settings-by-model",
        title="Settings by model",
        columns=models,
        rows=rows,
        caption=caption,
        key_headers=["System", "Setting"],
        notes=notes,
    )


def _settings_tables(runs: list[RunData]) -> list[Table]:
    t = settings_table(runs)
    return [t] if t is not None else []


register_table(_settings_tables)

__all__ = ["NO_MODEL", "settings_table"]
