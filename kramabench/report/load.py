"""Read a run folder (``manifest.json`` + ``records.jsonl``) for reporting, tolerating a torn last line."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kramabench.contracts.records import Manifest, Record
from kramabench.files import MB, FileRefused
from kramabench.runfolder import RECORDS, RunFolder, iter_records, read_manifest

log = logging.getLogger(__name__)


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
    #: the tasks the benchmark cannot support as written (``Record.benchmark_notes``), found before any is left out
    unsupported: list[Any] = field(default_factory=list)
    #: the records of those tasks are left out of every score (``--exclude-unsupported``)
    excluded_unsupported: bool = False

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    def under(self, gold: str | None) -> RunData:
        """This run with its records against ``gold`` (itself when that is its view, or no views are set)."""
        if gold is None or gold == self.gold or gold not in self.golds:
            return self
        return replace(self, records=self.golds[gold].records, gold=gold)

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
#: bytes of record lines kept whole (pipeline code, transcript) for the report's details, per report
DETAIL_BUDGET = 16 * MB
#: a record line longer than this keeps only the start of its code and transcript
RECORD_DETAIL = 256 * 1024
#: what is kept of the code and of the transcript of a record that is cut
KEPT_DETAIL = 32 * 1024


class DetailBudget:
    """Keeps a report's memory bounded whatever the size of the runs: record lines are kept whole up to
    :data:`DETAIL_BUDGET` bytes in all (and :data:`RECORD_DETAIL` each); beyond, a record keeps its scores,
    answers and error, and only the start of its pipeline code and transcript (said in them)."""

    def __init__(self, total: int = DETAIL_BUDGET, per_record: int = RECORD_DETAIL) -> None:
        self.left = total
        self.per_record = per_record
        self.cut = 0

    def parse(self, raw: bytes) -> Record:
        n = len(raw)
        if n <= self.per_record and n <= self.left:
            self.left -= n
            return Record.model_validate_json(raw)
        doc = json.loads(raw)
        if not isinstance(doc, dict):
            return Record.model_validate(doc)  # the validation error says what it is
        # beyond the budget only a glimpse of the details is kept; a long record keeps its start
        keep = KEPT_DETAIL if n <= self.left else GLIMPSE
        self.left -= min(n, 2 * keep)
        if _cut_details(doc, keep):
            self.cut += 1
        return Record.model_validate(doc)


#: what is kept of the code and of the transcript of a record once the budget is spent (its error message keeps
#: :data:`ERROR_KEPT` characters)
GLIMPSE = 0
ERROR_KEPT = 512


_CODE_LEFT_OUT = f"# the pipeline code is left out of the report (its size is bounded): see {RECORDS}"
_TRANSCRIPT_LEFT_OUT = {
    "note": f"the transcript is left out of the report (its size is bounded): see {RECORDS}"
}


def _cut_details(doc: dict[str, Any], keep: int = KEPT_DETAIL) -> bool:
    """Cut a record's pipeline code, transcript and error message to their first ``keep`` characters (in
    place); whether anything was cut."""
    cut = False
    code = doc.get("pipeline_code")
    if isinstance(code, str) and len(code) > keep:
        doc["pipeline_code"] = (
            code[:keep] + f"\n# … {len(code) - keep:,} more characters: see {RECORDS}"
            if keep
            else _CODE_LEFT_OUT
        )
        cut = True
    tr = doc.get("transcript")
    if isinstance(tr, list) and tr:
        kept, size = [], 0
        for entry in tr:
            size += len(json.dumps(entry, default=str))
            if size > keep:
                break
            kept.append(entry)
        if len(kept) < len(tr):
            kept.append(
                {
                    "note": f"{len(tr) - len(kept)} more transcript entries are left out of the report "
                    f"(its size is bounded): see {RECORDS}"
                }
                if kept
                else _TRANSCRIPT_LEFT_OUT
            )
            doc["transcript"] = kept
            cut = True
    err = doc.get("error")
    if (
        isinstance(err, dict)
        and isinstance(err.get("message"), str)
        and len(err["message"]) > max(keep, ERROR_KEPT)
    ):
        err["message"] = err["message"][: max(keep, ERROR_KEPT)] + f" … (cut: see {RECORDS})"
        cut = True
    for name in ("answer", "expected", "subtask_answers", "score_details", "subtask_details"):
        v = doc.get(name)
        if isinstance(v, (list, dict, str)) and len(v) > 16:  # a long value: its JSON text measured
            text = json.dumps(v, default=str)
            if len(text) > 8 * keep:
                shown = (
                    f"{text[:keep]} … ({len(text):,} characters of JSON: cut in the report, see {RECORDS})"
                )
                doc[name] = shown if name in ("answer", "expected") else {"cut": shown}
                cut = True
    return cut


def _read_records(path: Path, warnings: list[str], budget: DetailBudget | None = None) -> list[Record]:
    if not os.path.lexists(path):
        warnings.append(f"{path}: no records file (the run has not recorded any outcome)")
        return []
    by_key: dict[tuple[str, str, str, str | None, int], Record] = {}
    dupes = 0
    bad: list[str] = []
    n_bad = 0
    try:
        for i, rec, torn in iter_records(path, parse=(budget or DetailBudget()).parse):
            if isinstance(rec, str):
                n_bad += 1
                if len(bad) < MAX_LISTED:
                    bad.append(
                        f"{path}: line {i} is incomplete (a torn last write); skipped"
                        if torn
                        else f"{path}: line {i} is not a valid record ({rec[:160]}); skipped"
                    )
                continue
            key = (rec.domain, *rec.key)  # two domains of a root may share task ids: both are kept
            if key in by_key:
                dupes += 1
            by_key[key] = rec
    except OSError as exc:  # not a regular file (a FIFO, /dev/zero, a folder), unreadable
        raise ReportError(
            str(exc) if isinstance(exc, FileRefused) else f"{path}: cannot read ({exc.strerror})"
        ) from None
    warnings.extend(bad)
    if n_bad > len(bad):
        warnings.append(f"{path}: {n_bad - len(bad)} more line(s) that are not valid records; skipped")
    if dupes:
        warnings.append(f"{path}: {dupes} duplicate record key(s); the later line of each is used")
    return list(by_key.values())


def load_run(run_dir: Path | str, budget: DetailBudget | None = None) -> RunData:
    """A run folder read for reporting; ``budget`` (one per report, shared by its runs) bounds what is kept of
    the records' code and transcripts."""
    run_dir = Path(run_dir)
    budget = budget or DetailBudget()
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: not a run folder (no such directory)")
    folder = RunFolder(run_dir)
    try:
        manifest = read_manifest(run_dir)
    except FileNotFoundError:
        raise ReportError(f"{folder.manifest}: missing; {run_dir} is not a run folder") from None
    except ValueError as exc:  # names the file and the problem in plain words (a FIFO, too large: one line)
        raise ReportError(str(exc)) from None
    warnings: list[str] = []
    cut_before = budget.cut
    records = _read_records(folder.records, warnings, budget)
    if budget.cut > cut_before:
        warnings.append(
            f"{folder.records}: the pipeline code and transcripts of {budget.cut - cut_before:,} record(s) are cut "
            "to their start in this report (a report holds at most "
            f"{DETAIL_BUDGET // MB} MB of them); {RECORDS} holds them whole"
        )
    other = [r for r in records if r.run_id != manifest.run_id]
    if other:
        warnings.append(
            f"{folder.records}: {len(other)} record(s) carry another run id "
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


__all__ = ["DetailBudget", "ReportError", "RunData", "label_runs", "load_run"]
