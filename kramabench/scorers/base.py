"""The scorer contract: ``score(expected, predicted, answer_type, judge=None) -> Score``.

:class:`Score` lives on the contracts floor (:mod:`kramabench.contracts.scoring`); it is named here too, where
scorers have always found it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kramabench.contracts.scoring import Judge, Score, Scorer


@dataclass(frozen=True)
class ScoreCall:
    """The keywords a :class:`~kramabench.contracts.scoring.Scorer` is called with besides the two values,
    handed on as one to the rules behind the built-in scorers."""

    judge: Judge | None = None
    question: str | None = None
    diagnostics: bool = True


def scorer_variant(rule: Callable[..., Score], name: str, module: str, **fixed: Any) -> Scorer:
    """The :class:`~kramabench.contracts.scoring.Scorer` ``module.name``: ``rule(expected, predicted, call,
    **fixed)`` with the scorer's keywords as a :class:`ScoreCall` and the keywords ``fixed``
    (``approximate=True``...). Named as a ``def name`` in ``module`` would be, so it pickles and reads the same
    in a traceback."""

    def scorer(
        expected: Any,
        predicted: Any,
        *,
        judge: Judge | None = None,
        question: str | None = None,
        diagnostics: bool = True,
    ) -> Score:
        return rule(expected, predicted, ScoreCall(judge, question, diagnostics), **fixed)

    scorer.__name__ = scorer.__qualname__ = name
    scorer.__module__ = module
    return scorer


__all__ = ["Score", "ScoreCall", "scorer_variant"]
