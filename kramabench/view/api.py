"""The viewer's JSON API, apart from HTTP: every answer the page asks for, computed from the runs of one
results folder (:class:`ViewApi`). The server (:mod:`kramabench.view.server`) sends them; the bundle
(:mod:`kramabench.view.bundle`) writes them into a static copy of the viewer.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from kramabench.runfolder import RunFolder
from kramabench.view import artifacts as arts
from kramabench.view.calls import CallsIndex, calls_doc, one_call
from kramabench.view.compare import CompareQuery, compare
from kramabench.view.cut import cut_record, value_at
from kramabench.view.golds import TOTAL, breakdown, floors_panel, kept_scores, record_golds
from kramabench.view.query import RowQuery, neighbours, query_hits
from kramabench.view.render import record_render
from kramabench.view.runs import ResultsIndex, RunFollower

#: a running run's floors are computed again at most this often (they read every record)
FLOORS_EVERY_S = 10.0
#: the keys of the task table's query that are not filters (what they keep is the whole run)
NOT_FILTERS = frozenset({"attempts", "sort", "offset", "limit"})


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _int(params: dict[str, list[str]], key: str, what: str) -> int:
    try:
        return int(params.get(key, [""])[-1])
    except ValueError:
        raise ApiError(400, f"{key}: {what} is required") from None


class ViewApi:
    """The answers of the API over ``results`` (a results folder, or one run folder)."""

    def __init__(self, results: Any) -> None:
        self.index = ResultsIndex(results)
        self._calls: dict[str, CallsIndex] = {}
        self._lock = threading.Lock()
        #: (run, version, filter) -> the score of what that filter keeps
        self._kept: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
        self._breakdowns: dict[str, tuple[int, dict[str, Any]]] = {}

    def run(self, name: str) -> RunFollower:
        f = self.index.get(name)
        if f is None:
            raise ApiError(404, f"no run {name!r} in this results folder")
        return f

    def calls_index(self, f: RunFollower) -> CallsIndex:
        with self._lock:
            ci = self._calls.get(f.name)
            if ci is None or ci.path.parent != f.dir:
                ci = self._calls[f.name] = CallsIndex(f.dir)
            return ci

    # -- the run list and a run ------------------------------------------------------------------
    def api_runs(self) -> dict[str, Any]:
        return {
            "results": str(self.index.root),
            "version": self.index.version,
            "runs": [f.summary() for f in self.index.all()],
        }

    def api_run(self, f: RunFollower) -> dict[str, Any]:
        return {
            "summary": f.summary(),
            "manifest": f.manifest,
            "problems": [p.to_json() for p in f.problems()],
        }

    def api_rows(self, f: RunFollower, params: dict[str, list[str]]) -> dict[str, Any]:
        q, ignored = RowQuery.lenient(params)
        rows = f.snapshot(all_attempts=q.attempts == "all")
        hits, facets = query_hits(rows, q)
        page = hits[q.offset : q.offset + q.limit]
        summary = f.summary()
        return {
            "total": len(hits),
            "all": len(rows),
            "offset": q.offset,
            "limit": q.limit,
            "rows": [r.to_json() for r in page],
            "facets": facets,
            "version": f.version,
            "summary": summary,
            "ignored": ignored,
            "kept": self.kept(f, q, hits, summary),
        }

    def kept(
        self, f: RunFollower, q: RowQuery, hits: list[Any], summary: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The score of the tasks the filter keeps, under both golds, with their intervals (None: no filter)."""
        active = {k: v for k, v in q.model_dump().items() if k not in NOT_FILTERS and v not in ("", [], None)}
        if not active:
            return None
        key = (f.name, f.version, tuple(sorted((k, str(v)) for k, v in active.items())))
        with self._lock:
            hit = self._kept.get(key)
            if hit is not None:
                self._kept.move_to_end(key)
                return hit
        setting = (summary.get("golds") or {}).get("setting") or "end-to-end"
        doc = kept_scores(hits, setting)
        with self._lock:
            self._kept[key] = doc
            while len(self._kept) > 256:
                self._kept.popitem(last=False)
        return doc

    def api_breakdown(self, f: RunFollower) -> dict[str, Any]:
        """The report's tables by domain and by difficulty, once per version of the run."""
        version = f.version
        hit = self._breakdowns.get(f.name)
        if hit is not None and hit[0] == version:
            return hit[1]
        doc = {**breakdown(f.snapshot()), "version": version, "total_label": TOTAL}
        self._breakdowns[f.name] = (version, doc)
        return doc

    def api_golds(self, f: RunFollower) -> dict[str, Any]:
        """Both golds with the floors, computed from the run's records once per version of the run; while a
        run grows, again at most every FLOORS_EVERY_S seconds or 5 times as long as the last computation took
        (``current`` False: an earlier version's)."""
        with f.floors_lock:
            hit = f.floors
            if hit is not None:
                version, done_at, took, doc = hit
                if version == f.version or time.monotonic() - done_at < max(FLOORS_EVERY_S, 5 * took):
                    return {**doc, "current": version == f.version}
            version = f.version
            t0 = time.monotonic()
            doc = floors_panel(f)
            f.floors = (version, time.monotonic(), time.monotonic() - t0, doc)
            return {**doc, "current": True}

    def api_nav(self, f: RunFollower, params: dict[str, list[str]]) -> dict[str, Any]:
        """Where record ``i`` is in the task table the other keys describe, and the records before and after."""
        params = dict(params)
        i = _int(params, "i", "a record number")
        params.pop("i", None)
        for k in ("offset", "limit", "page"):
            params.pop(k, None)
        q, ignored = RowQuery.lenient(params)
        rows = f.snapshot(all_attempts=q.attempts == "all")
        return {**neighbours(rows, q, i), "ignored": ignored}

    # -- a record ----------------------------------------------------------------------------------
    def _record(self, f: RunFollower, params: dict[str, list[str]]) -> tuple[Any, dict[str, Any]]:
        i = _int(params, "i", "a record number")
        row = f.row(i)
        if row is None:
            raise ApiError(404, f"run {f.name!r} has no record {i}")
        rec, problem = f.read_record(row)
        if rec is None:
            raise ApiError(409, problem or "the record cannot be read")
        return row, rec

    def api_record(self, f: RunFollower, params: dict[str, list[str]]) -> dict[str, Any]:
        """A record with its long texts and lists cut (``cuts`` says where; :mod:`kramabench.view.cut`), its
        texts rendered (``render``: highlighted code and output, Markdown thoughts), its question (or why there
        is none), its other attempts and both golds."""
        from kramabench.view.questions import workload_root

        i = _int(params, "i", "a record number")
        row = f.row(i)
        if row is None:
            raise ApiError(404, f"run {f.name!r} has no record {i}")
        rec, problem = f.read_record(row)
        cut, cuts = cut_record(rec) if rec is not None else (None, {})
        if row.domain:
            dq = f.questions.domain(workload_root(f.manifest), row.domain)
            question, qnote = dq.question(row.task_id, row.subtask_id)
            subq = dict(dq.subtasks.get(row.task_id, []))
        else:
            question, qnote, subq = "", "the record names no domain: its question cannot be looked up", {}
        return {
            "run": f.name,
            "row": row.to_json(),
            "record": cut,
            "cuts": cuts,
            "problem": problem,
            "render": record_render(cut) if isinstance(cut, dict) else {},
            "question": question,
            "questions_note": qnote,
            "subtask_questions": subq,
            "attempts": [
                {"i": r.i, "attempt": r.attempt, "outcome": r.outcome, "latest": r.latest}
                for r in f.attempts_of(row)
            ],
            "golds": record_golds(rec, f.manifest) if rec is not None else None,
            "summary": f.summary(),
            "calls": self.calls_available(f),
        }

    def calls_available(self, f: RunFollower) -> bool:
        opts = (f.manifest or {}).get("options")
        salt = opts.get("call_key_salt") if isinstance(opts, dict) else None
        return bool(salt) and RunFolder(f.dir).calls.is_file()

    def api_field(self, f: RunFollower, params: dict[str, list[str]]) -> tuple[dict[str, Any], Any]:
        """One value of a record whole (a text or a list the record page shows cut), by its JSON pointer."""
        _row, rec = self._record(f, params)
        path = params.get("path", [""])[-1]
        try:
            value = value_at(rec, path)
        except (KeyError, ValueError):
            raise ApiError(404, f"the record has no value at {path!r}") from None
        return {"path": path, "value": value}, value

    def raw_line(self, f: RunFollower, params: dict[str, list[str]]) -> tuple[Path, int, int]:
        """Where record ``i``'s line is in records.jsonl (the file, offset, length): sent as it is."""
        i = _int(params, "i", "a record number")
        row = f.row(i)
        if row is None:
            raise ApiError(404, f"run {f.name!r} has no record {i}")
        return RunFolder(f.dir).records, row.offset, row.length

    def api_calls(self, f: RunFollower, params: dict[str, list[str]]) -> dict[str, Any]:
        """The model calls a record's task made (one line each, the step each made), from calls.jsonl."""
        _row, rec = self._record(f, params)
        return calls_doc(self.calls_index(f), f.manifest, rec)

    def api_call(self, f: RunFollower, params: dict[str, list[str]]) -> dict[str, Any]:
        """One call whole: the messages sent and the reply (long texts cut, as a record's)."""
        _row, rec = self._record(f, params)
        index = _int(params, "index", "a call index")
        kind = params.get("kind", ["solve"])[-1]
        if kind not in ("solve", "judge"):
            raise ApiError(400, "kind: solve or judge")
        doc = one_call(self.calls_index(f), f.manifest, rec, kind, index)
        if doc is None:
            raise ApiError(404, f"no {kind} call {index} of this record in calls.jsonl")
        return doc

    def api_preview(self, f: RunFollower, params: dict[str, list[str]]) -> dict[str, Any]:
        rel = params.get("path", [""])[-1]
        try:
            path = arts.resolve(f, rel)
        except arts.ArtifactError as e:
            raise ApiError(e.status, str(e)) from None
        try:
            n = int(params["rows"][-1]) if "rows" in params else None
        except ValueError:
            raise ApiError(400, "rows: a number") from None
        return {"path": rel, **arts.preview(path, n)}

    def api_compare(self, params: dict[str, list[str]]) -> dict[str, Any]:
        q, ignored = CompareQuery.lenient(params)
        return {**compare([self.run(n) for n in q.runs], q), "ignored": ignored}


__all__ = ["FLOORS_EVERY_S", "ApiError", "ViewApi"]
