"""The golden table: (gold, prediction, answer type) -> score, with the reason where it matters."""

from __future__ import annotations

import math

import pytest

from kramabench.scorers import score

NE, NA, SE, SA, LE, LA = (
    "numeric_exact",
    "numeric_approximate",
    "string_exact",
    "string_approximate",
    "list_exact",
    "list_approximate",
)

# (case id, gold, prediction, answer type, expected value, {detail key: expected value} or None)
GOLDEN = [
    # --- numeric_exact: formats
    ("int-vs-float", 123, 123.0, NE, 1.0, None),
    ("float-vs-int", 123.0, 123, NE, 1.0, None),
    ("int-vs-float-string", 123, "123.0", NE, 1.0, None),
    ("thousands-comma", 1234, "1,234", NE, 1.0, None),
    ("thousands-space", 1234567, "1 234 567", NE, 1.0, None),
    ("thousands-bad-group", 1234, "1,23,4", NE, 0.0, {"reason": "not_a_number"}),
    ("currency-dollar", 1234.5, "$1,234.50", NE, 1.0, None),
    ("currency-euro-after", 12, "12 €", NE, 1.0, None),
    ("currency-code", 12, "12 USD", NE, 1.0, None),
    ("negative", -42.5, -42.5, NE, 1.0, None),
    ("negative-sign-dropped", -42.5, 42.5, NE, 0.0, None),
    ("negative-string", -42.5, "-42.5", NE, 1.0, None),
    ("negative-currency", -5, "-$5", NE, 1.0, None),
    ("unicode-minus", -3, "\u22123", NE, 1.0, None),
    ("plus-sign", 3, "+3", NE, 1.0, None),
    ("scientific", 0.0015, "1.5e-3", NE, 1.0, None),
    ("scientific-upper", 1500, "1.5E3", NE, 1.0, None),
    ("fullwidth-digits", 42, "４２", NE, 1.0, None),
    ("quoted-number", 7, '"7"', NE, 1.0, None),
    ("percent-string", 0.15, "15%", NE, 1.0, None),
    ("percent-word", 0.15, "15 percent", NE, 1.0, None),
    ("bare-15-vs-fraction", 0.15, 15, NE, 0.0, {"scale_mismatch": "x100"}),
    ("fraction-vs-15", 15, 0.15, NE, 0.0, {"scale_mismatch": "/100"}),
    ("percent-vs-points-gold", 15, "15%", NE, 1.0, {"percent_as_points": True}),
    ("gold-percent-string", "15%", 0.15, NE, 1.0, None),
    # --- numeric_exact: decimals of the gold
    ("k-decimals-round-down", 0.4765, 0.47649, NE, 1.0, None),
    ("k-decimals-next", 0.4765, 0.4766, NE, 0.0, None),
    ("k-decimals-less-precise", 0.4765, 0.48, NE, 0.0, None),
    ("integral-gold-not-rounded", 401, 401.3, NE, 0.0, None),
    ("float-noise", 0.3, 0.1 + 0.2, NE, 1.0, None),
    ("gold-as-string", "12", 12, NE, 1.0, None),
    ("gold-float-as-string", "10.87", "10.8700", NE, 1.0, None),
    ("big-int", 19975689, "19,975,689", NE, 1.0, None),
    ("unrounded-gold-rounded-pred", 9 / 19, 0.4737, NE, 1.0, None),
    ("unrounded-gold-more-digits", 9 / 19, "0.473684", NE, 1.0, None),
    ("unrounded-gold-too-coarse", 9 / 19, 0.47, NE, 0.0, None),
    ("unrounded-gold-misrounded", 9 / 19, 0.4736, NE, 0.0, None),
    ("unrounded-gold-list", [9 / 19, 1 / 3], [0.3333, 0.4737], LE, 1.0, None),
    # --- numeric: bad predictions
    ("none", 10, None, NE, 0.0, {"reason": "none"}),
    ("nan", 10, math.nan, NE, 0.0, {"reason": "nan"}),
    ("nan-string", 10, "NaN", NE, 0.0, {"reason": "nan"}),
    ("inf", 10, math.inf, NE, 0.0, {"reason": "infinite"}),
    ("bool", 1, True, NE, 0.0, {"reason": "bool"}),
    ("text", 10, "about ten", NE, 0.0, {"reason": "not_a_number"}),
    ("number-in-sentence", 10, "The answer is 10", NE, 0.0, {"reason": "not_a_number"}),
    ("idk-number", 10, "I don't know", NE, 0.0, {"reason": "abstention"}),
    ("tab-number", 10, "\t", NE, 0.0, {"reason": "empty"}),
    ("one-element-list", 10, [10], NE, 1.0, None),
    ("one-element-list-string", 10, "[10]", NE, 1.0, None),
    ("long-list-for-scalar", 10, [10, 11], NE, 0.0, {"reason": "list_for_scalar"}),
    ("empty-list-for-scalar", 10, [], NE, 0.0, {"reason": "empty_list"}),
    ("dict-for-scalar", 10, {"a": 10}, NE, 0.0, {"reason": "dict_for_scalar"}),
    # --- numeric_approximate
    ("rae-exact", 100, 100, NA, 1.0, None),
    ("rae-10pct", 100, 110, NA, 1 / 1.1, None),
    ("rae-negative", -100, -90, NA, 1 / 1.1, None),
    ("rae-wrong-sign", -100, 100, NA, 1 / 3, None),
    ("rae-zero-gold-zero", 0, 0.0, NA, 1.0, None),
    ("rae-zero-gold-half", 0, 0.5, NA, 1 / 1.5, None),
    ("rae-percent", 0.25, "25%", NA, 1.0, None),
    ("rae-unparsable", 100, "lots", NA, 0.0, {"reason": "not_a_number"}),
    ("rae-scale", 0.25, 25, NA, 1 / (1 + 99), {"scale_mismatch": "x100"}),
    # --- string_exact
    ("case-and-space", "Marine", "  marine ", SE, 1.0, None),
    ("quotes", "Marine", "'Marine'", SE, 1.0, None),
    ("inner-whitespace", "Bank Account", "Bank   Account", SE, 1.0, None),
    ("gold-surrounding-space", " # of Reports ", "# of Reports", SE, 1.0, None),
    ("unicode-accent", "São Paulo", "SÃO PAULO", SE, 1.0, None),
    ("unicode-accent-dropped", "São Paulo", "Sao Paulo", SE, 0.0, None),
    ("unicode-nfkc", "ﬁle", "file", SE, 1.0, None),
    ("tab-as-answer", "Marine", "\t", SE, 0.0, {"reason": "empty"}),
    ("different-string", "Marine", "Fresh", SE, 0.0, None),
    ("bool-as-string", "True", True, SE, 1.0, None),
    ("bool-yes-no", "No", False, SE, 1.0, {"compared_as_bool": True}),
    ("bool-yes-no-wrong", "Yes", "false", SE, 0.0, {"compared_as_bool": True}),
    ("string-number", "2007", 2007, SE, 1.0, {"compared_as_number": True}),
    ("leading-zero-code", "007", 7, SE, 0.0, None),
    ("string-idk", "Marine", "I don't know", SE, 0.0, {"reason": "abstention"}),
    ("string-one-element-list", "Marine", ["Marine"], SE, 1.0, None),
    ("string-list-for-scalar", "Marine", ["Marine", "Fresh"], SE, 0.0, {"reason": "list_for_scalar"}),
    ("string-gold-is-list", ["a.csv", "b.csv"], ["b.csv", "a.csv"], SE, 1.0, {"gold_is_list": True}),
    ("string-none", "Marine", None, SE, 0.0, {"reason": "none"}),
    ("at-sign", "@", "@", SE, 1.0, None),
    # --- string_approximate without judge calls
    ("approx-normalised", "Wollaston Beach", "wollaston beach", SA, 1.0, None),
    ("approx-idk", "Wollaston Beach", "I don't know", SA, 0.0, {"reason": "abstention"}),
    ("approx-empty", "Wollaston Beach", "", SA, 0.0, {"reason": "empty"}),
    ("approx-bool-words", "True", "yes", SA, 1.0, {"compared_as_bool": True}),
    ("approx-bool-words-differ", "True", False, SA, 0.0, {"compared_as_bool": True}),
    ("approx-numbers-differ", "12", "13", SA, 0.0, {"compared_as_number": True}),
    ("approx-numbers-same", "12", "12.0", SA, 1.0, None),
    # --- list_exact
    ("list-permuted", [1, 2, 3], [3, 1, 2], LE, 1.0, None),
    ("list-duplicates-missing", [1, 1, 2], [1, 2], LE, 0.8, {"matched": 2}),
    ("list-duplicates-extra", [1, 2], [1, 1, 2], LE, 0.8, {"precision": 2 / 3, "recall": 1.0}),
    ("list-duplicates-right", ["a", "a", "b"], ["a", "b", "a"], LE, 1.0, None),
    ("list-half", [1, 2, 3, 4], [1, 2], LE, 2 * 2 / 6, None),
    ("list-empty-empty", [], [], LE, 1.0, None),
    ("list-empty-gold", [], [1], LE, 0.0, None),
    ("list-empty-pred", [1], [], LE, 0.0, {"reason": "empty_list"}),
    ("list-none", [1], None, LE, 0.0, {"reason": "none"}),
    ("list-json-string", [1, 2], "[1, 2]", LE, 1.0, None),
    ("list-python-string", ["a", "b"], "['a', 'b']", LE, 1.0, None),
    ("list-tuple-string", ["a", "b"], "('a', 'b')", LE, 1.0, None),
    ("list-scalar-pred", [5], 5, LE, 1.0, None),
    ("list-scalar-pred-of-two", [5, 6], 5, LE, 2 / 3, None),
    ("list-idk", [1, 2], "I don't know", LE, 0.0, {"reason": "abstention"}),
    ("list-number-formats", [1234, 0.15], ["1,234", "15%"], LE, 1.0, None),
    ("list-negative", [-1, 2], [1, 2], LE, 0.5, None),
    ("list-decimals", [0.4765, 1.5], [0.47649, 1.5], LE, 1.0, None),
    ("list-strings-normalised", ["Boston", "Chatham"], ["chatham ", "BOSTON"], LE, 1.0, None),
    ("list-unicode", ["São Paulo"], ["são paulo"], LE, 1.0, None),
    (
        "list-nested",
        [["Boston", 9.29], ["Chatham", 8.71]],
        [["Chatham", 8.71], ["Boston", 9.29]],
        LE,
        1.0,
        None,
    ),
    ("list-nested-order-inside", [["Boston", 9.29]], [[9.29, "Boston"]], LE, 0.0, None),
    (
        "list-nested-wrong-value",
        [["Boston", 9.29], ["Chatham", 8.71]],
        [["Boston", 9.29], ["Chatham", 8.8]],
        LE,
        0.5,
        None,
    ),
    (
        "list-nested-dict",
        [["Boston", 9.29], ["Chatham", 8.71]],
        {"Boston": 9.29, "Chatham": 8.71},
        LE,
        1.0,
        None,
    ),
    (
        "list-nested-string-items",
        ['["Austria", 1105]', '["France", 1214]'],
        [["France", 1214], ["Austria", 1105]],
        LE,
        1.0,
        None,
    ),
    ("list-gold-string", "[9269.8635, 9266.908]", [9266.908, 9269.8635], LE, 1.0, None),
    ("list-labelled-gold", "Expected answer: ['lng', 'lat']", ["lat", "lng"], LE, 1.0, None),
    ("list-with-nan", [1.0, math.nan], [math.nan, 1.0], LE, 1.0, None),
    ("list-bool-items", [True, False], ["true", "false"], LE, 1.0, None),
    ("list-number-vs-string", ["5"], [5], LE, 1.0, None),
    ("list-tab", ["a"], "\t", LE, 0.0, {"reason": "empty"}),
    ("approx-list-tab", [1.5], "\t", LA, 0.0, {"reason": "empty"}),
    # --- list_approximate
    ("approx-list-close", [100, 200], [105, 190], LA, 1.0, None),
    ("approx-list-far", [100, 200], [150, 200], LA, 0.5, None),
    ("approx-list-optimal", [100, 109], [100, 90.5], LA, 1.0, None),
    ("approx-list-zero", [0.0, 1.0], [0.05, 1.0], LA, 1.0, None),
    ("approx-list-strings-equal", ["a.csv", "b.csv"], ["B.csv", "a.csv"], LA, 1.0, None),
    (
        "approx-list-scale",
        [0.1, 0.2],
        [10, 20],
        LA,
        0.0,
        {"scale_mismatch": {"factor": "x100", "matches_if_rescaled": 2}},
    ),
]


def test_table_is_large_enough():
    assert len(GOLDEN) >= 60
    assert len({c[0] for c in GOLDEN}) == len(GOLDEN), "case ids must be unique"


@pytest.mark.parametrize(
    ("gold", "pred", "answer_type", "value", "details"), [c[1:] for c in GOLDEN], ids=[c[0] for c in GOLDEN]
)
def test_golden(gold, pred, answer_type, value, details, forbidden_judge):
    s = score(gold, pred, answer_type, forbidden_judge)
    assert not s.unscored, s
    assert s.value == pytest.approx(value), s
    for k, v in (details or {}).items():
        assert s.details.get(k) == (pytest.approx(v) if isinstance(v, float) else v), (k, s.details)
    assert 0.0 <= s.value <= 1.0


def test_record_items_are_rows():
    assert score([["Boston", 9.29]], [{"city": "Boston", "rain": 9.29}], LE).value == 1.0


def test_too_many_string_pairs_is_unscored_not_zero():
    s = score([f"a{i}" for i in range(600)], [f"b{i}" for i in range(600)], LA)
    assert s.unscored and s.details["reason"] == "judge_budget_exceeded"
    assert s.details["value_lower_bound"] == 0.0 and s.details["value_upper_bound"] == 1.0
    # exact lists never need a judge: a plain 0
    assert score([f"a{i}" for i in range(600)], [f"b{i}" for i in range(600)], LE).value == 0.0


@pytest.mark.parametrize(
    ("expected", "predicted", "answer_type", "reason"),
    [
        (2, [[2]], "numeric_exact", "list_for_scalar"),
        (2, "[[2]]", "numeric_approximate", "list_for_scalar"),
        ("a", [["a"]], "string_exact", "list_for_scalar"),
        ("a", [{"x": "a"}], "string_approximate", "dict_for_scalar"),
        (2, [{"x": 2}], "numeric_exact", "dict_for_scalar"),
    ],
)
def test_nested_single_for_a_scalar_is_zero_with_a_documented_reason(
    expected, predicted, answer_type, reason
):
    s = score(expected, predicted, answer_type)
    assert (s.value, s.unscored, s.details["reason"]) == (0.0, False, reason)
