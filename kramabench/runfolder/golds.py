"""Which gold a run folder's records hold, as its manifest tells: the one reading of records written before
both golds were kept (they name no ``gold``; the manifest's ``workload`` says which gold the run loaded, and a
verified run's ``errata_applied`` the official values its corrections replaced). Scoring such a record again
against the official gold is :func:`kramabench.run.golds.records_under`'s (it needs the scorers)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kramabench.contracts.records import GoldName, Manifest

OFFICIAL: GoldName = "official"
VERIFIED: GoldName = "verified"
GOLDS: tuple[GoldName, GoldName] = (OFFICIAL, VERIFIED)
#: how reports, tables and the viewer name each gold
GOLD_TITLES: dict[str, str] = {
    OFFICIAL: "official gold (paper-comparable)",
    VERIFIED: "verified gold (official + errata)",
}


def other_gold(gold: str) -> GoldName:
    """The gold that is not ``gold``."""
    return OFFICIAL if gold == VERIFIED else VERIFIED


def workload_gold(workload: Any) -> GoldName:
    """The gold a run loaded, from its manifest's ``workload`` (any JSON value): its ``gold``; for runs recorded
    before it, verified unless the run was started with ``--no-errata``."""
    wl: Mapping[str, Any] = workload if isinstance(workload, Mapping) else {}
    g = wl.get("gold")
    if g == OFFICIAL:
        return OFFICIAL
    if g == VERIFIED:
        return VERIFIED
    return VERIFIED if wl.get("errata", True) is not False else OFFICIAL


def run_gold(manifest: Manifest | None) -> GoldName:
    """The gold a run loaded (:func:`workload_gold` of its manifest; verified without one)."""
    return workload_gold(manifest.workload if manifest is not None else None)


def old_official_values(errata_applied: Any) -> dict[tuple[str, str | None], dict[str, Any]]:
    """(task id, subtask id) -> {field: official value} of the answer/answer_type errata a verified run applied
    (its manifest's ``errata_applied``, any JSON value; the first erratum of a field holds the file's value):
    the items whose official score a record written before both golds were kept does not hold."""
    out: dict[tuple[str, str | None], dict[str, Any]] = {}
    entries: Iterable[Any] = errata_applied if isinstance(errata_applied, list) else []
    for e in entries:
        if not isinstance(e, Mapping):
            continue
        task, fld, sub = e.get("task_id"), e.get("field"), e.get("subtask_id")
        if fld in ("answer", "answer_type") and isinstance(task, str):
            out.setdefault((task, sub if isinstance(sub, str) else None), {}).setdefault(fld, e.get("old"))
    return out


__all__ = [
    "GOLDS", "GOLD_TITLES", "OFFICIAL", "VERIFIED", "old_official_values", "other_gold", "run_gold",
    "workload_gold",
]  # fmt: skip
