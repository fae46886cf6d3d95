"""Per-run figures of a report: counts, tokens, cost, time, error kinds and unscored items."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kramabench.contracts.cost import unpriced_calls
from kramabench.contracts.records import Manifest, Record
from kramabench.report.load import RunData
from kramabench.report.tables import SETTING_ORDER, cell_stat, is_unscored, natural_key, task_scores
from kramabench.report.unsupported import unsupported_text
from kramabench.scorers.design import judge_cost, judge_tokens
from kramabench.scorers.stats import MeanCI


@dataclass
class RunSummary:
    index: int
    label: str
    run_id: str
    system: str
    model: str | None
    workload: str
    settings: list[str]
    status: str
    main_setting: str
    n_tasks: int
    n_records: int
    n_unscored: int
    n_errors: int
    score: MeanCI
    prompt_tokens: int
    completion_tokens: int
    model_calls: int
    cost_usd: float
    n_cost_unknown: int
    wall_s: float
    warnings: list[str]
    elapsed_s: float | None = None
    #: the design judge's calls (pipeline-design), kept apart from ``cost_usd``; None: no judge called
    judge_cost_usd: float | None = None
    n_judge_cost_unknown: int = 0
    judge_tokens: int = 0
    #: deliberate differences of the run's set-up from the original the setting declared (manifest)
    differences: list[str] = field(default_factory=list)
    #: an agent's steps over the final outcomes (0 for a system that records none), replies without code,
    #: and steps stopped at their time limit
    steps: int = 0
    format_errors: int = 0
    step_timeouts: int = 0
    #: final outcomes that recorded steps
    n_with_steps: int = 0
    #: model calls without a known price (``n_cost_unknown`` counts the records holding them): the cost is unknown
    n_unpriced_calls: int = 0
    #: tasks the benchmark cannot support (kramabench.report.unsupported), and what the report says of them
    n_unsupported: int = 0
    unsupported_text: str = ""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost_known(self) -> bool:
        return self.n_cost_unknown == 0

    @property
    def cost_per_task(self) -> float | None:
        return self.cost_usd / self.n_tasks if self.n_tasks and self.cost_known else None


def record_cost(r: Record) -> float | None:
    return r.usage.cost_usd


def record_wall(r: Record) -> float:
    return r.wall_s or r.usage.wall_s or 0.0


def step_counts(records: list[Record]) -> tuple[int, int, int, int]:
    """(steps, replies without code, steps stopped at their time limit, records with steps) of ``records``."""
    steps = fmt_errors = timeouts = with_steps = 0
    for r in records:
        if r.steps:
            with_steps += 1
        for s in r.steps:
            steps += 1
            fmt_errors += s.outcome == "format_error"
            timeouts += s.outcome == "timeout"
    return steps, fmt_errors, timeouts, with_steps


def main_setting(run: RunData) -> str:
    settings = run.settings()
    for s in SETTING_ORDER:
        if s in settings:
            return s
    return settings[0] if settings else "end-to-end"


def summarize(run: RunData, index: int) -> RunSummary:
    setting = main_setting(run)
    finals = run.outcomes()
    main = [r for r in finals if r.setting == setting]
    scores = task_scores(main)
    costs = [record_cost(r) for r in run.records]
    judged = [c for ok, c in (judge_cost(r.score_details) for r in run.records) if ok]
    m = run.manifest
    n_steps, n_format, n_timeouts, n_with_steps = step_counts(finals)
    return RunSummary(
        index=index,
        label=run.label,
        run_id=run.run_id,
        system=m.system,
        model=m.model,
        workload=str(m.workload.get("name") or m.workload.get("root") or "–"),
        settings=[_setting_label(s, m) for s in run.settings()],
        status=m.status,
        main_setting=setting,
        n_tasks=len(scores),
        n_records=len(finals),
        n_unscored=sum(1 for r in finals if is_unscored(r)),
        n_errors=sum(1 for r in finals if r.status == "error" or r.error is not None),
        score=cell_stat(scores),
        prompt_tokens=sum(r.usage.prompt_tokens for r in run.records),
        completion_tokens=sum(r.usage.completion_tokens for r in run.records),
        model_calls=sum(r.usage.model_calls for r in run.records),
        cost_usd=sum(c for c in costs if c is not None),
        n_cost_unknown=sum(1 for c in costs if c is None),
        n_unpriced_calls=sum(unpriced_calls(r.usage) for r in run.records),
        n_unsupported=len(run.unsupported),
        unsupported_text=unsupported_text(run),
        wall_s=sum(record_wall(r) for r in run.records),
        warnings=list(run.warnings),
        elapsed_s=_elapsed(run),
        judge_cost_usd=sum(c for c in judged if c is not None) if judged else None,
        n_judge_cost_unknown=sum(1 for c in judged if c is None),
        judge_tokens=sum(judge_tokens(r.score_details) for r in run.records),
        differences=declared_differences(m),
        steps=n_steps,
        format_errors=n_format,
        step_timeouts=n_timeouts,
        n_with_steps=n_with_steps,
    )


def declared_differences(manifest: Manifest) -> list[str]:
    """The deliberate differences from the original set-up a run's setting recorded
    (``options.setting_info.differences``)."""
    info = manifest.options.get("setting_info") or {}
    diffs = info.get("differences") if isinstance(info, dict) else None
    return [str(d) for d in diffs] if isinstance(diffs, list) else []


def subtasks_posed(manifest: Manifest) -> bool:
    """Whether an end-to-end run also posed the subtask questions (``--pose-subtasks``, recorded in the
    manifest's configuration); the paper's end-to-end setting poses the main question only."""
    opts = (manifest.options.get("config") or {}).get("options") or {}
    return bool(opts.get("pose_subtasks", False))


def _setting_label(setting: str, manifest: Manifest) -> str:
    if setting == "end-to-end" and subtasks_posed(manifest):
        return "end-to-end (subtasks posed with the question)"
    return setting


def _elapsed(run: RunData) -> float | None:
    """Start of the run to its end (manifest) or its last finished record."""
    start = run.manifest.created_at
    end = run.manifest.finished_at or max((r.finished_at for r in run.records if r.finished_at), default=None)
    if end is None:
        return None
    try:
        return max(0.0, (end - start).total_seconds())
    except TypeError:  # naive and aware datetimes mixed
        return None


def error_kind(r: Record) -> str | None:
    if r.error is not None:
        return r.error.kind or "error"
    return "error" if r.status == "error" else None


def error_counts(runs: list[RunData]) -> dict[str, list[int]]:
    """error kind -> count per run (final outcomes), most frequent kinds first."""
    per_run = [Counter(k for r in run.outcomes() if (k := error_kind(r))) for run in runs]
    kinds = sorted({k for c in per_run for k in c}, key=lambda k: (-sum(c[k] for c in per_run), k))
    return {k: [c[k] for c in per_run] for k in kinds}


def unscored_items(runs: list[RunData]) -> list[tuple[RunData, Record]]:
    out = [(run, r) for run in runs for r in run.outcomes() if is_unscored(r)]
    return sorted(
        out, key=lambda x: (x[0].label, natural_key(x[1].task_id), natural_key(x[1].subtask_id or ""))
    )


def unscored_reason(r: Record) -> str:
    d = r.score_details or {}
    for key in ("reason", "unscored_reason", "error", "message"):
        if d.get(key):
            return str(d[key])
    if r.error is not None:
        return f"{r.error.kind}: {r.error.message}"
    return "no score recorded" if r.score is None else "marked unscored"


def task_rows(run: RunData) -> list[Record]:
    """Final records of a run in display order: setting, domain, task (natural order), subtask."""
    order = {s: i for i, s in enumerate(SETTING_ORDER)}
    return sorted(
        run.outcomes(),
        key=lambda r: (
            order.get(r.setting, 99),
            natural_key(r.domain),
            natural_key(r.task_id),
            natural_key(r.subtask_id or ""),
        ),
    )


__all__ = [
    "RunSummary",
    "declared_differences",
    "error_counts",
    "error_kind",
    "main_setting",
    "record_cost",
    "record_wall",
    "step_counts",
    "summarize",
    "task_rows",
    "unscored_items",
    "unscored_reason",
]
