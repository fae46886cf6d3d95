"""Static gold checks (kramabench.audit.static) on answer types a plug-in registers."""

from __future__ import annotations

from kramabench.audit.static import format_problems
from kramabench.workload.models import AnswerType, answer_type_name


def test_a_plugin_answer_type_is_checked_without_a_kind() -> None:
    # a plug-in's answer type arrives as its name (AnswerTypeName: AnswerType | str); the checks that need a
    # kind (list or scalar) do not apply to it (they raised AttributeError: 'str' object has no attribute 'kind')
    assert format_problems("How many rows?", [1, 2], "table_match", set()) == []
    assert format_problems("Which file?", "a.csv", "table_match", {"a.csv"}) == []
    # a built-in type keeps them
    found = format_problems("How many rows?", [1, 2], AnswerType.NUMERIC_EXACT, set())
    assert [code for code, _ in found] == ["gold_list_for_scalar"]
    assert "numeric_exact" in found[0][1]


def test_the_name_of_an_answer_type() -> None:
    assert answer_type_name(AnswerType.LIST_EXACT) == "list_exact"
    assert answer_type_name("table_match") == "table_match"
    assert answer_type_name(None) is None
