"""The scorer contract: ``score(expected, predicted, answer_type, judge=None) -> Score``.

:class:`Score` lives on the contracts floor (:mod:`kramabench.contracts.scoring`); it is named here too, where
scorers have always found it.
"""

from __future__ import annotations

from kramabench.contracts.scoring import Score

__all__ = ["Score"]
