"""Scoring one outcome with the answer-type scorers; a scorer failure is an unscored item, never a crash."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kramabench import scorers
from kramabench.contracts.scoring import Judge

if TYPE_CHECKING:
    from kramabench.scorers.paths import LakePaths

log = logging.getLogger(__name__)


@dataclass
class Scored:
    value: float | None
    metric: str | None
    details: dict[str, Any] = field(default_factory=dict)
    unscored: bool = False


def score_answer(
    expected: Any,
    predicted: Any,
    answer_type: str | None,
    judge: Judge | None = None,
    *,
    where: str = "",
    question: str | None = None,
    lake_files: LakePaths | Sequence[str] | None = None,
    normalise_percent: bool = False,
) -> Scored:
    """Score ``predicted`` against ``expected``.

    * ``lake_files`` (the lake's files, or a :class:`kramabench.scorers.paths.LakePaths`): a lake file named in
      either answer counts as the same file whatever prefix names it (:mod:`kramabench.scorers.paths`);
    * no answer type (a workload defect the loader reported): unscored, reason in details;
    * the scorer raising: unscored with ``scorer_error`` (logged), so a bug never becomes a silent 0;
    * ``normalise_percent``: the named option of :mod:`kramabench.scorers.percent` (off: the paper's score).
    """
    if answer_type is None:
        return Scored(None, None, {"reason": "the task has no valid answer_type"}, unscored=True)
    n_paths = 0
    if lake_files is not None:
        from kramabench.scorers.paths import canonical_lake_paths

        expected, n_gold = canonical_lake_paths(expected, lake_files)
        predicted, n_pred = canonical_lake_paths(predicted, lake_files)
        n_paths = n_gold + n_pred
    try:
        s = scorers.score(expected, predicted, answer_type, judge=judge, question=question)
        if normalise_percent:
            from kramabench.scorers.percent import normalise_percent as rescale

            s = rescale(expected, predicted, answer_type, s, judge=judge, question=question)
    except Exception as e:  # noqa: BLE001 - any scorer failure becomes an explained unscored item
        log.warning("%s: scorer failed: %s: %s", where, type(e).__name__, e)
        return Scored(
            None, None, {"reason": "scorer_error", "error": f"{type(e).__name__}: {e}"}, unscored=True
        )
    details = dict(s.details)
    if n_paths:
        details["lake_paths_normalised"] = n_paths
    return Scored(s.value, s.metric, details, bool(s.unscored))


def no_answer(kind: str) -> Scored:
    """A failed task (no answer) scores 0: the paper's rule; the record's status and error say why."""
    return Scored(0.0, "no_answer", {"reason": f"no answer ({kind})"})


__all__ = ["Scored", "no_answer", "score_answer"]
