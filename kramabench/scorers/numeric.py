"""numeric_exact and numeric_approximate, and the number-matching rules lists reuse.

numeric_exact (0/1)
    The prediction matches when it is within half a unit of the gold's last written decimal, i.e. it
    rounds to the gold: a gold written with ``k`` decimals (``0.4765``: k = 4) accepts ``0.47649``
    and rejects ``0.4766``. An integral gold (an ``int``, or ``"12"``) is compared without rounding:
    a count of 401 is not matched by 401.3, but ``401.0`` (and ``123.0`` vs ``123``) matches. A relative
    tolerance of 1e-9 absorbs floating-point noise (``0.30000000000000004`` vs ``0.3``).
    An *unrounded* gold — a float with 10 or more significant digits, like ``0.47368421052631576``
    (9/19) — also accepts a prediction that is the gold correctly rounded to the prediction's own
    precision, if that keeps at least 4 significant digits: ``0.4737`` and ``0.473684`` match,
    ``0.47`` and ``0.4736`` do not.

numeric_approximate
    RAE = |ŷ - y| / |y|, score 1/(1+RAE). For y = 0 the relative error is undefined: the absolute error
    is used instead, RAE = |ŷ| (score 1 for ŷ = 0, 0.5 for ŷ = ±1).

Both
    * a prediction with a percent sign is also read in percentage points: ``"15%"`` matches a gold of
      0.15 *and* a gold of 15 (details ``percent_as_points``);
    * a bare number off by a factor of 100 (15 vs 0.15, or 0.15 vs 15) scores as it is (wrong for
      numeric_exact) and the details record ``scale_mismatch`` (``"x100"`` or ``"/100"``);
    * NaN matches only a NaN gold; ±inf only the same infinity (reasons ``nan`` / ``infinite``);
    * ``True``/``False`` are not numbers (reason ``bool``); ``None`` is no answer (reason ``none``);
    * a list predicted for a number: a one-element list is unwrapped (note ``unwrapped_single``), a
      longer list scores 0 (reason ``list_for_scalar``), an empty list scores 0 (reason ``empty_list``).
    * details always hold ``abs_error`` and ``rel_error`` when both sides are finite numbers.
"""

from __future__ import annotations

import math
from typing import Any

from kramabench.scorers.parse import ParsedNumber

#: relative tolerance of numeric_exact for floating-point noise
REL_TOL = 1e-9
#: list_approximate: a numeric item matches when 1/(1+RAE) is above this
APPROX_ITEM_THRESHOLD = 0.9


#: a gold written with at least this many significant digits is an unrounded float (``9/19`` printed as
#: ``0.47368421052631576``)
UNROUNDED_DIGITS = 10
#: an answer to an unrounded gold must carry at least this many significant digits
MIN_PRED_DIGITS = 4


def significant_digits(x: float) -> int:
    """Significant digits of the shortest representation of ``x`` (``0.4765`` -> 4, ``1500.0`` -> 2)."""
    if not math.isfinite(x) or x == 0:
        return 0
    mant = repr(abs(x)).split("e")[0].replace(".", "").strip("0")
    return len(mant)


def exact_tolerance(gold: ParsedNumber) -> float:
    """Largest |ŷ - y| accepted by numeric_exact for this gold (whatever the prediction's precision); 0 for an
    infinite or NaN gold, which only the same value matches (a relative tolerance of infinity accepted every
    number in the list scorers)."""
    y = abs(gold.value)
    if not math.isfinite(y):
        return 0.0
    decimals = gold.decimals  # None: an integral gold
    rel = REL_TOL * max(1.0, y) if decimals is None else REL_TOL * y
    if decimals is None:
        return rel
    return max(0.5 * 10.0 ** (-decimals) * (1 + 1e-9), rel)


def is_unrounded(gold: ParsedNumber) -> bool:
    return not gold.integral and significant_digits(gold.value) >= UNROUNDED_DIGITS


def prediction_tolerance(value: float, decimals: int | None) -> float:
    """Half a unit of the prediction's last decimal, for an unrounded gold; 0 when the prediction is integral
    or carries fewer than MIN_PRED_DIGITS significant digits."""
    if decimals is None or significant_digits(value) < MIN_PRED_DIGITS:
        return 0.0
    return 0.5 * 10.0 ** (-decimals) * (1 + 1e-9)


def exact_match(gold: ParsedNumber, pred: float, pred_decimals: int | None = None) -> bool:
    """numeric_exact for one pair. ``pred_decimals``: how many decimals the prediction is written with."""
    g = gold.value
    if math.isnan(g) or math.isnan(pred):
        return math.isnan(g) and math.isnan(pred)
    if math.isinf(g) or math.isinf(pred):
        return g == pred
    diff = abs(pred - g)
    if diff <= exact_tolerance(gold):
        return True
    return is_unrounded(gold) and diff <= prediction_tolerance(pred, pred_decimals)


def rae(gold: float, pred: float) -> float:
    """Relative absolute error; for a gold of 0 the absolute error |ŷ| (see the module docstring)."""
    if math.isnan(gold) or math.isnan(pred):
        return 0.0 if (math.isnan(gold) and math.isnan(pred)) else math.inf
    if math.isinf(gold) or math.isinf(pred):
        return 0.0 if gold == pred else math.inf
    if gold == 0:
        return abs(pred)
    return abs(pred - gold) / abs(gold)


def rae_score(gold: float, pred: float) -> float:
    r = rae(gold, pred)
    return 0.0 if math.isinf(r) else 1.0 / (1.0 + r)


def candidates(pred: ParsedNumber) -> list[tuple[float, int | None, str | None]]:
    """The values a prediction may stand for, with their decimals: its value, and its percentage points
    if it had ``%``."""
    out: list[tuple[float, int | None, str | None]] = [(pred.value, pred.decimals, None)]
    if pred.points is not None:
        d = pred.decimals
        out.append((pred.points, None if d is None else max(d - 2, 0), "percent_as_points"))
    return out


def _errors(details: dict[str, Any], gold: float, pred: float) -> None:
    if math.isfinite(gold) and math.isfinite(pred):
        details["abs_error"] = abs(pred - gold)
        details["rel_error"] = abs(pred - gold) / abs(gold) if gold != 0 else None


def _special_reason(pred: float) -> str | None:
    if math.isnan(pred):
        return "nan"
    if math.isinf(pred):
        return "infinite"
    return None


def compare_numbers(
    gold: ParsedNumber, pred: ParsedNumber, *, approximate: bool, details: dict[str, Any]
) -> float:
    """Score one parsed prediction against one parsed gold, filling ``details``."""
    best, best_note, best_value = 0.0, None, pred.value
    for value, decimals, note in candidates(pred):
        s = rae_score(gold.value, value) if approximate else float(exact_match(gold, value, decimals))
        if s > best:
            best, best_note, best_value = s, note, value
    _errors(details, gold.value, best_value)
    if best_note:
        details["percent_as_points"] = True
    reason = _special_reason(pred.value)
    if reason and best < 1.0:
        details["reason"] = reason
    if (
        best < (APPROX_ITEM_THRESHOLD if approximate else 1.0)
        and math.isfinite(pred.value)
        and gold.value != 0
    ):
        for factor, label in ((0.01, "x100"), (100.0, "/100")):
            v = pred.value * factor
            ok = (
                rae_score(gold.value, v) > APPROX_ITEM_THRESHOLD
                if approximate
                else exact_match(gold, v, None)
            )
            if ok:
                details["scale_mismatch"] = label
                break
    return best


__all__ = [
    "APPROX_ITEM_THRESHOLD",
    "REL_TOL",
    "candidates",
    "compare_numbers",
    "exact_match",
    "exact_tolerance",
    "is_unrounded",
    "prediction_tolerance",
    "significant_digits",
    "rae",
    "rae_score",
]
