"""The workload-family contract: one on-disk layout of workload roots, how it is found and loaded.

A family is registered under the entry-point group ``kramabench.workload_families`` (the built-ins through this
project's own ``pyproject.toml``: ``kramabench``, :mod:`kramabench.workload.families`; ``elt``,
:mod:`kramabench.elt.family`). ``W_co`` is what ``load`` gives: :class:`kramabench.workload.Workload` (whose
tasks a family may subclass), so this floor needs no workload model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

W_co = TypeVar("W_co", covariant=True)


@runtime_checkable
class WorkloadFamily(Protocol[W_co]):
    #: the family's name (its entry point's name)
    name: str
    #: the setting a run uses when none is given
    default_setting: str

    def detect(self, root: Path) -> bool:
        """Whether ``root`` is a workload root of this family (cheap: a file or two looked at)."""
        ...

    def list_domains(self, root: Path) -> list[str]: ...

    def count_tasks(self, root: Path, domain: str) -> int | None:
        """The number of tasks of a domain without loading it fully (None: cannot be told)."""
        ...

    def load(self, root: Path, domain: str, *, errata: object = True, validate: bool = True) -> W_co:
        """One domain of the root (findings for defects; ``WorkloadError`` when the root cannot be read at all).
        ``errata``: True the family's default errata, False none, else what the family takes (a path, names of
        errata sets, a loaded errata file), refused with a ``WorkloadError`` naming what it takes."""
        ...


@runtime_checkable
class FetchedSuites(Protocol):
    """Optional for a family: suites it fetches by name (``kramabench fetch NAME``), so that ``--workload NAME``
    resolves to the fetched copy."""

    def fetched_suites(self) -> dict[str, Path]:
        """The suites fetched on this machine: name -> root."""
        ...

    def fetch_hints(self) -> dict[str, str]:
        """The names this family fetches -> the command that fetches each (for a name not fetched yet)."""
        ...


__all__ = ["FetchedSuites", "WorkloadFamily"]
