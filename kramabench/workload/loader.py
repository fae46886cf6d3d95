"""Tolerant loader for the official KramaBench layout: ``<root>/workload/<domain>.json`` plus the data lake
``<root>/data/<domain>/input/``.

A defect of a file never stops loading: the affected field is normalised (``data_sources`` given as a
string becomes a list, an unknown ``answer_type`` becomes ``None``, a task without id is skipped) and a
:class:`~kramabench.workload.models.Finding` records it. Only input that cannot be used at all raises
:class:`~kramabench.workload.errors.WorkloadError` with a one-line message: a missing root, domain file or
lake folder, bytes that are not UTF-8, invalid JSON (with line and column) or a top level that is not a
list of tasks.
"""

from __future__ import annotations

import difflib
import json
import logging
import math
import os
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kramabench import plugins
from kramabench.files import (
    SMALL_JSON_BYTES,
    WORKLOAD_BYTES,
    FileRefused,
    OutsideRoot,
    check_json_values,
    clip,
    field_error,
    inside,
    read_bytes,
    sha256_hex,
)
from kramabench.workload.errata import AbsentFile, ErrataFile, apply_errata, load_errata
from kramabench.workload.errors import WorkloadError, refused
from kramabench.workload.jsonkind import json_kind
from kramabench.workload.models import (
    AnswerType,
    Difficulty,
    ErratumApplied,
    Finding,
    KeyFunctionality,
    Severity,
    Subtask,
    Task,
    Workload,
    difficulty_from_id,
)
from kramabench.workload.solutions import candidates as solution_candidates
from kramabench.workload.solutions import solution_path
from kramabench.workload.validate import validate_workload

log = logging.getLogger(__name__)

#: keys of a task/subtask object that the model interprets; anything else is kept as an extra field
_TASK_FIELDS = {
    "id", "query", "answer", "answer_type", "data_sources", "subtasks", "key_functionalities",
    "runtime", "solution", "difficulty", "excluded",
}  # fmt: skip
_SUBTASK_FIELDS = {"id", "query", "step", "answer", "answer_type", "data_sources", "excluded"}
_ANSWER_TYPES = [a.value for a in AnswerType]
_BUILTIN_NAMES = frozenset(_ANSWER_TYPES)


def official_errata_path() -> Path:
    """The errata of the official KramaBench workloads shipped with kramabench (``workloads/kramabench/``)."""
    from kramabench import data_dir

    return data_dir("workloads") / "kramabench" / "errata.toml"


def workload_file(root: Path, domain: str) -> Path:
    return Path(root) / "workload" / f"{domain}.json"


def lake_dir(root: Path, domain: str) -> Path:
    return Path(root) / "data" / domain / "input"


def _check_root(root: Path) -> None:
    if not root.exists():
        raise WorkloadError(f"{root}: workload root does not exist", file=str(root))
    if not root.is_dir():
        raise WorkloadError(f"{root}: workload root is not a folder", file=str(root))
    if not (root / "workload").is_dir():
        raise WorkloadError(
            f"{root}: not a workload root: no workload/ folder (expected workload/<domain>.json and "
            "data/<domain>/input/)",
            file=str(root),
        )


def list_kramabench_domains(root: Path) -> list[str]:
    """Domains of a root in KramaBench's layout: the names of ``<root>/workload/*.json``, sorted. Hidden files
    (``._legal.json`` left by macOS archives, ``.legal.json.swp``...) are not domains."""
    root = Path(root)
    _check_root(root)
    return sorted(
        p.stem for p in (root / "workload").glob("*.json") if p.is_file() and not p.name.startswith(".")
    )


def default_errata(root: Path) -> Path | None:
    """Errata used when none is named: ``<root>/errata.toml`` if present; else, for a root that is not a
    bundled suite of this repository, the errata of the official workloads."""
    own = Path(root) / "errata.toml"
    if os.path.lexists(own):
        try:
            inside(root, "errata.toml")
        except OutsideRoot as e:  # the root's own errata must be its own file
            raise WorkloadError(
                f"{own}: {e}; the root's errata must be a file of the root", file=str(own)
            ) from None
    if own.is_file():
        return own
    from kramabench import data_dir

    try:
        Path(root).resolve().relative_to(data_dir("workloads").resolve())
        return None  # a bundled suite without errata
    except ValueError:
        pass
    official = official_errata_path()
    return official if official.is_file() else None


def read_raw(path: Path) -> tuple[list[Any], str]:
    """Parse a workload JSON file into its raw task list and the sha256 of its bytes."""
    try:
        data = read_bytes(path, limit=WORKLOAD_BYTES, what="workload file")
    except FileRefused as e:
        raise refused(e, path, "workload file") from None
    digest = sha256_hex(data)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise WorkloadError(
            f"{path}: not UTF-8 text (byte {e.start}: {data[e.start : e.start + 1]!r})", file=str(path)
        ) from None
    if not text.strip():
        raise WorkloadError(f"{path}: empty file; expected a JSON list of tasks", file=str(path))
    try:
        check_json_values(text, path, what="workload file")
    except FileRefused as e:
        raise WorkloadError(str(e), file=str(path)) from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise WorkloadError(
            f"{path}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}", file=str(path)
        ) from None
    except RecursionError:
        raise WorkloadError(f"{path}: invalid JSON: nested too deeply", file=str(path)) from None
    if not isinstance(raw, list):
        kind = json_kind(raw)
        keys = (
            [clip(json.dumps(k, ensure_ascii=False)[1:-1], 30) for k in list(raw)[:5]]
            if isinstance(raw, dict)
            else []
        )
        hint = f" (keys: {', '.join(keys)})" if keys else ""
        raise WorkloadError(
            f"{path}: top level is {kind}{hint}; expected a JSON list of task objects", file=str(path)
        )
    return raw, digest


def load_kramabench_workload(
    root: Path,
    domain: str,
    *,
    errata: bool | Path | ErrataFile = True,
    validate: bool = True,
) -> Workload:
    """Load one domain of a workload root in KramaBench's layout.

    ``errata``: True applies the default errata (see :func:`default_errata`), False loads the raw file,
    a path or an :class:`ErrataFile` applies those. ``validate``: run the validator and add its findings
    to ``Workload.findings`` (the loader's own findings are always there).
    """
    root = Path(root)
    _check_root(root)
    path = workload_file(root, domain)
    if path.is_dir():
        raise WorkloadError(f"{path}: is a folder, not a workload file", file=str(path))
    if not path.exists():  # a FIFO or a device is refused in one line by read_raw
        avail = list_kramabench_domains(root)
        raise WorkloadError(
            f"{path}: no workload file for domain {domain!r} (domains here: {', '.join(avail) or 'none'})",
            file=str(path),
        )
    raw, digest = read_raw(path)
    findings: list[Finding] = []
    lake = lake_dir(root, domain)
    if not lake.is_dir():
        found = _base_domain_lake(root, domain, raw)
        if found is None:
            hint = ""
            data = root / "data"
            other = (
                sorted(
                    p.name
                    for p in data.iterdir()
                    if p.is_dir() and p.name != domain and p.name.lower() == domain.lower()
                )
                if data.is_dir()
                else []
            )
            if other:
                hint = f"; data/{other[0]}/ differs only in letter case"
            elif lake.exists():
                hint = "; it is a file, not a folder"
            raise WorkloadError(
                f"{path}: data lake folder {lake} is missing (expected <root>/data/{domain}/input/){hint}",
                file=str(path),
            )
        findings.append(
            Finding(
                severity="info",
                code="shared_lake",
                domain=domain,
                field="lake",
                message=f"no data/{domain}/input/; using {found[0]} ({found[1]})",
                file=str(path),
            )
        )
        lake = found[0]

    applied: list[ErratumApplied] = []
    ef: ErrataFile | None
    if errata is True:
        p = default_errata(root)
        ef = load_errata(p) if p else None
    elif errata is False or errata is None:
        ef = None
    elif isinstance(errata, ErrataFile):
        ef = errata
    else:
        ef = load_errata(Path(errata))
    if ef is not None:
        raw, applied, errata_findings = apply_errata(raw, ef, domain)
        findings.extend(errata_findings)

    twins = sorted(
        p.name for p in path.parent.glob("*.json") if p.stem != domain and p.stem.lower() == domain.lower()
    )
    if twins:
        findings.append(
            Finding(
                severity="warning",
                code="duplicate_domain",
                domain=domain,
                message=f"workload/{path.name} and workload/{', '.join(twins)} differ only in letter case: two domains "
                "here, one file on a case-insensitive file system (macOS, Windows)",
                suggestion="merge them or rename one",
                file=str(path),
            )
        )

    builder = _Builder(root=root, domain=domain, file=str(path))
    tasks = [t for i, item in enumerate(raw) if (t := builder.task(i, item)) is not None]
    findings.extend(builder.findings)
    if ef is not None:
        ids = {t.id for t in tasks}
        for r in ef.for_domain(domain).reviews:
            if r.task not in ids:
                findings.append(
                    Finding(
                        severity="warning",
                        code="review_target_missing",
                        domain=domain,
                        task_id=r.task,
                        message=f"the errata review ({r.klass}) names no task of this workload",
                        suggestion=f"review the [[review]] entry in {ef.path}",
                        file=str(ef.path),
                    )  # fmt: skip
                )

    wl = Workload(
        domain=domain,
        root=root,
        source=path,
        lake=lake,
        tasks=tasks,
        findings=findings,
        errata=applied,
        reviews=list(ef.for_domain(domain).reviews) if ef is not None else [],
        content_hash=digest,
    )
    if validate:
        absent: list[Any] = list(ef.for_domain(domain).absent) if ef is not None else []
        absent.extend(_fetch_manifest_absent(root, lake))
        wl.findings.extend(validate_workload(wl, absent=absent))
    return wl


#: written by ``kramabench fetch`` into the root it unpacks; lists the files upstream does not store
FETCH_MANIFEST = "fetch-manifest.json"


def documented_absent(root: Path, domain: str, errata: ErrataFile | None = None) -> list[AbsentFile]:
    """Lake files of a domain known to be absent: the ``[[absent]]`` entries of the errata (default: the root's
    default errata) and the files the fetch manifest records as not stored upstream."""
    root = Path(root)
    if errata is None:
        p = default_errata(root)
        errata = load_errata(p) if p else None
    out = list(errata.for_domain(domain).absent) if errata is not None else []
    return out + _fetch_manifest_absent(root, lake_dir(root, domain))


def _fetch_manifest_absent(root: Path, lake: Path) -> list[AbsentFile]:
    """Files of this lake that the fetch manifest of the root records as not stored upstream (git-LFS
    pointers, files named by tasks but absent from the archive): documented absences."""
    path = root / FETCH_MANIFEST
    if not path.is_file():
        return []
    try:
        doc = json.loads(read_bytes(path, limit=SMALL_JSON_BYTES, what="fetch manifest"))
        entries = doc.get("not_stored", []) if isinstance(doc, dict) else []
    except (OSError, ValueError, RecursionError) as e:
        log.warning("%s: unreadable (%s); its list of files not stored upstream is ignored", path, e)
        return []
    try:
        prefix = lake.resolve().relative_to(root.resolve()).as_posix() + "/"
    except ValueError:
        return []
    out = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            continue
        rel = entry["path"].replace("\\", "/")
        if rel.startswith(prefix) and len(rel) > len(prefix):
            kind = {
                "lfs-pointer": "a git-LFS pointer upstream",
                "missing": "absent from the upstream archive",
            }.get(str(entry.get("reason")), "not stored upstream")
            out.append(
                AbsentFile(
                    domain=lake.parent.name, path=rel[len(prefix) :], reason=f"{kind} ({FETCH_MANIFEST})"
                )
            )
    return out


_ID_DOMAIN = re.compile(r"^(.+?)-(?:easy|medium|hard)-\d+$", re.IGNORECASE)


def _base_domain_lake(root: Path, domain: str, raw: list[Any]) -> tuple[Path, str] | None:
    """The lake a domain without its own lake reads, and why: the domain it is a variant of
    (``legal-tiny``, ``astronomy_alternative``), else the domain its task ids name
    (``quick-start-questions`` holding ``environment-easy-1``)."""
    parts = re.split(r"[-_.]", domain)
    seps = re.findall(r"[-_.]", domain)
    for n in range(len(parts) - 1, 0, -1):
        base = "".join(p + s for p, s in zip(parts[:n], seps[: n - 1] + [""], strict=True))
        cand = lake_dir(root, base)
        if cand.is_dir():
            return cand, f"{domain!r} is a variant of {base!r}"
    counts: dict[str, int] = {}
    for item in raw:
        tid = item.get("id") if isinstance(item, dict) else None
        m = _ID_DOMAIN.match(tid) if isinstance(tid, str) else None
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    for base in sorted(counts, key=lambda d: -counts[d]):
        cand = lake_dir(root, base)
        if cand.is_dir():
            return cand, f"its task ids name the domain {base!r}"
    return None


def _first_error(e: Exception) -> str:
    if isinstance(e, ValidationError):
        return field_error(e)
    return str(e).splitlines()[0] if str(e) else type(e).__name__


class _Builder:
    """Turns raw JSON objects into models, normalising defects and recording them as findings."""

    def __init__(self, root: Path, domain: str, file: str) -> None:
        self.root = root
        self.domain = domain
        self.file = file
        self.findings: list[Finding] = []
        self._has_solutions = (root / "solutions").is_dir()  # else no task has a solution file to find

    def note(
        self,
        severity: Severity,
        code: str,
        message: str,
        *,
        task_id: str | None = None,
        subtask_id: str | None = None,
        field: str | None = None,
        suggestion: str | None = None,
    ) -> None:
        self.findings.append(
            Finding(
                severity=severity,
                code=code,
                domain=self.domain,
                task_id=task_id,
                subtask_id=subtask_id,
                field=field,
                message=message,
                suggestion=suggestion,
                file=self.file,
            )
        )

    # -- shared fields -------------------------------------------------------------------------------
    def _id(self, item: dict[str, Any], where: str, task_id: str | None) -> str | None:
        raw = item.get("id")
        if isinstance(raw, str) and raw.strip():
            if raw != raw.strip():
                self.note(
                    "warning", "invalid_id", f"{where}: id {raw!r} has surrounding whitespace; stripped",
                    task_id=task_id or raw.strip(), subtask_id=raw.strip() if task_id else None, field="id",
                )  # fmt: skip
            return raw.strip()
        if isinstance(raw, int) and not isinstance(raw, bool):
            self.note(
                "warning", "invalid_id", f"{where}: id is the number {raw}, not a string; used as {str(raw)!r}",
                task_id=task_id or str(raw), subtask_id=str(raw) if task_id else None, field="id",
            )  # fmt: skip
            return str(raw)
        if "id" not in item:
            what = "missing"
        elif isinstance(raw, str):
            what = "empty"
        else:
            what = f"{json_kind(raw)} {clip(repr(raw), 40)}"
        query = item.get("query")
        hint = f" (query: {query[:60]!r})" if isinstance(query, str) and query else ""
        self.note(
            "error", "missing_id", f"{where} has no usable id ({what}){hint}; skipped",
            task_id=task_id, field="id", suggestion="give it a unique id such as <domain>-<difficulty>-<n>",
        )  # fmt: skip
        return None

    def _common(self, item: dict[str, Any], tid: str, sid: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        ids = {"task_id": tid, "subtask_id": sid}
        # query / step: text
        for name in ("query", "step") if sid else ("query",):
            if name not in item or item[name] is None:
                continue
            v = item[name]
            if isinstance(v, str):
                out[name] = v
            else:
                self.note(
                    "warning", "invalid_field", f"{name} is {json_kind(v)}, not a string; converted to text",
                    field=name, **ids,
                )  # fmt: skip
                out[name] = json.dumps(v) if isinstance(v, (list, dict)) else str(v)
        if "answer" in item:
            out["answer"] = item["answer"]
        # answer_type
        at = item.get("answer_type")
        if at is not None:
            norm = at.strip().lower().replace("-", "_").replace(" ", "_") if isinstance(at, str) else None
            if isinstance(at, str) and at in _BUILTIN_NAMES:
                out["answer_type"] = at
            elif isinstance(at, str) and at in plugins.names("scorers"):
                out["answer_type"] = at  # an answer type a plug-in scorer registers (kramabench.scorers)
            elif norm in _ANSWER_TYPES:
                self.note(
                    "warning", "answer_type_spelling", f"answer_type {at!r} read as {norm!r}",
                    field="answer_type", suggestion=f"write {norm!r}", **ids,
                )  # fmt: skip
                out["answer_type"] = norm
            else:
                close = difflib.get_close_matches(str(norm or at), _ANSWER_TYPES, n=1, cutoff=0.6)
                self.note(
                    "error", "unknown_answer_type",
                    f"answer_type {at!r} is not one of {', '.join(_ANSWER_TYPES)}; the answer cannot be scored",
                    field="answer_type", suggestion=f"did you mean {close[0]!r}?" if close else None, **ids,
                )  # fmt: skip
        # data_sources
        if "data_sources" in item and item["data_sources"] is not None:
            ds = item["data_sources"]
            if isinstance(ds, str):
                norm_ds = [ds] if ds.strip() else []
                self.note(
                    "warning", "data_sources_string",
                    f"data_sources is the string {ds!r}, not a list; read as {norm_ds!r}",
                    field="data_sources", suggestion=f"write {json.dumps(norm_ds)}", **ids,
                )  # fmt: skip
                out["data_sources"] = norm_ds
            elif isinstance(ds, list):
                good = [x for x in ds if isinstance(x, str)]
                if len(good) != len(ds):
                    bad = [x for x in ds if not isinstance(x, str)]
                    self.note(
                        "warning", "invalid_field", f"data_sources holds non-string entries {bad!r}; dropped",
                        field="data_sources", **ids,
                    )  # fmt: skip
                out["data_sources"] = good
            else:
                self.note(
                    "error", "invalid_field", f"data_sources is {json_kind(ds)}, not a list of paths; ignored",
                    field="data_sources", **ids,
                )  # fmt: skip
        return out

    # -- tasks and subtasks ---------------------------------------------------------------------------
    def task(self, index: int, item: Any) -> Task | None:
        where = f"task #{index + 1} (index {index})"
        read = self._id_and_fields(where, item, None)
        if read is None:
            return None
        tid, fields = read
        # difficulty: from the id; an explicit field wins when valid
        diff = difficulty_from_id(tid)
        if "difficulty" in item:
            d = item["difficulty"]
            if isinstance(d, str) and d.lower() in {x.value for x in Difficulty}:
                if diff is not Difficulty.UNKNOWN and d.lower() != diff.value:
                    self.note(
                        "warning", "difficulty_conflict",
                        f"difficulty {d!r} differs from the id's {diff.value!r}; the field is used",
                        task_id=tid, field="difficulty",
                    )  # fmt: skip
                diff = Difficulty(d.lower())
            else:
                self.note(
                    "warning", "invalid_field", f"difficulty {d!r} is not easy/medium/hard; taken from the id",
                    task_id=tid, field="difficulty",
                )  # fmt: skip
        fields["difficulty"] = diff
        # runtime
        if item.get("runtime") is not None:
            rt = item["runtime"]
            if isinstance(rt, (int, float)) and not isinstance(rt, bool) and math.isfinite(rt):
                fields["runtime"] = float(rt)
            else:
                self.note(
                    "warning", "invalid_field", f"runtime {rt!r} is not a number; ignored",
                    task_id=tid, field="runtime",
                )  # fmt: skip
        # solution
        sol = item.get("solution")
        if isinstance(sol, str) and sol.strip():
            try:
                solution_path(self.root, sol)
                fields["solution"] = sol
            except OutsideRoot as e:  # never read, never sent to a judge: only the workload's own files are
                self._solution_outside_root(
                    tid,
                    f"solution {clip(sol, 80)!r} {e}",
                    "put the solution under the workload root and write its path relative to the root",
                )
        elif sol is not None:
            self.note(
                "warning",
                "invalid_field",
                f"solution {sol!r} is not a path; ignored",
                task_id=tid,
                field="solution",
            )
        else:
            # bundled suites: solutions/<task-id>.py; the official repository: solutions/<domain>/<task-id>.py
            for rel in reversed(solution_candidates(self.domain, tid)) if self._has_solutions else ():
                try:
                    if solution_path(self.root, rel).is_file():
                        fields["solution"] = rel
                        break
                except OutsideRoot as e:  # a link to /etc/passwd; a task id such as "../../x" names no file
                    if os.path.lexists(self.root / rel) and "'..'" not in str(e):
                        self._solution_outside_root(tid, f"{rel} {e}", "replace the link by the file itself")
                        break
        fields["key_functionalities"] = self._key_functionalities(item.get("key_functionalities"), tid)
        # subtasks
        subs_raw = item.get("subtasks")
        subs: list[Subtask] = []
        if subs_raw is None:
            pass
        elif not isinstance(subs_raw, list):
            self.note(
                "error", "invalid_field", f"subtasks is {json_kind(subs_raw)}, not a list; ignored",
                task_id=tid, field="subtasks",
            )  # fmt: skip
        else:
            for j, s in enumerate(subs_raw):
                sub = self.subtask(tid, j, s)
                if sub is not None:
                    subs.append(sub)
        fields["subtasks"] = subs
        extras = {k: v for k, v in item.items() if k not in _TASK_FIELDS and isinstance(k, str)}
        try:
            return Task(**extras, **fields)
        except (ValidationError, TypeError) as e:  # a shape no normalisation above foresaw
            self.note(
                "error",
                "invalid_task",
                f"{where} ({tid}) cannot be read: {_first_error(e)}; skipped",
                task_id=tid,
            )
            return None

    def subtask(self, tid: str, index: int, item: Any) -> Subtask | None:
        where = f"subtask #{index + 1} (index {index}) of task {tid}"
        read = self._id_and_fields(where, item, tid)
        if read is None:
            return None
        sid, fields = read
        nested = item.get("subtasks")
        if nested not in (None, [], {}):
            n = len(nested) if isinstance(nested, (list, dict)) else 1
            self.note(
                "warning", "nested_subtasks",
                f"{where} ({sid}) holds subtasks of its own ({n}); subtasks have one level: they are not run, "
                "not scored", task_id=tid, subtask_id=sid, field="subtasks",
                suggestion="make them subtasks of the task, or remove them",
            )  # fmt: skip
        extras = {
            k: v
            for k, v in item.items()
            if k not in _SUBTASK_FIELDS and k != "subtasks" and isinstance(k, str)
        }
        try:
            return Subtask(**extras, **fields)
        except (ValidationError, TypeError) as e:
            self.note(
                "error", "invalid_task", f"{where} ({sid}) cannot be read: {_first_error(e)}; skipped",
                task_id=tid, subtask_id=sid,
            )  # fmt: skip
            return None

    def _id_and_fields(self, where: str, item: Any, tid: str | None) -> tuple[str, dict[str, Any]] | None:
        """The id and the fields every item has, of a task (``tid`` None) or of a subtask of task ``tid``; None:
        the item is skipped (not an object, no usable id, excluded), with its finding."""
        if not isinstance(item, dict):
            self.note(
                "error",
                "task_not_object",
                f"{where} is {json_kind(item)}, not an object; skipped",
                task_id=tid,
                field=None if tid is None else "subtasks",
            )
            return None
        own = self._id(item, where, tid)
        if own is None:
            return None
        task_id, subtask_id = (own, None) if tid is None else (tid, own)
        if self._excluded(item, task_id, subtask_id):
            return None
        fields = self._common(item, task_id, subtask_id)
        fields["id"] = own
        return own, fields

    def _solution_outside_root(self, tid: str, what: str, suggestion: str) -> None:
        """The error of a solution (``what``: its path and why) that is not a file of the workload root."""
        self.note(
            "error",
            "solution_outside_root",
            f"{what}: a solution must lie inside the workload root; ignored",
            task_id=tid,
            field="solution",
            suggestion=suggestion,
        )

    def _excluded(self, item: dict[str, Any], tid: str, sid: str | None) -> bool:
        """``excluded = true`` (set by a reviewed erratum, e.g. an underivable gold the audit found): the item
        is left out of the workload, with an info finding; ``--no-errata`` keeps it."""
        flag = item.get("excluded")
        if flag is None or flag is False:
            return False
        if flag is not True:
            self.note(
                "warning", "invalid_field", f"excluded {flag!r} is not true/false; ignored",
                task_id=tid, subtask_id=sid, field="excluded",
            )  # fmt: skip
            return False
        what = f"subtask {sid} of task {tid}" if sid else f"task {tid}"
        self.note(
            "info", "excluded_by_erratum", f"{what} is excluded by an erratum (excluded = true); not run, not scored",
            task_id=tid, subtask_id=sid, field="excluded",
        )  # fmt: skip
        return True

    def _key_functionalities(self, raw: Any, tid: str) -> list[KeyFunctionality]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.note(
                "warning", "invalid_field", f"key_functionalities is {json_kind(raw)}, not a list; ignored",
                task_id=tid, field="key_functionalities",
            )  # fmt: skip
            return []
        out: list[KeyFunctionality] = []
        for i, kf in enumerate(raw):
            if isinstance(kf, str) and kf.strip():
                out.append(KeyFunctionality(id=f"{tid}-kf-{i + 1}", description=kf))
            elif (
                isinstance(kf, dict)
                and isinstance(kf.get("description"), str)
                and kf["description"].strip()
                and isinstance(kf.get("id", ""), (str, int))
            ):
                out.append(
                    KeyFunctionality(
                        id=str(kf.get("id") or f"{tid}-kf-{i + 1}"),
                        description=kf["description"],
                        derived=bool(kf.get("derived", False)),
                    )
                )
            else:
                self.note(
                    "warning", "invalid_field",
                    f"key_functionalities[{i}] is not {{id, description}} ({json_kind(kf)}); skipped",
                    task_id=tid, field="key_functionalities",
                )  # fmt: skip
        return out


__all__ = [
    "default_errata", "documented_absent", "json_kind", "lake_dir", "list_kramabench_domains", "load_kramabench_workload", "official_errata_path", "read_raw",
    "workload_file",
]  # fmt: skip
