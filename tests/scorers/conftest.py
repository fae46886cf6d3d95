"""Judges for the scorer tests: a scripted one and one that fails the test when asked."""

from __future__ import annotations

import pytest

from kramabench.scorers.judge import Verdict


class ScriptedJudge:
    """Answers from a table of (expected, predicted) -> True/False/None; records every call."""

    id = "scripted-judge"
    prompt_version = "test-v1"

    def __init__(self, table: dict[tuple[str, str], bool | None] | None = None, default: bool | None = False):
        self.table = table or {}
        self.default = default
        self.calls: list[tuple[str | None, str, str]] = []

    def paraphrase(self, question, expected, predicted):
        self.calls.append((question, expected, predicted))
        v = self.table.get((expected, predicted), self.default)
        return Verdict(equivalent=v, reason="scripted", raw=str(v))


class ForbiddenJudge:
    id = "forbidden-judge"
    prompt_version = "test-v1"

    def paraphrase(self, question, expected, predicted):
        pytest.fail(f"the judge was called: expected={expected!r} predicted={predicted!r}")


@pytest.fixture
def forbidden_judge() -> ForbiddenJudge:
    return ForbiddenJudge()


@pytest.fixture
def scripted_judge():
    """Factory: ``scripted_judge({(expected, predicted): verdict}, default=False)``."""
    return ScriptedJudge
