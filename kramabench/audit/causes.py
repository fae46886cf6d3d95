"""Why a reference solution could not run, in the benchmark's terms.

Every solution that does not end well gets a :class:`Diagnosis`: the cause kind (read from its exit, its
error and what it names), what the cause is attributed to (:data:`Attribution`: a lake file that is
missing, a package the sandbox lacks, the solution's own bug, a resource limit, the sandbox), the evidence
(the file, the pattern that matched nothing, the upstream listing, the errata's ``[[absent]]``), and the
validator's findings on the same files (``data_source_missing``, ``not_reproducible``: what
``kramabench workloads validate`` says of the task's data sources).

A crash that is not about a file by its message (``ValueError: No objects to concatenate``) is still put
down to a missing file when the solution names a path or pattern of the lake that matches nothing (an
empty glob match, a folder that is not there), or when it read a git-LFS pointer, or when the task's own
data sources are missing and the error is what an empty match leads to.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.audit.layout import LakePaths, PathLayout, is_absolute, lake_relative, near_in_lake, prefix_of
from kramabench.workload.models import Finding

CauseKind = Literal[
    "missing-lake-file", "missing-module", "wrong-path", "library-version", "timeout", "prints-nothing",
    "out-of-memory", "crash", "no-solution", "sandbox-error",
    "path-layout",  # audits before the layouts were served; never given now
]  # fmt: skip

#: what a "cannot run" is put down to, in the benchmark's terms
Attribution = Literal["missing-lake-file", "missing-package", "solution-bug", "resource-limit", "no-solution",
                      "sandbox"]  # fmt: skip

ATTRIBUTION: dict[str, Attribution] = {
    "missing-lake-file": "missing-lake-file",
    "missing-module": "missing-package",
    "library-version": "missing-package",
    "wrong-path": "solution-bug",
    "path-layout": "solution-bug",
    "prints-nothing": "solution-bug",
    "crash": "solution-bug",
    "timeout": "resource-limit",
    "out-of-memory": "resource-limit",
    "no-solution": "no-solution",
    "sandbox-error": "sandbox",
}

#: what the errata and the upstream listing say of a missing lake file: documented absent ([[absent]]), listed
#: by upstream without its content, present upstream (this copy lacks it), absent upstream too
UpstreamSays = Literal["documented-absent", "not-stored", "upstream-has", "upstream-lacks"]

#: the validator's codes about data sources that are not in the lake
MISSING_SOURCE_CODES = ("data_source_missing", "not_reproducible")

_MODULE_RE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '?([\w.]+)'?")
_FILE_RE = re.compile(r"(?:FileNotFoundError|OSError|IOError|IsADirectoryError|NotADirectoryError)\b.*?"
                      r"(?:No such file or directory|does not exist|Not a directory)[^'\"]*['\"]([^'\"]+)['\"]")  # fmt: skip
_FILE3_RE = re.compile(r"([^\s'\"]+\.[A-Za-z0-9]{1,8}): No such file or directory")  # pyogrio, GDAL, h5py...
_GLOB = re.compile(r"[*?\[]")
_FILE2_RE = re.compile(
    r"(?:FileNotFoundError|OSError)\b:?\s*['\"]?([^'\"\n]+?\.[A-Za-z0-9]{1,6})['\"]? (?:not found|does not exist)"
)
_READ_ONLY_RE = re.compile(r"Read-only file system[^'\"]*['\"]([^'\"]+)['\"]")
_VERSION_PATTERNS = (
    r"AttributeError: module '[\w.]+' has no attribute",
    r"AttributeError: '(?:DataFrame|Series|Index|GroupBy|DataFrameGroupBy|SeriesGroupBy|ndarray)' object has no attribute",
    r"TypeError: .*got an unexpected keyword argument",
    r"ImportError: cannot import name",
    r"FutureWarning|DeprecationWarning.*removed",
    r"TypeError: .*(?:takes \d+ positional argument|missing \d+ required positional argument).*\((?:pandas|numpy)",
    r"ValueError: .*(?:no longer supported|was removed)",
)
#: what an empty match (a glob, a listing, a filter over no files) leads to
_EMPTY_RE = re.compile(
    r"No objects to concatenate|need at least one array|list index out of range|index \d+ is out of bounds|"
    r"StopIteration|zero-size array|empty|No (?:\w+[ -])*files?\b|not found|no data|No valid|out of range",
    re.IGNORECASE,
)


class Diagnosis(BaseModel):
    """Why a solution could not run: the cause, what it is attributed to, and the evidence."""

    model_config = ConfigDict(extra="forbid")

    cause: CauseKind
    detail: str
    attributed_to: Attribution
    evidence: list[str] = Field(default_factory=list, description="facts that show the cause, one per line")
    findings: list[str] = Field(
        default_factory=list,
        description="the validator's findings on the same files "
        "('code: message', as kramabench workloads validate prints them)",
    )
    files: list[str] = Field(
        default_factory=list, description="the lake files or patterns concerned (lake-relative)"
    )
    upstream: UpstreamSays | None = Field(
        None,
        description="missing-lake-file: what the errata and the upstream "
        "listing say of the (first) missing file",
    )


class LakeFacts(BaseModel):
    """What is known of a domain's lake beyond its files: what is documented absent, what upstream has."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    documented_absent: list[str] = Field(default_factory=list, description="[[absent]] entries of the errata")
    not_stored: list[str] = Field(
        default_factory=list, description="files the upstream listing names without content"
    )
    upstream: list[str] | None = Field(
        None,
        description="every lake file of the upstream listing (None: this is "
        "not an official domain, or the listing is not shipped)",
    )
    upstream_ref: str | None = None


def last_exception(stderr: str) -> str:
    """The last ``Error: message`` line of a traceback (or the last stderr line)."""
    lines = [ln.strip() for ln in (stderr or "").splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[\w.]+(?:Error|Exception|Exit|Interrupt|Iteration)\b", ln):
            return ln[:300]
    return lines[-1][:300] if lines else ""


def classify_failure(
    stderr: str, *, exit_code: int | None, timed_out: bool, oom: bool, lake: Path, domain: str
) -> tuple[CauseKind, str]:
    """(cause kind, detail) of a solution that did not end well, from its stderr alone (the official layout
    assumed); :func:`diagnose` says more."""
    from kramabench.audit.layout import standard_layout

    files = (
        sorted(p.relative_to(lake).as_posix() for p in Path(lake).rglob("*") if p.is_file())
        if Path(lake).is_dir()
        else []
    )
    d = diagnose(stderr, exit_code=exit_code, timed_out=timed_out, oom=oom, layout=standard_layout(domain),
                 lake=LakePaths(files), lake_dir=Path(lake), domain=domain)  # fmt: skip
    return d.cause, d.detail


def missing_path_of(stderr: str) -> str | None:
    """The path an error says is not there (``FileNotFoundError: ... 'x.csv'``), else None."""
    m = (
        _FILE_RE.search(stderr or "")
        or _FILE2_RE.search(stderr or "")
        or _FILE3_RE.search(last_exception(stderr))
    )
    return m.group(1) if m else None


def _covers(a: str, b: str) -> bool:
    """Two lake paths or patterns name the same files: equal, one a folder or pattern holding the other, the
    same file name."""
    import fnmatch

    x, y = a.strip("./").lower(), b.strip("./").lower()
    if not x or not y:
        return False
    if x == y or PurePosixPath(x).name == PurePosixPath(y).name and "*" not in PurePosixPath(x).name:
        return True
    for p, q in ((x, y), (y, x)):
        if (
            q.startswith(p.rstrip("/") + "/")
            or fnmatch.fnmatchcase(q, p)
            or fnmatch.fnmatchcase(q, p.rstrip("/*") + "/*")
        ):
            return True
    return False


def _source_of(finding: Finding) -> str | None:
    m = re.search(r"data source '([^']+)'", finding.message)
    return m.group(1) if m else None


def _finding_text(f: Finding) -> str:
    where = f.subtask_id or f.task_id or ""
    return f"{f.code} ({where}): {f.message}" if where else f"{f.code}: {f.message}"


def _upstream_note(rel: str, facts: LakeFacts | None) -> tuple[str | None, UpstreamSays | None]:
    """(what the errata and upstream say of the lake path ``rel``, in words; which of those it is)."""
    if facts is None:
        return None, None
    low = rel.lower()
    ref = (facts.upstream_ref or "")[:7]
    documented = [a for a in facts.documented_absent if _covers(a, low)]
    if documented:
        return f"documented absent in the errata ([[absent]] {documented[0]})", "documented-absent"
    stored = [a for a in facts.not_stored if _covers(a, low)]
    if stored:
        return f"the upstream listing ({ref}) names {stored[0]} but upstream does not store it", "not-stored"
    if facts.upstream is not None:
        import fnmatch

        exact = rel.strip("/")  # upstream's tree is case-sensitive: another case is another file
        ups = [
            u
            for u in facts.upstream
            if u == exact or fnmatch.fnmatchcase(u, exact) or u.startswith(exact + "/")
        ]
        if not ups:
            return f"the upstream repository ({ref}) has no such file either", "upstream-lacks"
        return f"upstream has it ({ups[0]}): this copy of the lake lacks it", "upstream-has"
    return None, None


def diagnose(
    stderr: str,
    *,
    exit_code: int | None,
    timed_out: bool,
    oom: bool,
    layout: PathLayout,
    lake: LakePaths,
    domain: str,
    lake_dir: Path | None = None,
    unmatched: Sequence[str] = (),
    files_read: Iterable[str] = (),
    findings: Iterable[Finding] = (),
    facts: LakeFacts | None = None,
) -> Diagnosis:
    """The cause of a failed run, with its evidence.

    ``unmatched``: lake paths or patterns the solution names (under ``layout``) that match no lake file;
    ``findings``: the validator's findings of the task (those on missing data sources are linked);
    ``facts``: what the errata and the upstream listing say of the lake."""
    stderr = stderr or ""
    missing_findings = [f for f in findings if f.code in MISSING_SOURCE_CODES]

    def linked(paths: Iterable[str]) -> list[str]:
        paths = list(paths)
        return _unique(f for f in missing_findings if any(_covers(_source_of(f) or "", p) for p in paths))

    def out(cause: CauseKind, detail: str, **kw: Any) -> Diagnosis:
        return Diagnosis(cause=cause, detail=detail, attributed_to=ATTRIBUTION[cause], **kw)

    if timed_out:
        return out("timeout", "the solution ran past the time limit")
    if oom:
        return out("out-of-memory", "the solution ran out of memory")
    m = _MODULE_RE.search(stderr)
    if m:
        top = m.group(1).split(".")[0]
        return out("missing-module", f"module {m.group(1)!r} is not installed in the sandbox",
                   evidence=[f"import of {top!r} failed: {last_exception(stderr)}"])  # fmt: skip
    m = _READ_ONLY_RE.search(stderr)
    if m:
        return out("crash", f"{m.group(1)}: the solution writes into the lake, which is read-only",
                   evidence=[last_exception(stderr)])  # fmt: skip
    m = _FILE_RE.search(stderr) or _FILE2_RE.search(stderr) or _FILE3_RE.search(last_exception(stderr))
    if m:
        return _missing_path(m.group(1), stderr, layout, lake, domain, lake_dir, facts, linked, out)
    pointers = [f for f in files_read if lake_dir is not None and _lfs_pointer(Path(lake_dir) / f)]
    if pointers:
        note, says = _upstream_note(pointers[0], facts)
        return out("missing-lake-file", f"{pointers[0]}: a git-LFS pointer in place of the data; then "
                   f"{last_exception(stderr) or f'exit code {exit_code}'}",
                   evidence=[f"read {p}: a git-LFS pointer file" for p in pointers] + ([note] if note else []),
                   findings=linked(pointers), files=pointers, upstream=says or "not-stored")  # fmt: skip
    for pat in _VERSION_PATTERNS:
        if re.search(pat, stderr):
            return out("library-version", last_exception(stderr))
    error = last_exception(stderr) or f"exit code {exit_code}"
    if unmatched:
        shown = ", ".join(repr(u) for u in unmatched[:3])
        notes, says_first = _upstream_notes(unmatched, facts)
        evidence = [f"{u!r} (as the solution names it under {layout.prefix or '.'}) matches no file of the lake"
                    for u in unmatched[:5]] + notes  # fmt: skip
        # a pattern, or a folder (no extension): what a glob or a listing of it finds is nothing
        empty = any(_GLOB.search(u) or "." not in PurePosixPath(u).name for u in unmatched)
        how = "no file matches it (an empty match)" if empty else "no such file in the lake"
        return out("missing-lake-file", f"{shown}: {how}; then {error}", evidence=evidence,
                   findings=linked(unmatched), files=list(unmatched), upstream=says_first)  # fmt: skip
    named = _absent_named(error, facts)
    if named:
        token, files, says = named
        evidence = [f"the error names {token!r}"] + [f"{f}: {_upstream_note(f, facts)[0]}" for f in files[:3]]
        return out("missing-lake-file", f"{', '.join(files[:3])}: not in the lake (the error names {token!r}); then "
                   f"{error}", evidence=evidence, findings=linked(files), files=files, upstream=says)  # fmt: skip
    if missing_findings and _EMPTY_RE.search(error):
        sources = list(dict.fromkeys(s for s in (_source_of(f) for f in missing_findings) if s))
        notes, says_first = _upstream_notes(sources, facts)
        evidence = [f"workloads validate: {t}" for t in _unique(missing_findings)[:5]] + notes
        return out("missing-lake-file", f"the task's data source(s) {', '.join(repr(s) for s in sources[:3])} match "
                   f"no file of the lake; the solution then fails as an empty match does: {error}",
                   evidence=evidence, findings=_unique(missing_findings), files=sources, upstream=says_first)  # fmt: skip
    return out("crash", error, evidence=[f"the task's data: {t}" for t in _unique(missing_findings)[:3]])


def _upstream_notes(paths: Sequence[str], facts: LakeFacts | None) -> tuple[list[str], UpstreamSays | None]:
    """("<path>: what upstream says of it" for the first few paths, what it says of the first it knows of)."""
    notes: list[str] = []
    first: UpstreamSays | None = None
    for path in paths[:3]:
        note, says = _upstream_note(path, facts)
        first = first or says
        if note:
            notes.append(f"{path}: {note}")
    return notes, first


def _unique(findings: Iterable[Finding]) -> list[str]:
    """The findings' texts, one per code and data source (a task's subtasks repeat their task's sources)."""
    seen: set[tuple[object, object]] = set()
    out: list[str] = []
    for f in findings:
        key = (f.code, _source_of(f) or f.message)
        if key not in seen:
            seen.add(key)
            out.append(_finding_text(f))
    return out


def _absent_named(error: str, facts: LakeFacts | None) -> tuple[str, list[str], UpstreamSays] | None:
    """(the word of the error, the files, what is known) when an error names files known to be absent (the
    errata's ``[[absent]]``, files upstream lists without content) by a word of their name (``goes-wu334: no
    files for ...``)."""
    if facts is None:
        return None
    known: list[tuple[str, UpstreamSays]] = [(a, "documented-absent") for a in facts.documented_absent]
    known += [(a, "not-stored") for a in facts.not_stored]
    for token in re.findall(r"[A-Za-z0-9][\w.\-]{5,}", error or ""):
        low = token.lower()
        if low.isdigit() or not re.search(r"\d|[-_.]", low):
            continue  # a plain word ("FileNotFoundError", "files") names nothing
        hits = [(a, says) for a, says in known if low in PurePosixPath(a).name.lower()]
        if hits:
            return token, [a for a, _ in hits], hits[0][1]
    return None


def _missing_path(path: str, stderr: str, layout: PathLayout, lake: LakePaths, domain: str, lake_dir: Path | None,
                  facts: LakeFacts | None, linked: Callable[[Iterable[str]], list[str]],
                  out: Callable[..., Diagnosis]) -> Diagnosis:  # fmt: skip
    """The diagnosis of an error naming a file that is not there."""
    error = last_exception(stderr)
    rel = next((r for r in (lake_relative(path, p) for p in (layout.prefix, *layout.also))
                if r is not None and not r.startswith("..")), None)  # fmt: skip
    if rel is None:
        head = prefix_of(path, lake, domain)
        if head is not None:
            rel = path.replace("\\", "/")[len(head) :].lstrip("/") or None
    name = PurePosixPath(path.replace("\\", "/")).name
    if is_absolute(path):
        if rel is not None and lake.matches(rel):
            return out("wrong-path", f"{path}: an absolute path of the author's machine; the lake has it as {rel!r}",
                       evidence=[error], files=[rel])  # fmt: skip
        if rel is None:
            near = near_in_lake(name, lake.files)
            _note, says = _upstream_note(name, facts)
            if near is not None or says not in ("documented-absent", "not-stored", "upstream-has"):
                where = f"; the lake has {near!r}" if near else "; nothing of that name is in the lake"
                return out("wrong-path", f"{path}: an absolute path of the author's machine{where}", evidence=[error],
                           files=[near] if near else [])  # fmt: skip
    rel = rel or name
    if lake.matches(rel):
        return out("crash", f"{path}: {error}", evidence=[error])
    note, says = _upstream_note(rel, facts)
    # a file upstream has (or lists) is this lake's missing file, not a misspelling of a neighbour
    near = (
        None if says in ("documented-absent", "not-stored", "upstream-has") else near_in_lake(rel, lake.files)
    )
    if near is not None:
        return out("wrong-path", f"{path}: not in the lake; the lake has {near!r} (another spelling, letter case or "
                   "folder)", evidence=[error], files=[rel])  # fmt: skip
    evidence = [f"{rel}: not in the lake"]
    if note:
        evidence.append(f"{rel}: {note}")
    return out("missing-lake-file", f"{path}: not in the lake", evidence=evidence, findings=linked([rel]),
               files=[rel], upstream=says)  # fmt: skip


def _names(lake: LakePaths) -> set[str]:
    return {PurePosixPath(f).name.lower() for f in lake.files}


def _lfs_pointer(path: Path) -> bool:
    try:
        if not path.is_file() or path.stat().st_size > 1024:
            return False
        with open(path, "rb") as fh:
            return fh.read(40).startswith(b"version https://git-lfs")
    except OSError:
        return False


__all__ = [
    "ATTRIBUTION",
    "UpstreamSays",
    "Attribution",
    "CauseKind",
    "Diagnosis",
    "LakeFacts",
    "classify_failure",
    "diagnose",
    "last_exception",
    "missing_path_of",
]
