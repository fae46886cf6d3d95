"""The checks every backend makes of a run's request before anything starts: the lake folder, the alias of
the lake under the working directory (``workdir_lake``); how the bootstrap is told of them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kramabench.contracts.sandbox import ExecResult
from kramabench.sandbox.results import not_started


def workdir_lake_path(workdir: str, workdir_lake: str | None) -> str | None:
    """Validate ``workdir_lake`` (relative, no ``..``) and return its absolute path under ``workdir``."""
    if not workdir_lake:
        return None
    rel = os.path.normpath(workdir_lake)
    if rel.startswith(("/", "..")) or rel in (".", ""):
        raise ValueError(
            f"workdir_lake must be a relative path inside the working directory, got {workdir_lake!r}"
        )
    return f"{workdir.rstrip('/')}/{rel}"


def check_request(
    backend: str, lake: Path, workdir: str, workdir_lake: str | None
) -> tuple[Path, str | None] | ExecResult:
    """(resolved lake, absolute alias path under ``workdir``) of a run, or the ExecResult refusing it."""
    lake = Path(lake).resolve()
    if not lake.is_dir():
        return not_started(backend, f"the lake folder {lake} does not exist")
    try:
        return lake, workdir_lake_path(workdir, workdir_lake)
    except ValueError as e:
        return not_started(backend, str(e))


def lake_view(lake_dir: str, wl: str | None) -> dict[str, Any]:
    """The part of a bootstrap's request that shows it the lake: the folders whose files its audit hook reports
    (the lake at ``lake_dir``, and its alias ``wl`` under the working directory, if any) and the alias, made
    as a symlink to the lake."""
    return {"lake_prefixes": [lake_dir] + ([wl] if wl else []), "symlinks": [[wl, lake_dir]] if wl else []}


__all__ = ["check_request", "lake_view", "workdir_lake_path"]
