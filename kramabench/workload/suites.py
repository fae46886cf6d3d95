"""Bundled workload suites (``<repo>/workloads/<name>/`` holding a ``workload/`` folder) and resolution of a
command-line ROOT that is either a folder or the name of a bundled suite."""

from __future__ import annotations

from pathlib import Path

from kramabench.workload.errors import WorkloadError


def bundled_dir() -> Path:
    from kramabench import REPO_ROOT

    return REPO_ROOT / "workloads"


def bundled_suites() -> list[str]:
    """Names of the bundled suites, sorted (``mini``, ...)."""
    base = bundled_dir()
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and (p / "workload").is_dir())


#: the name that stands for the fetched official workloads (``kramabench@<ref>`` names a fetched ref)
OFFICIAL_NAME = "kramabench"


def resolve_workload_root(name_or_path: str | Path) -> Path:
    """A workload root from a folder path, a bundled suite name (``mini`` -> ``<repo>/workloads/mini``) or
    ``kramabench`` / ``kramabench@<ref>`` (the official workloads fetched by ``kramabench fetch``).

    A folder that is a workload root (has ``workload/``) wins over a name; an existing folder that is not
    a workload root is returned as is (the loader then says what is missing) unless it is a name.
    """
    text = str(name_or_path)
    path = Path(text).expanduser()
    name, _, ref = text.partition("@")
    if name == OFFICIAL_NAME and not (path / "data").is_dir():
        # the name wins over a same-named folder without a data lake: the repository's own ``kramabench/``
        # package (which has a ``workload/`` subpackage) when a command runs from the repository root
        return _fetched_root(ref or None)
    if (path / "workload").is_dir():
        return path
    suites = bundled_suites()
    if text in suites:
        return bundled_dir() / text
    if path.exists():
        return path
    hint = f"bundled workloads: {', '.join(suites)}" if suites else "no bundled workloads found"
    raise WorkloadError(f"{text}: no such folder and not a bundled workload ({hint})", file=text)


def _fetched_root(ref: str | None) -> Path:
    from kramabench.workload import fetch

    try:
        return Path(fetch.fetched_root(ref))
    except fetch.FetchError as e:
        raise WorkloadError(str(e)) from None


__all__ = ["OFFICIAL_NAME", "bundled_dir", "bundled_suites", "resolve_workload_root"]
