"""The layout of a run folder: the one place its file names are spelled.

``results/<run_id>/`` holds ``manifest.json`` (the run: what, how, when), ``records.jsonl`` (one record per
line, appended), ``calls.jsonl`` (the model calls), ``.lock`` (held by the process writing the run) and,
after a crash, ``<name>.torn`` (torn last lines cut off when the run was resumed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: the run's manifest (replaced atomically)
MANIFEST = "manifest.json"
#: the run's records, one JSON line each (appended)
RECORDS = "records.jsonl"
#: the model calls of a run (written by kramabench.models.recording.CallRecorder)
CALLS = "calls.jsonl"
#: the lock file held by the process writing the run
LOCK = ".lock"
#: the suffix of the file that keeps torn last lines cut off a JSON-lines file
TORN = ".torn"


def torn_name(name: str) -> str:
    """Where the torn lines cut off ``name`` are kept (``records.jsonl.torn``)."""
    return name + TORN


class _Named:
    """A file of a run folder by its name: ``RunFolder(d).records`` is ``d / RECORDS``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, folder: RunFolder, owner: type[RunFolder] | None = None) -> Path:
        return folder.dir / self.name


@dataclass(frozen=True)
class RunFolder:
    """The paths of one run folder."""

    dir: Path

    manifest = _Named(MANIFEST)
    records = _Named(RECORDS)
    calls = _Named(CALLS)
    lock = _Named(LOCK)

    def torn(self, name: str = RECORDS) -> Path:
        return self.dir / torn_name(name)

    def own_files(self) -> tuple[Path, ...]:
        """The files a run writes (a link, a folder or a device in their place is refused)."""
        return (
            self.manifest,
            self.records,
            self.calls,
            self.lock,
            self.torn(RECORDS),
            self.torn(CALLS),
        )


def is_run_dir(path: Path) -> bool:
    """Whether ``path`` looks like a run folder (it holds a manifest or records, or a link named as one)."""
    f = RunFolder(Path(path))
    return f.manifest.exists() or f.records.exists() or os.path.lexists(f.manifest)


__all__ = ["CALLS", "LOCK", "MANIFEST", "RECORDS", "TORN", "RunFolder", "is_run_dir", "torn_name"]
