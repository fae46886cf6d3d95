"""A run folder's JSON objects read into their types where they can be, never an exception: the manifest
and the fields of a record that scoring against a gold needs (a record with fields this version does not
know, or of another shape, still gives those it can)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from kramabench.contracts.records import Manifest, Record

#: the fields of a record that scoring against a gold and the floors need (the rest stays on disk)
SCORING_FIELDS = (
    "run_id", "setting", "domain", "task_id", "subtask_id", "attempt", "status", "system", "model", "answer_type",
    "expected", "answer", "score", "unscored", "metric", "score_details", "subtask_answers", "subtask_scores",
    "subtask_details", "error", "gold", "other_gold", "gold_class",
)  # fmt: skip


def json_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a field of another shape is read as absent)."""
    return value if isinstance(value, dict) else {}


def manifest_of(doc: dict[str, Any] | None) -> Manifest | None:
    """The manifest object as a :class:`Manifest` (None when there is none or it does not validate)."""
    if not doc:
        return None
    try:
        return Manifest.model_validate(doc)
    except (ValidationError, ValueError, TypeError):
        return None


def scoring_record(doc: dict[str, Any]) -> Record | None:
    """The scoring fields (:data:`SCORING_FIELDS`) of a record object as a :class:`Record` (None when they do
    not validate)."""
    try:
        return Record.model_validate({k: doc[k] for k in SCORING_FIELDS if k in doc})
    except (ValidationError, ValueError, TypeError, RecursionError):
        return None


__all__ = ["SCORING_FIELDS", "json_object", "manifest_of", "scoring_record"]
