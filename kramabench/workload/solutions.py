"""Reference solutions of a workload: where a task's solution is, kept inside the workload root, and read
with a bound.

A task names its solution in ``solution`` (relative to the workload root); without it the loader looks
for ``solutions/<task-id>.py`` (bundled suites) or ``solutions/<domain>/<task-id>.py`` (the official
layout). Either way the path must stay inside the root (:func:`kramabench.files.inside`): a ``solution``
of ``/etc/passwd`` or ``../../etc/shadow``, or a link that leads out, is never read.
"""

from __future__ import annotations

import logging
from pathlib import Path

from kramabench.contracts.setting import TaskSpec
from kramabench.files import SOLUTION_BYTES, OutsideRoot, inside, read_text
from kramabench.workload.models import Workload

log = logging.getLogger(__name__)


def solution_path(root: Path, rel: str) -> Path:
    """``root/rel`` for a solution path a workload names; :class:`~kramabench.files.OutsideRoot` when it leads
    outside the root."""
    return inside(root, rel)


def candidates(domain: str, task_id: str) -> tuple[str, str]:
    """Where a task's solution is looked for when its ``solution`` field is absent (relative to the root)."""
    return f"solutions/{domain}/{task_id}.py", f"solutions/{task_id}.py"


def solution_of(wl: Workload, task: TaskSpec) -> Path | None:
    """The reference solution of ``task`` (of the loaded workload ``wl``): ``Task.solution``, else the first
    existing candidate (:func:`candidates`); None when there is none, or when the path leads outside the
    workload root (the loader reports that as a ``solution_outside_root`` finding)."""
    root = Path(wl.root)
    named = task.solution
    if named:
        try:
            return solution_path(root, named)
        except OutsideRoot as e:
            log.warning(
                "%s: task %s: solution %r %s; not used",
                wl.source,
                task.id,
                named,
                e,
            )
            return None
    for rel in candidates(wl.domain, task.id):
        try:
            path = solution_path(root, rel)
        except OutsideRoot:
            continue
        if path.is_file():
            return path
    return None


def read_solution(path: Path, *, errors: str = "strict") -> str:
    """The code of a solution file: a regular UTF-8 file of at most 8 MB, else
    :class:`~kramabench.files.FileRefused` (an OSError, one line)."""
    return read_text(path, limit=SOLUTION_BYTES, what="solution", errors=errors)


__all__ = ["candidates", "read_solution", "solution_of", "solution_path"]
