"""An infinite gold number inside a list accepts only the same infinity, as numeric_exact and
numeric_approximate do for a scalar: its relative tolerance was infinity, so ``list_exact([inf], [5.0])``
scored 1.0 (and ``[-inf]`` matched ``[inf]``), on the small-list matrix and on the long-list paths alike."""

from __future__ import annotations

import math

import pytest

from kramabench.scorers import score

INF = math.inf


@pytest.mark.parametrize("answer_type", ["list_exact", "list_approximate"])
@pytest.mark.parametrize("n", [0, 3000])  # a few items (matrix) and thousands (interval matching on arrays)
def test_an_infinite_gold_accepts_only_the_same_infinity(answer_type: str, n: int) -> None:
    common = [float(k) + 0.5 for k in range(n)]
    assert score([INF, *common], [INF, *common], answer_type).value == 1.0
    for wrong in (5.0, -INF, 1e308):
        got = score([INF, *common], [wrong, *common], answer_type).value
        assert got is not None and got < 1.0, (wrong, got)
    assert score([-INF, *common], [INF, *common], answer_type).value < 1.0


@pytest.mark.parametrize(
    "answer_type, scalar", [("list_exact", "numeric_exact"), ("list_approximate", "numeric_approximate")]
)
def test_one_element_lists_agree_with_the_scalar_scorer(answer_type: str, scalar: str) -> None:
    for g in (INF, -INF, 7.0):
        for p in (INF, -INF, 5.0, 7.0, 1e308):
            one = score(g, p, scalar).value
            assert score([g], [p], answer_type).value == (1.0 if one == 1.0 else 0.0), (g, p)
