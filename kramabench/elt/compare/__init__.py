"""Comparators of a produced table against its ground truth: ``elt-bench`` (ELT-Bench's own comparison, two
named fixes) and ``verified`` (ELT-Bench-Verified's rules, three named differences: rows counted, rows paired on
identifying columns, names without regard to case), both on the tables as the original's evaluation reads them
(pandas' CSV round trip, :mod:`.original`).

``compare(expected, actual, comparator, dropped=None) -> TableResult`` with per-column diagnostics; a
plug-in adds a comparator with :func:`register_comparator`.
"""

from __future__ import annotations

from kramabench.elt.compare.base import ColumnResult, Comparator, TableResult, failed
from kramabench.elt.compare.elt_bench import EltBenchComparator
from kramabench.elt.compare.values import Table
from kramabench.elt.compare.verified import VerifiedComparator

#: the comparators every ELT run prints, in this order
DEFAULT_COMPARATORS: tuple[str, ...] = ("elt-bench", "verified")

_REGISTRY: dict[str, Comparator] = {"elt-bench": EltBenchComparator(), "verified": VerifiedComparator()}


def register_comparator(comparator: Comparator, *, replace: bool = False) -> None:
    if comparator.name in _REGISTRY and not replace:
        raise ValueError(f"a comparator {comparator.name!r} is already registered; pass replace=True")
    _REGISTRY[comparator.name] = comparator


def comparator_names() -> list[str]:
    return list(_REGISTRY)


def get_comparator(name: str) -> Comparator:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no comparator {name!r} (known: {', '.join(_REGISTRY)})") from None


def compare(
    expected: Table, actual: Table, comparator: str = "verified", *, dropped: dict[str, str] | None = None
) -> TableResult:
    """Compare ``actual`` (a produced table) with ``expected`` (the ground truth) under ``comparator``."""
    return get_comparator(comparator).compare(expected, actual, dropped=dropped)


__all__ = [
    "DEFAULT_COMPARATORS",
    "ColumnResult",
    "Comparator",
    "EltBenchComparator",
    "Table",
    "TableResult",
    "VerifiedComparator",
    "compare",
    "comparator_names",
    "failed",
    "get_comparator",
    "register_comparator",
]
