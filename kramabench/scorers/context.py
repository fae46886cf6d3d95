"""Per-score bookkeeping of judge calls (what goes into ``details["judge"]``)."""

from __future__ import annotations

import json
from typing import Any

from kramabench.scorers.judge import Judge

#: most judge calls one score may make (a longer list of unmatched strings is unscored, not guessed)
MAX_JUDGE_CALLS = 200
#: verdicts kept in the details of one score
MAX_VERDICTS_IN_DETAILS = 20


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


class JudgeContext:
    """Asks the judge for one score and records what happened."""

    def __init__(
        self, judge: Judge | None, question: str | None, *, max_calls: int = MAX_JUDGE_CALLS
    ) -> None:
        self.judge = judge
        self.question = question
        self.max_calls = max_calls
        self.asked = 0
        self.cached = 0
        self.unparsable = 0
        self.missing = 0  # comparisons that needed a judge when none was given
        self.over_budget = 0
        self.verdicts: list[dict[str, Any]] = []

    def ask(self, expected: Any, predicted: Any) -> bool | None:
        """True/False from the judge; None when there is no judge, no budget left, or no readable verdict."""
        if self.judge is None:
            self.missing += 1
            return None
        if self.asked >= self.max_calls:
            self.over_budget += 1
            return None
        self.asked += 1
        e, p = as_text(expected), as_text(predicted)
        v = self.judge.paraphrase(self.question, e, p)
        if v.cached:
            self.cached += 1
        if v.equivalent is None:
            self.unparsable += 1
        if len(self.verdicts) < MAX_VERDICTS_IN_DETAILS:
            self.verdicts.append(
                {
                    "expected": e[:200],
                    "predicted": p[:200],
                    "equivalent": v.equivalent,
                    "reason": v.reason[:300],
                }
            )
        return v.equivalent

    @property
    def used(self) -> bool:
        return bool(self.asked or self.missing or self.over_budget)

    def unscored_reason(self) -> str:
        if self.unparsable:
            return "judge_unparsable"
        if self.over_budget:
            return "judge_budget_exceeded"
        return "judge_required"

    def record(self, details: dict[str, Any]) -> None:
        if not self.used:
            return
        info: dict[str, Any] = {"calls": self.asked, "cached": self.cached}
        if self.judge is not None:
            info["model"] = self.judge.id
            info["prompt_version"] = self.judge.prompt_version
        if self.unparsable:
            info["unparsable"] = self.unparsable
        if self.missing:
            info["needed_without_judge"] = self.missing
        if self.over_budget:
            info["over_budget"] = self.over_budget
        if self.verdicts:
            info["verdicts"] = self.verdicts
        details["judge"] = info


__all__ = ["JudgeContext", "MAX_JUDGE_CALLS", "as_text"]
