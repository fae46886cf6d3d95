"""Static checks of a workload's gold: what can be found without running anything.

- the validator's findings (answer versus declared type, data sources that match no lake file with the
  nearest existing name, ...), grouped by kind;
- subtask (and task) golds that disagree with the format their own question states: an order asked
  for and not kept, a rounding asked for and not kept, a count that is not a whole number, a list asked
  for and a single value given (or the reverse), a percentage asked for ("percent", "percentage", "%")
  and a fraction given (or a fraction asked for and a percentage given), file names in the gold that the
  lake does not have, a gold string shaped like a list, dict or tuple literal that does not parse;
- main answers that are not derivable from their subtasks where the steps say they are: a subtask asks
  the main question again (nearly the same text, or nearly all its content words; for the last subtask
  also a step saying it gives the final answer) but its gold differs from the main gold.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from kramabench.contracts.answers import builtin_answer_type
from kramabench.files.text import ELLIPSIS
from kramabench.workload.models import Subtask, Task, Workload

StaticKind = Literal["validator", "answer-type", "data-source", "gold-format", "main-vs-subtasks"]


class _Where(BaseModel):
    """What a static finding is and where: its kind, code and severity, its domain and task."""

    model_config = ConfigDict(extra="forbid")

    kind: StaticKind
    code: str
    severity: Literal["error", "warning", "info"]
    domain: str
    task_id: str | None = None


class StaticFinding(_Where):
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
#: a question asking for a percentage ("percentage" and "per cent" included, "percentile" not)
_PERCENT_Q = re.compile(r"\bper\s*cent(?:age)?s?\b|%")
#: a question asking for a fraction or a proportion between 0 and 1
_FRACTION_Q = re.compile(
    r"\b(?:as a (?:fraction|decimal|proportion)|fraction of|proportion of|between 0 and 1)\b"
)


def _number(v: Any) -> float | None:
    """A gold number, also when written as a string (``"0.125"``); None for anything else."""
    if _is_number(v):
        return float(v)
    if isinstance(v, str):
        from kramabench.scorers.parse import ParsedNumber, parse_number

        p = parse_number(v)
        if isinstance(p, ParsedNumber) and p.points is None:
            return p.value
    return None


_OPEN_CLOSE = {"[": ("]", "list"), "{": ("}", "dict"), "(": (")", "tuple")}


def _unparsable_literal(text: str) -> str | None:
    """``"list"``/``"dict"``/``"tuple"`` when ``text`` is shaped like that literal (it opens with ``[`` or ``{``,
    or is a parenthesised, comma-separated text) but is neither JSON nor a Python literal; None otherwise
    (prose in parentheses is no tuple)."""
    import ast
    import json

    s = text.strip()
    if len(s) < 2 or s[0] not in _OPEN_CLOSE:
        return None
    kind = _OPEN_CLOSE[s[0]][1]
    if kind == "tuple" and ("," not in s or s[-1] != ")"):
        return None  # "(in metres)": prose in parentheses; a list or dict is open from its first bracket
    if len(s) > 2_000_000:
        return None
    try:
        json.loads(s)
        return None
    except ValueError:
        pass
    try:
        ast.literal_eval(s)
        return None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return kind


def format_problems(
    query: str, answer: Any, answer_type: str | None, lake_names: set[str]
) -> list[tuple[str, str]]:
    """(code, message) for each way ``answer`` disagrees with the format ``query`` states."""
    q = (query or "").lower()
    out: list[tuple[str, str]] = []
    if answer is None:
        return out
    m = re.search(
        r"round(?:ed)?(?: \w+){0,4}? to (\d+|one|two|three|four|five|six) (?:decimal|digit|significant)", q
    )
    if m and _is_number(answer) and "significant" not in m.group(0):
        want = int(m.group(1)) if m.group(1).isdigit() else _WORDS[m.group(1)]
        if _decimals(answer) > want:
            out.append(
                (
                    "gold_not_rounded",
                    f"the question asks for {want} decimal place(s); the gold {answer!r} has {_decimals(answer)}",
                )
            )
    if isinstance(answer, list) and len(answer) > 1 and all(_is_number(a) for a in answer):
        if re.search(
            r"\b(ascending|increasing|smallest to largest|lowest to highest|earliest to latest|chronological)",
            q,
        ):
            if answer != sorted(answer):
                out.append(
                    ("gold_order", "the question asks for ascending order; the gold list is not ascending")
                )
        elif re.search(
            r"\b(descending|decreasing|largest to smallest|highest to lowest)", q
        ) and answer != sorted(answer, reverse=True):
            out.append(
                ("gold_order", "the question asks for descending order; the gold list is not descending")
            )
    if (
        re.match(r"^\s*how many\b", q)
        and not _MEASURE_RE.search(q)
        and _is_number(answer)
        and float(answer) != int(float(answer))
    ):
        out.append(
            ("gold_count_fraction", f"the question asks how many; the gold {answer!r} is not a whole number")
        )
    num = _number(answer)
    if num is not None and _PERCENT_Q.search(q) and not _FRACTION_Q.search(q) and 0 < abs(num) < 1:
        out.append(
            (
                "gold_percent_scale",
                f"the question asks for a percentage; the gold {answer!r} looks like a "
                f"fraction (a percentage answer would be {num * 100:g})",
            )
        )
    elif num is not None and _FRACTION_Q.search(q) and not _PERCENT_Q.search(q) and 1 < abs(num) <= 100:
        out.append(
            (
                "gold_percent_scale",
                f"the question asks for a fraction; the gold {answer!r} looks like a "
                f"percentage (a fraction answer would be {num / 100:g})",
            )
        )
    if isinstance(answer, str) and (why := _unparsable_literal(answer)):
        out.append(
            (
                "gold_unparsable_literal",
                f"the gold is a string that looks like a {why} but does not parse "
                f"as one: {answer[:80]!r}" + (ELLIPSIS if len(answer) > 80 else ""),
            )
        )
    # a plug-in's answer type (a name) has no kind known here: the kind's checks do not apply
    known = builtin_answer_type(answer_type)
    kind = known.kind if known is not None else None
    if kind == "list" and not isinstance(answer, list):
        out.append(
            (
                "gold_not_list",
                f"the answer type is a list; the gold is {type(answer).__name__} {answer!r}"[:200],
            )
        )
    if known is not None and kind in ("numeric", "string") and isinstance(answer, list) and len(answer) > 1:
        out.append(
            (
                "gold_list_for_scalar",
                f"the answer type is {known.value}; the gold is a list of {len(answer)}",
            )
        )
    if lake_names:
        items = answer if isinstance(answer, list) else [answer]
        names = [a for a in items if isinstance(a, str) and _FILE_NAME_RE.fullmatch(a.strip())]
        for name in names:
            base = name.strip().rsplit("/", 1)[-1]
            if base.lower() not in lake_names:
                near = difflib.get_close_matches(base.lower(), sorted(lake_names), n=1, cutoff=0.6)
                hint = f"; nearest lake file: {near[0]}" if near else ""
                out.append(
                    (
                        "gold_names_missing_file",
                        f"the gold names {name!r}, which the lake does not have{hint}",
                    )
                )
    return out


def _same(a: Any, b: Any, answer_type: str | None) -> bool:
    from kramabench.scorers.registry import score

    if answer_type is None:
        return bool(a == b)
    s = score(a, b, answer_type, diagnostics=False)
    if s.unscored or s.value is None:
        return str(a).strip().lower() == str(b).strip().lower()
    return s.value >= 0.999


_STOP = frozenset(
    "a an the of in on at to for from by with and or is are was were be what which who how many much does do did "
    "this that these those their its it as into per each all any".split()
)


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+(?:[.'-][a-z0-9]+)*", text.lower()) if w not in _STOP}


def _restates(task: Task, sub: Subtask, *, final_step: bool = False) -> str | None:
    """How ``sub`` restates the main question (words for the finding), or None: its step says it gives the
    final answer (the last subtask only), its question is nearly the same text, or it holds nearly every
    content word of the main question (a reworded restatement)."""
    step = (sub.step or "").lower()
    if final_step and re.search(
        r"\b(final answer|answer (?:to )?the main (?:question|task)|the main task)\b", step
    ):
        return "gives the final answer by its step"
    a, b = (task.query or "").lower().strip(), (sub.query or "").lower().strip()
    if not (a and b):
        return None
    if difflib.SequenceMatcher(None, a, b).ratio() >= 0.85:
        return "restates the main question"
    wa, wb = _content_words(a), _content_words(b)
    if len(wa) >= 4 and len(wa & wb) >= 0.9 * len(wa) and len(wb) <= 1.5 * len(wa):
        return "restates the main question in other words"
    return None


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
        for i, sub in enumerate(t.subtasks):
            last = i == len(t.subtasks) - 1
            how = _restates(t, sub, final_step=last)
            if (
                how
                and sub.answer is not None
                and t.answer is not None
                and not _same(t.answer, sub.answer, t.answer_type or sub.answer_type)
            ):
                where = "the last subtask" if last else f"subtask {sub.id}"
                out.append(StaticFinding(
                    kind="main-vs-subtasks", code="main_not_from_subtasks" if last else "subtask_restates_main",
                    severity="warning", domain=wl.domain, task_id=t.id, subtask_id=sub.id,
                    message=f"{where} {how}, but its gold {str(sub.answer)[:80]!r} differs from the main gold "
                    f"{str(t.answer)[:80]!r}",
                ))  # fmt: skip
    return out


class FindingGroup(_Where):
    """The findings of one kind (code) on one task and its subtasks: one row, however many files repeat it."""

    count: int
    #: the subtasks (ids) the findings are on, besides the task itself
    subtasks: list[str] = []
    examples: list[str] = []


def group_findings(findings: Iterable[StaticFinding], *, examples: int = 3) -> list[FindingGroup]:
    """Findings grouped per (domain, task, code), in first-seen order: a data-source finding repeated for
    each of a folder's 1,500 files becomes one row with its count and the first ``examples`` messages."""
    groups: dict[tuple[str, str | None, str], FindingGroup] = {}
    order = {"error": 0, "warning": 1, "info": 2}
    for f in findings:
        key = (f.domain, f.task_id, f.code)
        g = groups.get(key)
        if g is None:
            g = groups[key] = FindingGroup(kind=f.kind, code=f.code, severity=f.severity, domain=f.domain,
                                           task_id=f.task_id, count=0)  # fmt: skip
        g.count += 1
        if order[f.severity] < order[g.severity]:
            g.severity = f.severity
        if f.subtask_id and f.subtask_id not in g.subtasks:
            g.subtasks.append(f.subtask_id)
        if len(g.examples) < examples:
            g.examples.append((f"{f.subtask_id}: " if f.subtask_id else "") + f.message)
    return list(groups.values())


__all__ = [
    "FindingGroup",
    "StaticFinding",
    "StaticKind",
    "format_problems",
    "group_findings",
    "static_checks",
]
