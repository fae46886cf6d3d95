"""Validator: every defect of a loaded workload as a :class:`Finding` (severity, code, id, field, message,
suggestion).

Codes (severity):

- ``answer_type_mismatch`` (error; warning for a number or boolean under a string type, which scorers
  compare as text): the answer does not fit its ``answer_type`` (a string or list in ``numeric_*``, a list
  in ``string_*``, a scalar in ``list_*``, a boolean where a number is expected, ...).
- ``answer_not_finite`` (error): NaN or infinity as a numeric answer; ``answer_element_invalid``
  (warning): null, NaN or an object inside a list answer.
- ``empty_answer`` (error for an empty string; warning for an empty list, which can be a true answer
  such as "which areas ...?" when there are none).
- ``missing_field`` (error; warning for ``step``): a task or subtask without ``query``, ``answer``,
  ``answer_type`` or ``data_sources`` (missing or null), a subtask without ``step``.
- ``duplicate_id`` (error), ``subtask_id_prefix`` (error: a subtask id not starting with its task id),
  ``unknown_difficulty`` (warning: no easy/medium/hard in a task id).
- data sources: ``data_source_nested`` (info: found by name in a deeper folder),
  ``data_source_ambiguous`` (warning: the name occurs in several folders), ``data_source_case``,
  ``data_source_typo``, ``data_source_not_found`` (errors, with the closest existing path as
  suggestion), ``data_source_prefixed`` (warning: written from the workload root, e.g.
  ``data/<domain>/input/x.csv``), ``data_source_missing`` (error: absent from the lake, nothing like it
  exists, or only a Git LFS pointer is there), ``empty_data_source`` (warning: a blank entry),
  ``not_reproducible`` (warning: absent, and documented as absent in the errata file, so tasks that read
  it cannot be reproduced), ``data_source_outside_lake`` (error), ``empty_data_sources`` (warning).
- ``task_id_shared`` (warning, from ``kramabench workloads validate`` over several domains: one id names
  different tasks in two domains; records are kept apart by domain, predictions lines must name theirs).
- ``solution_missing`` (error), ``solution_outside_root`` (error: a ``solution`` that is absolute, climbs out
  with ``..`` or leads out through a link; it is never read), ``duplicate_key_functionality`` (warning), ``lake_empty`` (warning), ``lake_unreadable`` (warning: a lake file or folder this process cannot read or
  list; left out of what systems see).

The loader adds its own findings (``data_sources_string``, ``unknown_answer_type``, ``missing_id``,
``nested_subtasks`` (warning: a subtask holding subtasks of its own, which are not run),
``task_not_object``, ``invalid_field``, ``erratum_*``, ...).
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from kramabench.contracts.answers import builtin_answer_type
from kramabench.files import OutsideRoot, clip
from kramabench.workload.errata import AbsentFile
from kramabench.workload.jsonkind import json_kind
from kramabench.workload.models import AnswerType, Difficulty, Finding, Severity, Subtask, Task, Workload
from kramabench.workload.solutions import solution_path
from kramabench.workload.sources import LakeInventory, Match, Resolution

#: findings that do not make a workload fail: documented limits, not defects to fix
DOCUMENTED_CODES = frozenset({"not_reproducible"})

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def _parse_number(s: str) -> int | float | None:
    t = s.strip().replace(",", "") if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?", s.strip()) else s.strip()
    if not _NUMBER.match(t):
        return None
    v = float(t)
    return int(v) if re.fullmatch(r"[+-]?\d+", t) else v


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _mismatch(message: str, suggestion: str | None) -> tuple[Severity, str, str, str | None]:
    """An ``answer_type_mismatch`` error: the answer is not of its type's JSON kind."""
    return ("error", "answer_type_mismatch", message, suggestion)


def _list_for_scalar(
    at: AnswerType, answer: list[Any], suggestion: str
) -> tuple[Severity, str, str, str | None]:
    n = len(answer)
    return _mismatch(
        f"the {at.value} answer is a list of {n} item{'s' if n != 1 else ''} {_short(answer)}", suggestion
    )


def _short(v: Any, n: int = 70) -> str:
    text = json.dumps(v, ensure_ascii=False, default=str) if not isinstance(v, str) else repr(v)
    return clip(text, n)


def _list_literal(s: str) -> list[Any] | None:
    """A list written inside a string (``"Expected answer: ['a', 'b']"``), if there is exactly one."""
    start, end = s.find("["), s.rfind("]")
    if start < 0 or end <= start:
        return None
    body = s[start : end + 1]
    for parse in (json.loads, ast.literal_eval):
        try:
            v = parse(body)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(v, list):
            return v
    return None


def check_answer(answer: Any, at: AnswerType) -> list[tuple[Severity, str, str, str | None]]:
    """Problems of one answer under its type: (severity, code, message, suggestion)."""
    out: list[tuple[Severity, str, str, str | None]] = []
    kind = at.kind
    approx = "approximate" if at.approximate else "exact"
    if kind == "numeric":
        if _is_number(answer):
            if isinstance(answer, float) and not math.isfinite(answer):
                out.append(("error", "answer_not_finite", f"the {at.value} answer is {answer}", None))
        elif isinstance(answer, str):
            num = _parse_number(answer)
            if num is not None:
                out.append(
                    _mismatch(
                        f"the {at.value} answer is the string {answer!r}, not a number",
                        f"store the number {num!r}",
                    )
                )
            else:
                out.append(
                    _mismatch(
                        f"the {at.value} answer is the non-numeric string {_short(answer)}",
                        "use a string_* answer type, or store the number",
                    )
                )
        elif isinstance(answer, list):
            if answer and all(_is_number(x) for x in answer):
                sug = f"answer_type list_{approx}" if len(answer) > 1 else f"store the number {answer[0]!r}"
            else:
                sug = f"answer_type list_{approx}"
            out.append(_list_for_scalar(at, answer, sug))
        else:
            out.append(_mismatch(f"the {at.value} answer is {json_kind(answer)}, not a number", None))
    elif kind == "string":
        if isinstance(answer, str):
            if not answer.strip():
                out.append(("error", "empty_answer", f"the {at.value} answer is an empty string", None))
        elif _is_number(answer) or isinstance(answer, bool):
            out.append(
                (
                    "warning",
                    "answer_type_mismatch",
                    f"the {at.value} answer is {json_kind(answer)} ({answer!r}); scorers compare it as the text {str(answer)!r}",
                    f"store the string {json.dumps(str(answer))}"
                    + (" or use numeric_exact" if _is_number(answer) else ""),
                )  # fmt: skip
            )
        elif isinstance(answer, list):
            if len(answer) == 1 and isinstance(answer[0], str):
                sug = f"store the string {answer[0]!r}"
            else:
                sug = f"answer_type list_{approx}"
            out.append(_list_for_scalar(at, answer, sug))
        else:
            out.append(_mismatch(f"the {at.value} answer is {json_kind(answer)}, not a string", None))
    else:  # list
        if isinstance(answer, list):
            if not answer:
                out.append(
                    (
                        "warning",
                        "empty_answer",
                        f"the {at.value} answer is an empty list: only an empty prediction can match it",
                        None,
                    )  # fmt: skip
                )
            bad = [
                x for x in answer
                if x is None or isinstance(x, dict) or (isinstance(x, float) and not math.isfinite(x))
            ]  # fmt: skip
            if bad:
                out.append(
                    (
                        "warning",
                        "answer_element_invalid",
                        f"the {at.value} answer holds {len(bad)} null/NaN/object item(s), e.g. {_short(bad[0])}",
                        None,
                    )  # fmt: skip
                )
        elif isinstance(answer, str):
            lit = _list_literal(answer)
            sug = f"store the list {_short(lit, 120)}" if lit is not None else f"store [{json.dumps(answer)}]"
            out.append(_mismatch(f"the {at.value} answer is the string {_short(answer)}, not a list", sug))
        else:
            out.append(
                _mismatch(
                    f"the {at.value} answer is {json_kind(answer)} ({_short(answer)}), not a list",
                    f"store [{json.dumps(answer)}]" if answer is not None else None,
                )
            )
    return out


#: a data source the lake holds under another path: the finding's severity, code, message (after ``data source
#: <entry>``) and suggestion; ``{first}`` is the first path found, ``{closest}`` all of them, ``{n}`` how many
_ELSEWHERE: dict[Match, tuple[Severity, str, str, str]] = {
    Match.NESTED: ("info", "data_source_nested", "is found in a deeper folder: {first!r}", "write {first!r}"),
    Match.PREFIXED: (
        "warning",
        "data_source_prefixed",
        "is written with leading folders; relative to the lake it is {first!r}",
        "write {first!r}",
    ),
    Match.AMBIGUOUS: (
        "warning",
        "data_source_ambiguous",
        "matches {n} paths in different folders: {closest}",
        "write the full lake-relative path",
    ),
    Match.CASE: (
        "error",
        "data_source_case",
        "matches no path; {first!r} differs only in letter case{deeper}",
        "write {first!r}",
    ),
    Match.TYPO: ("error", "data_source_typo", "matches no path; closest: {closest}", "write {first!r}"),
    Match.WORDS: (
        "error",
        "data_source_not_found",
        "is not a path of the lake; file(s) with those words: {closest}",
        "write {first!r}",
    ),
}


class _Checker:
    def __init__(self, wl: Workload, absent: Sequence[AbsentFile | str]) -> None:
        self.wl = wl
        self.out: list[Finding] = []
        self.inv = LakeInventory(wl.lake)
        self.absent = {
            _norm_path(a.path if isinstance(a, AbsentFile) else str(a)): a.reason
            if isinstance(a, AbsentFile)
            else ""
            for a in absent
        }
        self._resolved: dict[str, Any] = {}
        self._loader_codes = {(f.task_id, f.subtask_id, f.code) for f in wl.findings}

    def add(self, severity: Severity, code: str, message: str, *, task: Task, sub: Subtask | None = None,
            field: str | None = None, suggestion: str | None = None) -> None:  # fmt: skip
        self.out.append(
            Finding(
                severity=severity,
                code=code,
                domain=self.wl.domain,
                task_id=task.id,
                subtask_id=sub.id if sub else None,
                field=field,
                message=message,
                suggestion=suggestion,
                file=str(self.wl.source),
            )
        )

    def add_lake(self, severity: Severity, code: str, message: str, suggestion: str | None = None) -> None:
        """A finding about the workload's data lake (its field ``lake``, no task)."""
        self.out.append(
            Finding(
                severity=severity,
                code=code,
                domain=self.wl.domain,
                field="lake",
                message=message,
                suggestion=suggestion,
                file=str(self.wl.source),
            )
        )

    def run(self) -> list[Finding]:
        if not self.inv.files and not self.inv.unreadable:
            self.add_lake("warning", "lake_empty", f"the data lake {self.wl.lake} holds no files")
        for rel, kind in self.inv.special:
            self.add_lake(
                "warning",
                "lake_special_file",
                f"{rel} in the data lake is a {kind}, not a regular file: skipped (reading it could block forever)",
                suggestion="remove it from the lake",
            )
        for rel, why in self.inv.unreadable[:20]:
            whole = rel == "."
            self.add_lake(
                "error" if whole else "warning",
                "lake_unreadable",
                f"the data lake {self.wl.lake}: {why}; its data sources are not checked"
                if whole
                else f"{rel} in the data lake {self.wl.lake}: {why}; systems do not see it",
                suggestion="give it read permission (chmod a+r, and a+x for a folder)",
            )
        if len(self.inv.unreadable) > 20:
            self.add_lake(
                "warning",
                "lake_unreadable",
                f"and {len(self.inv.unreadable) - 20} more unreadable file(s) or folder(s) in the data lake",
            )
        self.check_ids()
        for t in self.wl.tasks:
            self.check_item(t, t, None)
            for s in t.subtasks:
                self.check_item(t, s, s)
            self.check_task_extras(t)
        return self.out

    # -- ids -------------------------------------------------------------------------------------------
    def check_ids(self) -> None:
        seen: dict[str, str] = {}
        for t in self.wl.tasks:
            if difficulty_unknown(t):
                self.add("warning", "unknown_difficulty",
                         f"task id {t.id!r} has no easy/medium/hard part; difficulty unknown",
                         task=t, field="id", suggestion="name it <domain>-<easy|medium|hard>-<n>")  # fmt: skip
            items: list[tuple[str, Subtask | None]] = [(t.id, None)] + [(s.id, s) for s in t.subtasks]
            used = {s.id for s in t.subtasks}
            for j, (i, sub) in enumerate(items):
                where = f"subtask {i} of task {t.id}" if sub else f"task {i}"
                if i in seen:
                    self.add("error", "duplicate_id", f"id {i!r} is used twice: by {seen[i]} and by {where}",
                             task=t, sub=sub, field="id", suggestion="give each task and subtask its own id")  # fmt: skip
                else:
                    seen[i] = where
                if sub is not None and not i.startswith(t.id + "-"):
                    want = f"{t.id}-{j}"
                    n = j
                    while want in used or want in seen:
                        n += 1
                        want = f"{t.id}-{n}"
                    self.add("error", "subtask_id_prefix",
                             f"subtask id {i!r} (subtask {j} of {t.id}) does not start with its task id {t.id!r}",
                             task=t, sub=sub, field="id", suggestion=f"rename it {want!r}")  # fmt: skip

    # -- fields ----------------------------------------------------------------------------------------
    def check_item(self, t: Task, item: Task | Subtask, sub: Subtask | None) -> None:
        what = "subtask" if sub else "task"
        if not item.query.strip():
            self.add("error", "missing_field", f"the {what} has no query", task=t, sub=sub, field="query")
        if sub is not None and (sub.step is None or not sub.step.strip()):
            self.add("warning", "missing_field", "the subtask has no step (its pipeline step description)",
                     task=t, sub=sub, field="step")  # fmt: skip
        if item.answer is None:
            self.add("error", "missing_field", f"the {what} has no answer (missing or null)",
                     task=t, sub=sub, field="answer")  # fmt: skip
        if item.answer_type is None:
            if (t.id, sub.id if sub else None, "unknown_answer_type") not in self._loader_codes:
                self.add("error", "missing_field", f"the {what} has no answer_type", task=t, sub=sub,
                         field="answer_type", suggestion="one of " + ", ".join(a.value for a in AnswerType))  # fmt: skip
        elif item.answer is not None:
            # a plug-in's answer type: its scorer alone knows what a valid answer is
            builtin = builtin_answer_type(item.answer_type)
            checks = check_answer(item.answer, builtin) if builtin is not None else []
            for sev, code, msg, sug in checks:
                self.add(sev, code, msg, task=t, sub=sub, field="answer", suggestion=sug)
        self.check_sources(t, item, sub)

    def check_sources(self, t: Task, item: Task | Subtask, sub: Subtask | None) -> None:
        what = "subtask" if sub else "task"
        ds = item.data_sources
        if ds and any(rel == "." for rel, _why in self.inv.unreadable):
            return  # the lake cannot be listed: one lake_unreadable finding says it, not one per source
        if ds is None:
            sug = None
            if sub is not None and t.data_sources:
                sug = f"the task's data sources: {json.dumps(t.data_sources)}"
            self.add("error", "missing_field", f"the {what} has no data_sources", task=t, sub=sub,
                     field="data_sources", suggestion=sug)  # fmt: skip
            return
        if not ds:
            self.add("warning", "empty_data_sources", f"the {what} names no data source", task=t, sub=sub,
                     field="data_sources", suggestion='name the files it reads, or "./" for the whole lake')  # fmt: skip
            return
        for entry in ds:
            if not entry.strip():
                self.add("warning", "empty_data_source", f"the {what}'s data_sources holds an empty entry {entry!r}",
                         task=t, sub=sub, field="data_sources", suggestion='remove it; "./" names the whole lake')  # fmt: skip
                continue
            r = self._resolved.get(entry)
            if r is None:
                r = self._resolved[entry] = self.inv.resolve(entry)
            self.report_source(t, sub, entry, r)

    def report_source(self, t: Task, sub: Subtask | None, entry: str, r: Resolution) -> None:
        paths = r.paths
        closest = ", ".join(repr(p) for p in paths)

        def add(sev: Severity, code: str, msg: str, sug: str | None) -> None:
            self.add(sev, code, msg, task=t, sub=sub, field="data_sources", suggestion=sug)

        pointers = [p for p in paths if p in self.inv.pointers]
        if r.ok and pointers:
            self.report_absent(
                t, sub, entry, f"{pointers[0]!r} is a Git LFS pointer, not the data", pointers[0]
            )
            return
        if r.match in (Match.EXACT, Match.LAKE):
            return
        elsewhere = _ELSEWHERE.get(r.match)
        if elsewhere is not None:
            sev, code, msg, sug = elsewhere
            first = paths[0] if paths else ""
            facts = {
                "first": first,
                "closest": closest,
                "n": len(paths),
                "deeper": " and sits in a deeper folder"
                if first.count("/") > entry.strip().strip("/").count("/")
                else "",
            }
            if r.match is Match.WORDS and len(paths) != 1:
                sug = "one of {closest}"
            add(sev, code, f"data source {entry!r} {msg.format(**facts)}", sug.format(**facts))
        elif r.match is Match.OUTSIDE:
            what = (
                "is a URL, not a file of the data lake" if "://" in entry else "points outside the data lake"
            )
            add("error", "data_source_outside_lake", f"data source {entry!r} {what}",
                "put the data in the lake and write its path relative to the lake")  # fmt: skip
        else:
            self.report_absent(t, sub, entry, f"it matches no file of the lake {self.wl.lake}", entry)

    def report_absent(self, t: Task, sub: Subtask | None, entry: str, why: str, path: str) -> None:
        reason = self.absent.get(_norm_path(path))
        if reason is None:
            reason = self.absent.get(_norm_path(entry))
        if reason is not None:
            self.add("warning", "not_reproducible",
                     f"data source {entry!r} is absent from the lake (documented: {reason}); this "
                     f"{'subtask' if sub else 'task'} cannot be reproduced from this copy",
                     task=t, sub=sub, field="data_sources")  # fmt: skip
        else:
            self.add("error", "data_source_missing", f"data source {entry!r} is absent: {why}",
                     task=t, sub=sub, field="data_sources",
                     suggestion="add the file to the lake, or document it as [[absent]] in the errata file")  # fmt: skip

    def check_task_extras(self, t: Task) -> None:
        if t.solution:
            try:
                path = solution_path(self.wl.root, t.solution)
            except OutsideRoot as e:
                self.add(
                    "error",
                    "solution_outside_root",
                    f"reference solution {t.solution!r} {e}: a solution must lie inside the workload root",
                    task=t,
                    field="solution",
                    suggestion="put the solution under the workload root and write its path relative to the root",
                )
                return
            if not path.is_file():
                self.add("error", "solution_missing", f"reference solution {t.solution!r} does not exist",
                         task=t, field="solution")  # fmt: skip
        ids = [k.id for k in t.key_functionalities]
        dups = sorted({i for i in ids if ids.count(i) > 1})
        if dups:
            self.add("warning", "duplicate_key_functionality", f"key functionality id(s) used twice: {dups}",
                     task=t, field="key_functionalities")  # fmt: skip


def _norm_path(p: str) -> str:
    p = re.sub(r"/+", "/", p.strip().replace("\\", "/"))
    while p.startswith("./"):
        p = p[2:]
    return p.rstrip("/")


def difficulty_unknown(t: Task) -> bool:
    return t.difficulty is Difficulty.UNKNOWN


def validate_workload(wl: Workload, *, absent: Iterable[AbsentFile | str] = ()) -> list[Finding]:
    """Findings of the validator for a loaded workload (not including the loader's own findings).

    ``absent``: lake paths documented as absent (``AbsentFile`` entries of the errata, or plain
    strings); data sources naming them are ``not_reproducible`` warnings instead of errors.
    """
    return _Checker(wl, list(absent)).run()


def shared_id_findings(workloads: Sequence[Workload]) -> list[Finding]:
    """Warnings for task ids that name different tasks in two or more domains of one root (``task_id_shared``),
    added to each domain's findings. Runs and reports key records by domain too, so nothing is lost there; a
    predictions file must then name the domain of each line (``"domain"``) for ``kramabench score`` to tell
    them apart. The same task in two domains (``legal`` and its subset ``legal-tiny``) is no finding."""
    owners: dict[str, list[tuple[Workload, Task]]] = {}
    for wl in workloads:
        for t in wl.tasks:
            owners.setdefault(t.id, []).append((wl, t))
    out: list[Finding] = []
    for tid, pairs in owners.items():
        doms = {wl.domain for wl, _t in pairs}
        if len(doms) < 2:
            continue
        shapes = {(t.query, json.dumps(t.answer, sort_keys=True, default=str)) for _wl, t in pairs}
        if len(shapes) < 2:
            continue
        for wl, _t in pairs:
            others = ", ".join(sorted(doms - {wl.domain}))
            out.append(Finding(
                severity="warning", code="task_id_shared", domain=wl.domain, task_id=tid, field="id",
                message=f"task id {tid!r} is also the id of a different task in {others}; records are kept apart "
                "by domain, but a predictions line without a \"domain\" cannot say which it answers",
                suggestion="give the tasks different ids, or write \"domain\" in each predictions line",
                file=str(wl.source),
            ))  # fmt: skip
    return out


def not_reproducible_tasks(wl: Workload) -> dict[str, list[str]]:
    """Task id -> ids (the task and/or its subtasks) that read lake files documented as absent."""
    out: dict[str, list[str]] = {}
    for f in wl.findings:
        if f.code == "not_reproducible" and f.task_id:
            ids = out.setdefault(f.task_id, [])
            where = f.subtask_id or f.task_id
            if where not in ids:
                ids.append(where)
    return out


def is_failing(f: Finding) -> bool:
    """An error-level finding that is not a documented limit (the CLI exits 1 on these)."""
    return f.severity == "error" and f.code not in DOCUMENTED_CODES


__all__ = [
    "DOCUMENTED_CODES", "check_answer", "is_failing", "not_reproducible_tasks", "shared_id_findings", "validate_workload",
]  # fmt: skip
