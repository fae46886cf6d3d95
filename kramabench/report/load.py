"""Read a run folder (``manifest.json`` + ``records.jsonl``) for reporting, tolerating a torn last line."""

from __future__ import annotations

import errno
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kramabench.contracts.records import Manifest, Record, iter_records
from kramabench.files import MANIFEST_BYTES, FileRefused, read_bytes

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
RECORDS = "records.jsonl"


class ReportError(Exception):
    """A run folder that cannot be reported; the message names the folder and the file."""


@dataclass
class RunData:
    path: Path
    manifest: Manifest
    records: list[Record]
    warnings: list[str] = field(default_factory=list)
    label: str = ""
    #: [system, model] as table rows show them (the run id added to the model where rows would clash)
    keys: list[str] = field(default_factory=list)
    #: the records against each gold (kramabench.run.golds.GoldView by gold name), set by the report
    golds: dict[str, Any] = field(default_factory=dict)
    #: the gold ``records`` are scored against ("verified" or "official"); None: as recorded
    gold: str | None = None
    #: how the golds of this run were made for the report (e.g. ``--errata FILE``), shown with them
    gold_notes: list[str] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    def under(self, gold: str | None) -> RunData:
        """This run with its records against ``gold`` (itself when that is its view, or no views are set)."""
        if gold is None or gold == self.gold or gold not in self.golds:
            return self
        return RunData(path=self.path, manifest=self.manifest, records=self.golds[gold].records,
                       warnings=self.warnings, label=self.label, keys=self.keys, golds=self.golds, gold=gold,
                       gold_notes=self.gold_notes)

    def settings(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.records:
            seen.setdefault(r.setting, None)
        return list(seen)

    def outcomes(self, setting: str | None = None) -> list[Record]:
        """The final record per (setting, domain, task, subtask): the highest attempt wins.

        The domain is part of the key: variants such as ``legal-tiny`` reuse their base domain's ids.
        """
        best: dict[tuple[str, str, str, str | None], Record] = {}
        for r in self.records:
            if setting is not None and r.setting != setting:
                continue
            k = (r.setting, r.domain, r.task_id, r.subtask_id)
            if k not in best or r.attempt >= best[k].attempt:
                best[k] = r
        return list(best.values())


#: warnings of one kind listed one by one; more are counted in one line
MAX_LISTED = 10


def _read_records(path: Path, warnings: list[str]) -> list[Record]:
    if not os.path.lexists(path):
        warnings.append(f"{path}: no records file (the run has not recorded any outcome)")
        return []
    by_key: dict[tuple[str, str, str, str | None, int], Record] = {}
    dupes = 0
    bad: list[str] = []
    n_bad = 0
    try:
        for i, rec, torn in iter_records(path):
            if isinstance(rec, str):
                n_bad += 1
                if len(bad) < MAX_LISTED:
                    bad.append(f"{path}: line {i} is incomplete (a torn last write); skipped" if torn
                               else f"{path}: line {i} is not a valid record ({rec[:160]}); skipped")
                continue
            key = (rec.domain, *rec.key)  # two domains of a root may share task ids: both are kept
            if key in by_key:
                dupes += 1
            by_key[key] = rec
    except OSError as exc:  # not a regular file (a FIFO, /dev/zero, a folder), unreadable
        raise ReportError(str(exc) if isinstance(exc, FileRefused) else f"{path}: cannot read ({exc.strerror})") from None
    warnings.extend(bad)
    if n_bad > len(bad):
        warnings.append(f"{path}: {n_bad - len(bad)} more line(s) that are not valid records; skipped")
    if dupes:
        warnings.append(f"{path}: {dupes} duplicate record key(s); the later line of each is used")
    return list(by_key.values())


def load_run(run_dir: Path | str) -> RunData:
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: not a run folder (no such directory)")
    mpath = run_dir / MANIFEST
    from kramabench.contracts.records import parse_manifest

    try:
        manifest = parse_manifest(read_bytes(mpath, limit=MANIFEST_BYTES, what="manifest"), mpath)
    except FileRefused as exc:
        if exc.errno == errno.ENOENT:
            raise ReportError(f"{mpath}: missing; {run_dir} is not a run folder") from None
        raise ReportError(str(exc)) from None  # a FIFO, /dev/zero, a folder, too large: one line
    except ValueError as exc:  # names the file and the problem in plain words
        raise ReportError(str(exc)) from None
    warnings: list[str] = []
    records = _read_records(run_dir / RECORDS, warnings)
    other = [r for r in records if r.run_id != manifest.run_id]
    if other:
        warnings.append(
            f"{run_dir / RECORDS}: {len(other)} record(s) carry another run id "
            f"({sorted({r.run_id for r in other})[0]!r}); reported with this run"
        )
    for w in warnings:
        log.warning("%s", w)
    return RunData(path=run_dir, manifest=manifest, records=records, warnings=warnings)


def label_runs(runs: list[RunData]) -> None:
    """Give each run a short label: system (model); the run id is added where labels would clash."""
    base = [r.manifest.system + (f" ({r.manifest.model})" if r.manifest.model else "") for r in runs]
    for run, b in zip(runs, base, strict=True):
        clash = base.count(b) > 1
        run.label = f"{b} [{run.run_id}]" if clash else b
        model = run.manifest.model or "–"
        run.keys = [run.manifest.system, f"{model} [{run.run_id}]" if clash else model]


__all__ = ["MANIFEST", "RECORDS", "ReportError", "RunData", "label_runs", "load_run"]
