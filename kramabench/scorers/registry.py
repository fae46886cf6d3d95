"""The scorer registry and the entry point :func:`score`.

The scorers are entry points of the group ``kramabench.scorers`` (name = answer type), the built-ins
included (this project's ``pyproject.toml``). A scorer is any callable ``(expected, predicted, *, judge=None, question=None, diagnostics=True) ->
Score`` (:class:`~kramabench.contracts.scoring.Scorer`). Each :class:`~kramabench.contracts.AnswerType` has one; a user replaces or adds
a metric with :func:`register_scorer`::

    from kramabench.scorers import register_scorer, score

    def my_numeric(expected, predicted, *, judge=None, question=None, diagnostics=True):
        ...
    register_scorer("numeric_approximate", my_numeric, replace=True)
"""

from __future__ import annotations

import logging
from typing import Any

from kramabench import plugins
from kramabench.contracts.answers import AnswerType
from kramabench.contracts.scoring import Judge, Score, Scorer

logger = logging.getLogger(__name__)


GROUP = plugins.GROUPS["scorers"]


def _key(answer_type: str) -> str:
    """The registry's key: the plain name (a caller may pass an :class:`AnswerType` member)."""
    return answer_type.value if isinstance(answer_type, AnswerType) else answer_type


def register_scorer(answer_type: str, scorer: Scorer, *, replace: bool = False) -> None:
    """Register ``scorer`` for ``answer_type`` in this process (an installed package registers its scorer
    under the entry-point group ``kramabench.scorers`` instead, for every process and the CLI)."""
    key = _key(answer_type)
    if not callable(scorer):
        raise TypeError(f"scorer for {key!r} is not callable: {scorer!r}")
    if key in plugins.names("scorers") and not replace and get_scorer(key) is not scorer:
        raise ValueError(f"a scorer for {key!r} is already registered; pass replace=True to replace it")
    plugins.register("scorers", key, scorer)


def unregister_scorer(answer_type: str) -> None:
    """Remove a scorer registered in this process; an installed one (entry point) is used again."""
    plugins.unregister("scorers", _key(answer_type))


def get_scorer(answer_type: str) -> Scorer:
    key = _key(answer_type)
    try:
        scorer: Scorer = plugins.load("scorers", key)
    except plugins.PluginNotFound:
        raise KeyError(f"no scorer for answer type {key!r}; known: {registered_answer_types()}") from None
    return scorer


def registered_answer_types() -> list[str]:
    return plugins.names("scorers")


def gold_of_wrong_type(expected: Any, answer_type: str) -> str | None:
    """Why a gold is of a JSON type its built-in ``answer_type`` cannot hold, or None: a boolean under a
    numeric or list type (``kramabench workloads validate`` reports it as ``answer_type_mismatch``). Such a
    gold still matches itself, but a mismatch says nothing about the answer: it is unscored
    (``gold_wrong_type``), never a 0. (An object gold is read as its key-value pairs under every type, a
    string or a list under a numeric type as text or a list: those are compared, see :mod:`kramabench.scorers.scalar`.)
    Plug-in answer types decide for themselves."""
    if answer_type not in _BUILTIN or not isinstance(expected, bool) or answer_type.startswith("string"):
        return None
    return f"the gold is a boolean ({str(expected).lower()}), which no {answer_type} answer is"


_BUILTIN = frozenset(a.value for a in AnswerType)


def score(
    expected: Any,
    predicted: Any,
    answer_type: str | None,
    judge: Judge | None = None,
    *,
    question: str | None = None,
    diagnostics: bool = True,
) -> Score:
    """Score one answer. Never raises for bad data: an unknown answer type, a gold of the wrong JSON type
    (:func:`gold_of_wrong_type`: ``gold_wrong_type``) or a failing scorer gives an unscored :class:`Score`
    with the reason in ``details``."""
    if answer_type is None:
        return Score(value=None, metric="unknown", unscored=True, details={"reason": "unknown_answer_type"})
    key = _key(answer_type)
    try:
        scorer = plugins.load("scorers", key)
    except plugins.PluginNotFound:
        return Score(
            value=None,
            metric=key,
            unscored=True,
            details={"reason": "unknown_answer_type", "answer_type": key},
        )
    try:
        result = scorer(expected, predicted, judge=judge, question=question, diagnostics=diagnostics)
    except Exception as e:  # noqa: BLE001 - a scorer bug must not end a run; it is recorded
        logger.warning("scorer for %s failed: %s", key, e, exc_info=True)
        return Score(
            value=None,
            metric=key,
            unscored=True,
            details={"reason": "scorer_error", "error": f"{type(e).__name__}: {e}"[:500]},
        )
    if not isinstance(result, Score):
        return Score(
            value=None,
            metric=key,
            unscored=True,
            details={"reason": "scorer_error", "error": f"scorer returned {type(result).__name__}"},
        )
    if result.value is not None and not (0.0 <= result.value <= 1.0):
        return Score(
            value=None,
            metric=result.metric,
            unscored=True,
            details={
                **result.details,
                "reason": "scorer_error",
                "error": f"value {result.value} outside [0, 1]",
            },
        )
    if result.value is not None and result.value < 1.0:
        wrong = gold_of_wrong_type(expected, key)
        if wrong is not None:  # the task is defective, not the answer
            return Score(
                value=None,
                metric=result.metric,
                unscored=True,
                details={**result.details, "reason": "gold_wrong_type", "gold_problem": wrong},
            )
    return result


__all__ = [
    "Scorer", "get_scorer", "gold_of_wrong_type", "register_scorer", "registered_answer_types", "score",
    "unregister_scorer",
]  # fmt: skip
