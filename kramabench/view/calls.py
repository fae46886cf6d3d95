"""The model calls of a record, from its run's ``calls.jsonl`` (:mod:`kramabench.models.recording`).

A run records each model call as one line, under the key of the task that made it
(:func:`kramabench.run.runner.call_key`: a salted hash of setting, domain, task id and subtask id; the salt is
in the manifest's ``options.call_key_salt``) and its index in that task (0, 1, ...); a judge's calls go under
the key followed by ``:judge``. The viewer indexes the file the first time a task page asks for calls (only the
key, the index and the start time of each line, read from the line's first and last bytes), then reads only
what was appended; a call is read whole when it is asked for. An agent's step ``n`` made call ``n - 1``: each
step is matched to its call by the reply's text (the step's code or thought in it), else by that position.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from kramabench.runfolder import CALLS
from kramabench.view.cut import cut_record
from kramabench.view.runs import open_regular

#: a calls.jsonl line longer than this is not read (as a records.jsonl line; the recorder caps a reply at 1,000,000
#: characters)
MAX_CALL_LINE = 64 << 20
#: a call is counted as a record's when it started within this long before the record started or after it
#: finished (the calls of an earlier attempt of the same task share its key)
SLACK = timedelta(seconds=5)

_HEAD = re.compile(rb'^\{"task_key":"((?:[^"\\]|\\.){1,400})","call_index":(-?\d+)')
_STARTED = re.compile(rb'"started_at":"([^"\\]{10,40})"\}\s*$')


@dataclass(slots=True)
class CallLine:
    index: int
    offset: int
    length: int
    started_at: str | None


def _when(s: Any) -> datetime | None:
    if not isinstance(s, str):
        return None
    try:
        d = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    return d if d.tzinfo is not None else None


class CallsIndex:
    """Where each task's calls are in one run's ``calls.jsonl``, read as the file grows."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / CALLS
        self._lock = threading.Lock()
        self.offset = 0
        self._ino: int | None = None
        self.by_key: dict[str, list[CallLine]] = {}
        self.bad_lines = 0
        self.exists = False

    def refresh(self) -> None:
        with self._lock:
            try:
                fd = open_regular(self.path)
            except OSError:
                self.exists = False
                self.by_key, self.offset, self._ino = {}, 0, None
                return
            self.exists = True
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                if self._ino is not None and (st.st_ino != self._ino or st.st_size < self.offset):
                    self.by_key, self.offset = {}, 0  # replaced or cut: read again
                self._ino = st.st_ino
                if st.st_size == self.offset:
                    return
                f.seek(self.offset)
                while True:
                    start = f.tell()
                    line = f.readline(MAX_CALL_LINE + 1)
                    if not line:
                        break
                    if not line.endswith(b"\n"):
                        if len(line) > MAX_CALL_LINE:  # too long: skip to its end
                            self.bad_lines += 1
                            while line and not line.endswith(b"\n"):
                                line = f.readline(1 << 20)
                            self.offset = f.tell() if line else start
                            if not line:
                                break
                            continue
                        break  # being written: the next look reads it
                    self.offset = f.tell()
                    self._add(line, start)

    def _add(self, line: bytes, start: int) -> None:
        m = _HEAD.match(line)
        if m is not None:
            key = json.loads(b'"' + m.group(1) + b'"')
            index = int(m.group(2))
        else:  # another field order (a hand-written line): read it whole
            try:
                doc = json.loads(line)
            except ValueError:
                self.bad_lines += 1
                return
            if (
                not isinstance(doc, dict)
                or not isinstance(doc.get("task_key"), str)
                or not isinstance(doc.get("call_index"), int)
            ):
                self.bad_lines += 1
                return
            key, index = doc["task_key"], doc["call_index"]
        s = _STARTED.search(line[-120:])
        self.by_key.setdefault(key, []).append(
            CallLine(index, start, len(line), s.group(1).decode() if s else None)
        )

    def lines_of(self, key: str) -> list[CallLine]:
        with self._lock:
            return list(self.by_key.get(key, ()))

    def read(self, cl: CallLine) -> dict[str, Any] | None:
        try:
            fd = open_regular(self.path)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as f:
            f.seek(cl.offset)
            raw = f.read(cl.length)
        try:
            doc = json.loads(raw)
        except (ValueError, RecursionError):
            return None
        return doc if isinstance(doc, dict) else None


def record_key(manifest: dict[str, Any] | None, rec: dict[str, Any]) -> str | None:
    """The key under which a record's task made its calls (None: the manifest holds no salt)."""
    from kramabench.run.runner import call_key

    opts = (manifest or {}).get("options")
    salt = opts.get("call_key_salt") if isinstance(opts, dict) else None
    if not isinstance(salt, str) or not salt:
        return None
    named, sub_named = rec.get("setting"), rec.get("subtask_id")
    setting = named if isinstance(named, str) else "end-to-end"
    sub = sub_named if isinstance(sub_named, str) else None
    return call_key(salt, setting, str(rec.get("domain", "")), str(rec.get("task_id", "")), sub)


def record_calls(
    index: CallsIndex, manifest: dict[str, Any] | None, rec: dict[str, Any]
) -> tuple[list[tuple[str, CallLine]], str | None]:
    """The calls a record's task made (``solve`` and ``judge``), in index order, the last line of each index
    within the record's time; and a note when none can be found."""
    key = record_key(manifest, rec)
    if key is None:
        return (
            [],
            "the manifest holds no call-key salt (a run recorded before calls were keyed): its calls cannot be found",
        )
    index.refresh()
    if not index.exists:
        return [], "this run has no calls.jsonl (its model calls were not recorded)"
    t0, t1 = _when(rec.get("started_at")), _when(rec.get("finished_at"))
    out: list[tuple[str, CallLine]] = []
    for kind, k in (("solve", key), ("judge", key + ":judge")):
        chosen: dict[int, CallLine] = {}
        for cl in index.lines_of(k):
            when = _when(cl.started_at)
            if (
                t0 is not None
                and t1 is not None
                and when is not None
                and not (t0 - SLACK <= when <= t1 + SLACK)
            ):
                continue  # another attempt's
            chosen[cl.index] = cl  # the last line of an index wins (as replay reads them)
        out.extend((kind, chosen[i]) for i in sorted(chosen))
    if not out:
        return [], "no call of this task is in calls.jsonl"
    return out, None


def _needle(text: Any, n: int) -> str | None:
    if not isinstance(text, str):
        return None
    t = text.strip()
    return t[:n] if len(t) >= 8 else None


def match_steps(steps: list[Any], replies: list[str | None]) -> list[dict[str, Any]]:
    """For each step, the index (in ``replies``: the solve calls in order) of the call that made it and how it
    was found (``text``: its code or thought is in the reply; ``position``: step n, call n - 1)."""
    out: list[dict[str, Any]] = []
    for n, s in enumerate(steps):
        needles = (
            [x for x in (_needle(s.get("code"), 120), _needle(s.get("thought"), 80)) if x]
            if isinstance(s, dict)
            else []
        )
        found: dict[str, Any] = {"step": n + 1, "call": None, "matched": None}
        if needles:
            order = (
                [n, *[k for k in range(len(replies)) if k != n]]
                if n < len(replies)
                else list(range(len(replies)))
            )
            for k in order:
                r = replies[k]
                if isinstance(r, str) and any(x in r for x in needles):
                    found.update(call=k, matched="text")
                    break
        if found["call"] is None and n < len(replies):
            found.update(call=n, matched="position")
        out.append(found)
    return out


def call_summary(kind: str, cl: CallLine, doc: dict[str, Any] | None) -> dict[str, Any]:
    d = doc or {}
    usage_v, err_v = d.get("usage"), d.get("error")
    usage = usage_v if isinstance(usage_v, dict) else {}
    err = err_v if isinstance(err_v, dict) else None
    text = d.get("text")
    return {
        "kind": kind,
        "index": cl.index,
        "started_at": cl.started_at,
        "latency_s": d.get("latency_s"),
        "model": d.get("model_id"),
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "cost_usd": d.get("cost_usd"),
        "finish_reason": d.get("finish_reason"),
        "cached": d.get("cached"),
        "attempts": d.get("attempts"),
        "error": f"{err.get('kind')}: {err.get('message')}" if err else None,
        "messages": len(d["messages"]) if isinstance(d.get("messages"), list) else None,
        "reply_chars": len(text) if isinstance(text, str) else None,
        "readable": doc is not None,
    }


def calls_doc(index: CallsIndex, manifest: dict[str, Any] | None, rec: dict[str, Any]) -> dict[str, Any]:
    """The calls of a record, summed up one line each, with the step each solve call made."""
    found, note = record_calls(index, manifest, rec)
    docs = [(kind, cl, index.read(cl)) for kind, cl in found]
    solve = [(cl, d) for kind, cl, d in docs if kind == "solve"]
    replies = [d.get("text") if d else None for _cl, d in solve]
    steps_v = rec.get("steps")
    steps = steps_v if isinstance(steps_v, list) else []
    matches = match_steps(steps, replies)
    by_call = {m["call"]: m for m in matches if m["call"] is not None}
    calls = []
    for kind, cl, d in docs:
        s = call_summary(kind, cl, d)
        if kind == "solve":
            k = next(i for i, (c, _d) in enumerate(solve) if c is cl)
            m = by_call.get(k)
            s["step"] = m["step"] if m else None
            s["matched"] = m["matched"] if m else None
        calls.append(s)
    return {
        "calls": calls,
        "note": note,
        "steps": [
            {
                "step": m["step"],
                "call": solve[m["call"]][0].index if m["call"] is not None else None,
                "matched": m["matched"],
            }
            for m in matches
        ],
    }


def one_call(
    index: CallsIndex, manifest: dict[str, Any] | None, rec: dict[str, Any], kind: str, call_index: int
) -> dict[str, Any] | None:
    """One call of a record, whole but for long texts (cut as a record is: :func:`kramabench.view.cut.cut_record`)."""
    found, _note = record_calls(index, manifest, rec)
    for k, cl in found:
        if k == kind and cl.index == call_index:
            doc = index.read(cl)
            if doc is None:
                return {
                    "kind": kind,
                    "index": call_index,
                    "call": None,
                    "cuts": {},
                    "note": "this line of calls.jsonl does not read as JSON",
                }
            cut, cuts = cut_record(doc)
            return {"kind": kind, "index": call_index, "call": cut, "cuts": cuts, "note": None}
    return None


__all__ = [
    "CALLS",
    "CallLine",
    "CallsIndex",
    "calls_doc",
    "match_steps",
    "one_call",
    "record_calls",
    "record_key",
]
