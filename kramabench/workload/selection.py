"""Choosing tasks by id: ``--task`` and ``--exclude-task`` patterns (shell globs such as ``legal-hard-*``).

A pattern matches a task id (``legal-hard-3``) or a ``<domain>/<task id>`` path (``legal/legal-hard-3``),
case-sensitively. A pattern that matches no task is an error that names it (a typo must not silently run
nothing or everything).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from kramabench.workload.errors import WorkloadError

if TYPE_CHECKING:
    from kramabench.workload.models import Workload


def _matches(pattern: str, domain: str, task_id: str) -> bool:
    return fnmatchcase(task_id, pattern) or fnmatchcase(f"{domain}/{task_id}", pattern)


def _unmatched(patterns: Sequence[str], ids: list[tuple[str, str]]) -> list[str]:
    return [p for p in patterns if not any(_matches(p, d, t) for d, t in ids)]


def _hint(pattern: str, ids: list[tuple[str, str]]) -> str:
    names = sorted({t for _, t in ids})
    glob = any(c in pattern for c in "*?[")
    close = [] if glob else difflib.get_close_matches(pattern, names, n=3, cutoff=0.6)
    if close:
        return f"did you mean {', '.join(close)}?"
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    return f"task ids look like {shown}" if names else "there is no task"


def select_task_ids(
    workloads: Iterable[Workload], include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> dict[str, list[str]]:
    """The ids of the tasks chosen by ``include`` (none: every task) less those of ``exclude``, per domain in
    workload order. Raises :class:`WorkloadError` naming each pattern that matches no task, or when the
    choice leaves no task."""
    wls = list(workloads)
    ids = [(w.domain, t.id) for w in wls for t in w.tasks]
    where = ", ".join(w.domain for w in wls) or "no domain"
    problems = [
        f"{flag} {p!r} matches no task of {where} ({_hint(p, ids)})"
        for flag, patterns in (("--task", include), ("--exclude-task", exclude))
        for p in _unmatched(patterns, ids)
    ]
    if problems:
        raise WorkloadError("; ".join(problems))
    out: dict[str, list[str]] = {}
    for w in wls:
        out[w.domain] = [
            t.id
            for t in w.tasks
            if (not include or any(_matches(p, w.domain, t.id) for p in include))
            and not any(_matches(p, w.domain, t.id) for p in exclude)
        ]
    if include or exclude:
        if not any(out.values()):
            given = " ".join([*(f"--task {p}" for p in include), *(f"--exclude-task {p}" for p in exclude)])
            raise WorkloadError(f"{given}: no task of {where} is left to run")
    return out


def keep_tasks(workloads: Iterable[Workload], chosen: Mapping[str, Iterable[str]]) -> list[Workload]:
    """Copies of ``workloads`` holding only the tasks whose ids ``chosen`` lists for their domain."""
    out = []
    for w in workloads:
        keep = set(chosen.get(w.domain, ()))
        out.append(w.model_copy(update={"tasks": [t for t in w.tasks if t.id in keep]}))
    return out


__all__ = ["keep_tasks", "select_task_ids"]
