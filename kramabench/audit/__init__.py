"""Audit of the benchmark itself: reference solutions, failures of a run, proposed errata, agreement.

Layer: beside ``report/`` (reads run stores and workloads, writes reports and proposals), above ``run/``.
"""

from kramabench.audit.auditor import AuditorOptions, AuditReport, FailureCase, audit_case
from kramabench.audit.causes import Diagnosis, diagnose
from kramabench.audit.corrector import Proposals, apply_proposals, propose, write_proposals
from kramabench.audit.extract import Extraction, extract_answers, extract_value
from kramabench.audit.failures import FailuresAudit, audit_failures, failure_cases
from kramabench.audit.layout import PathLayout, infer_layout
from kramabench.audit.notebook import NotebookRun, run_notebook
from kramabench.audit.reference import ItemVerdict, ReferenceAudit, SolutionRun, audit_reference
from kramabench.audit.reliability import ReliabilityResult, check_reliability, cohen_kappa
from kramabench.audit.static import StaticFinding, static_checks
from kramabench.audit.taxonomy import BENCHMARK_CATEGORIES, FALSE_POSITIVE_KINDS, SYSTEM_CATEGORIES
from kramabench.audit.workflows import AuditInputError, CoverageCheck, check_coverage

__all__ = [
    "AuditInputError",
    "CoverageCheck",
    "check_coverage",
    "BENCHMARK_CATEGORIES",
    "FALSE_POSITIVE_KINDS",
    "SYSTEM_CATEGORIES",
    "AuditReport",
    "AuditorOptions",
    "Diagnosis",
    "FailureCase",
    "FailuresAudit",
    "NotebookRun",
    "PathLayout",
    "Proposals",
    "ReliabilityResult",
    "apply_proposals",
    "audit_case",
    "audit_failures",
    "check_reliability",
    "cohen_kappa",
    "diagnose",
    "infer_layout",
    "run_notebook",
    "failure_cases",
    "propose",
    "write_proposals",
    "Extraction",
    "ItemVerdict",
    "ReferenceAudit",
    "SolutionRun",
    "StaticFinding",
    "audit_reference",
    "extract_answers",
    "extract_value",
    "static_checks",
]
