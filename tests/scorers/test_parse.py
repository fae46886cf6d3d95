"""Typed parsing: numbers, lists, strings, list items — and safety of literal parsing."""

from __future__ import annotations

import ast
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kramabench.scorers import parse
from kramabench.scorers.parse import (
    LST,
    NUM,
    STR,
    NumberError,
    ParsedNumber,
    is_abstention,
    normalize_string,
    parse_list,
    parse_number,
    to_item,
)


@pytest.mark.parametrize(
    ("text", "value", "decimals"),
    [
        ("42", 42.0, None),
        ("-42", -42.0, None),
        ("+42", 42.0, None),
        ("\u221242", -42.0, None),
        ("1,234,567", 1234567.0, None),
        ("1 234 567", 1234567.0, None),
        ("1\u00a0234", 1234.0, None),
        ("1'234", 1234.0, None),
        ("1_234", 1234.0, None),
        ("1,234.5678", 1234.5678, 4),
        ("$1,234.50", 1234.5, 2),
        ("-$5", -5.0, None),
        ("$-5", -5.0, None),
        ("€12", 12.0, None),
        ("12 €", 12.0, None),
        ("£3.5", 3.5, 1),
        ("USD 7", 7.0, None),
        ("1.5e-3", 0.0015, 4),
        ("2E+2", 200.0, None),
        ("1.5×10^3", 1500.0, 0),
        ("15%", 0.15, 2),
        ("15.25 %", 0.1525, 4),
        ("-0.5%", -0.005, 3),
        ("12 percent", 0.12, 2),
        (".5", 0.5, 1),
        ("'0.4765'", 0.4765, 4),
        ("  7  ", 7.0, None),
        ("４２", 42.0, None),
    ],
)
def test_numbers_from_strings(text, value, decimals):
    n = parse_number(text)
    assert isinstance(n, ParsedNumber), n
    assert n.value == pytest.approx(value, rel=1e-12)
    assert n.decimals == decimals


def test_percent_keeps_points():
    n = parse_number("15%")
    assert n.points == 15.0 and n.percent
    assert parse_number("15").points is None


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, "none"),
        (True, "bool"),
        (False, "bool"),
        ("", "empty"),
        ("\t", "empty"),
        ("abc", "not_a_number"),
        ("12 kg", "not_a_number"),
        ("about 12", "not_a_number"),
        ("1,23", "not_a_number"),
        ("1,5", "not_a_number"),
        ("1.2.3", "not_a_number"),
        ("5K", "not_a_number"),
        ("+-5", "not_a_number"),
        ("1e999999", "not_a_number"),
        pytest.param("x" * 500, "not_a_number", id="500-x"),
        ([1], "list"),
        ({"a": 1}, "list"),
    ],
)
def test_not_numbers(value, reason):
    n = parse_number(value)
    assert isinstance(n, NumberError) and n.reason == reason


def test_special_floats():
    assert math.isnan(parse_number("NaN").value)
    assert parse_number("-inf").value == -math.inf
    assert parse_number("Infinity").value == math.inf
    assert parse_number(math.inf).value == math.inf


def test_decimals_of_values():
    assert parse_number(0.4765).decimals == 4
    assert parse_number(13.0).decimals == 1
    assert parse_number(1e-05).decimals == 5
    assert parse_number(7).decimals is None and parse_number(7).integral
    assert parse_number("12").integral and not parse_number("12.0").integral


def test_numpy_scalars():
    np = pytest.importorskip("numpy")
    assert parse_number(np.int64(5)).value == 5.0
    assert parse_number(np.float32(0.5)).value == 0.5
    assert parse_number(np.bool_(True)).reason == "bool"


def test_leading_zero_codes_stay_strings_in_lists():
    assert isinstance(parse_number("007", leading_zeros=False), NumberError)
    assert parse_number("007").value == 7.0
    assert parse_number("0.5", leading_zeros=False).value == 0.5
    assert to_item("007").kind == STR


@pytest.mark.parametrize(
    ("value", "items", "notes"),
    [
        ([1, 2], [1, 2], []),
        ((1, 2), [1, 2], []),
        ("[1, 2]", [1, 2], ["parsed_literal"]),
        ('["a", "b"]', ["a", "b"], ["parsed_literal"]),
        ("['a', 'b']", ["a", "b"], ["parsed_literal"]),
        ("('a', 'b')", ["a", "b"], ["parsed_literal"]),
        ("[[1, 'x'], [2, 'y']]", [[1, "x"], [2, "y"]], ["parsed_literal"]),
        ("[NaN, 1]", None, ["parsed_literal"]),
        ("Answer: [1, 2]", [1, 2], ["labelled_literal"]),
        ("a, b", ["a, b"], ["scalar_as_list"]),
        (5, [5], ["scalar_as_list"]),
        ({"a": 1}, [["a", 1]], ["dict_as_pairs"]),
        ("[1, 2", ["[1, 2"], ["scalar_as_list"]),
        ("[]", [], ["parsed_literal"]),
    ],
)
def test_parse_list(value, items, notes):
    got, got_notes = parse_list(value)
    if items is not None:
        assert got == items
    assert got_notes == notes


def test_parse_list_never_evaluates_code(tmp_path):
    marker = tmp_path / "pwned"
    payloads = [
        f"[__import__('os').system('touch {marker}')]",
        f"(open('{marker}', 'w'),)",
        "[(lambda: 1)()]",
        "[1 for _ in range(10)]",
        "[().__class__.__bases__[0].__subclasses__()]",
    ]
    for p in payloads:
        items, notes = parse_list(p)
        assert notes == ["scalar_as_list"] and items == [p]
    assert not marker.exists()


def test_parse_list_survives_hostile_sizes():
    deep = "[" * 100_000 + "]" * 100_000
    items, notes = parse_list(deep)
    assert isinstance(items, list)
    huge = "[" + "1," * 1_500_000 + "1]"
    items, notes = parse_list(huge)
    assert notes == ["scalar_as_list"]  # beyond MAX_LITERAL_CHARS: not parsed, not a crash


def test_lenient_gold_extraction():
    assert parse_list("Expected answer: ['a', 'b'] (see notes)", lenient=True) == (
        ["a", "b"],
        ["literal_extracted"],
    )
    assert parse_list("Expected answer: ['a', 'b'] (see notes)")[1] == ["scalar_as_list"]


@pytest.mark.parametrize(
    ("value", "norm"),
    [
        ("  Hello   World ", "hello world"),
        ('"Quoted"', "quoted"),
        ("“curly”", "curly"),
        ("'a'", "a"),
        ("\"'nested'\"", "nested"),
        ("Straße", "strasse"),
        ("ＡＢＣ", "abc"),
        ("\t", ""),
        ("line\nbreak", "line break"),
        (True, "true"),
        (None, "none"),
        (12, "12"),
        ('"unbalanced', '"unbalanced'),
    ],
)
def test_normalize_string(value, norm):
    assert normalize_string(value) == norm


def test_items():
    assert to_item(3).kind == NUM
    assert to_item("3.5").kind == NUM and to_item("3.5").num.value == 3.5
    assert to_item("hello").kind == STR
    it = to_item('["Austria", 1105]')
    assert it.kind == LST and [c.kind for c in it.children] == [STR, NUM]
    assert to_item(["a", [1, 2]]).children[1].kind == LST
    assert to_item(-0.0).key == to_item(0).key
    assert to_item(True).key == "true"


def test_abstentions():
    for s in ["I don't know", "i do not know.", "N/A", "unknown", "", "none"]:
        assert is_abstention(normalize_string(s)), s
    for s in ["Marine", "0", "no", "yes"]:
        assert not is_abstention(normalize_string(s)), s


# the fast float path of list items builds the same item as the general constructor


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_float_item_fast_path_equals_general_item(v):
    from kramabench.scorers.parse import NUM, Item, ParsedNumber, _float_item, _num_key

    a = _float_item(v)
    b = Item(NUM, _num_key(v), num=ParsedNumber.of_float(v), raw=v)
    assert a.kind == b.kind and repr(a.key) == repr(b.key) and a.text is b.text and a.children == b.children
    assert (
        repr(a.num.value) == repr(b.num.value)
        and a.num.decimals == b.num.decimals
        and a.num.points == b.num.points
    )


# ---- Python literals read through JSON: exactly what ast.literal_eval reads --------------------------

_PY_VALUES = st.recursive(
    st.one_of(
        st.integers(-(10**20), 10**20),
        st.floats(allow_nan=False),
        st.text(alphabet=st.sampled_from(list("ab é'\"\\\t\n-0.5e,[]{}:#") + ["\ud800", "\x00"]), max_size=6),
        st.sampled_from([True, False, None, -0.0, 1e300 * 10]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.text(alphabet="ab'\" ", max_size=3), inner, max_size=3),
        st.tuples(inner, inner),
    ),
    max_leaves=12,
)


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


def _literal_eval(s: str) -> tuple[bool, object]:
    try:
        return True, ast.literal_eval(s)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


@settings(max_examples=600, deadline=None)
@given(
    value=_PY_VALUES,
    cut=st.integers(0, 400),
    junk=st.sampled_from(["", "'", '"', "\\", "x", " ", "#", "e", "1"]),
)
def test_python_literals_read_through_json_are_what_literal_eval_reads(value, cut, junk):
    for text in (repr(value), repr(value)[:cut] + junk + repr(value)[cut:]):
        ok, got = parse._python_literal_as_json(text)
        if ok:
            ok_ref, ref = _literal_eval(text)
            assert ok_ref and _same(got, ref), (text, got, ref)
        ok_all, got_all = parse._literal(text)
        ok_json = True
        try:
            json.loads(text)
        except (ValueError, RecursionError):
            ok_json = False
        if not ok_json:  # what _literal reads when the text is not JSON: exactly literal_eval's reading
            ok_ref, ref = _literal_eval(text)
            assert ok_all == ok_ref and (not ok_ref or _same(got_all, ref)), (text, got_all, ref)


def test_python_list_repr_takes_the_json_reading():
    text = str(["São Paulo", "Cox's Bazar", 'say "hi"', 1, -2.5e-3, [3, {"k": 4}]])
    assert parse._python_literal_as_json(text) == (True, ast.literal_eval(text))
    for other in ("[True]", "[nan]", "[1, 'a\\'b']", "(1, 2)", "['a' 'b']", "[1_000]", "[r'x']", "[.5]"):
        ok, got = parse._python_literal_as_json(other)
        assert not ok or got == ast.literal_eval(other), other
