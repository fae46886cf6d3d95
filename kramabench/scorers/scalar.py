"""The scalar scorers: string_exact, string_approximate, numeric_exact, numeric_approximate.

Rules shared by all four (see also :mod:`kramabench.scorers.numeric` and :mod:`kramabench.scorers.parse`):

* ``None`` predicted scores 0 (reason ``none``). A gold of ``None`` makes the answer unscored
  (``no_gold``: a defect of the workload, not of the answer).
* A **list predicted for a scalar answer**: a one-element list is unwrapped and scored (note
  ``unwrapped_single``); an empty list scores 0 (``empty_list``); a longer list scores 0
  (``list_for_scalar``). A string holding a list literal (``"[12]"``) counts as that list.
* A **gold that is a list** (``string_exact`` with gold ``["a", "b"]`` — a defect of some official
  tasks) is compared as a list with the list metric of the same strictness; under a 0/1 metric of
  Table 3 (string_exact, string_approximate, numeric_exact) the score stays 0/1: 1 only when the lists
  match item for item (F1 = 1, order aside), else 0 (details ``all_or_nothing``, ``list_f1``);
  numeric_approximate keeps the F1. An erratum that changes the task's type to a list type gives F1.
  A gold **dict stored as a string** (``"{'CA': 12}"``) is read as that dict.
* **Prose that ends in a list** (``"Answer: [12]"``) is not a scalar answer: it is not unwrapped, so it
  is not a number (``not_a_number``) and it is compared as the whole string.
* A numeric gold that is not a number (``"N/A"``) is compared as a string (``gold_not_a_number``).

string_exact
    1 when the normalised strings are equal (NFKC, case-fold, surrounding whitespace and quotes
    stripped, inner whitespace collapsed), or when both sides are numbers that match by the
    numeric_exact rule (``"2007"`` vs ``2007``; strings with a leading zero such as ``"007"`` stay
    strings), or when both are yes/no/true/false answers with the same truth value (``True`` or
    ``"yes"`` vs ``"True"``).
string_approximate
    1 on a string_exact match without calling the judge; 0 for an empty answer or an abstention
    ("I don't know", "N/A", ...) without calling the judge; two different numbers or truth values
    score 0, also without the judge; otherwise the paraphrase judge decides (1 or 0). Without a judge, or with an unreadable verdict, the answer is unscored
    (``judge_required`` / ``judge_unparsable``) — never counted as 0.
Diagnostics for strings: BLEU, ROUGE-1 F and ROUGE-L F (:mod:`kramabench.scorers.diagnostics`), when the strings
differ.
"""

from __future__ import annotations

import math
from typing import Any

from kramabench.scorers.base import Score, ScoreCall, scorer_variant
from kramabench.scorers.context import JudgeContext
from kramabench.scorers.diagnostics import string_diagnostics
from kramabench.scorers.lists import score_list
from kramabench.scorers.numeric import compare_numbers
from kramabench.scorers.parse import (
    _LABELLED_LIST_RE,
    NumberError,
    ParsedNumber,
    bool_word,
    is_abstention,
    normalize_string,
    parse_list,
    parse_number,
)

_LISTLIKE = (list, tuple, set, frozenset)


def _is_listlike(value: Any) -> bool:
    if isinstance(value, _LISTLIKE):
        return True
    if isinstance(value, str):
        s = value.strip()
        if len(s) < 2 or s[-1] not in "])":
            return False
        return (
            (s[0] == "[" and s[-1] == "]")
            or (s[0] == "(" and "," in s)
            or _LABELLED_LIST_RE.match(s) is not None
        )
    if isinstance(value, str):
        return False
    return hasattr(value, "tolist") and hasattr(value, "__len__") and not isinstance(value, (bytes, dict))


def _gold_as_list(expected: Any) -> list[Any] | None:
    """The gold as a list when it is one (a list value or a string holding a list literal; an object — a
    mapping such as {"CA": 12, "NV": 3} — is the list of its [key, value] pairs, as for predictions)."""
    if isinstance(expected, dict):
        return parse_list(expected)[0]
    if isinstance(expected, str) and expected.strip()[:1] == "{":  # a dict stored as a string
        items, notes = parse_list(expected)
        if "dict_literal" in notes:
            return items
    if not _is_listlike(expected):
        return None
    items, notes = parse_list(expected)
    if items is None or notes == ["scalar_as_list"]:
        return None
    return items


def unwrap_prediction(predicted: Any, details: dict[str, Any]) -> tuple[bool, Any]:
    """Apply the list-for-scalar rule. Returns (ok, value); on failure ``details["reason"]`` says why."""
    if isinstance(predicted, dict):
        details["reason"] = "dict_for_scalar"
        return False, None
    if not _is_listlike(predicted):
        return True, predicted
    items, notes = parse_list(predicted)
    if items is None or notes == ["scalar_as_list"]:
        return True, predicted  # a string like "(a)" that is not a literal
    if notes == ["labelled_literal"]:
        return True, predicted  # prose ending in a list ("Answer: [12]") is not a scalar answer
    if len(items) == 1:
        details["notes"] = ["unwrapped_single"]
        inner = items[0]
        if isinstance(inner, dict):  # [{"x": 1}]: a record, not a scalar
            details["reason"] = "dict_for_scalar"
            return False, None
        if isinstance(inner, (list, tuple, set, frozenset)):  # [[5]]: unwrapped once only, still a list
            details["reason"] = "list_for_scalar"
            return False, None
        return True, inner
    details["reason"] = "empty_list" if not items else "list_for_scalar"
    details["n_predicted"] = len(items)
    return False, None


#: metrics that score 0/1 (Table 3): a list gold under them is all or nothing
ALL_OR_NOTHING = {"string_exact", "string_approximate", "numeric_exact"}


def _delegate_to_list(
    expected_list: list[Any],
    predicted: Any,
    answer_type: str,
    approximate: bool,
    call: ScoreCall,
) -> Score:
    """A list gold under a scalar answer type: compared as lists; a 0/1 metric (Table 3) stays 0/1 —
    1 only when every item matches (F1 = 1) — while numeric_approximate keeps the list's F1."""
    metric = "list_approximate" if approximate else "list_exact"
    s = score_list(
        expected_list,
        predicted,
        call,
        approximate=approximate,
        metric=metric,
        details={"answer_type": answer_type, "gold_is_list": True},
    )
    if answer_type not in ALL_OR_NOTHING or s.value is None:
        return s
    details = {**s.details, "list_f1": s.value, "all_or_nothing": True}
    return Score(
        value=1.0 if s.value == 1.0 else 0.0, metric=answer_type, unscored=s.unscored, details=details
    )


def _common_cases(
    expected: Any,
    predicted: Any,
    metric: str,
    approximate: bool,
    call: ScoreCall,
) -> Score | None:
    """What every scalar metric does first: no gold -> unscored; a list gold -> the list metric of the same
    strictness; no prediction -> 0. ``None`` when the metric has to compare the values itself."""
    if expected is None:
        return Score(value=None, metric=metric, unscored=True, details={"reason": "no_gold"})
    gold_list = _gold_as_list(expected)
    if gold_list is not None:
        return _delegate_to_list(gold_list, predicted, metric, approximate, call)
    if predicted is None:
        return Score(value=0.0, metric=metric, details={"reason": "none"})
    return None


# ---- strings --------------------------------------------------------------------------------------


def _string_compare(expected: Any, predicted: Any, details: dict[str, Any]) -> bool:
    g = parse_number(expected, leading_zeros=False)
    if isinstance(g, ParsedNumber) and not isinstance(expected, bool):
        p = parse_number(predicted, leading_zeros=False)
        if isinstance(p, ParsedNumber):
            details["compared_as_number"] = True
            return compare_numbers(g, p, approximate=False, details=details) == 1.0
    g_norm, p_norm = normalize_string(expected), normalize_string(predicted)
    if g_norm == p_norm:
        return True
    gb, pb = bool_word(g_norm), bool_word(p_norm)
    if gb is not None and pb is not None:
        details["compared_as_bool"] = True
        return gb == pb
    return False


def _score_string(expected: Any, predicted: Any, call: ScoreCall, *, approximate: bool) -> Score:
    metric = "string_approximate" if approximate else "string_exact"
    early = _common_cases(expected, predicted, metric, approximate, call)
    if early is not None:
        return early
    details: dict[str, Any] = {}
    ok, pred = unwrap_prediction(predicted, details)
    if not ok:
        return Score(value=0.0, metric=metric, details=details)
    if pred is None:
        details["reason"] = "none"
        return Score(value=0.0, metric=metric, details=details)
    if _string_compare(expected, pred, details):
        return Score(value=1.0, metric=metric, details=details)
    p_norm = normalize_string(pred)
    if call.diagnostics and not details.get("compared_as_number"):
        details.update(string_diagnostics(_text(expected), _text(pred)))
    if not p_norm:
        details["reason"] = "empty"
        return Score(value=0.0, metric=metric, details=details)
    if is_abstention(p_norm):
        details["reason"] = "abstention"
        return Score(value=0.0, metric=metric, details=details)
    if not approximate:
        return Score(value=0.0, metric=metric, details=details)
    if details.get("compared_as_number") or details.get("compared_as_bool"):
        return Score(value=0.0, metric=metric, details=details)  # two different numbers / truth values
    ctx = JudgeContext(call.judge, call.question)
    verdict = ctx.ask(expected, pred)
    ctx.record(details)
    if verdict is None:
        details["reason"] = ctx.unscored_reason()
        return Score(value=None, metric=metric, details=details, unscored=True)
    return Score(value=1.0 if verdict else 0.0, metric=metric, details=details)


def _text(v: Any) -> str:
    return v if isinstance(v, str) else normalize_string(v)


string_exact = scorer_variant(_score_string, "string_exact", __name__, approximate=False)


string_approximate = scorer_variant(_score_string, "string_approximate", __name__, approximate=True)


# ---- numbers --------------------------------------------------------------------------------------


def _score_number(expected: Any, predicted: Any, call: ScoreCall, *, approximate: bool) -> Score:
    metric = "numeric_approximate" if approximate else "numeric_exact"
    gold: ParsedNumber | None = None
    if expected is not None and _gold_as_list(expected) is None:
        parsed = parse_number(expected)
        if isinstance(parsed, NumberError):
            s = _score_string(expected, predicted, ScoreCall(diagnostics=call.diagnostics), approximate=False)
            return Score(
                value=s.value,
                metric=metric,
                unscored=s.unscored,
                details={**s.details, "gold_not_a_number": parsed.reason},
            )
        gold = parsed
    early = _common_cases(expected, predicted, metric, approximate, call)
    if early is not None:
        return early
    # no early case: the gold is neither None nor a list, so it was read as a number above
    assert gold is not None
    details: dict[str, Any] = {}
    ok, pred_value = unwrap_prediction(predicted, details)
    if not ok:
        return Score(value=0.0, metric=metric, details=details)
    pred = parse_number(pred_value)
    if isinstance(pred, NumberError):
        details["reason"] = pred.reason
        if (
            pred.reason == "not_a_number"
            and isinstance(pred_value, str)
            and is_abstention(normalize_string(pred_value))
        ):
            details["reason"] = "abstention"
        return Score(value=0.0, metric=metric, details=details)
    value = compare_numbers(gold, pred, approximate=approximate, details=details)
    if not call.diagnostics:
        details.pop("abs_error", None)
        details.pop("rel_error", None)
    if not math.isfinite(gold.value):
        details["gold_special"] = repr(gold.value)
    return Score(value=value, metric=metric, details=details)


numeric_exact = scorer_variant(_score_number, "numeric_exact", __name__, approximate=False)


numeric_approximate = scorer_variant(_score_number, "numeric_approximate", __name__, approximate=True)


__all__ = ["numeric_approximate", "numeric_exact", "string_approximate", "string_exact", "unwrap_prediction"]
