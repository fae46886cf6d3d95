"""The class ``audit reference`` proposes for each task, from what it found.

A first pass, for a reviewer to confirm by hand (docs/audit.md "Task classes"); the reviewed class goes in
the errata file's ``[[review]]``. The rules read only the verdicts, the printed output, the static gold
checks, the errata applied and the documented absences, never a task's name:

- the solution reproduces the gold: ``reproduces`` (``gold-defect`` when it reproduces a gold an erratum
  corrected: the raw gold is the defect);
- it cannot run because a lake file is absent: ``unreproducible`` naming the file; when the lake has the
  file under another spelling or folder, or the solution fails for its own reasons (an old library API, a
  missing module, a crash, a time-out), ``solution-defect``;
- its path is wrong (the lake has the file under another spelling, or it is an absolute path of the author's
  machine): ``solution-defect``;
- it runs but shows nothing readable, or prose around the gold, or another scale (a fraction for a
  percentage), or the answer of one of its own steps: ``solution-defect``;
- the question offers two alternatives but wants True/False or Yes/No ("different or the same? Answer with
  True or False"): ``ambiguous``;
- it prints a clean value that differs, or the static checks say the gold contradicts its own question
  or its last step: ``gold-defect`` (a candidate: compute the answer by hand before writing an erratum).

``confidence`` is ``likely`` when the finding itself shows the class, ``candidate`` when a person must
compute the answer to decide.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.audit.layout import near_in_lake
from kramabench.files import read_bytes, write_file
from kramabench.workload.models import TaskClass, Workload

if TYPE_CHECKING:
    from kramabench.audit.static import StaticFinding
    from kramabench.audit.verdicts import ItemVerdict, SolutionRun

Confidence = Literal["likely", "candidate"]


class ClassProposal(BaseModel):
    """The class ``audit reference`` proposes for one task."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    task_id: str
    klass: TaskClass | None = Field(
        None, description="None: nothing to propose (no solution, sandbox trouble)"
    )
    confidence: Confidence = "candidate"
    why: str
    printed: Any = Field(None, description="the main answer read from the solution's output")
    absent: list[str] = Field(
        default_factory=list, description="lake files the solution needs that are absent"
    )
    reviewed: TaskClass | None = Field(None, description="the class the errata already record for the task")


def _norm(text: Any) -> str:
    return " ".join(re.sub(r"[_\-\s]+", " ", str(text)).lower().split())


def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        m = re.fullmatch(r"\s*([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*%?\s*", v.replace(",", ""))
        return float(m.group(1)) if m else None
    return None


def _same_value(a: Any, b: Any) -> bool:
    x, y = _num(a), _num(b)
    if x is not None and y is not None:
        return abs(x - y) <= 1e-6 * max(1.0, abs(x), abs(y)) or (round(x, 2) == round(y, 2) and abs(x) >= 1)
    if isinstance(a, list) and isinstance(b, list):
        return sorted(_norm(v) for v in a) == sorted(_norm(v) for v in b)
    return _norm(a) == _norm(b) and _norm(a) != ""


def _scaled(gold: Any, got: Any) -> str | None:
    """'percent' / 'fraction' when ``got`` is ``gold`` times/divided by 100 (within 1%)."""
    g, p = _num(gold), _num(got)
    if g is None or p is None or g == 0 or p == 0:
        return None
    for factor, printed, gold_is in (
        (100.0, "a fraction", "a percentage"),
        (0.01, "a percentage", "a fraction"),
    ):
        if abs(p * factor - g) <= 0.01 * abs(g) + (0.5 if factor > 1 else 0.005):
            return f"{printed} where the gold is {gold_is}"
    return None


def _rounds_to(gold: Any, got: Any) -> bool:
    """``got`` is ``gold`` before rounding to the gold's decimals (85.7 -> 86, 0.52283 -> 0.523)."""
    g, p = _num(gold), _num(got)
    if g is None or p is None or g == p:
        return False
    text = repr(g) if isinstance(gold, float) else str(gold).strip().rstrip("%")
    decimals = len(text.split(".", 1)[1]) if "." in text and "e" not in text.lower() else 0
    return (
        round(p, decimals) == round(g, decimals)
        or abs(round(p, decimals) - g) < 10 ** (-decimals) / 2 + 1e-12
    )


def _lake_files(lake: Path) -> list[str]:
    if not Path(lake).is_dir():
        return []
    return [p.relative_to(lake).as_posix() for p in Path(lake).rglob("*") if p.is_file()]


def _missing_path(detail: str | None) -> str | None:
    if not detail:
        return None
    path = detail.split(": not in the lake")[0].strip()
    return path or None


def _relative_to_lake(path: str, domain: str) -> str:
    p = path.replace("\\", "/")
    marker = f"data/{domain}/input/"
    if marker in p:
        p = p.split(marker, 1)[1]
    while "//" in p:
        p = p.replace("//", "/")
    return p.lstrip("./").lstrip("/")


_YES_NO = {"true", "false", "yes", "no"}
_INSTRUCTION_RE = re.compile(
    r"\(?\b(?:please\s+)?(?:answer|respond|reply)(?:\s+(?:with|in|using))?(?:\s+(?:a|either))?\s+(?:true|yes)\s+or\s+(?:false|no)\b\.?\)?",
    re.IGNORECASE,
)
_ALTERNATIVES_RE = re.compile(r"\b(\w+(?:\s+\w+)?)\s+or\s+(?:the\s+)?(\w+)\b[^?]*\?", re.IGNORECASE)


def yes_no_alternatives(query: str, gold: Any) -> str | None:
    """The alternatives of a question that offers two ("different or the same?") but wants True/False or Yes/No:
    which alternative does True affirm? None when the question is a plain yes/no question."""
    if str(gold).strip().lower() not in _YES_NO:
        return None
    text = _INSTRUCTION_RE.sub(" ", query or "")
    for sentence in re.findall(r"[^?]*\?", text):
        m = _ALTERNATIVES_RE.search(sentence)
        if m and m.group(2).lower() != "not" and not re.search(r"\b(?:e\.g|i\.e)\b", sentence[: m.start()]):
            return m.group(0).strip()
    return None


def _lfs_pointer(path: Path) -> bool:
    try:
        if not path.is_file() or path.stat().st_size > 1024:
            return False
        return read_bytes(path, limit=1024).startswith(b"version https://git-lfs")
    except OSError:
        return False


def _source_covers(source: str, path: str) -> bool:
    """A data source names ``path``: the same file (or file name), or a folder / glob that holds it."""
    import fnmatch

    src = source.strip().replace("\\", "/").lstrip("./").lower()
    p = path.lower()
    if not src:
        return False
    if src == p or src == PurePosixPath(p).name:
        return True
    if any(c in src for c in "*?["):
        return fnmatch.fnmatch(p, src) or fnmatch.fnmatch(p, src.rstrip("/*") + "/*")
    return p.startswith(src.rstrip("/") + "/")


def _really_absent(lake: Path, rel: str) -> bool:
    """The file is not in the lake, or only as a git-LFS pointer."""
    path = Path(lake) / rel
    return not path.exists() or _lfs_pointer(path)


def upstream_not_stored(domain: str, ref: str | None = None) -> list[str]:
    """Lake files (relative to ``data/<domain>/input/``) that the shipped upstream listing of ``ref`` (default:
    the default official commit) names without storing their content."""
    from kramabench.workload.blobs import load_blob_table
    from kramabench.workload.fetch import DEFAULT_REF

    table = load_blob_table(ref or DEFAULT_REF)
    if table is None:
        return []
    prefix = f"data/{domain}/input/"
    return sorted(p[len(prefix) :] for p, e in table.under([prefix]).items() if not e.stored)


def propose_class(
    wl: Workload, task_id: str, run: SolutionRun | None, items: list[ItemVerdict], *,
    static: Iterable[StaticFinding] = (),
    absent: Iterable[str] = (),
) -> ClassProposal:  # fmt: skip
    """The proposed class of one task from its solution run, its verdicts and the static findings."""
    task = wl.task(task_id)
    main = next((i for i in items if i.subtask_id is None), None)
    review = wl.review_of(task_id)
    base: dict[str, Any] = dict(domain=wl.domain, task_id=task_id, reviewed=review.klass if review else None)
    ext = main.extraction if main is not None else None
    printed = ext.value if ext is not None and ext.found else None
    base["printed"] = printed
    fixed_main = [
        e for e in wl.errata if e.task_id == task_id and e.subtask_id is None and e.field == "answer"
    ]
    flagged = [f for f in static if f.task_id == task_id and f.subtask_id is None and f.kind == "gold-format"]
    flagged += [f for f in static if f.task_id == task_id and f.kind == "main-vs-subtasks"]

    def out(klass: TaskClass | None, confidence: Confidence, why: str, **kw: Any) -> ClassProposal:
        return ClassProposal(**base, klass=klass, confidence=confidence, why=why, **kw)

    if main is None:
        return out(None, "candidate", "no verdict for the main answer")
    alternatives = yes_no_alternatives(task.query, main.gold)
    if alternatives is not None:
        return out("ambiguous", "candidate", f"the question offers alternatives ({alternatives!r}) but asks for "
                   f"{'True/False' if str(main.gold).lower() in ('true', 'false') else 'Yes/No'}: either answer "
                   "affirms one reading; the gold is " + repr(main.gold))  # fmt: skip
    how = f"{ext.method}: {ext.text}" if ext is not None and ext.found and ext.text else "no printed answer"
    missing = [a for a in absent if _really_absent(wl.lake, a)]
    if main.verdict != "reproduces" and run is not None:
        read = list(run.files_read)
        seen = " ".join([run.stderr_tail, main.cause_detail or "", *read]).lower()
        named = sorted(a for a in missing if a.lower() in seen or PurePosixPath(a).name.lower() in seen)
        if named:
            return out("unreproducible", "likely",
                       f"the solution reads {', '.join(named)}, absent upstream ({main.verdict})", absent=named)  # fmt: skip
        sources = {
            src for ds in (task.data_sources, *(s.data_sources for s in task.subtasks)) for src in ds or []
        }
        needed = sorted(a for a in missing if any(_source_covers(src, a) for src in sources))
        if needed:
            return out("unreproducible", "candidate", f"the task's data sources include {', '.join(needed)}, absent "
                       f"upstream; the solution's answer ({main.verdict}) cannot be checked without them",
                       absent=needed)  # fmt: skip
        pointers = sorted(f for f in read if _lfs_pointer(Path(wl.lake) / f))
        if pointers:
            return out("unreproducible", "likely", f"the solution reads {', '.join(pointers)}: a git-LFS pointer in "
                       f"place of the file, whose content upstream does not store ({main.verdict})",
                       absent=pointers)  # fmt: skip
    if main.verdict == "reproduces":
        if fixed_main:
            return out("gold-defect", "likely", f"the solution reproduces the corrected gold {fixed_main[0].new!r} "
                       f"(erratum applied); the raw gold {fixed_main[0].old!r} is the defect")  # fmt: skip
        return out("reproduces", "likely", f"the reference solution prints {printed!r} ({how}); full marks")
    if main.verdict == "cannot-run":
        cause, detail = main.cause, main.cause_detail or ""
        if cause in ("no-solution", "sandbox-error"):
            return out(None, "candidate", f"{cause}: {detail}; nothing to propose")
        if cause == "missing-lake-file":
            files = list(run.cause_files) if run is not None else []
            rel = files[0] if files else _relative_to_lake(_missing_path(detail) or "", wl.domain)
            documented = {a.lower() for a in missing} | {PurePosixPath(a).name.lower() for a in missing}
            if rel.lower() in documented or PurePosixPath(rel).name.lower() in documented:
                return out(
                    "unreproducible",
                    "likely",
                    f"the solution reads {rel}, which is absent upstream",
                    absent=[rel],
                )
            said = run.upstream if run is not None else None
            evidence = "; ".join(run.evidence[:2]) if run is not None else ""
            if said in ("documented-absent", "not-stored", "upstream-lacks"):
                return out("unreproducible", "likely", f"the solution reads {rel}, which is not in the lake: {evidence}",
                           absent=files or [rel])  # fmt: skip
            near = near_in_lake(rel, _lake_files(wl.lake)) if said is None else None
            if near is not None:
                return out("solution-defect", "likely",
                           f"the solution reads {rel!r}, which the lake has as {near!r}: a wrong path")  # fmt: skip
            where = f": {evidence}" if evidence else " (check that it is absent upstream)"
            return out("unreproducible", "candidate", f"the solution reads {rel}, which is not in the lake{where}",
                       absent=files or [rel])  # fmt: skip
        if cause in ("wrong-path", "path-layout"):
            return out("solution-defect", "likely", f"the solution looks for a lake file where it is not ({detail}): "
                       "a wrong path")  # fmt: skip
        if cause == "prints-nothing":
            return out(
                "solution-defect", "likely", f"the solution prints no answer that can be read: {detail}"
            )
        return out("solution-defect", "candidate",
                   f"the solution cannot run here ({cause}: {detail}); the gold is unchecked")  # fmt: skip
    # differs or unscored: the solution printed something else
    gold = main.gold
    sub_golds = {s.id: s.answer for s in task.subtasks}
    if main.verdict == "unscored" and (ext is None or not ext.found):
        return out("solution-defect", "likely", f"the solution shows no answer that can be read "
                   f"({main.cause_detail or 'nothing of the answer kind'}): a person reads the gold off its output")  # fmt: skip
    if main.verdict == "unscored":
        if printed is not None and _norm(gold) and _norm(gold) in _norm(printed):
            return out("solution-defect", "likely", f"the solution prints prose around the gold ({how})")
        return out(
            None, "candidate", f"the scorer needs a judge to compare {printed!r} with the gold {gold!r}"
        )
    if flagged:
        f = flagged[0]
        return out("gold-defect", "candidate", f"the solution prints {printed!r}, the gold is {gold!r}, and the "
                   f"static checks flag the gold ({f.code}: {f.message})")  # fmt: skip
    step = next((sid for sid, g in sub_golds.items() if g is not None and _same_value(g, printed)
                 and not _same_value(g, gold)), None)  # fmt: skip
    if step is not None:
        return out("solution-defect", "likely",
                   f"the solution prints {printed!r}, the gold of its step {step}, not the final answer")  # fmt: skip
    if _rounds_to(gold, printed):
        return out("solution-defect", "likely", f"the solution prints {printed!r}, the gold {gold!r} before rounding "
                   "(the question's rounding is not applied)")  # fmt: skip
    scale = _scaled(gold, printed)
    if scale is not None:
        return out("solution-defect", "likely", f"the solution prints {printed!r}, {scale} ({gold!r})")
    if isinstance(printed, str) and _norm(gold) and _norm(gold) in _norm(printed):
        return out("solution-defect", "likely", f"the solution prints prose around the gold ({how})")
    if ext is not None and ext.method in ("prose", "model"):
        return out("solution-defect", "candidate", f"the solution prints prose; the value read from it ({how}) "
                   f"differs from the gold {gold!r}: check which number it means")  # fmt: skip
    close = ""
    g, p = _num(gold), _num(printed)
    if g is not None and p is not None and g != 0 and abs(p - g) / abs(g) < 0.05:
        close = " (close: a rounding or a data step)"
    return out("gold-defect", "candidate", f"the solution prints one clean value {printed!r}, the gold is {gold!r}"
               f"{close}: compute the answer from the lake before writing an erratum")  # fmt: skip


def propose_classes(runs: Iterable[SolutionRun], verdicts: Iterable[ItemVerdict], static: Sequence[StaticFinding],
                    workloads: Iterable[Workload], *, absent: dict[str, list[str]] | None = None,
                    ) -> list[ClassProposal]:  # fmt: skip
    """One proposal per audited task, in the audit's order."""
    by_domain = {w.domain: w for w in workloads}
    items: dict[tuple[str, str], list[ItemVerdict]] = {}
    for i in verdicts:
        items.setdefault((i.domain, i.task_id), []).append(i)
    out: list[ClassProposal] = []
    for run in runs:
        wl = by_domain.get(run.domain)
        if wl is None:
            continue
        out.append(propose_class(wl, run.task_id, run, items.get((run.domain, run.task_id), []),
                                 static=static, absent=(absent or {}).get(run.domain, [])))  # fmt: skip
    return out


def _toml_value(v: Any) -> str:
    import json

    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)) and v == v and v not in (float("inf"), float("-inf")):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list) and all(x is not None and not isinstance(x, (dict, list)) for x in v):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(json.dumps(v, ensure_ascii=False, default=str), ensure_ascii=False)


def write_proposed_reviews(path: Path, proposals: Iterable[ClassProposal]) -> Path:
    """The proposals as ``[[review]]`` drafts for a reviewer: commented out (a class needs the reviewer's
    evidence: a gold-defect its erratum and derivation, an unreproducible task its ``[[absent]]``)."""
    lines = [
        '# Classes proposed by `kramabench audit reference` (docs/audit.md, "Task classes").',
        "# Drafts, not reviews: check each by hand, then copy it (uncommented, with its evidence) into the errata.",
        "",
    ]
    for p in proposals:
        lines.append(f"# {p.domain}/{p.task_id}: {p.klass or 'no proposal'} ({p.confidence})"
                     + (f"; reviewed: {p.reviewed}" if p.reviewed else ""))  # fmt: skip
        if p.klass is None:
            lines.append(f"#   {p.why}")
            lines.append("")
            continue
        body = ["[[review]]", f"domain = {_toml_value(p.domain)}", f"task = {_toml_value(p.task_id)}",
                f"class = {_toml_value(p.klass)}", f"why = {_toml_value(p.why)}"]  # fmt: skip
        if p.printed is not None:
            body.append(f"derived = {_toml_value(p.printed)}")
        if p.absent:
            body.append(f"absent = {_toml_value(p.absent)}")
        lines.extend("# " + b for b in body)
        lines.append("")
    write_file(path, "\n".join(lines), regular_only=True)
    return Path(path)


__all__ = [
    "ClassProposal",
    "Confidence",
    "propose_class",
    "propose_classes",
    "upstream_not_stored",
    "write_proposed_reviews",
    "yes_no_alternatives",
]
