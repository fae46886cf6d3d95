"""Audit of the benchmark itself: reference solutions, failures of a run, proposed errata, agreement.

Layer: beside ``report/`` (reads run stores and workloads, writes reports and proposals), above ``run/``.
"""

from kramabench.audit.extract import Extraction, extract_answers, extract_value
from kramabench.audit.reference import ItemVerdict, ReferenceAudit, SolutionRun, audit_reference
from kramabench.audit.static import StaticFinding, static_checks

__all__ = [
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
