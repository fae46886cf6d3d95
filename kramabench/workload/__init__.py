"""Workloads: typed models, loaders for the official layout, validator and errata."""

from kramabench.workload.errata import ErrataFile, load_errata
from kramabench.workload.errors import WorkloadError
from kramabench.workload.families import WorkloadFamily, family_of, list_domains, load_workload
from kramabench.workload.keyfunc import (
    KeyFunctionalities,
    derive_key_functionalities,
    key_functionalities,
)
from kramabench.workload.loader import official_errata_path
from kramabench.workload.models import (
    TASK_CLASSES,
    Difficulty,
    ErratumApplied,
    Finding,
    Severity,
    Subtask,
    Task,
    TaskClass,
    TaskReview,
    Workload,
    difficulty_from_id,
)
from kramabench.workload.notes import NOTE_CODES, benchmark_notes, solution_imports
from kramabench.workload.selection import keep_tasks, select_task_ids
from kramabench.workload.suites import Suite, available_suites, bundled_suites, resolve_workload_root
from kramabench.workload.validate import (
    DOCUMENTED_CODES,
    is_failing,
    not_reproducible_tasks,
    validate_workload,
)

__all__ = [
    "DOCUMENTED_CODES",
    "NOTE_CODES",
    "Difficulty",
    "ErrataFile",
    "ErratumApplied",
    "Finding",
    "KeyFunctionalities",
    "Severity",
    "Subtask",
    "TASK_CLASSES",
    "Task",
    "TaskClass",
    "TaskReview",
    "Workload",
    "WorkloadError",
    "WorkloadFamily",
    "family_of",
    "benchmark_notes",
    "bundled_suites",
    "derive_key_functionalities",
    "difficulty_from_id",
    "is_failing",
    "key_functionalities",
    "list_domains",
    "load_errata",
    "load_workload",
    "not_reproducible_tasks",
    "official_errata_path",
    "resolve_workload_root",
    "Suite",
    "available_suites",
    "keep_tasks",
    "select_task_ids",
    "solution_imports",
    "validate_workload",
]
