"""Percent-scale normalisation: a named scoring option, off by default (the paper scores as is).

A question asking for a percentage whose gold is written as a fraction (12.5% stored as 0.125) scores the
answer 12.5 as wrong; the scorers only note ``scale_mismatch: x100`` in the details. With the option on
(``kramabench run --normalise-percent``, ``kramabench score --normalise-percent``; recorded in the
manifest), in the style of ELT-Bench-Verified's correction of representation mismatches, such an answer is
scored again divided (or multiplied) by 100 when

* the scorer found the answer off by exactly that factor (``scale_mismatch`` ``x100`` or ``/100``), and
* the question speaks of a percentage or a share (:data:`PERCENT_WORDS`),

and the better of the two scores counts; the details keep ``percent_normalised`` (the factor) and
``paper_score`` (the score the paper's rule gives).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from kramabench.scorers.base import Score

if TYPE_CHECKING:
    from kramabench.contracts.scoring import Judge

#: words of a question that make a 100x difference a matter of notation (percent vs fraction)
PERCENT_WORDS = re.compile(r"percent|per\s+cent|%|\bproportion|\bfraction|\bshare\b|\bratio\b", re.IGNORECASE)


def scale_label(details: dict[str, Any] | None) -> str | None:
    """The ``scale_mismatch`` of a score's details as ``"x100"`` or ``"/100"`` (scalar scorers write the label,
    list scorers ``{"factor": label, "matches_if_rescaled": n}``); None when there is none."""
    v = (details or {}).get("scale_mismatch")
    if isinstance(v, dict):
        v = v.get("factor")
    return v if v in ("x100", "/100") else None


def asks_percent(question: str | None) -> bool:
    return bool(question) and PERCENT_WORDS.search(question or "") is not None


def _mul(x: float, factor: float) -> float:
    return x / 100.0 if factor == 0.01 else x * factor  # 12.5 / 100 is 0.125; 12.5 * 0.01 is not


def _scaled(value: Any, factor: float) -> Any:
    """``value`` with each number multiplied by ``factor`` (lists element-wise; numbers written as strings
    included, percent signs kept as they are); other values unchanged."""
    from kramabench.scorers.parse import ParsedNumber, parse_number

    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return _mul(value, factor)
    if isinstance(value, str):
        p = parse_number(value)
        if isinstance(p, ParsedNumber) and p.points is None:
            return _mul(p.value, factor)
        s = value.strip()
        if s[:1] in "[(":
            from kramabench.scorers.parse import parse_list

            items, _notes = parse_list(s)
            if items is not None:
                return [_scaled(x, factor) for x in items]
        return value
    if isinstance(value, (list, tuple)):
        return [_scaled(x, factor) for x in value]
    return value


def normalise_percent(
    expected: Any,
    predicted: Any,
    answer_type: str | None,
    first: Score,
    *,
    judge: Judge | None = None,
    question: str | None = None,
) -> Score:
    """``first`` (the paper's score of ``predicted``), or the score of the answer rescaled by 100 when that is
    higher and the question is about a percentage (see the module docstring)."""
    label = scale_label(first.details)
    if label is None or first.value is None or first.value >= 1.0 or not asks_percent(question):
        return first
    from kramabench.scorers.registry import score

    factor = 0.01 if label == "x100" else 100.0
    again = score(expected, _scaled(predicted, factor), answer_type, judge, question=question)
    if again.value is None or again.value <= first.value:
        return first
    details = {
        **again.details,
        "scale_mismatch": first.details["scale_mismatch"],
        "percent_normalised": label,
        "paper_score": first.value,
    }
    return Score(value=again.value, metric=again.metric, details=details, unscored=again.unscored)


__all__ = ["PERCENT_WORDS", "asks_percent", "normalise_percent", "scale_label"]
