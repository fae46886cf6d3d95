"""The two-level failure taxonomy of the audit (after ELT-Bench-Verified's).

Level 1, the attribution: ``system`` (the system under test got it wrong) or ``benchmark`` (the gold,
the question or the evaluation is at fault). Level 2, the category; an evaluation false positive (a
correct answer the scorer rejected) also names its sub-kind.
"""

from __future__ import annotations

from typing import Literal

Attribution = Literal["system", "benchmark", "undecided"]

SYSTEM_CATEGORIES: dict[str, str] = {
    "flawed-logic": "the pipeline's computation is wrong (wrong filter, aggregation, formula)",
    "wrong-data-source": "it read the wrong file, sheet or column",
    "join-error": "a join or merge lost, duplicated or mismatched rows",
    "missing-value-handling": "missing, placeholder or malformed values were mishandled",
    "domain-knowledge-gap": "it lacked a domain fact the question relies on",
    "output-format": "the answer is right but in a form the question did not ask for (units, scale, type)",
}
BENCHMARK_CATEGORIES: dict[str, str] = {
    "evaluation-false-positive": "the answer is correct but the evaluation rejected it",
    "ambiguous-question": "the question admits several readings; the answer follows a reasonable one",
    "gold-calculation-error": "the gold answer is wrong: no faithful reading of the question gives it",
    "missing-data": "the data needed to derive the gold is not in the lake",
}
FALSE_POSITIVE_KINDS: dict[str, str] = {
    "actual-match": "the answer matches the gold; the scorer missed it",
    "format": "same value written differently (text around it, units, case)",
    "order": "same items in another order where order does not matter",
    "duplicates": "same items with or without duplicates",
    "missing-value-representation": "NaN / None / empty written differently",
}
CATEGORIES = {**SYSTEM_CATEGORIES, **BENCHMARK_CATEGORIES}


def attribution_of(category: str) -> Attribution:
    if category in SYSTEM_CATEGORIES:
        return "system"
    if category in BENCHMARK_CATEGORIES:
        return "benchmark"
    return "undecided"


def normalise(category: str | None, sub_kind: str | None) -> tuple[str | None, str | None, list[str]]:
    """(category, sub_kind, problems): spelling tolerated (``Join error`` -> ``join-error``)."""
    problems: list[str] = []

    def key(text: str | None) -> str | None:
        return text.strip().lower().replace("_", "-").replace(" ", "-") if text else None

    cat, sub = key(category), key(sub_kind)
    if cat not in CATEGORIES:
        problems.append(f"unknown category {category!r}; known: {', '.join(CATEGORIES)}")
        cat = None
    if cat == "evaluation-false-positive":
        if sub not in FALSE_POSITIVE_KINDS:
            problems.append(
                f"an evaluation false positive needs a sub_kind of {', '.join(FALSE_POSITIVE_KINDS)}"
            )
            sub = None
    else:
        sub = None
    return cat, sub, problems


def describe() -> str:
    """The taxonomy as text for the auditor's prompt."""
    lines = ["system-attributable:"]
    lines += [f"  - {k}: {v}" for k, v in SYSTEM_CATEGORIES.items()]
    lines.append("benchmark-attributable:")
    for k, v in BENCHMARK_CATEGORIES.items():
        lines.append(f"  - {k}: {v}")
        if k == "evaluation-false-positive":
            lines += [f"      sub_kind {s}: {d}" for s, d in FALSE_POSITIVE_KINDS.items()]
    return "\n".join(lines)


__all__ = [
    "BENCHMARK_CATEGORIES",
    "CATEGORIES",
    "FALSE_POSITIVE_KINDS",
    "SYSTEM_CATEGORIES",
    "Attribution",
    "attribution_of",
    "describe",
    "normalise",
]
