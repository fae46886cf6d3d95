"""Errata: reviewed corrections of defects in workload files, applied when a workload is loaded.

An errata file is TOML. Each ``[[erratum]]`` corrects one field of one task or subtask::

    [[erratum]]
    domain = "environment"
    task = "environment-hard-7"           # id of the task, as in the file
    subtask = "environment-hard-7-8"      # optional: id of the subtask, as in the file
    field = "answer"                      # a top-level key of the task/subtask object
    old = "10.87"                         # value in the file; omit when the field is absent there
    new = 10.87                           # corrected value
    reason = "a numeric_exact answer stored as a string"

For a value too long to quote, ``old_sha256`` (the sha256 of the value's canonical JSON, see
:func:`value_sha256`) may replace ``old``, and ``transform`` may replace ``new``: ``"parse_list"`` (the
list written inside the old string), ``"parse_number"`` (the number written as the old string),
``"wrap_list"`` (the old value as a one-element list).

An erratum is applied only when ``old`` equals the value in the file (type-aware: ``"1"`` is not ``1``,
``true`` is not ``1``). Otherwise it is not applied and becomes a finding, so errata stay honest when
the upstream file changes: ``erratum_stale`` (the file holds another value), ``erratum_obsolete``
(the file already holds ``new``), ``erratum_target_missing`` (no such task/subtask). Errata apply in
file order, each to the state left by the previous ones (a renamed subtask is addressed by its new id
afterwards).

``[[absent]]`` entries document lake files that are known to be missing from every copy of a workload
(``domain``, ``path`` relative to the lake, ``reason``). Data sources naming them are reported as
``not_reproducible`` (a warning) instead of an error.

``[[review]]`` entries give each task its reviewed class with the evidence
(:class:`~kramabench.workload.models.TaskReview`)::

    [[review]]
    domain = "legal"
    task = "legal-easy-20"
    class = "solution-defect"         # reproduces | gold-defect | solution-defect | ambiguous | unreproducible
    why = "the solution prints the fraction 0.40; the question asks for a percentage (40)"
    evidence = "last line of the solution: print(share)"
    derivation = '''...python that prints the value from data/legal/input/...'''
    derived = 40.04

Load checks that tie the classes to the rest of the file: at most one review per task; a ``gold-defect``
has an erratum of an ``answer`` field of that task; a ``solution-defect`` has none of the main answer;
an ``unreproducible`` task's files are ``[[absent]]`` entries of its domain.
"""

from __future__ import annotations

import ast
import copy
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kramabench.files import (
    ERRATA_BYTES,
    FileRefused,
    OutsideRoot,
    check_relative,
    clip,
    field_error,
    first_error,
    read_text,
    sha256_hex,
)
from kramabench.workload.errors import WorkloadError, refused
from kramabench.workload.jsonkind import json_kind
from kramabench.workload.models import TASK_CLASSES, ErratumApplied, Finding, Severity, TaskClass, TaskReview

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_MISSING = object()
_M = TypeVar("_M", bound=BaseModel)


class Erratum(BaseModel):
    """One correction as written in an errata file."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    task: str
    subtask: str | None = None
    field: str
    old: Any = Field(default=None, description="value in the file; None when the field is absent there")
    old_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$", description="instead of `old`")
    new: Any = None
    transform: Literal["parse_list", "parse_number", "wrap_list"] | None = Field(
        default=None, description="instead of `new`: derive the corrected value from the old one"
    )
    reason: str = Field(min_length=3)
    derivation: str | None = Field(
        None,
        description="Python run from the workload root (lake at data/<domain>/input/) that prints `new` as JSON",
    )
    has_old: bool = Field(default=True, exclude=True, description="False when `old` was omitted")

    @model_validator(mode="after")
    def _one_of(self) -> Erratum:
        if self.old_sha256 is not None and self.has_old:
            raise ValueError("give either `old` or `old_sha256`, not both")
        if (self.new is None) == (self.transform is None):
            raise ValueError("give exactly one of `new` and `transform`")
        return self

    @property
    def expects_absent(self) -> bool:
        return not self.has_old and self.old_sha256 is None

    def matches(self, current: Any) -> bool:
        if self.old_sha256 is not None:
            return value_sha256(current) == self.old_sha256
        return same_json(current, self.old)

    def corrected(self, current: Any) -> Any:
        """The corrected value; raises ValueError when a transform does not apply."""
        if self.transform is None:
            return copy.deepcopy(self.new)
        if self.transform == "wrap_list":
            return [copy.deepcopy(current)]
        if not isinstance(current, str):
            raise ValueError(f"transform {self.transform!r} needs a string, found {type(current).__name__}")
        if self.transform == "parse_number":
            v = json.loads(current.strip())
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError(f"{current!r} is not a number")
            return v
        start, end = current.find("["), current.rfind("]")
        if start < 0 or end < start:
            raise ValueError("no list in the string")
        body = current[start : end + 1]
        try:
            v = json.loads(body)
        except json.JSONDecodeError:
            v = ast.literal_eval(body)
        if not isinstance(v, list):
            raise ValueError("no list in the string")
        return v

    @property
    def target(self) -> str:
        return self.subtask or self.task


class AbsentFile(BaseModel):
    """A lake file documented as absent (tasks reading it cannot be reproduced)."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    path: str
    reason: str = Field(min_length=3)


class ErrataFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: Path | None = None
    errata: list[Erratum] = Field(default_factory=list)
    absent: list[AbsentFile] = Field(default_factory=list)
    reviews: list[TaskReview] = Field(default_factory=list)

    def for_domain(self, domain: str) -> ErrataFile:
        return ErrataFile(
            path=self.path,
            errata=[e for e in self.errata if e.domain == domain],
            absent=[a for a in self.absent if a.domain == domain],
            reviews=[r for r in self.reviews if r.domain == domain],
        )

    def review_of(self, domain: str, task: str) -> TaskReview | None:
        """The reviewed class of a task, or None when it is not yet accounted for."""
        return next((r for r in self.reviews if r.domain == domain and r.task == task), None)

    def classes(self, domain: str) -> dict[str, TaskClass]:
        """task id -> reviewed class, for one domain."""
        return {r.task: r.klass for r in self.reviews if r.domain == domain}

    def answer_errata(self, domain: str, task: str) -> list[Erratum]:
        """The errata that correct an ``answer`` of a task (its main answer or a subtask's)."""
        return [e for e in self.errata if e.domain == domain and e.task == task and e.field == "answer"]

    def consistency_problems(self) -> list[str]:
        """What ties the reviews to the errata and absences wrongly (empty when all is well)."""
        out: list[str] = []
        seen: set[tuple[str, str]] = set()
        absent = {(a.domain, a.path) for a in self.absent}
        for r in self.reviews:
            key = (r.domain, r.task)
            where = f"review of {r.domain}/{r.task}"
            if key in seen:
                out.append(f"{where}: the task is reviewed twice (one class per task)")
            seen.add(key)
            fixes = self.answer_errata(r.domain, r.task)
            if r.klass == "gold-defect" and not fixes:
                out.append(f"{where}: class 'gold-defect' but no [[erratum]] corrects an answer of the task")
            if r.klass == "solution-defect" and any(e.subtask is None for e in fixes):
                out.append(
                    f"{where}: class 'solution-defect' (the gold is right) but an [[erratum]] changes the main answer"
                )
            for f in r.absent:
                if (r.domain, f) not in absent:
                    out.append(f"{where}: {f!r} is named absent but is no [[absent]] entry of {r.domain}")
        return out


def load_errata(path: Path) -> ErrataFile:
    """Parse an errata file; a malformed file is a :class:`WorkloadError` naming the entry and field."""
    path = Path(path)
    try:
        text = read_text(path, limit=ERRATA_BYTES, what="errata file")
    except FileRefused as e:
        raise refused(e, path, "errata file") from None
    return parse_errata(text, path)


def _entries(
    data: dict[str, Any],
    table: str,
    path: Path,
    make: Callable[[int, dict[str, Any]], _M],
    error: Callable[[int, dict[str, Any], ValidationError], str],
) -> list[_M]:
    """The entries of ``table`` in an errata file, the ``i``-th made by ``make(i, raw)``; an entry that does
    not validate is a :class:`WorkloadError` explained by ``error(i, raw, e)``."""
    out: list[_M] = []
    for i, raw in enumerate(data.get(table, [])):
        try:
            out.append(make(i, raw))
        except ValidationError as e:
            raise WorkloadError(f"{path}: {error(i, raw, e)}", file=str(path)) from None
    return out


def parse_errata(text: str, path: Path | str) -> ErrataFile:
    """Parse the text of an errata file (named ``path`` in messages); see :func:`load_errata`."""
    path = Path(path)
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as e:
        raise WorkloadError(
            f"{path}: invalid TOML: {str(e).splitlines()[0] if str(e) else 'nested too deeply'}",
            file=str(path),
        ) from None
    unknown = set(data) - {"erratum", "absent", "review"}
    if unknown:
        raise WorkloadError(
            f"{path}: unknown table(s) {sorted(unknown)}; expected [[erratum]], [[absent]] and [[review]]",
            file=str(path),
        )
    for table in ("erratum", "absent", "review"):
        entries = data.get(table, [])
        if not isinstance(entries, list) or not all(isinstance(x, dict) for x in entries):
            kind = (
                f"a single [{table}] table" if isinstance(entries, dict)
                else "a list of values" if isinstance(entries, list)
                else json_kind(entries)
            )  # fmt: skip
            raise WorkloadError(
                f"{path}: '{table}' is {kind}; write each entry as a [[{table}]] table", file=str(path)
            )

    def erratum_error(i: int, raw: dict[str, Any], e: ValidationError) -> str:
        where = raw.get("subtask") or raw.get("task") or f"#{i + 1}"
        return f"erratum {i + 1} ({where}), {field_error(e)}"

    def absent_file(i: int, raw: dict[str, Any]) -> AbsentFile:
        entry = AbsentFile(**raw)
        try:
            check_relative(entry.path)
        except OutsideRoot as e:  # a path of the lake, never of the host
            raise WorkloadError(
                f"{path}: absent entry {i + 1}, field 'path': {entry.path!r} {e}; write a "
                "path relative to the lake",
                file=str(path),
            ) from None
        return entry

    def review_error(i: int, raw: dict[str, Any], e: ValidationError) -> str:
        loc, msg, kind = first_error(e)
        loc = loc or "class"
        if kind == "literal_error":
            msg = f"{msg} (one of {', '.join(TASK_CLASSES)})"
        where = raw.get("task") or f"#{i + 1}"
        return f"review {i + 1} ({where}), field {loc!r}: {msg}"

    errata = _entries(
        data, "erratum", path, lambda i, raw: Erratum(**raw, has_old="old" in raw), erratum_error
    )
    absent = _entries(
        data, "absent", path, absent_file, lambda i, raw, e: f"absent entry {i + 1}, {field_error(e)}"
    )
    reviews = _entries(data, "review", path, lambda i, raw: TaskReview(**raw), review_error)
    ef = ErrataFile(path=path, errata=errata, absent=absent, reviews=reviews)
    problems = ef.consistency_problems()
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise WorkloadError(f"{path}: {problems[0]}{more}", file=str(path))
    return ef


def same_json(a: Any, b: Any) -> bool:
    """Equality of JSON values that keeps types apart: ``1 != "1"``, ``True != 1``, ``1 == 1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return a is None and b is None


def value_sha256(value: Any) -> str:
    """sha256 of a JSON value's canonical form (sorted keys, no spaces, UTF-8), for ``old_sha256``."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    return sha256_hex(text)


def _find(raw_tasks: list[Any], e: Erratum) -> tuple[dict[str, Any] | None, str]:
    tasks = [t for t in raw_tasks if isinstance(t, dict) and t.get("id") == e.task]
    if not tasks:
        return None, f"no task with id {e.task!r}"
    if len(tasks) > 1:
        return None, f"task id {e.task!r} occurs {len(tasks)} times"
    task = tasks[0]
    if e.subtask is None:
        return task, ""
    subs = task.get("subtasks")
    if not isinstance(subs, list):
        return None, f"task {e.task!r} has no subtask list"
    found = [s for s in subs if isinstance(s, dict) and s.get("id") == e.subtask]
    if not found:
        return None, f"task {e.task!r} has no subtask with id {e.subtask!r}"
    if len(found) > 1:
        return None, f"subtask id {e.subtask!r} occurs {len(found)} times in task {e.task!r}"
    return found[0], ""


def apply_errata(
    raw_tasks: list[Any], errata: ErrataFile, domain: str
) -> tuple[list[Any], list[ErratumApplied], list[Finding]]:
    """Apply the errata of ``domain`` to a copy of the raw task list (as parsed from JSON)."""
    tasks = copy.deepcopy(raw_tasks)
    applied: list[ErratumApplied] = []
    findings: list[Finding] = []
    src = str(errata.path) if errata.path else None
    for e in errata.for_domain(domain).errata:

        def finding(code: str, severity: Severity, message: str, e: Erratum = e) -> Finding:
            return Finding(
                severity=severity,
                code=code,
                domain=domain,
                task_id=e.task,
                subtask_id=e.subtask,
                field=e.field,
                message=message,
                suggestion=f"review the erratum in {src}" if src else None,
                file=src,
            )

        target, why = _find(tasks, e)
        if target is None:
            findings.append(finding("erratum_target_missing", "warning", f"erratum not applied: {why}"))
            continue
        current = target.get(e.field, _MISSING)
        if current is None and e.expects_absent:
            current = _MISSING  # a null field counts as absent
        if current is _MISSING and e.expects_absent:
            matches = True
        elif current is _MISSING or e.expects_absent:
            matches = False
        else:
            matches = e.matches(current)
        if not matches:
            if current is not _MISSING and e.transform is None and same_json(current, e.new):
                findings.append(
                    finding(
                        "erratum_obsolete",
                        "info",
                        "erratum not applied: the file already holds the corrected value",
                    )
                )
            else:
                shown = "absent" if current is _MISSING else repr(current)
                expected = (
                    "absent" if e.expects_absent
                    else f"a value with sha256 {e.old_sha256[:12]}…" if e.old_sha256 else repr(e.old)
                )  # fmt: skip
                findings.append(
                    finding(
                        "erratum_stale",
                        "warning",
                        f"erratum not applied: the file holds {clip(shown, 80)}, the erratum expects {clip(expected, 80)}",
                    )
                )
            continue
        try:
            new = e.corrected(None if current is _MISSING else current)
        except (ValueError, SyntaxError) as err:
            findings.append(
                finding(
                    "erratum_stale",
                    "warning",
                    f"erratum not applied: transform {e.transform!r} failed: {err}",
                )
            )
            continue
        target[e.field] = new
        applied.append(
            ErratumApplied(
                task_id=e.task,
                subtask_id=e.subtask,
                field=e.field,
                old=None if current is _MISSING else current,
                new=copy.deepcopy(new),
                reason=e.reason,
            )
        )
    return tasks, applied, findings


__all__ = [
    "TASK_CLASSES",
    "AbsentFile",
    "Erratum",
    "ErrataFile",
    "TaskClass",
    "TaskReview",
    "apply_errata",
    "load_errata",
    "parse_errata",
    "same_json",
    "value_sha256",
]
