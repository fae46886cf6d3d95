"""The two golds of a workload: *official* (the answers as the workload files hold them, what the paper
scored against) and *verified* (official + the reviewed errata, :mod:`kramabench.workload.errata`).

A run loads one of them (verified by default, official with ``--no-errata``) and scores every answer
against both: :func:`gold_changes` lists the items whose gold differs in the other one, so only those are
scored twice. An item is a task's main answer (``(task_id, None)``) or a subtask's (``(task_id, subtask_id)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kramabench.contracts.records import GoldName
from kramabench.workload.errata import ErrataFile, same_json
from kramabench.workload.models import Task, Workload

#: the gold the paper scored against: the workload files as they are
OFFICIAL: GoldName = "official"
#: official + errata
VERIFIED: GoldName = "verified"

#: (task id, subtask id or None)
ItemKey = tuple[str, "str | None"]


@dataclass(frozen=True)
class Gold:
    """One item's gold in one view of the workload; ``present`` False: the item is not in that view (an
    erratum excluded it, or renamed it)."""

    answer: Any = None
    answer_type: str | None = None  # a built-in or plug-in answer type's name, or None
    query: str = ""
    present: bool = True


def other_gold(name: GoldName) -> GoldName:
    return OFFICIAL if name == VERIFIED else VERIFIED


def gold_of_run(errata: bool | Path | str | ErrataFile | None) -> GoldName:
    """The gold a workload loaded with ``errata`` (as :func:`~kramabench.workload.load_workload` takes it)
    holds: official when loaded raw, else verified."""
    return OFFICIAL if errata is False or errata is None else VERIFIED


def _items(wl: Workload) -> dict[ItemKey, Gold]:
    out: dict[ItemKey, Gold] = {}
    for t in wl.tasks:
        out[(t.id, None)] = Gold(t.answer, t.answer_type, t.query)
        for s in t.subtasks:
            out[(t.id, s.id)] = Gold(s.answer, s.answer_type, s.query)
    return out


def same_gold(a: Gold, b: Gold) -> bool:
    """The same answer (type-aware JSON equality) and answer type; the question does not count."""
    return a.present == b.present and a.answer_type == b.answer_type and same_json(a.answer, b.answer)


def gold_changes(primary: Workload, other: Workload | None) -> dict[ItemKey, Gold]:
    """Items of ``primary`` whose gold in ``other`` (the same domain loaded with the other gold) differs:
    their gold there. Empty when ``other`` is None (no errata: both golds are the same)."""
    if other is None:
        return {}
    theirs = _items(other)
    out: dict[ItemKey, Gold] = {}
    for key, mine in _items(primary).items():
        g = theirs.get(key, Gold(present=False))
        if not same_gold(mine, g):
            out[key] = g
    return out


#: fields of a task or subtask whose errata change its gold
_GOLD_FIELDS = ("answer", "answer_type")


def _answer_type(value: Any) -> str | None:
    """A raw ``answer_type`` value as the loader keeps it: a built-in's name, a plug-in's name, or None."""
    from kramabench import plugins
    from kramabench.contracts.answers import builtin_answer_type

    if not isinstance(value, str):
        return None
    if builtin_answer_type(value) is not None:
        return value
    norm = value.strip().lower().replace("-", "_").replace(" ", "_")
    if builtin_answer_type(norm) is not None:
        return norm
    return value if value in plugins.names("scorers") else None


def official_from_applied(verified: Workload) -> dict[ItemKey, Gold] | None:
    """:func:`gold_changes` of a verified workload against its official view, read from the errata the loader
    applied (their ``old`` values) instead of loading the raw file again (a second load doubled the time of
    ``kramabench score`` on large workloads). Subtask renames are followed; None when an erratum renamed a
    task (then only a second load pairs the items)."""
    first: dict[ItemKey, dict[str, Any]] = {}
    #: renames applied after the erratum being read: an erratum names an item by its id at that time
    forward: dict[ItemKey, ItemKey] = {}
    for e in reversed(verified.errata):  # the earliest erratum of a field holds the file's value: it wins
        if e.field == "id":
            if e.subtask_id is None or not isinstance(e.new, str) or not isinstance(e.old, str):
                return None  # a task renamed: its subtasks' keys change too; pair by loading again
            new_key = (e.task_id, e.new)
            forward[(e.task_id, e.old)] = forward.get(new_key, new_key)
        elif e.field in _GOLD_FIELDS:
            key = (e.task_id, e.subtask_id)
            first.setdefault(forward.get(key, key), {})[e.field] = e.old
    if not first:
        return {}
    mine = {k: g for k, g in _items(verified).items() if k in first}
    out: dict[ItemKey, Gold] = {}
    for key, g in mine.items():
        old = first[key]
        official = Gold(
            answer=old["answer"] if "answer" in old else g.answer,
            answer_type=_answer_type(old["answer_type"]) if "answer_type" in old else g.answer_type,
            query=g.query,
        )
        if not same_gold(g, official):
            out[key] = official
    return out


def changes_for(
    primary: Workload, errata: bool | Path | str | ErrataFile | None = True
) -> dict[ItemKey, Gold]:
    """The items of ``primary`` (loaded with ``errata``, as :func:`~kramabench.workload.load_workload` takes
    it) whose gold differs in the other view of the same domain, with their gold there: the raw files when
    ``primary`` has errata, the default errata when it is raw. Empty when no errata file applies."""
    from kramabench.workload.families import load_workload
    from kramabench.workload.loader import default_errata

    if gold_of_run(errata) == VERIFIED:
        if errata is True and default_errata(primary.root) is None:
            return {}
        fast = official_from_applied(primary)
        if fast is not None:
            return fast
        other = load_workload(primary.root, primary.domain, errata=False, validate=False)
    else:
        if default_errata(primary.root) is None:
            return {}
        other = load_workload(primary.root, primary.domain, errata=True, validate=False)
    return gold_changes(primary, other)


def task_classes(primary: Workload, errata: bool | Path | str | ErrataFile | None = True) -> dict[str, str]:
    """task id -> the reviewed class of the task (errata ``[[review]]``: reproduces, gold-defect, ...) for a
    workload loaded with ``errata``; a raw load (``--no-errata``) takes them from the default errata."""
    if primary.reviews:
        return {r.task: r.klass for r in primary.reviews}
    if gold_of_run(errata) == VERIFIED:
        return {}
    from kramabench.workload.errata import load_errata
    from kramabench.workload.loader import default_errata

    path = default_errata(primary.root)
    if path is None:
        return {}
    return dict(load_errata(path).classes(primary.domain))


def with_gold(task: Task, changes: dict[ItemKey, Gold]) -> Task:
    """A copy of ``task`` whose main answer and subtask answers are those of ``changes`` (items of this task
    not in ``changes`` keep their gold). An item absent from the other view keeps its gold here; the caller
    checks ``present``."""
    upd: dict[str, Any] = {}
    main = changes.get((task.id, None))
    if main is not None and main.present:
        upd.update(answer=main.answer, answer_type=main.answer_type)
    subs = []
    touched = False
    for s in task.subtasks:
        g = changes.get((task.id, s.id))
        if g is not None and g.present:
            subs.append(s.model_copy(update={"answer": g.answer, "answer_type": g.answer_type}))
            touched = True
        else:
            subs.append(s)
    if touched:
        upd["subtasks"] = subs
    return task.model_copy(update=upd) if upd else task


__all__ = [
    "OFFICIAL",
    "VERIFIED",
    "Gold",
    "GoldName",
    "ItemKey",
    "changes_for",
    "gold_changes",
    "gold_of_run",
    "official_from_applied",
    "other_gold",
    "same_gold",
    "task_classes",
    "with_gold",
]
