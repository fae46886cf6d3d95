"""Where kramabench keeps things: the cache home, the fetched official workloads, the results folder.

``KRAMABENCH_HOME`` overrides the cache home (default: the user's cache dir, e.g.
``~/.cache/kramabench``). ``kramabench fetch kramabench`` unpacks the official workloads into
:func:`official_root` (``<home>/official/<ref>``: ``workload/``, ``data/``, ``solutions/``);
``kramabench run --workload kramabench`` reads them from there.
"""

from __future__ import annotations

import os
from pathlib import Path

#: the workload name that means "the fetched official KramaBench workloads"
OFFICIAL_NAME = "kramabench"


def kramabench_home() -> Path:
    """The cache folder: ``$KRAMABENCH_HOME`` if set, else the platform's user cache dir (one definition,
    :func:`kramabench.workload.fetch.kramabench_home`, shared with ``kramabench fetch``)."""
    from kramabench.workload.fetch import kramabench_home as home

    return Path(home())


def official_root(home: Path | None = None) -> Path:
    """Root of the fetched official workloads (``workload/``, ``data/``, ``solutions/`` below it):
    :func:`kramabench.workload.fetch.fetched_root` (the default ref, else the one ref fetched); when nothing
    was fetched, the default ref's folder (which does not exist yet)."""
    from kramabench.workload import fetch

    try:
        return Path(fetch.fetched_root(home=home))
    except fetch.FetchError:
        return Path(fetch.official_root(home=home))


def default_results_dir() -> Path:
    """``$KRAMABENCH_RESULTS`` if set, else ``./results`` (relative to the working directory)."""
    env = os.environ.get("KRAMABENCH_RESULTS")
    return Path(env).expanduser() if env else Path("results")


def results_dir(given: Path | str | None = None) -> Path:
    """The results folder of a run, absolute: ``given`` (``--results``) or :func:`default_results_dir`, resolved
    against the working directory once, when the run starts. Every path of the run (its folder, the units'
    artifact folders, the artifacts' paths) derives from it, so a relative ``--results`` (or the default
    ``./results``) means the same folder everywhere, whatever changes the working directory later."""
    p = Path(given).expanduser() if given else default_results_dir()
    return p.absolute()


__all__ = ["OFFICIAL_NAME", "default_results_dir", "kramabench_home", "official_root", "results_dir"]
