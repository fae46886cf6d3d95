"""The ``table`` answer-type scorer: every accepted form of a table, both comparators in the details, the
primary one deciding the score, dropped columns, answers that are not tables."""

from __future__ import annotations

import pytest

from kramabench import scorers
from kramabench.elt.compare.scorer import TableExpectation, as_table
from kramabench.elt.compare.values import Table

GT = {"columns": ["id", "share_pct", "active"], "rows": [[1, 25.0, True], [2, 50.0, False], [3, 25.0, True]]}


def test_registered_and_reached_through_the_scorer_registry() -> None:
    assert "table" in scorers.registered_answer_types()
    s = scorers.score(GT, GT, "table")
    assert s.value == 1.0 and s.metric == "table:verified"
    assert set(s.details["results"]) == {"elt-bench", "verified"} and s.details["correct"] == {
        "elt-bench": True,
        "verified": True,
    }


def test_every_form_of_a_table_is_read_alike() -> None:
    forms = [
        GT,
        [
            {"id": 1, "share_pct": 25.0, "active": True},
            {"id": 2, "share_pct": 50.0, "active": False},
            {"id": 3, "share_pct": 25.0, "active": True},
        ],
        "id,share_pct,active\n1,25.0,true\n2,50.0,false\n3,25.0,true\n",
        Table.from_records(GT["columns"], GT["rows"]),
    ]
    rows = {tuple(as_table(f).rows) for f in forms}
    assert len(rows) == 1
    for f in forms:
        assert scorers.score(GT, f, "table").value == 1.0


def test_the_primary_comparator_decides_and_both_are_reported() -> None:
    # Verified rescales a column on at least 3 aligned non-zero pairs
    reordered_fractions = {
        "columns": ["id", "share_pct", "active"],
        "rows": [[2, 0.5, False], [1, 0.25, True], [3, 0.25, True]],
    }
    s = scorers.score(GT, reordered_fractions, "table")
    assert s.value == 1.0 and s.details["correct"] == {"elt-bench": False, "verified": True}
    s2 = scorers.score({**GT, "comparator": "elt-bench"}, reordered_fractions, "table")
    assert s2.value == 0.0 and s2.metric == "table:elt-bench"
    cols = {c["name"]: c for c in s2.details["results"]["elt-bench"]["columns"]}
    assert cols["share_pct"]["status"] == "mismatched" and cols["share_pct"]["samples"]


def test_dropped_columns_and_a_missing_row() -> None:
    wrong_share = {
        "columns": ["id", "share_pct", "active"],
        "rows": [[1, 99.0, True], [2, 1.0, False], [3, 0.0, True]],
    }
    exp = TableExpectation(table=as_table(GT), dropped={"verified": {"share_pct": "not derivable"}})
    s = scorers.score(exp, wrong_share, "table")
    assert s.value == 1.0 and s.details["correct"]["elt-bench"] is False
    one_row = {"columns": ["id", "share_pct", "active"], "rows": [[1, 25.0, True], [3, 25.0, True]]}
    s = scorers.score(GT, one_row, "table")
    assert s.value == 0.0 and s.details["results"]["verified"]["missing_rows"] == 1


def test_an_answer_that_is_not_a_table_scores_zero_with_the_reason() -> None:
    for bad in (42, {"columns": ["a"]}, [1, 2], {"columns": ["a", "b"], "rows": [[1]]}):
        s = scorers.score(GT, bad, "table")
        assert s.value == 0.0 and not s.unscored and "not a table" in s.details["reason"]


def test_a_gold_that_is_not_a_table_leaves_the_answer_unscored_with_the_reason_and_logs_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pipeline_summary = {"tables": {"orders": 4}, "models": ["totals"]}  # what an elt record holds as its gold
    with caplog.at_level("WARNING"):
        for gold in (pipeline_summary, 42, "", [1, 2]):
            s = scorers.score(gold, GT, "table")
            assert s.value is None and s.unscored and s.details["reason"] == "gold_not_a_table", gold
            assert "the gold is not a table" in s.details["gold_problem"]
    assert not caplog.records
