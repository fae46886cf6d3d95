"""One table row per record, read from the record's JSON object without a schema.

The viewer never validates a record against :class:`~kramabench.contracts.Record`: a line written by a
newer or older kramabench, or by a plug-in setting that adds fields, is still shown. A row holds the few
fields the task table sorts and filters on (each read tolerantly: a wrong type is ``None`` and a note),
where its line is in ``records.jsonl`` (the task page reads the whole record again from there) and the
lower-cased text that search looks in (every string of the record, keys excepted, and the question).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from kramabench.contracts.cost import format_cost
from kramabench.files import clip
from kramabench.runfolder.golds import GOLDS, OFFICIAL, VERIFIED, other_gold
from kramabench.runfolder.typed import json_object

#: outcomes of a row, in the order the filter offers them
OUTCOMES = ("correct", "partial", "wrong", "error", "unscored")

#: characters of an answer or expected value kept for the table (the task page shows it whole)
PREVIEW_CHARS = 160

#: step outcomes that are the normal course of an agent (not offered as "happened in a step")
QUIET_STEP_OUTCOMES = frozenset({"ok", "final_answer"})


def natural_key(text: str | None) -> list[Any]:
    """``legal-easy-10`` after ``legal-easy-9``."""
    return [(0, int(p)) if p.isdigit() else (1, p.lower()) for p in re.split(r"(\d+)", text or "")]


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    f = float(v)
    return f if math.isfinite(f) else None  # NaN, infinity: no number a table can sort or show


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def preview(v: Any, n: int = PREVIEW_CHARS) -> str:
    """A short one-line text of any JSON value (strings as they are, others as JSON)."""
    if v is None:
        return ""
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, separators=(", ", ": "))
    text = " ".join(text.split())
    return clip(text, n)


def _strings(v: Any, out: list[str], depth: int = 0) -> None:
    """Every string and number in a JSON value (not the keys of objects), depth first."""
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, dict):
        if depth < 64:
            for x in v.values():
                _strings(x, out, depth + 1)
    elif isinstance(v, list):
        if depth < 64:
            for x in v:
                _strings(x, out, depth + 1)
    elif isinstance(v, bool) or v is None:
        return
    elif isinstance(v, int | float):
        out.append(repr(v))


def search_text(rec: dict[str, Any], extra: str = "") -> str:
    parts: list[str] = [extra] if extra else []
    _strings(rec, parts)
    return "\n".join(parts).lower()


@dataclass(slots=True)
class Row:
    """What the task table needs of one record; ``i`` is its index in the run (file order)."""

    i: int
    line: int
    offset: int
    length: int
    domain: str
    task_id: str
    subtask_id: str | None
    setting: str
    attempt: int
    status: str
    difficulty: str | None
    answer_type: str | None
    metric: str | None
    score: float | None
    value: float | None
    outcome: str
    error_kind: str | None
    wall_s: float | None
    cost_usd: float | None
    tokens: int | None
    steps: int | None
    n_artifacts: int
    answer: str
    expected: str
    finished_at: str | None
    #: the gold ``value`` is against (the record's ``gold``, else the run's), its score against each gold
    #: (None: unscored there), whether an erratum changed this item's gold, its reviewed class
    gold: str = VERIFIED
    official: float | None = None
    verified: float | None = None
    gold_changed: bool = False
    gold_class: str | None = None
    #: an agent's recorded steps (0: none), its replies without code, its steps stopped at their time limit,
    #: the unusual outcomes among its steps (timeout, error, format_error, ...), and how it ended
    agent_steps: int = 0
    format_errors: int = 0
    step_timeouts: int = 0
    step_outcomes: tuple[str, ...] = ()
    agent_end: str | None = None
    artifacts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    text: str = ""
    #: False for an attempt that a later attempt of the same unit replaced
    latest: bool = True
    #: the task order (domain, task id, subtask id naturally: ``-10`` after ``-9``; attempt), computed once
    order: tuple[Any, ...] = ()
    #: the file position (``i``) of the first record of this row's unit: the order the report reads tasks in
    unit_first: int = 0
    #: model calls without a known price (``cost_usd`` is then None; kramabench.contracts.cost)
    unpriced: int = 0
    #: why the benchmark cannot support the task (the codes of ``benchmark_notes``; empty: nothing known)
    benchmark: tuple[str, ...] = ()
    #: those notes in words, one line
    benchmark_why: str = ""

    @property
    def cost_text(self) -> str:
        """The record's cost as every surface tells it: USD, or ``unknown (N unpriced calls)``."""
        return format_cost(self.cost_usd, self.unpriced)

    @property
    def unit(self) -> tuple[str, str, str, str | None]:
        return (self.domain, self.setting, self.task_id, self.subtask_id)

    def to_json(self) -> dict[str, Any]:
        return {
            "i": self.i,
            "line": self.line,
            "domain": self.domain,
            "task_id": self.task_id,
            "subtask_id": self.subtask_id,
            "setting": self.setting,
            "attempt": self.attempt,
            "status": self.status,
            "difficulty": self.difficulty,
            "answer_type": self.answer_type,
            "metric": self.metric,
            "score": self.score,
            "value": self.value,
            "outcome": self.outcome,
            "error_kind": self.error_kind,
            "wall_s": self.wall_s,
            "cost_usd": self.cost_usd,
            "unpriced_calls": self.unpriced,
            "cost_text": self.cost_text,
            "benchmark": list(self.benchmark),
            "benchmark_why": self.benchmark_why,
            "tokens": self.tokens,
            "steps": self.steps,
            "artifacts": self.n_artifacts,
            "answer": self.answer,
            "expected": self.expected,
            "finished_at": self.finished_at,
            "latest": self.latest,
            "notes": self.notes,
            "gold": self.gold,
            "official": self.official,
            "verified": self.verified,
            "gold_changed": self.gold_changed,
            "gold_class": self.gold_class,
            "agent_steps": self.agent_steps,
            "format_errors": self.format_errors,
            "step_timeouts": self.step_timeouts,
            "step_outcomes": list(self.step_outcomes),
            "agent_end": self.agent_end,
        }

    def value_under(self, gold: str) -> float | None:
        return self.official if gold == OFFICIAL else self.verified


def record_value(status: str, score: float | None, unscored: bool) -> float | None:
    """The score a record counts with, as the report counts it: unscored (flagged, or an answer without a
    score) is None and left out of means; an error without a score counts 0."""
    if unscored or (score is None and status == "ok"):
        return None
    return score if score is not None else 0.0


def outcome_of(status: str, value: float | None) -> str:
    if status == "error":
        return "error"
    if value is None:
        return "unscored"
    if value >= 1.0:
        return "correct"
    return "partial" if value > 0.0 else "wrong"


def task_order(domain: str, task_id: str, subtask_id: str | None, attempt: int) -> tuple[Any, ...]:
    return (natural_key(domain), natural_key(task_id), natural_key(subtask_id or ""), attempt)


def agent_facts(steps: Any, error_kind: str | None) -> tuple[int, int, int, tuple[str, ...], str | None]:
    """(steps, replies without code, steps timed out, the unusual step outcomes, how the agent ended) of a
    record's ``steps`` list: the early end an error names (``max_steps``, ``budget``, ``format_errors``,
    ``model_error``, ...) or, without one, its last step's outcome (``final_answer``)."""
    if not isinstance(steps, list) or not steps:
        return 0, 0, 0, (), None
    outcomes = [
        s.get("outcome") if isinstance(s, dict) and isinstance(s.get("outcome"), str) else None for s in steps
    ]
    unusual = tuple(sorted({o for o in outcomes if o is not None and o not in QUIET_STEP_OUTCOMES}))
    end = error_kind or outcomes[-1]  # steps without an outcome (another system's format): not said
    return len(steps), outcomes.count("format_error"), outcomes.count("timeout"), unusual, end


def make_row(
    rec: dict[str, Any],
    *,
    i: int,
    line: int,
    offset: int,
    length: int,
    question: str = "",
    run_gold: str = VERIFIED,
) -> Row:
    """A row from a record object; a field of the wrong type becomes None and a note, never an exception.
    ``run_gold``: the gold of the run's records that do not name theirs (written before both golds were
    kept: the manifest tells)."""
    notes: list[str] = []

    def text_field(name: str, default: str | None = None) -> str | None:
        v = rec.get(name, default)
        if v is not None and not isinstance(v, str):
            notes.append(f"field '{name}' is a {type(v).__name__}, not text")
            return str(v)
        return v

    status = text_field("status") or "ok"
    score_raw = rec.get("score")
    score = _num(score_raw)
    if score_raw is not None and score is None:
        notes.append(f"field 'score' is not a number ({preview(score_raw, 40)})")
    unscored = rec.get("unscored") is True
    value = record_value(status, score, unscored)
    err = rec.get("error")
    error_kind: str | None = None
    if isinstance(err, dict):
        error_kind = _str(err.get("kind")) or "error"
    elif err is not None:
        error_kind = "error"
    elif status == "error":
        error_kind = "error"
    usage = json_object(rec.get("usage"))
    pt, ct = usage.get("prompt_tokens"), usage.get("completion_tokens")
    tokens = (
        (pt if isinstance(pt, int) else 0) + (ct if isinstance(ct, int) else 0)
        if (isinstance(pt, int) or isinstance(ct, int))
        else None
    )
    steps_v = rec.get("steps")
    steps = (
        len(steps_v)
        if isinstance(steps_v, list) and steps_v
        else (rec["iterations"] if isinstance(rec.get("iterations"), int) and rec["iterations"] else None)
    )
    arts = rec.get("artifacts")
    art_paths = (
        [a["path"] for a in arts if isinstance(a, dict) and isinstance(a.get("path"), str)]
        if isinstance(arts, list)
        else []
    )
    attempt_v = rec.get("attempt")
    attempt = attempt_v if isinstance(attempt_v, int) and not isinstance(attempt_v, bool) else 0
    finished = rec.get("finished_at")
    domain, task_id, subtask_id = (
        text_field("domain") or "",
        text_field("task_id") or "",
        text_field("subtask_id"),
    )
    named = rec.get("gold")
    gold = named if isinstance(named, str) and named in GOLDS else run_gold
    other = other_gold(gold)
    golds = {gold: value, other: value}
    og = rec.get("other_gold")
    changed = False
    if isinstance(og, dict) and og.get("gold") == other:
        o_score = _num(og.get("score"))
        if og.get("score") is not None and o_score is None:
            notes.append(f"field 'other_gold.score' is not a number ({preview(og.get('score'), 40)})")
        golds[other] = record_value(status, o_score, og.get("unscored") is True)
        changed = True
    elif og is not None and not isinstance(og, dict):
        notes.append(f"field 'other_gold' is a {type(og).__name__}, not an object")
    n_steps, n_format, n_timeouts, step_outcomes, agent_end = agent_facts(steps_v, error_kind)
    codes, why = _benchmark(rec.get("benchmark_notes"), notes)
    return Row(
        i=i,
        line=line,
        offset=offset,
        length=length,
        domain=domain,
        task_id=task_id,
        subtask_id=subtask_id,
        setting=text_field("setting") or "end-to-end",
        attempt=attempt,
        status=status,
        difficulty=text_field("difficulty"),
        answer_type=text_field("answer_type"),
        metric=text_field("metric"),
        score=score,
        value=value,
        outcome=outcome_of(status, value),
        error_kind=error_kind,
        wall_s=_num(rec.get("wall_s")),
        cost_usd=_num(usage.get("cost_usd")),
        unpriced=_unpriced(usage),
        benchmark=codes,
        benchmark_why=why,
        tokens=tokens,
        steps=steps,
        n_artifacts=len(arts) if isinstance(arts, list) else 0,
        answer=preview(rec.get("answer")),
        expected=preview(rec.get("expected")),
        finished_at=_str(finished),
        gold=gold,
        official=golds[OFFICIAL],
        verified=golds[VERIFIED],
        gold_changed=changed,
        gold_class=text_field("gold_class"),
        agent_steps=n_steps,
        format_errors=n_format,
        step_timeouts=n_timeouts,
        step_outcomes=step_outcomes,
        agent_end=agent_end,
        artifacts=art_paths,
        notes=notes,
        text=search_text(rec, question),
        order=task_order(domain, task_id, subtask_id, attempt),
    )


def _benchmark(raw: Any, notes: list[str]) -> tuple[tuple[str, ...], str]:
    """(codes, the notes in one line) of a record's ``benchmark_notes``; a field of another shape is a note."""
    if raw is None:
        return (), ""
    if not isinstance(raw, list):
        notes.append(f"field 'benchmark_notes' is a {type(raw).__name__}, not a list")
        return (), ""
    pairs = [
        (str(n.get("code")), str(n.get("message", ""))) for n in raw if isinstance(n, dict) and n.get("code")
    ]
    seen = dict.fromkeys(pairs)
    return tuple(dict.fromkeys(c for c, _m in seen)), "; ".join(f"{c}: {m}" for c, m in seen)


def _unpriced(usage: dict[str, Any]) -> int:
    """Unpriced calls of a record's usage (as :func:`kramabench.contracts.cost.unpriced_calls` counts them; a
    usage whose cost is not a number counts its model calls, at least 1)."""
    n = usage.get("unpriced_calls")
    n = n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0
    if _num(usage.get("cost_usd")) is None:
        calls = usage.get("model_calls")
        calls = calls if isinstance(calls, int) and not isinstance(calls, bool) else 0
        return n or max(1, calls)
    return n


__all__ = [
    "OUTCOMES",
    "Row",
    "agent_facts",
    "make_row",
    "natural_key",
    "outcome_of",
    "preview",
    "record_value",
    "search_text",
    "task_order",
]
