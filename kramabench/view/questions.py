"""The question of each task, read from the workload a run names (records do not repeat it).

A run's manifest says where its workload was (``workload.root``, ``workload.domains``); when that
workload file is on this machine, the task page shows the question and the subtask questions, and search
looks in them. Only ``<root>/workload/<domain>.json`` is read (never served), for a domain name without
path separators; a missing or unreadable file is a note, not an error.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_SAFE_DOMAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,100}$")


@dataclass
class DomainQuestions:
    #: task id (and subtask id) -> question
    queries: dict[str, str] = field(default_factory=dict)
    #: task id -> [(subtask id, question)] in the workload's order
    subtasks: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    note: str | None = None
    #: the workload file read (None: none was)
    path: str | None = None

    def question(self, task_id: str, subtask_id: str | None = None) -> tuple[str, str | None]:
        """The question of a task (or subtask), and why there is none: the file is not on this machine (or not
        readable), the task id is not in it, or the file holds no question for it."""
        if self.note:
            return "", self.note
        key = subtask_id or task_id
        if key not in self.queries:
            what = f"subtask id {subtask_id!r}" if subtask_id else f"task id {task_id!r}"
            return (
                "",
                f"{what} is not in the workload file {self.path} (a task of another version of the workload?)",
            )
        q = self.queries[key]
        return (q, None) if q else ("", f"the workload file {self.path} has no question for this task")


class Questions:
    """Questions per (workload root, domain), read once and cached (thread-safe)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str], DomainQuestions] = {}
        self._lock = threading.Lock()

    def domain(self, root: str | None, domain: str) -> DomainQuestions:
        if not root or not isinstance(root, str):
            return DomainQuestions(note="the manifest names no workload folder")
        key = (root, domain)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return hit
        got = _read(root, domain)
        with self._lock:
            self._cache[key] = got
        return got

    def of(self, root: str | None, domain: str, task_id: str, subtask_id: str | None = None) -> str:
        q = self.domain(root, domain).queries
        return q.get(subtask_id or task_id, "")


def _read(root: str, domain: str) -> DomainQuestions:
    from kramabench.workload import WorkloadError
    from kramabench.workload.loader import read_raw, workload_file

    if not _SAFE_DOMAIN.match(domain) or ".." in domain:
        return DomainQuestions(note=f"domain {domain!r} is not a plain name; its questions are not read")
    path = workload_file(Path(root), domain)
    if not path.is_file():
        if Path(root).is_dir():
            return DomainQuestions(
                note=f"the workload at {root} has no {path.relative_to(root)} (a suite of another "
                "format, or moved): questions not shown"
            )
        return DomainQuestions(note=f"{path}: not on this machine; questions not shown")
    try:
        raw, _ = read_raw(path)
    except WorkloadError as e:
        return DomainQuestions(note=str(e))
    out = DomainQuestions(path=str(path))
    for t in raw:
        if not isinstance(t, dict):
            continue
        tid, q = t.get("id"), t.get("query")
        if not isinstance(tid, str):
            continue
        if isinstance(q, str):
            out.queries[tid] = q
        subs: list[tuple[str, str]] = []
        for s in t.get("subtasks") or []:
            if isinstance(s, dict) and isinstance(s.get("id"), str):
                given = s.get("query")
                sq = given if isinstance(given, str) else ""
                out.queries[s["id"]] = sq
                subs.append((s["id"], sq))
        out.subtasks[tid] = subs
    return out


def workload_root(manifest: dict[str, Any] | None) -> str | None:
    wl = (manifest or {}).get("workload")
    root = wl.get("root") if isinstance(wl, dict) else None
    return root if isinstance(root, str) else None


__all__ = ["DomainQuestions", "Questions", "workload_root"]
