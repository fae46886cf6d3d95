"""Workload families: the layouts a workload root may have, and how each is found and loaded.

A family (registered under the entry-point group ``kramabench.workload_families``, the built-ins through
this project's own ``pyproject.toml``) knows one on-disk layout:

* ``kramabench``: KramaBench's ``workload/<domain>.json`` and ``data/<domain>/input/`` (this package's
  loader);
* ``elt``: an ELT suite (``suite.yaml`` with ``family: elt``; :mod:`kramabench.elt.family`).

Every command that takes a workload root (``kramabench run --workload``, ``kramabench workloads``) finds its
family with :func:`family_of` and asks it for the domains and the loaded :class:`Workload` of each; a
bundled suite is any folder of ``workloads/`` that some family recognises. A family also names the setting
``kramabench run`` uses when ``--setting`` is not given (``end-to-end``; ``elt`` for ELT suites).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from kramabench import plugins
from kramabench.contracts.family import FetchedSuites, WorkloadFamily
from kramabench.files import WORKLOAD_BYTES, read_text
from kramabench.workload.models import Workload

log = logging.getLogger(__name__)

#: the built-in family of KramaBench's own layout
KRAMABENCH_FAMILY = "kramabench"


def families() -> list[WorkloadFamily[Workload]]:
    """Every installed family that can be loaded (the built-in first)."""
    out: list[WorkloadFamily[Workload]] = []
    for name in family_names():
        try:
            out.append(get_family(name))
        except Exception as e:  # noqa: BLE001 - a broken plug-in must not hide the other families
            log.warning("workload family %s cannot be used: %s: %s", name, type(e).__name__, e)
    return out


class KramaBenchFamily:
    """KramaBench's layout: ``workload/<domain>.json`` and ``data/<domain>/input/``."""

    name = KRAMABENCH_FAMILY
    default_setting = "end-to-end"

    def detect(self, root: Path) -> bool:
        return (Path(root) / "workload").is_dir()

    def list_domains(self, root: Path) -> list[str]:
        from kramabench.workload.loader import list_kramabench_domains

        return list_kramabench_domains(Path(root))

    def count_tasks(self, root: Path, domain: str) -> int | None:
        from kramabench.workload.loader import workload_file

        try:
            data = json.loads(
                read_text(workload_file(Path(root), domain), limit=WORKLOAD_BYTES, what="workload file")
            )
        except (OSError, ValueError):
            return None
        return len(data) if isinstance(data, list) else None

    def load(self, root: Path, domain: str, *, errata: object = True, validate: bool = True) -> Workload:
        from kramabench.workload.errata import ErrataFile
        from kramabench.workload.loader import load_kramabench_workload

        if errata is None:
            errata = False
        if not isinstance(errata, bool | ErrataFile | str | os.PathLike):
            raise TypeError(f"errata: {errata!r} is not True, False, an errata file's path or an ErrataFile")
        given = errata if isinstance(errata, bool | ErrataFile) else Path(errata)
        return load_kramabench_workload(Path(root), domain, errata=given, validate=validate)


#: the built-in family's one instance (its entry point)
KRAMABENCH = KramaBenchFamily()


def family_names() -> list[str]:
    """The installed families (metadata only), the built-in first."""
    names = plugins.names("families")
    return sorted(names, key=lambda n: (n != KRAMABENCH_FAMILY, n))


def get_family(name: str) -> WorkloadFamily[Workload]:
    """The family registered under ``name``."""
    if name == KRAMABENCH_FAMILY:
        return KRAMABENCH
    fam = plugins.load("families", name)
    if not isinstance(fam, WorkloadFamily):
        raise TypeError(f"workload family {name!r}: {fam!r} does not implement the WorkloadFamily protocol")
    return fam


def detected_family(root: Path) -> WorkloadFamily[Workload] | None:
    """The family that recognises ``root`` (the built-in layout first), or None."""
    root = Path(root)
    if KRAMABENCH.detect(root):
        return KRAMABENCH
    if not root.is_dir():
        return None
    for name in family_names():
        if name == KRAMABENCH_FAMILY:
            continue
        try:
            fam = get_family(name)
            if fam.detect(root):
                return fam
        except Exception as e:  # noqa: BLE001 - a broken plug-in must not hide the other families
            log.warning("workload family %s cannot be used: %s: %s", name, type(e).__name__, e)
    return None


def family_of(root: Path) -> WorkloadFamily[Workload]:
    """The family of ``root``; the built-in one when no family recognises it (its loader then says what is
    missing)."""
    return detected_family(root) or KRAMABENCH


def list_domains(root: Path) -> list[str]:
    """Domains of a workload root of any family (for KramaBench's layout the names of
    ``<root>/workload/*.json``, sorted)."""
    return family_of(Path(root)).list_domains(Path(root))


def load_workload(root: Path, domain: str, *, errata: object = True, validate: bool = True) -> Workload:
    """One domain of a workload root of any family (for KramaBench's layout
    :func:`kramabench.workload.loader.load_kramabench_workload`: ``errata`` True applies the default errata,
    False none, a path or an ErrataFile those; ``validate`` adds the validator's findings)."""
    return family_of(Path(root)).load(Path(root), domain, errata=errata, validate=validate)


__all__ = [
    "KRAMABENCH",
    "KRAMABENCH_FAMILY",
    "FetchedSuites",
    "KramaBenchFamily",
    "families",
    "WorkloadFamily",
    "detected_family",
    "family_names",
    "family_of",
    "get_family",
    "list_domains",
    "load_workload",
]
