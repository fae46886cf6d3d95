"""Tasks the benchmark cannot support as written: what makes a zero the benchmark's doing, not the system's.

A task is marked (:class:`~kramabench.contracts.records.BenchmarkNote`, saved in each of its records as
``benchmark_notes``) when

- a data source it (or one of its subtasks) names is missing from the lake: the validator's
  ``data_source_missing`` (absent, nothing like it there, or only a Git LFS pointer in its place);
- a data source is documented absent upstream: the validator's ``not_reproducible`` (an errata
  ``[[absent]]`` entry);
- a data source is a URL or a path outside the lake (``data_source_outside_lake``): generated code has no
  network and sees only the lake;
- the errata review classes it ``unreproducible`` (``reviewed_unreproducible``: the audit found that its
  reference solution cannot run on this lake);
- its official solution imports a module the sandbox does not have (``solution_needs_module``; checked
  when the caller says which modules the sandbox has: :func:`solution_imports` reads the solution's
  ``import`` statements, never runs it).

The notes are built from the workload's findings (a workload loaded with validation), so any workload,
fetched or made by hand, is marked the same way. Whether a marked task is scored stays as the paper does
(it is run and scored like any other); the mark is what changes, and ``kramabench report`` /
``kramabench score --exclude-unsupported`` leave such tasks out of a score on request.
"""

from __future__ import annotations

import ast
import logging
import sys
from collections.abc import Iterable
from pathlib import Path

from kramabench.contracts.records import BenchmarkNote
from kramabench.contracts.setting import TaskSpec
from kramabench.workload.models import Workload
from kramabench.workload.solutions import read_solution, solution_of

log = logging.getLogger(__name__)

#: validator codes that make a task unsupported by the benchmark (kramabench.workload.validate)
SOURCE_CODES = ("data_source_missing", "not_reproducible", "data_source_outside_lake")
#: every note code, with what it says in a table's heading or a filter
NOTE_CODES: dict[str, str] = {
    "data_source_missing": "a data source is missing from the lake",
    "not_reproducible": "a data source is documented absent upstream",
    "data_source_outside_lake": "a data source lies outside the lake (a URL, an absolute path)",
    "reviewed_unreproducible": "the errata review classes the task unreproducible",
    "solution_needs_module": "its official solution imports a module the sandbox lacks",
}


def solution_imports(code: str) -> set[str]:
    """The top-level modules a Python source imports (``import a.b`` and ``from a.b import c`` give ``a``;
    relative imports are the solution's own files and are left out); empty when it does not parse."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


def _missing_modules(wl: Workload, task: TaskSpec, available: set[str]) -> list[str]:
    path = solution_of(wl, task)
    if path is None or not path.is_file():
        return []
    try:
        code = read_solution(path, errors="replace")
    except OSError as e:
        log.debug("%s: solution not read: %s", path, e)
        return []
    local = {p.stem for p in Path(path).parent.glob("*.py")}  # a helper beside the solution is its own
    std = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names) | {"__future__"}
    return sorted(m for m in solution_imports(code) if m not in std and m not in available and m not in local)


def benchmark_notes(wl: Workload, *, modules: Iterable[str] | None = None) -> dict[str, list[BenchmarkNote]]:
    """task id -> why the benchmark cannot support the task (only marked tasks are keys), from the workload's
    validator findings, its errata reviews and, when ``modules`` (the import names the sandbox provides) is
    given, its official solutions' imports."""
    out: dict[str, list[BenchmarkNote]] = {}
    ids = {t.id for t in wl.tasks}

    def add(task_id: str | None, note: BenchmarkNote) -> None:
        if task_id is None or task_id not in ids:
            return
        notes = out.setdefault(task_id, [])
        if note not in notes:
            notes.append(note)

    for f in wl.findings:
        if f.code in SOURCE_CODES:
            add(f.task_id, BenchmarkNote(code=f.code, message=f.message, subtask_id=f.subtask_id))
    for r in wl.reviews:
        if r.klass == "unreproducible":
            why = r.why + (f" (absent: {', '.join(r.absent)})" if r.absent else "")
            add(
                r.task,
                BenchmarkNote(code="reviewed_unreproducible", message=f"reviewed unreproducible: {why}"),
            )
    if modules is not None:
        available = set(modules)
        for t in wl.tasks:
            missing = _missing_modules(wl, t, available)
            if missing:
                add(
                    t.id,
                    BenchmarkNote(
                        code="solution_needs_module",
                        message=f"the official solution imports {', '.join(repr(m) for m in missing)}, which the "
                        "sandbox does not have",
                    ),
                )
    return out


def note_summary(notes: Iterable[BenchmarkNote]) -> str:
    """One line of a task's notes: ``data_source_missing: data source 'x.csv' is absent: ...; ...`` (a note
    that several of its subtasks share is said once)."""
    seen = dict.fromkeys((n.code, n.message) for n in notes)
    return "; ".join(f"{code}: {message}" for code, message in seen)


__all__ = ["NOTE_CODES", "SOURCE_CODES", "benchmark_notes", "note_summary", "solution_imports"]
