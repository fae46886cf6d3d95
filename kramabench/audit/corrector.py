"""The Corrector: errata proposals from the Auditor's reports, for a person to review.

Proposals are written in ``errata.toml``'s own format (``[[erratum]]`` tables, loadable by
:func:`kramabench.workload.errata.load_errata`) to a separate file, each preceded by a comment line
``# proposal <ID> kind=<kind> report=<report id>``. Nothing is applied by itself:
``kramabench audit apply PROPOSALS --accept ID ...`` appends the accepted ones to an errata file.

What each report gives:

- gold calculation error whose correction the audit ran and verified: ``new-answer`` (the value the
  correction code printed; the reason names the report and the code's sha256);
- gold calculation error without a verified correction, or missing data: ``exclude`` (field
  ``excluded = true`` on the task: underivable gold);
- evaluation false positive of sub-kind format / order / duplicates / missing-value representation on
  an exact answer type: ``type-change`` to the approximate type (an evaluation refinement);
- ambiguous question: listed under ``ambiguous``, never changed (ambiguity is kept as signal);
- system-attributable or undecided: nothing.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kramabench.audit.auditor import AuditReport
from kramabench.files import ERRATA_BYTES, clip_words, read_text, sha256_hex, write_file
from kramabench.workload.errata import Erratum, load_errata
from kramabench.workload.errata import parse_errata as load_errata_text
from kramabench.workload.models import Workload

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: a proposal's reason quotes the root cause up to this many characters (cut at a word, marked …)
REASON_CHARS = 400
ProposalKind = Literal["new-answer", "type-change", "exclude"]
_HEADER_RE = re.compile(r"^# proposal (\S+) kind=(\S+) report=(\S+)\s*$", re.M)
_APPROXIMATE = {"string_exact": "string_approximate", "numeric_exact": "numeric_approximate",
                "list_exact": "list_approximate"}  # fmt: skip


class Proposal(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    kind: ProposalKind
    report: str
    erratum: Erratum


class Ambiguous(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str
    report: str
    reason: str


class Proposals(BaseModel):
    model_config = ConfigDict(extra="forbid")

    proposals: list[Proposal] = Field(default_factory=list)
    ambiguous: list[Ambiguous] = Field(default_factory=list)


def _erratum(
    domain: str, task: str, field: str, old: Any, new: Any, reason: str, *, has_old: bool = True
) -> Erratum:
    return Erratum(domain=domain, task=task, field=field, old=old if has_old else None, new=new, reason=reason,
                   has_old=has_old)  # fmt: skip


def propose(reports: list[AuditReport], workloads: dict[str, Workload]) -> Proposals:
    """Proposals from reports; ``workloads`` (by domain) give the current values the errata must match."""
    out = Proposals()
    for rep in reports:
        wl = workloads.get(rep.domain)
        if wl is None or rep.attribution != "benchmark":
            continue
        try:
            task = wl.task(rep.task_id)
        except KeyError:
            continue
        pid = f"P{len(out.proposals) + 1}"
        at = task.answer_type
        if rep.category == "ambiguous-question":
            out.ambiguous.append(Ambiguous(task_id=task.id, report=rep.id,
                                           reason=rep.ambiguity or rep.root_cause or "ambiguous"))  # fmt: skip
            continue
        if (
            rep.category == "gold-calculation-error"
            and rep.correction
            and rep.correction.ran
            and rep.correction.matches
        ):
            fix = sha256_hex(rep.correction.code)[:12]
            reason = (
                f"audit {rep.id}: {clip_words(rep.root_cause, REASON_CHARS)} (the correction code, sha256 "
                f"{fix}…, run again by the audit, prints {json.dumps(rep.correction.printed, default=str)[:60]}"
            )
            if rep.derivation is not None:
                how = sha256_hex(rep.derivation.code)[:12]
                made = "reproduces the old gold" if rep.gold_reproduced else "does not reproduce the old gold"
                reason += f"; the derivation, sha256 {how}…, {made}"
            reason += ")"
            e = _erratum(rep.domain, task.id, "answer", task.answer, rep.correction.printed, reason)
            out.proposals.append(Proposal(id=pid, kind="new-answer", report=rep.id, erratum=e))
        elif rep.category in ("gold-calculation-error", "missing-data"):
            why = (
                "the gold cannot be derived from the lake"
                if rep.category == "missing-data"
                else "no verified derivation reproduces the gold and no verified correction was found"
            )
            reason = f"audit {rep.id}: {why}: {clip_words(rep.root_cause, REASON_CHARS)}"
            e = _erratum(rep.domain, task.id, "excluded", None, True, reason, has_old=False)
            out.proposals.append(Proposal(id=pid, kind="exclude", report=rep.id, erratum=e))
        elif (
            rep.category == "evaluation-false-positive"
            and at in _APPROXIMATE
            and rep.sub_kind != "actual-match"
        ):
            reason = (f"audit {rep.id}: a correct answer was rejected ({rep.sub_kind}): "
                      f"{clip_words(rep.root_cause, REASON_CHARS)}; "
                      "the approximate type accepts it")  # fmt: skip
            e = _erratum(rep.domain, task.id, "answer_type", at, _APPROXIMATE[at], reason)
            out.proposals.append(Proposal(id=pid, kind="type-change", report=rep.id, erratum=e))
    return out


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float) and not isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items()) + "}"
    return json.dumps(str(v))


def erratum_toml(e: Erratum) -> str:
    lines = ["[[erratum]]", f"domain = {_toml_value(e.domain)}", f"task = {_toml_value(e.task)}"]
    if e.subtask:
        lines.append(f"subtask = {_toml_value(e.subtask)}")
    lines.append(f"field = {_toml_value(e.field)}")
    if e.has_old and e.old is not None:
        lines.append(f"old = {_toml_value(e.old)}")
    lines += [f"new = {_toml_value(e.new)}", f"reason = {_toml_value(e.reason)}"]
    return "\n".join(lines)


def write_proposals(path: Path, proposals: Proposals) -> Path:
    """Write the proposals file (errata format); ambiguous questions are listed as comments."""
    parts = ["# Errata PROPOSED by `kramabench audit failures` — not applied. Review each, then accept with:",
             f"#   kramabench audit apply {Path(path).name} --accept ID ... [--errata ERRATA.toml]", ""]  # fmt: skip
    for p in proposals.proposals:
        parts += [f"# proposal {p.id} kind={p.kind} report={p.report}", erratum_toml(p.erratum), ""]
    if proposals.ambiguous:
        parts.append("# Ambiguous questions (kept as they are; ambiguity is signal, not an error):")
        parts += [
            f"#   {a.task_id} (report {a.report}): {clip_words(a.reason, REASON_CHARS)}"
            for a in proposals.ambiguous
        ]
    write_file(path, "\n".join(parts) + "\n", regular_only=True)
    load_errata(Path(path))  # what was written must load as errata
    return Path(path)


def read_proposals(path: Path) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(id, kind, report, raw erratum table) of each proposal of a proposals file, in file order."""
    text = read_text(path, limit=ERRATA_BYTES, what="proposals file")
    heads = _HEADER_RE.findall(text)
    tables = tomllib.loads(text).get("erratum", [])
    if len(heads) != len(tables):
        raise ValueError(f"{path}: {len(tables)} [[erratum]] tables but {len(heads)} '# proposal' lines")
    return [(h[0], h[1], h[2], t) for h, t in zip(heads, tables, strict=True)]


def apply_proposals(path: Path, accept: list[str], errata_path: Path) -> list[str]:
    """Append the accepted proposals to ``errata_path``; returns the ids applied. Unknown ids raise."""
    found = read_proposals(path)
    by_id = {pid: (kind, rep, table) for pid, kind, rep, table in found}
    unknown = [a for a in accept if a not in by_id]
    if unknown:
        raise KeyError(f"{path}: no proposal {', '.join(unknown)} (there are: {', '.join(by_id) or 'none'})")
    blocks = []
    for pid in accept:
        kind, rep, table = by_id[pid]
        e = Erratum(**table, has_old="old" in table)
        blocks.append(f"# accepted proposal {pid} ({kind}) from audit report {rep}\n{erratum_toml(e)}")
    errata_path = Path(errata_path)
    existed = os.path.lexists(errata_path)
    before = read_text(errata_path, limit=ERRATA_BYTES, what="errata file") if existed else ""
    after = before.rstrip("\n") + ("\n\n" if before.strip() else "") + "\n\n".join(blocks) + "\n"
    load_errata_text(after, errata_path)  # what would be written must load as errata: checked before writing
    write_file(errata_path, after)  # atomic; a link to the errata file stays a link
    return list(accept)


__all__ = [
    "Ambiguous",
    "Proposal",
    "Proposals",
    "apply_proposals",
    "erratum_toml",
    "propose",
    "read_proposals",
    "write_proposals",
]
