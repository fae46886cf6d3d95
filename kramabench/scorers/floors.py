"""Floors and the bounded numeric metric: what a score means next to what no work at all would get.

Floors
    The score a *constant* answer gets on the same gold: ``0``, the empty answer ``""`` and
    ``"I don't know"`` (:data:`CONSTANTS`), scored by the same scorers as a system's answer, without any
    model. Where only a paraphrase judge could decide (a ``string_approximate`` gold that is prose), the
    constant counts as wrong (0): it is not a paraphrase of anything. The paper's numeric-approximate score
    1/(1+RAE) gives 0.5 to the answer 0 for any non-zero gold, so a constant 0 gets half the points of every
    such task: this is why floors are shown beside every score.

Bounded numeric metric (:data:`BOUNDED_METRIC`, "within band")
    The paper scores a numeric-approximate answer 1/(1+RAE), which never falls below 0.5 for an answer
    between 0 and twice the gold. Beside it (never instead), a numeric-approximate answer scores 1 when
    it is within the band the paper uses to match approximate list items (1/(1+RAE) above 0.9, i.e.
    RAE < 1/9 = 11.1%) and 0 otherwise (:func:`bounded`); every other answer type keeps its score. The
    *bounded score* of a run is the mean task score under this rule.
"""

from __future__ import annotations

from typing import Any

from kramabench.scorers.numeric import APPROX_ITEM_THRESHOLD

#: the constant answers whose scores are the floors (name -> answer)
CONSTANTS: dict[str, Any] = {"zero": 0, "empty": "", "idk": "I don't know"}
#: how reports name them
FLOOR_TITLES: dict[str, str] = {"zero": "constant 0", "empty": 'empty answer ""', "idk": '"I don\'t know"'}
#: the name of the bounded numeric metric
BOUNDED_METRIC = "numeric_within_band"
#: a numeric-approximate answer is within the band when 1/(1+RAE) is above this (the paper's list threshold)
BAND_THRESHOLD = APPROX_ITEM_THRESHOLD
#: RAE bands shown beside it: the share of numeric-approximate answers with RAE at most 1%, 5%, 10%
RAE_BANDS: tuple[float, ...] = (0.01, 0.05, 0.10)


def bounded(value: float | None, metric: str | None) -> float | None:
    """A score under the bounded metric: a scalar numeric-approximate score becomes 1 when within the band
    (above :data:`BAND_THRESHOLD`), else 0; any other score (exact types, list F1s) is kept."""
    if value is None or metric != "numeric_approximate":
        return value
    return 1.0 if value > BAND_THRESHOLD else 0.0


def rae_of(value: float | None) -> float | None:
    """The relative absolute error behind a numeric-approximate score 1/(1+RAE) (None for no score,
    infinity for 0)."""
    if value is None:
        return None
    return float("inf") if value <= 0 else 1.0 / value - 1.0


def floor_scores(
    expected: Any, answer_type: str | None, *, question: str | None = None
) -> dict[str, tuple[float, float]]:
    """name -> (score, bounded score) of each constant answer against ``expected``, without a judge. What
    would be unscored (only a judge could decide) counts 0: a constant paraphrases nothing. (Items without
    a gold or an answer type are unscored for a system too; callers leave them out.)"""
    from kramabench.scorers.registry import score

    out: dict[str, tuple[float, float]] = {}
    for name, const in CONSTANTS.items():
        s = score(expected, const, answer_type, None, question=question, diagnostics=False)
        v = 0.0 if s.value is None else float(s.value)
        b = bounded(v, s.metric)
        out[name] = (v, 0.0 if b is None else b)
    return out


__all__ = [
    "BAND_THRESHOLD",
    "BOUNDED_METRIC",
    "CONSTANTS",
    "FLOOR_TITLES",
    "RAE_BANDS",
    "bounded",
    "floor_scores",
    "rae_of",
]
