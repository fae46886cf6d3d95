"""Run folders followed as they are written: the manifest re-read when it changes, ``records.jsonl`` read
from where the last read stopped (both by :mod:`kramabench.runfolder`: ``ManifestWatch``, ``RecordsTail``).

Nothing here writes. A run folder may be in the middle of a write: a last line without its newline is
left for the next read while the run is going (and reported as torn once it is not); a line that is not a
JSON object with a ``task_id`` is reported with its line number and skipped; a damaged or missing
manifest is reported and the records are still shown. Files are opened without following a symbolic
link and only when they are regular files.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kramabench.contracts.cost import format_cost
from kramabench.runfolder import (
    MANIFEST,
    OFFICIAL,
    RECORDS,
    VERIFIED,
    LineProblem,
    ManifestWatch,
    RecordsTail,
    is_run_dir,
    json_object,
    manifest_of,
    old_official_values,
    read_doc_at,
    read_docs_at,
    torn_name,
)
from kramabench.runfolder import open_nofollow as open_regular
from kramabench.view.golds import gold_scores, manifest_gold, official_of_old
from kramabench.view.owner import Owner, run_owner
from kramabench.view.questions import Questions, workload_root
from kramabench.view.rows import Row, make_row, natural_key

log = logging.getLogger(__name__)


@dataclass
class Problem:
    """Something wrong with a file of the run, said on the page."""

    file: str
    message: str
    line: int | None = None
    level: str = "warning"

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "message": self.message, "level": self.level}


class RunFollower:
    """One run folder. :meth:`refresh` reads what changed; the other methods read a consistent state."""

    def __init__(self, run_dir: Path, name: str, questions: Questions) -> None:
        self.dir = run_dir
        self.name = name
        self.questions = questions
        self._lock = threading.RLock()
        self.version = 0
        #: the manifest, re-read when it changes; the records, read from where the last read stopped
        self._manifest = ManifestWatch(run_dir)
        self._tail = RecordsTail(run_dir)
        self._reset_records()
        self.last_change = time.time()
        self._summary_cache: tuple[int, dict[str, Any]] | None = None
        self._ordered: tuple[int, list[Row]] | None = None
        #: the floors' cache of the constants' scores per gold value, kept while the viewer runs
        self._floor_cache: dict[Any, Any] = {}
        self._floor_canon: dict[Any, Any] = {}
        #: the floors panel (kramabench.view.golds.floors_panel): one computation at a time, and its last result
        self.floors_lock = threading.Lock()
        self.floors: tuple[int, float, float, dict[str, Any]] | None = None
        #: the process that writes a running run (read from its lock file at each refresh while it runs)
        self.owner = Owner("unknown")

    def _reset_records(self) -> None:
        self.rows: list[Row] = []
        #: unit -> its attempt that counts; units in the order their first record is in the file
        self.latest: dict[tuple[str, str, str, str | None], int] = {}
        self.bad_lines: list[Problem] = []
        self.records_problem: str | None = None
        self.torn_file_bytes = 0

    @property
    def manifest(self) -> dict[str, Any] | None:
        """The manifest as a plain object (unknown fields kept); None when it cannot be read."""
        return self._manifest.doc

    @property
    def manifest_problem(self) -> str | None:
        return self._manifest.problem

    @property
    def lineno(self) -> int:
        """Lines of ``records.jsonl`` read so far."""
        return self._tail.lineno

    @property
    def tail_bytes(self) -> int:
        """Bytes of a last line not yet ended (a record being written, or torn)."""
        return self._tail.tail_bytes

    # -- reading ---------------------------------------------------------------------------------
    def _seen(self) -> tuple[Any, ...]:
        """What :meth:`refresh` compares before and after reading to tell whether anything changed."""
        return (
            self.version,
            len(self.rows),
            self.tail_bytes,
            self.manifest_problem,
            self.records_problem,
            len(self.bad_lines),
            self.torn_file_bytes,
        )

    def refresh(self) -> bool:
        """Read what changed since the last call; True when anything did."""
        with self._lock:
            before = self._seen()
            changed_manifest = self._refresh_manifest()
            self._refresh_records()
            self._refresh_torn()
            gone_before = self.owner.state
            self.owner = run_owner(self.dir) if self.manifest_status == "running" else Owner("unknown")
            after = self._seen()
            if (gone_before == "gone") != (self.owner.state == "gone"):
                changed_manifest = True
            if changed_manifest or before != after:
                self.version += 1
                self.last_change = time.time()
                return True
            return False

    def _refresh_manifest(self) -> bool:
        return self._manifest.poll()

    def _refresh_torn(self) -> None:
        try:
            st = os.stat(self.dir / torn_name(RECORDS), follow_symlinks=False)
            self.torn_file_bytes = st.st_size if stat.S_ISREG(st.st_mode) else 0
        except OSError:
            self.torn_file_bytes = 0

    def _refresh_records(self) -> None:
        got = self._tail.poll()
        if got.reset:
            self._reset_records()
        self.records_problem = got.problem
        root = workload_root(self.manifest)
        run_gold = manifest_gold(self.manifest)
        # a verified run recorded before both golds were kept: the items an erratum changed are scored again
        # against the official gold, as the report does
        old_fix = (
            old_official_values((self.manifest or {}).get("errata_applied")) if run_gold == VERIFIED else {}
        )
        model_box: list[Any] = []
        for got_line in got.lines:
            if isinstance(got_line, LineProblem):
                self.bad_lines.append(Problem(got_line.file, got_line.message, got_line.line))
                continue
            rec = got_line.doc
            domain = rec.get("domain") if isinstance(rec.get("domain"), str) else ""
            sub = rec.get("subtask_id") if isinstance(rec.get("subtask_id"), str) else None
            question = self.questions.of(root, domain, rec["task_id"], sub) if domain else ""
            row = make_row(
                rec,
                i=len(self.rows),
                line=got_line.line,
                offset=got_line.offset,
                length=got_line.length,
                question=question,
                run_gold=run_gold,
            )
            if old_fix and "gold" not in rec and (row.task_id, row.subtask_id) in old_fix:
                if not model_box:
                    model_box.append(manifest_of(self.manifest))
                value, ok = official_of_old(rec, self.manifest, model_box[0])
                if ok:
                    row.official, row.gold_changed = value, True
                else:
                    row.notes.append(
                        "an erratum changed this item's gold, but the record does not read as a "
                        "kramabench record: its official score is not known (the verified one is shown)"
                    )
            self.rows.append(row)
            prev = self.latest.get(row.unit)
            row.unit_first = row.i if prev is None else self.rows[prev].unit_first
            if prev is None or row.attempt >= self.rows[prev].attempt:
                if prev is not None:
                    self.rows[prev].latest = False
                self.latest[row.unit] = row.i
            else:
                row.latest = False

    # -- state -----------------------------------------------------------------------------------
    @property
    def manifest_status(self) -> str:
        s = (self.manifest or {}).get("status")
        return s if isinstance(s, str) else "unknown"

    @property
    def status(self) -> str:
        """The manifest's status; ``interrupted`` for a run the manifest says is running whose process is gone
        (killed by SIGKILL, crashed: it never wrote its end)."""
        s = self.manifest_status
        return "interrupted" if s == "running" and self.owner.state == "gone" else s

    def resume_command(self) -> str:
        """The command that continues this run."""
        import shlex

        rid = (self.manifest or {}).get("run_id")
        rid = rid if isinstance(rid, str) and rid else self.name
        return f"kramabench run --resume --run-id {shlex.quote(rid)} --results {shlex.quote(str(self.dir.parent))}"

    def stop_reason(self) -> str | None:
        if self.manifest_status == "running" and self.owner.state == "gone":
            return (
                f"its process (pid {self.owner.pid}) is gone without finishing the run (killed or crashed); "
                "the tasks it was running are not recorded"
            )
        return _s((self.manifest or {}).get("stop_reason"))

    def problems(self) -> list[Problem]:
        """What is wrong with the run's files, for the page."""
        with self._lock:
            out: list[Problem] = []
            if self.manifest_problem:
                out.append(Problem(MANIFEST, self.manifest_problem + "; the records are shown without it"))
            if self.records_problem:
                out.append(Problem(RECORDS, self.records_problem))
            out.extend(self.bad_lines[:200])
            if len(self.bad_lines) > 200:
                out.append(Problem(RECORDS, f"{len(self.bad_lines) - 200} more bad lines not listed"))
            if self.tail_bytes:
                if self.status == "running":
                    out.append(
                        Problem(
                            RECORDS,
                            f"a record is being written ({self.tail_bytes} bytes so far)",
                            self.lineno + 1,
                            level="info",
                        )
                    )
                else:
                    out.append(
                        Problem(
                            RECORDS,
                            f"the last line is torn ({self.tail_bytes} bytes without a newline: "
                            "a write cut by a crash); skipped",
                            self.lineno + 1,
                        )
                    )
            if self.torn_file_bytes:
                out.append(
                    Problem(
                        torn_name(RECORDS),
                        f"{self.torn_file_bytes} bytes of torn lines were cut off "
                        "when the run resumed (kept there)",
                        level="info",
                    )
                )
            for r in self.rows:
                if r.notes:
                    out.append(Problem(RECORDS, "; ".join(r.notes), r.line))
                    if len(out) > 400:
                        break
            return out

    def snapshot(self, all_attempts: bool = False) -> list[Row]:
        """The rows in task order (the attempt that counts of each unit, or every attempt)."""
        with self._lock:
            if self._ordered is None or self._ordered[0] != self.version:
                self._ordered = (self.version, sorted(self.rows, key=lambda r: r.order))
            ordered = self._ordered[1]
        return list(ordered) if all_attempts else [r for r in ordered if r.latest]

    def row(self, i: int) -> Row | None:
        with self._lock:
            return self.rows[i] if 0 <= i < len(self.rows) else None

    def attempts_of(self, row: Row) -> list[Row]:
        with self._lock:
            return [r for r in self.rows if r.unit == row.unit]

    def floor_cache(self) -> tuple[dict[Any, Any], dict[Any, Any]]:
        """The floors' caches of this run (see :func:`kramabench.view.golds.floors_panel`)."""
        if len(self._floor_canon) > 200_000:  # a run of that many distinct golds: start over rather than grow
            self._floor_cache.clear()
            self._floor_canon.clear()
        return self._floor_cache, self._floor_canon

    def read_records(self, rows: list[Row]) -> Iterator[dict[str, Any] | None]:
        """The whole records of ``rows``, read again from their lines in one pass, in file order (None for a
        line that changed since it was read)."""
        ordered = sorted(rows, key=lambda r: r.offset)
        return read_docs_at(self.dir, [(r.offset, r.length, r.task_id) for r in ordered])

    def read_record(self, row: Row) -> tuple[dict[str, Any] | None, str | None]:
        """The whole record of a row, read again from its line; None and why when it cannot be."""
        return read_doc_at(self.dir, row.line, row.offset, row.length, row.task_id)

    # -- the run list ------------------------------------------------------------------------------
    def _domains(self, wl: dict[str, Any]) -> list[str]:
        """The domains the run does: the manifest's (since they name only those, not every domain of the
        workload); for a run that is over, only those its records hold (an older manifest named them all)."""
        listed = (
            [d for d in wl.get("domains", []) if isinstance(d, str)]
            if isinstance(wl.get("domains"), list)
            else []
        )
        if self.status == "running" or not self.rows:
            return listed
        seen = {r.domain for r in self.rows}
        return [d for d in listed if d in seen] + sorted(seen - set(listed), key=natural_key)

    def planned(self) -> int | None:
        """Units the run set out to do: the manifest's ``counts.planned`` when the runner wrote it, else what
        its workload's task counts (and ``--limit``) say; None when neither tells."""
        m = self.manifest or {}
        planned = json_object(m.get("counts")).get("planned")
        if isinstance(planned, int):
            return planned
        wl = json_object(m.get("workload"))
        content = json_object(wl.get("content"))
        if not content:
            return None
        key = "subtasks" if m.get("setting") == "subtasks" else "tasks"
        total = 0
        for d in content.values():
            if not isinstance(d, dict) or not isinstance(d.get(key), int):
                return None
            total += d[key]
        opts = (
            (m.get("options") or {}).get("config", {}).get("options", {})
            if isinstance(m.get("options"), dict)
            else {}
        )
        limit = opts.get("limit") if isinstance(opts, dict) else None
        if isinstance(limit, int) and limit >= 0:
            if key == "subtasks":
                return None
            total = min(total, limit)
        return total

    def summary(self) -> dict[str, Any]:
        with self._lock:
            if self._summary_cache and self._summary_cache[0] == self.version:
                return self._summary_cache[1]
            rows = [r for r in self.rows if r.latest]
            m = self.manifest or {}
            named = m.get("run_id")
            run_id = named if isinstance(named, str) else self.name
            out = summarize_rows(rows, attempts=self.rows)
            out["run_gold"] = manifest_gold(self.manifest)
            wl = json_object(m.get("workload"))
            created = m.get("created_at")
            out.update(
                run=self.name,
                run_id=run_id,
                system=_s(m.get("system")),
                model=_s(m.get("model")),
                judge=_s(m.get("judge")),
                workload=_s(wl.get("name")),
                domains=self._domains(wl),
                setting=_s(m.get("setting")) or (rows[0].setting if rows else None),
                status=self.status,
                stop_reason=self.stop_reason(),
                resume=self.resume_command() if self.status == "interrupted" else None,
                owner_gone=self.owner.state == "gone",
                created_at=_s(created),
                finished_at=_s(m.get("finished_at")),
                planned=self.planned(),
                problems=sum(1 for p in self.problems() if p.level != "info"),
                version=self.version,
                last_change=self.last_change,
                records=len(self.rows),
            )
            self._summary_cache = (self.version, out)
            return out


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def summarize_rows(rows: list[Row], attempts: list[Row] | None = None) -> dict[str, Any]:
    """Done, errors, unscored, cost, tokens; the score against each gold with its bootstrap interval over the
    main setting's tasks (as the report's golds section: ``golds``), and ``score`` that of the run's gold;
    an agent's totals (steps, replies without code, steps timed out, how its tasks ended). Cost and tokens
    are summed over ``attempts`` (every attempt, retries included, as the report sums them; default
    ``rows``); ``cost_text`` is the cost as every surface tells it (``unknown (N unpriced calls)`` when a
    price is missing, never ``$0``)."""
    from collections import Counter

    golds = gold_scores(rows)
    paid = rows if attempts is None else attempts
    costs = [r.cost_usd for r in paid]
    unpriced = sum(r.unpriced for r in paid)
    stepped = [r for r in rows if r.agent_steps]
    gold = Counter(r.gold for r in rows).most_common(1)[0][0] if rows else VERIFIED
    g = golds[gold if gold in (OFFICIAL, VERIFIED) else VERIFIED]
    return {
        "done": len(rows),
        "errors": sum(1 for r in rows if r.status == "error"),
        "unscored": sum(1 for r in rows if r.value is None),
        "score": g["score"],
        "ci_low": g["ci_low"],
        "ci_high": g["ci_high"],
        "n_scored": g["n_scored"],
        "golds": golds,
        "cost_usd": sum(c for c in costs if c is not None),
        "cost_unknown": sum(1 for c in costs if c is None),
        "unpriced_calls": unpriced,
        "cost_text": format_cost(sum(c for c in costs if c is not None), unpriced),
        "tokens": sum(r.tokens or 0 for r in paid),
        # the tasks the benchmark cannot support (their records' benchmark_notes), counted once per task
        "unsupported": len({(r.domain, r.task_id) for r in rows if r.benchmark}),
        "steps": sum(r.agent_steps for r in rows),
        "format_errors": sum(r.format_errors for r in rows),
        "step_timeouts": sum(r.step_timeouts for r in rows),
        "n_with_steps": len(stepped),
        "agent_ends": dict(Counter(r.agent_end for r in stepped if r.agent_end).most_common()),
    }


class ResultsIndex:
    """Every run under a results folder (its direct sub-folders that hold a manifest or records), or the
    folder itself when it is one run. Sub-folders that are symbolic links are not followed."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.questions = Questions()
        self._lock = threading.Lock()
        self.runs: dict[str, RunFollower] = {}
        self.version = 0
        self.changed = threading.Condition()
        self.single = is_run_dir(self.root)

    def scan(self) -> bool:
        """Find new and removed run folders and read what changed; True when anything did."""
        found: dict[str, Path] = {}
        if self.single:
            found[self.root.name] = self.root
        else:
            try:
                with os.scandir(self.root) as it:
                    for e in it:
                        if e.name.startswith(".") or not e.is_dir(follow_symlinks=False):
                            continue
                        p = Path(e.path)
                        if is_run_dir(p):
                            found[e.name] = p
            except OSError as e:
                log.warning("%s: cannot list: %s", self.root, e.strerror)
        changed = False
        with self._lock:
            for name in list(self.runs):
                if name not in found:
                    del self.runs[name]
                    changed = True
            for name, p in found.items():
                if name not in self.runs:
                    self.runs[name] = RunFollower(p, name, self.questions)
                    changed = True
            followers = list(self.runs.values())
        for f in followers:
            try:
                changed = f.refresh() or changed
            except Exception:  # noqa: BLE001 - one broken folder never stops the others
                log.exception("%s: refresh failed", f.dir)
        for f in followers:  # the summaries (mean, bootstrap interval) ready before a page asks
            try:
                f.summary()
            except Exception:  # noqa: BLE001
                log.exception("%s: summary failed", f.dir)
        if changed:
            with self.changed:
                self.version += 1
                self.changed.notify_all()
        return changed

    def get(self, name: str) -> RunFollower | None:
        with self._lock:
            return self.runs.get(name)

    def all(self) -> list[RunFollower]:
        with self._lock:
            runs = list(self.runs.values())
        return sorted(
            runs,
            key=lambda f: (_s((f.manifest or {}).get("created_at")) or "", natural_key(f.name)),
            reverse=True,
        )

    def wait(self, since: int, timeout: float) -> int:
        """Block until the version passes ``since`` (or the timeout); the current version."""
        with self.changed:
            if self.version == since:
                self.changed.wait(timeout)
            return self.version


class Watcher(threading.Thread):
    """Rescans the results folder every ``interval_s`` seconds until stopped."""

    def __init__(self, index: ResultsIndex, interval_s: float = 0.5) -> None:
        super().__init__(name="kb-view-watch", daemon=True)
        self.index = index
        self.interval_s = interval_s
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.interval_s):
            try:
                self.index.scan()
            except Exception:  # noqa: BLE001
                log.exception("scanning %s failed", self.index.root)

    def stop(self) -> None:
        self.stopped.set()


__all__ = [
    "Problem",
    "ResultsIndex",
    "RunFollower",
    "Watcher",
    "open_regular",
    "summarize_rows",
]
