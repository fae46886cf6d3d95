"""Artifacts in the run folder: each unit of work (task, setting, subtask) has its own folder
``results/<run_id>/artifacts/<unit>/``; its record lists the files with paths relative to the run folder, so a
run folder can be moved, resumed and scored anywhere.

While a system solves, its sessions collect into an opaque staging folder (``TaskInput.artifacts_dir``): a
tagged temporary folder outside the run folder whose path names no task (a system never learns its task id,
and never gets a path inside the run folder, whose records hold the expected answers). When the outcome is
recorded the staging folder becomes the unit's folder."""

from __future__ import annotations

import errno
import logging
import re
import secrets
import shutil
import threading
from pathlib import Path

from kramabench.contracts.artifacts import Artifact
from kramabench.files import FileRefused, copy_keeping_holes
from kramabench.sweep import make_tempdir

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


def _no_link_below(run_dir: Path, rel: str) -> Path:
    """``run_dir / rel``, refused (:class:`~kramabench.files.FileRefused`) when a symbolic link stands anywhere
    below the run folder on the way (``artifacts`` -> elsewhere): nothing is removed or moved through it."""
    d = Path(run_dir)
    for part in Path(rel).parts:
        d = d / part
        if d.is_symlink():
            raise FileRefused(
                d, "is a symbolic link in the run folder; artifacts are never written through it", errno.ELOOP
            )
    return d


def fresh_unit_dir(run_dir: Path, rel: str) -> Path:
    """The unit's folder, emptied: what is there belongs to an attempt that left no record (killed) or to
    an errored attempt being retried, never to a finished unit (those are not run again)."""
    d = _no_link_below(Path(run_dir), rel)
    if d.exists():
        shutil.rmtree(d, ignore_errors=True)
    return d


class ArtifactStaging:
    """The staging folders of one run (in one tagged temporary folder, removed at the end or by the sweep
    when the run is killed) and their moves into the run folder."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self._root: Path | None = None
        self._units: dict[Path, str] = {}
        self._lock = threading.Lock()

    def new(self, unit_rel: str) -> Path:
        """A fresh staging folder for the unit (made by the first collect); the unit's folder in the run
        folder is emptied now: what is there belongs to an attempt that left no record or is retried."""
        with self._lock:
            if self._root is None:
                self._root = make_tempdir("artifacts")
            stage = self._root / secrets.token_hex(12)
            self._units[stage] = unit_rel
        fresh_unit_dir(self.run_dir, unit_rel)
        return stage

    def settle(self, stage: Path, artifacts: list[Artifact]) -> list[Artifact]:
        """Move the staging folder into the unit's folder; the artifacts with their new (absolute) paths."""
        with self._lock:
            unit_rel = self._units.pop(Path(stage), None)
        if unit_rel is None:
            return list(artifacts)
        unit = _no_link_below(self.run_dir, unit_rel)
        stage = Path(stage)
        if stage.is_dir():
            shutil.rmtree(unit, ignore_errors=True)
            unit.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(stage), str(unit), copy_function=copy_keeping_holes)  # a sparse file stays sparse
        out = []
        for a in artifacts:
            p = Path(a.path)
            out.append(
                a.model_copy(update={"path": str(unit / p.relative_to(stage))})
                if p.is_relative_to(stage)
                else a
            )
        return out

    def close(self) -> None:
        with self._lock:
            root, self._root = self._root, None
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)


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
            out.append(
                a.model_copy(update={"path": p.relative_to(root).as_posix(), "bytes": p.stat().st_size})
            )
        except (OSError, ValueError) as e:
            log.warning("artifact %s (%s) left out of the record: %s", a.name, a.path, e)
    return out


__all__ = ["ARTIFACTS", "ArtifactStaging", "fresh_unit_dir", "record_artifacts", "unit_folder"]
