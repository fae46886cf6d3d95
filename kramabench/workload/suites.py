"""Bundled workload suites (``workloads/<name>/`` holding a ``workload/`` folder, in the checkout or in the
installed wheel), the suites on this machine (bundled and fetched), and resolution of a command-line ROOT
that is either a folder or the name of a suite."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kramabench.workload.errors import WorkloadError


def bundled_dir() -> Path:
    """``workloads/`` of the installed wheel or of the source checkout: every folder in it that holds a
    ``workload/`` folder is a bundled suite."""
    from kramabench import data_dir

    return data_dir("workloads")


def bundled_suites() -> list[str]:
    """Names of the bundled suites, sorted (``elt-mini``, ``mini``, ...): the folders of ``workloads/`` that a
    workload family recognises (:mod:`kramabench.workload.families`)."""
    from kramabench.workload.families import detected_family

    base = bundled_dir()
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and detected_family(p) is not None)


#: the name that stands for the fetched official workloads (``kramabench@<ref>`` names a fetched ref)
OFFICIAL_NAME = "kramabench"


def resolve_workload_root(name_or_path: str | Path) -> Path:
    """A workload root from a folder path, a bundled suite name (``mini`` -> ``<repo>/workloads/mini``) or
    ``kramabench`` / ``kramabench@<ref>`` (the official workloads fetched by ``kramabench fetch``).

    A folder that is a workload root (of any family: ``workload/``, an ELT suite's ``suite.yaml``) wins over a
    name; an existing folder that is not
    a workload root is returned as is (the loader then says what is missing) unless it is a name.
    """
    text = str(name_or_path)
    path = Path(text).expanduser()
    name, _, ref = text.partition("@")
    if name == OFFICIAL_NAME and not (path / "data").is_dir():
        # the name wins over a same-named folder without a data lake: the repository's own ``kramabench/``
        # package (which has a ``workload/`` subpackage) when a command runs from the repository root
        return _fetched_root(ref or None)
    from kramabench.workload.families import detected_family

    if path.is_dir() and detected_family(path) is not None:
        return path
    suites = bundled_suites()
    if text in suites:
        return bundled_dir() / text
    if not path.exists():
        from kramabench.workload.families import FetchedSuites, families

        for fam in families():
            if isinstance(fam, FetchedSuites):
                fetched = fam.fetched_suites()
                if text in fetched:
                    return fetched[text]
                hint = fam.fetch_hints().get(text)
                if hint:
                    raise WorkloadError(f"{text}: not fetched on this machine; {hint}", file=text)
    if path.exists():
        return path
    hint = f"bundled workloads: {', '.join(suites)}" if suites else "no bundled workloads found"
    raise WorkloadError(f"{text}: no such folder and not a bundled workload ({hint})", file=text)


@dataclass(frozen=True)
class Suite:
    """A workload suite on this machine: its name for ``--workload``, where it lives, its domains and tasks."""

    name: str
    kind: str  # "bundled" or "fetched"
    root: Path
    domains: dict[str, int | None]  # domain -> number of tasks (None: the file is not a JSON list)
    family: str = "kramabench"  # the workload family (kramabench.workload.families)


def available_suites() -> list[Suite]:
    """The bundled suites, then the fetched official workloads (``kramabench``, ``kramabench@<ref>`` for a ref
    other than the default)."""
    from kramabench.workload import fetch

    out = [_suite(name, "bundled", bundled_dir() / name) for name in bundled_suites()]
    base = fetch.kramabench_home() / "official"
    refs = [p for p in base.iterdir() if (p / "workload").is_dir()] if base.is_dir() else []
    refs.sort(key=lambda p: (p.name != fetch.DEFAULT_REF, p.name))  # the default ref first
    for p in refs:
        name = OFFICIAL_NAME if p.name == fetch.DEFAULT_REF else f"{OFFICIAL_NAME}@{p.name}"
        out.append(_suite(name, "fetched", p))
    from kramabench.workload.families import FetchedSuites, families

    for fam in families():
        if isinstance(fam, FetchedSuites):
            out += [_suite(name, "fetched", root) for name, root in sorted(fam.fetched_suites().items())]
    return out


def _suite(name: str, kind: str, root: Path) -> Suite:
    from kramabench.workload.families import family_of

    fam = family_of(root)
    domains: dict[str, int | None] = {d: fam.count_tasks(root, d) for d in fam.list_domains(root)}
    return Suite(name, kind, root, domains, fam.name)


def _fetched_root(ref: str | None) -> Path:
    from kramabench.workload import fetch

    try:
        return Path(fetch.fetched_root(ref))
    except fetch.FetchError as e:
        raise WorkloadError(str(e)) from None


__all__ = [
    "OFFICIAL_NAME",
    "Suite",
    "available_suites",
    "bundled_dir",
    "bundled_suites",
    "resolve_workload_root",
]
