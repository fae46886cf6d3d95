"""Artifacts in the run folder: each unit of work (task, setting, subtask) has its own folder
``results/<run_id>/artifacts/<unit>/`` where its system's sessions collect files (``TaskInput.artifacts_dir``);
its record lists them with paths relative to the run folder, so a run folder can be moved, resumed and
scored anywhere."""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path

from kramabench.contracts.artifacts import Artifact

log = logging.getLogger(__name__)

ARTIFACTS = "artifacts"


def _safe(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", part).lstrip(".") or "_"


def unit_folder(setting: str, task_id: str, subtask_id: str | None) -> str:
    """The unit's artifacts folder, relative to the run folder: ``artifacts/<task id>`` for the end-to-end
    setting, ``artifacts/<task id>.<setting>[.<subtask id>]`` otherwise."""
    name = _safe(task_id)
    if setting != "end-to-end":
        name += "." + _safe(setting)
    if subtask_id:
        name += "." + _safe(subtask_id)
    return f"{ARTIFACTS}/{name}"


def fresh_unit_dir(run_dir: Path, rel: str) -> Path:
    """The unit's folder, emptied: what is there belongs to an attempt that left no record (killed) or to
    an errored attempt being retried, never to a finished unit (those are not run again)."""
    d = Path(run_dir) / rel
    if d.exists():
        shutil.rmtree(d, ignore_errors=True)
    return d


def record_artifacts(run_dir: Path, unit_dir: Path, artifacts: list[Artifact]) -> list[Artifact]:
    """The system's artifacts with paths relative to the run folder; those not in the unit's folder or gone
    are left out (a warning names them)."""
    root = Path(run_dir).resolve()
    unit = Path(unit_dir).resolve()
    out: list[Artifact] = []
    for a in artifacts:
        try:
            p = Path(a.path)
            p = (p if p.is_absolute() else root / p).resolve()
            if not p.is_relative_to(unit) or not p.is_file():
                raise ValueError("not a file of the task's artifacts folder")
            out.append(a.model_copy(update={"path": p.relative_to(root).as_posix(), "bytes": p.stat().st_size}))
        except (OSError, ValueError) as e:
            log.warning("artifact %s (%s) left out of the record: %s", a.name, a.path, e)
    return out


__all__ = ["ARTIFACTS", "fresh_unit_dir", "record_artifacts", "unit_folder"]
