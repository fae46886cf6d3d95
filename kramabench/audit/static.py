"""Static checks of a workload's gold: what can be found without running anything.

- the validator's findings (answer versus declared type, data sources that match no lake file with the
  nearest existing name, ...), grouped by kind;
- subtask (and task) golds that disagree with the format their own question states: an order asked
  for and not kept, a rounding asked for and not kept, a count that is not a whole number, a list asked
  for and a single value given (or the reverse), a percentage asked for and a fraction given, file
  names in the gold that the lake does not have;
- main answers that are not derivable from their subtasks where the steps say they are: the last
  subtask asks the main question again (or its step says it gives the final answer) but its gold
  differs from the main gold.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from kramabench.workload.models import AnswerType, Subtask, Task, Workload

StaticKind = Literal["validator", "answer-type", "data-source", "gold-format", "main-vs-subtasks"]


class StaticFinding(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: StaticKind
    code: str
    severity: Literal["error", "warning", "info"]
    domain: str
    task_id: str | None = None
    subtask_id: str | None = None
    message: str
    suggestion: str | None = None


def _kind_of(code: str) -> StaticKind:
    if code.startswith("data_source") or code == "not_reproducible":
        return "data-source"
    if "answer" in code or "type" in code:
        return "answer-type"
    return "validator"


def _decimals(x: float) -> int:
    text = repr(float(x))
    if "e" in text or "." not in text:
        return 0
    return len(text.split(".")[1].rstrip("0"))


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


_FILE_NAME_RE = re.compile(
    r"[\w .()/-]+\.(?:csv|tsv|txt|xlsx?|json|jsonl|html?|xml|parquet|gpkg|shp|dat|nc|pdf|zip|gz|h5|sqlite|db|npy)",
    re.I,
)
#: "how many hours ..." asks for a measure, not a count
_MEASURE_RE = re.compile(
    r"round|decimal|average|mean|\b(?:hours?|minutes?|seconds?|days?|weeks?|months?|years?|percent|km|kilomet\w*|"
    r"miles?|tons?|tonnes?|kg|kilograms?|mw|gw|mwh|gwh|dollars?|euros?|meters?|metres?|feet|acres?|hectares?|liters?|"
    r"litres?|degrees?)\b|\$"
)
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def format_problems(query: str, answer: Any, answer_type: AnswerType | None, lake_names: set[str]) -> list[tuple[str, str]]:
    """(code, message) for each way ``answer`` disagrees with the format ``query`` states."""
    q = (query or "").lower()
    out: list[tuple[str, str]] = []
    if answer is None:
        return out
    m = re.search(r"round(?:ed)?(?: \w+){0,4}? to (\d+|one|two|three|four|five|six) (?:decimal|digit|significant)", q)
    if m and _is_number(answer) and "significant" not in m.group(0):
        want = int(m.group(1)) if m.group(1).isdigit() else _WORDS[m.group(1)]
        if _decimals(answer) > want:
            out.append(("gold_not_rounded", f"the question asks for {want} decimal place(s); the gold {answer!r} has {_decimals(answer)}"))
    if isinstance(answer, list) and len(answer) > 1 and all(_is_number(a) for a in answer):
        if re.search(r"\b(ascending|increasing|smallest to largest|lowest to highest|earliest to latest|chronological)", q):
            if answer != sorted(answer):
                out.append(("gold_order", "the question asks for ascending order; the gold list is not ascending"))
        elif re.search(r"\b(descending|decreasing|largest to smallest|highest to lowest)", q) and answer != sorted(answer, reverse=True):
            out.append(("gold_order", "the question asks for descending order; the gold list is not descending"))
    if (
        re.match(r"^\s*how many\b", q)
        and not _MEASURE_RE.search(q)
        and _is_number(answer)
        and float(answer) != int(float(answer))
    ):
        out.append(("gold_count_fraction", f"the question asks how many; the gold {answer!r} is not a whole number"))
    if re.search(r"\b(as a percentage|in percent|percentage points?|what percent)\b", q) and _is_number(answer) and 0 < abs(answer) < 1:
        out.append(("gold_percent_scale", f"the question asks for a percentage; the gold {answer!r} looks like a fraction"))
    kind = answer_type.kind if answer_type is not None else None
    if kind == "list" and not isinstance(answer, list):
        out.append(("gold_not_list", f"the answer type is a list; the gold is {type(answer).__name__} {answer!r}"[:200]))
    if kind in ("numeric", "string") and isinstance(answer, list) and len(answer) > 1:
        out.append(("gold_list_for_scalar", f"the answer type is {answer_type.value}; the gold is a list of {len(answer)}"))
    if lake_names:
        items = answer if isinstance(answer, list) else [answer]
        names = [a for a in items if isinstance(a, str) and _FILE_NAME_RE.fullmatch(a.strip())]
        for name in names:
            base = name.strip().rsplit("/", 1)[-1]
            if base.lower() not in lake_names:
                near = difflib.get_close_matches(base.lower(), sorted(lake_names), n=1, cutoff=0.6)
                hint = f"; nearest lake file: {near[0]}" if near else ""
                out.append(("gold_names_missing_file", f"the gold names {name!r}, which the lake does not have{hint}"))
    return out


def _same(a: Any, b: Any, answer_type: AnswerType | None) -> bool:
    from scorers.registry import score

    if answer_type is None:
        return a == b
    s = score(a, b, answer_type, diagnostics=False)
    if s.unscored or s.value is None:
        return str(a).strip().lower() == str(b).strip().lower()
    return s.value >= 0.999


def _restates(task: Task, sub: Subtask) -> bool:
    step = (sub.step or "").lower()
    if re.search(r"\b(final answer|answer (?:to )?the main (?:question|task)|the main task)\b", step):
        return True
    a, b = (task.query or "").lower().strip(), (sub.query or "").lower().strip()
    return bool(a and b) and difflib.SequenceMatcher(None, a, b).ratio() >= 0.85


def _lake_names(lake: Path) -> set[str]:
    if not Path(lake).is_dir():
        return set()
    return {p.name.lower() for p in Path(lake).rglob("*") if p.is_file()}


def static_checks(wl: Workload, *, task_ids: Iterable[str] | None = None) -> list[StaticFinding]:
    """All static findings of one loaded workload (its own findings included)."""
    wanted = set(task_ids) if task_ids is not None else None
    out: list[StaticFinding] = []
    for f in wl.findings:
        if wanted is not None and f.task_id not in wanted:
            continue
        out.append(StaticFinding(kind=_kind_of(f.code), code=f.code, severity=f.severity, domain=wl.domain,
                                 task_id=f.task_id, subtask_id=f.subtask_id, message=f.message,
                                 suggestion=f.suggestion))  # fmt: skip
    names = _lake_names(wl.lake)
    for t in wl.tasks:
        if wanted is not None and t.id not in wanted:
            continue
        items: list[tuple[Task | Subtask, str | None]] = [(t, None)] + [(s, s.id) for s in t.subtasks]
        for item, sub_id in items:
            for code, msg in format_problems(item.query, item.answer, item.answer_type, names):
                out.append(StaticFinding(kind="gold-format", code=code, severity="warning", domain=wl.domain,
                                         task_id=t.id, subtask_id=sub_id, message=msg))  # fmt: skip
        if t.subtasks:
            last = t.subtasks[-1]
            if (
                _restates(t, last)
                and last.answer is not None
                and t.answer is not None
                and not _same(t.answer, last.answer, t.answer_type or last.answer_type)
            ):
                out.append(StaticFinding(
                    kind="main-vs-subtasks", code="main_not_from_subtasks", severity="warning", domain=wl.domain,
                    task_id=t.id, subtask_id=last.id,
                    message=f"the last subtask restates the main question, but its gold {str(last.answer)[:80]!r} "
                    f"differs from the main gold {str(t.answer)[:80]!r}",
                ))  # fmt: skip
    return out


__all__ = ["StaticFinding", "StaticKind", "format_problems", "static_checks"]
