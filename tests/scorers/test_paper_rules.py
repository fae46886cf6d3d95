"""Scoring rules that keep right answers from scoring 0: lake file names whatever their prefix, gold dicts
stored as strings, prose ending in a list, and Table 3's 0/1 for a string_exact task with a list gold."""

from __future__ import annotations

import pytest

from kramabench.run.scoring import score_answer
from kramabench.scorers import score
from kramabench.scorers.paths import LakePaths, canonical_lake_paths

LAKE = ["a/b.csv", "a/c.csv", "top.csv", "x/y/deep.txt", "one/dup.csv", "two/dup.csv", "frame_2019.xlsx"]


@pytest.mark.parametrize(
    "named",
    [
        "a/b.csv",
        "./a/b.csv",
        "/lake/a/b.csv",
        "lake/a/b.csv",
        "/tmp/kb-lake-12/data/legal/input/a/b.csv",
        "a\\b.csv",
        " 'a/b.csv' ",
        "//a//b.csv",
        "b.csv",
    ],
)
def test_a_lake_file_is_the_same_whatever_the_prefix(named):
    assert LakePaths(LAKE).resolve(named) == "a/b.csv"
    s = score_answer("a/b.csv", named, "string_exact", lake_files=LAKE)
    assert s.value == 1.0, (named, s)


def test_bare_names_and_unknown_names():
    p = LakePaths(LAKE)
    assert p.resolve("deep.txt") == "x/y/deep.txt"  # unique in the lake
    assert p.resolve("dup.csv") is None  # two files have that name: not guessed
    assert p.resolve("missing.csv") is None and p.resolve("/lake/zz/b2.csv") is None
    assert p.resolve("top.csv") == "top.csv" and p.resolve("/lake/top.csv") == "top.csv"
    # a bare name does not match a file it is not
    assert score_answer("one/dup.csv", "dup.csv", "string_exact", lake_files=LAKE).value == 0.0
    assert score_answer("one/dup.csv", "/lake/one/dup.csv", "string_exact", lake_files=LAKE).value == 1.0


def test_lists_of_lake_files_and_golds_with_prefixes():
    gold = ["a/b.csv", "x/y/deep.txt"]
    pred = ["/lake/x/y/deep.txt", "./a/b.csv"]
    assert score_answer(gold, pred, "list_exact", lake_files=LAKE).value == 1.0
    # the gold itself may carry a prefix, the answer a bare name
    assert score_answer("./data/a/c.csv", "c.csv", "string_exact", lake_files=LAKE).value == 1.0
    s = score_answer(gold, ["/lake/a/b.csv", "/lake/a/c.csv"], "list_exact", lake_files=LAKE)
    assert s.value == pytest.approx(0.5) and s.details["lake_paths_normalised"] >= 2
    # without the lake's file list nothing is rewritten
    assert score_answer("a/b.csv", "/lake/a/b.csv", "string_exact").value == 0.0
    v, n = canonical_lake_paths({"file": "/lake/top.csv", "n": 3}, LAKE)
    assert v == {"file": "top.csv", "n": 3} and n == 1


@pytest.mark.parametrize("answer_type", ["list_exact", "string_exact", "list_approximate"])
@pytest.mark.parametrize(
    "gold",
    ["{'CA': 12, 'NV': 3}", '{"CA": 12, "NV": 3}', " {'NV': 3, 'CA': 12} "],
)
def test_a_gold_dict_stored_as_a_string_is_a_dict(gold, answer_type):
    assert score(gold, {"CA": 12, "NV": 3}, answer_type).value == 1.0
    assert score(gold, {"CA": 12, "NV": 4}, answer_type).value < 1.0
    assert score(gold, "{'NV': 3, 'CA': 12}", answer_type).value == 1.0  # the answer as a string too


def test_a_string_that_only_looks_like_a_dict_stays_a_string():
    assert score("{not a dict}", "{not a dict}", "string_exact").value == 1.0
    assert score("{not a dict}", "{other}", "string_exact").value == 0.0


@pytest.mark.parametrize("answer_type", ["numeric_exact", "numeric_approximate"])
@pytest.mark.parametrize("prose", ["Answer: [12]", "The answer is: [12]", "Result: [12.0]."])
def test_prose_ending_in_a_list_is_not_a_numeric_answer(prose, answer_type):
    s = score(12, prose, answer_type)
    assert s.value == 0.0 and s.details["reason"] == "not_a_number", s
    # a bare list literal of one number is still that number, and a real list answer is still a list
    assert score(12, "[12]", answer_type).value == 1.0
    assert score([12, 13], "Answer: [12, 13]", "list_exact").value == 1.0


@pytest.mark.parametrize(
    ("pred", "expected"),
    [
        (["a.csv", "b.csv"], 1.0),
        (["b.csv", "a.csv"], 1.0),  # order aside
        (["a.csv"], 0.0),  # F1 2/3 under list_exact: 0 under string_exact
        (["a.csv", "b.csv", "c.csv"], 0.0),
        ("['a.csv', 'b.csv']", 1.0),
        ("a.csv", 0.0),
    ],
)
def test_string_exact_with_a_list_gold_is_zero_or_one(pred, expected):
    s = score(["a.csv", "b.csv"], pred, "string_exact")
    assert s.value == expected, s
    assert s.metric == "string_exact" and s.details["gold_is_list"] is True and s.details["all_or_nothing"]
    # an erratum that changes the type to a list type gives the F1
    assert score(["a.csv", "b.csv"], ["a.csv"], "list_exact").value == pytest.approx(2 / 3)
