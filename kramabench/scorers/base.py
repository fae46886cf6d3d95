"""The scorer contract: ``score(expected, predicted, answer_type, judge=None) -> Score``.

:class:`Score` lives on the contracts floor (:mod:`kramabench.contracts.scoring`); it is named here too, where
scorers have always found it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kramabench.contracts.scoring import Judge, Score, Scorer


def scorer_variant(rule: Callable[..., Score], name: str, module: str, **fixed: Any) -> Scorer:
    """The :class:`~kramabench.contracts.scoring.Scorer` ``module.name``: ``rule`` called with the scorer's
    arguments and the keywords ``fixed`` (``approximate=True``...). Named as a ``def name`` in ``module``
    would be, so it pickles and reads the same in a traceback."""

    def scorer(
        expected: Any,
        predicted: Any,
        *,
        judge: Judge | None = None,
        question: str | None = None,
        diagnostics: bool = True,
    ) -> Score:
        return rule(expected, predicted, **fixed, judge=judge, question=question, diagnostics=diagnostics)

    scorer.__name__ = scorer.__qualname__ = name
    scorer.__module__ = module
    return scorer


__all__ = ["Score", "scorer_variant"]
