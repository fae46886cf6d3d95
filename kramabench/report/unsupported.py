"""The tasks the benchmark cannot support as written, in a report: found in the records
(``Record.benchmark_notes``, :mod:`kramabench.workload.notes`), counted beside each run's score and listed;
scored as the paper does unless the report is asked to leave them out (``--exclude-unsupported``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kramabench.contracts.records import BenchmarkNote, Record
from kramabench.report.load import RunData
from kramabench.report.tables import natural_key


@dataclass
class UnsupportedTask:
    """One task of a run that the benchmark cannot support, with why and how its run scored it."""

    domain: str
    task_id: str
    notes: list[BenchmarkNote] = field(default_factory=list)
    #: the task's final outcome in the run's main view: its score (None: unscored) and error kind
    score: float | None = None
    error: str | None = None

    @property
    def codes(self) -> list[str]:
        return list(dict.fromkeys(n.code for n in self.notes))

    @property
    def why(self) -> str:
        from kramabench.workload.notes import note_summary

        return note_summary(self.notes)


def find_unsupported(records: list[Record]) -> list[UnsupportedTask]:
    """The tasks whose records carry benchmark notes, in task order (one entry per domain and task)."""
    from kramabench.report.tables import record_value

    out: dict[tuple[str, str], UnsupportedTask] = {}
    for r in records:
        if not r.benchmark_notes:
            continue
        t = out.setdefault((r.domain, r.task_id), UnsupportedTask(r.domain, r.task_id))
        for n in r.benchmark_notes:
            if n not in t.notes:
                t.notes.append(n)
        if r.subtask_id is None:
            t.score = record_value(r)
            t.error = r.error.kind if r.error is not None else ("error" if r.status == "error" else None)
    return sorted(out.values(), key=lambda t: (natural_key(t.domain), natural_key(t.task_id)))


def mark_unsupported(run: RunData, *, exclude: bool = False) -> None:
    """Find the run's unsupported tasks (``run.unsupported``); ``exclude``: leave their records out of every
    score of the report (``run.records``), said in the report beside the scores."""
    run.unsupported = find_unsupported(run.outcomes())
    if exclude and run.unsupported:
        gone = {(t.domain, t.task_id) for t in run.unsupported}
        run.records = [r for r in run.records if (r.domain, r.task_id) not in gone]
        run.excluded_unsupported = True


def unsupported_text(run: RunData, *, short: bool = False) -> str:
    """What the report says beside a run's score: ``2 tasks the benchmark cannot support (scored as the paper
    does)``, or ``... (left out of the scores: --exclude-unsupported)``; ``short``: ``2 (scored as the paper
    does)``; empty when there is none."""
    n = len(run.unsupported)
    if not n:
        return ""
    how = (
        "left out of the scores: --exclude-unsupported"
        if run.excluded_unsupported
        else "scored as the paper does"
    )
    return (
        f"{n} ({how})" if short else f"{n} task{'s' if n != 1 else ''} the benchmark cannot support ({how})"
    )


__all__ = ["UnsupportedTask", "find_unsupported", "mark_unsupported", "unsupported_text"]
