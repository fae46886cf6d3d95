"""Static gold checks (kramabench.audit.static) on answer types a plug-in registers."""

from __future__ import annotations

from kramabench.audit.static import format_problems
from kramabench.workload.models import AnswerType, Task


def test_a_plugin_answer_type_is_checked_without_a_kind() -> None:
    # a plug-in's answer type arrives as its name (a plain string, like a built-in's); the checks that need a
    # kind (list or scalar) do not apply to it (they raised AttributeError: 'str' object has no attribute 'kind')
    assert format_problems("How many rows?", [1, 2], "table_match", set()) == []
    assert format_problems("Which file?", "a.csv", "table_match", {"a.csv"}) == []
    # a built-in type keeps them
    found = format_problems("How many rows?", [1, 2], AnswerType.NUMERIC_EXACT, set())
    assert [code for code, _ in found] == ["gold_list_for_scalar"]
    assert "numeric_exact" in found[0][1]


def test_the_name_of_an_answer_type() -> None:
    # a task holds its answer type as the plain name: a built-in member given becomes its name
    for given in (AnswerType.LIST_EXACT, "list_exact"):
        at = Task(id="t", answer_type=given).answer_type
        assert at == "list_exact" and type(at) is str and f"{at}" == "list_exact"
    assert Task(id="t", answer_type="table_match").answer_type == "table_match"
    assert Task(id="t").answer_type is None
