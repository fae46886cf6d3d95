"""The scorer registry: built-ins, user metrics, and bad input that never raises."""

from __future__ import annotations

import pytest

from kramabench.scorers import (
    Score,
    get_scorer,
    register_scorer,
    registered_answer_types,
    score,
    unregister_scorer,
)
from kramabench.workload.models import AnswerType


def test_every_answer_type_has_a_scorer():
    for at in AnswerType:
        assert callable(get_scorer(at))
        assert score(1, 1, at).value == 1.0
    assert set(registered_answer_types()) >= {a.value for a in AnswerType}


def test_answer_type_as_enum_or_string():
    assert score("Marine", "marine", AnswerType.STRING_EXACT).value == 1.0
    assert score("Marine", "marine", "string_exact").value == 1.0


def test_register_a_new_metric_and_replace_a_builtin():
    def within_one(expected, predicted, *, judge=None, question=None, diagnostics=True):
        ok = abs(float(expected) - float(predicted)) <= 1
        return Score(value=float(ok), metric="within_one")

    register_scorer("numeric_within_one", within_one)
    try:
        assert score(10, 10.8, "numeric_within_one").value == 1.0
        assert score(10, 11.5, "numeric_within_one").value == 0.0
        with pytest.raises(ValueError, match="already registered"):
            register_scorer("numeric_exact", within_one)
        register_scorer("numeric_exact", within_one, replace=True)
        assert score(10, 10.8, "numeric_exact").metric == "within_one"
    finally:
        unregister_scorer("numeric_within_one")
        unregister_scorer("numeric_exact")
    assert score(10, 10.8, "numeric_exact").value == 0.0
    assert "numeric_within_one" not in registered_answer_types()


def test_not_callable_is_rejected():
    with pytest.raises(TypeError):
        register_scorer("x", 42)  # type: ignore[arg-type]


def test_unknown_answer_type_is_unscored_with_reason():
    s = score(1, 1, None)
    assert s.unscored and s.details["reason"] == "unknown_answer_type"
    s = score(1, 1, "numeric_fuzzy")
    assert s.unscored and s.details["answer_type"] == "numeric_fuzzy"


def test_a_failing_or_misbehaving_scorer_is_recorded_not_raised():
    def broken(expected, predicted, **kw):
        raise RuntimeError("boom")

    def out_of_range(expected, predicted, **kw):
        return Score(value=2.0, metric="bad")

    register_scorer("broken", broken)
    register_scorer("out_of_range", out_of_range)
    try:
        s = score(1, 1, "broken")
        assert s.unscored and s.details["reason"] == "scorer_error" and "boom" in s.details["error"]
        s = score(1, 1, "out_of_range")
        assert s.unscored and "outside" in s.details["error"]
    finally:
        unregister_scorer("broken")
        unregister_scorer("out_of_range")


def test_no_gold_is_unscored_for_every_type():
    for at in AnswerType:
        s = score(None, "x", at)
        assert s.unscored and s.details["reason"] == "no_gold", at


def test_score_details_are_json_serialisable():
    cases = [
        (0.15, 15, "numeric_exact"),
        ([1, 2], "[2, 3]", "list_exact"),
        ("Marine", "Fresh", "string_exact"),
        ([["a", 1.5]], {"a": 1.5}, "list_approximate"),
        (10, float("nan"), "numeric_approximate"),
    ]
    for gold, pred, at in cases:
        s = score(gold, pred, at)
        assert Score.model_validate_json(s.model_dump_json()) == s
