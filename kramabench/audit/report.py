"""The audit's page: ``audit.md`` and a self-contained ``audit.html``.

Headline first: the share of failures attributable to the benchmark (when failures were audited), then
per domain how many reference solutions reproduce / differ / cannot run, the causes, the static gold
findings, failures by attribution and category, and the proposed errata; then each failure report in full
(root cause, evidence, the derivation and correction code with what they printed, problems, the session).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kramabench.audit.reference import ReferenceAudit
from kramabench.audit.static import group_findings
from kramabench.contracts.text import html_text, md_code_block, md_text
from kramabench.files import clip_words, write_file

if TYPE_CHECKING:
    from kramabench.audit.auditor import AuditReport, CodeCheck
    from kramabench.audit.corrector import Proposals
    from kramabench.audit.failures import FailuresAudit

VERDICTS = ("reproduces", "differs", "cannot-run", "unscored")


def _md_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    def cell(v: Any) -> str:
        return "—" if v is None else md_text(v)

    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return out


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.0f}%" if d else "—"


def sections(
    ref: ReferenceAudit | None = None,
    failures: FailuresAudit | None = None,
    proposals: Proposals | None = None,
) -> list[tuple[str, list[str], list[list[Any]], str | None]]:
    """(title, header, rows, note) of each section; the markdown and HTML renderers share them."""
    out: list[tuple[str, list[str], list[list[Any]], str | None]] = []
    if failures is not None and failures.reports:
        n = len(failures.reports)
        bench = sum(1 for r in failures.reports if r.attribution == "benchmark")
        head = (f"{bench} of {n} audited failures ({_pct(bench, n)}) are attributable to the benchmark, "
                f"{n - bench - failures.undecided} to the system, {failures.undecided} undecided.")  # fmt: skip
        cats = Counter((r.attribution, r.category, r.sub_kind or "") for r in failures.reports)
        rows: list[list[Any]] = [
            [a, c, s or "—", k, _pct(k, n)]
            for (a, c, s), k in sorted(cats.items(), key=lambda x: (x[0][0], -x[1]))
        ]
        out.append(
            (
                "Failures by attribution and category",
                ["Attribution", "Category", "Sub-kind", "Failures", "Share"],
                rows,
                head,
            )
        )

        def checked(r: AuditReport) -> str:
            if r.derivation is None:
                text = "no derivation given"
            elif r.gold_reproduced and r.category == "gold-calculation-error":
                text = "gold reproduced: the derivation shows how the wrong gold was made"
            else:
                text = "gold reproduced" if r.gold_reproduced else "gold not reproduced"
            if r.correction is not None:
                text += f"; correction {'verified' if r.correction.matches else 'not verified'}"
            return text

        rows = [[r.task_id, r.attribution, (r.category or "—") + (f" ({r.sub_kind})" if r.sub_kind else ""),
                 checked(r), r.root_cause or "—", "; ".join(r.problems) or "—"] for r in failures.reports]  # fmt: skip
        out.append(
            (
                "Audited failures",
                [
                    "Task",
                    "Attribution",
                    "Category",
                    "Verified by running",
                    "Root cause",
                    "Problems of the report",
                ],
                rows,
                "Each derivation and correction was run again by the audit and scored against the gold; the "
                "evidence, the code and what it printed follow under Failure reports.",
            )
        )
    if ref is not None:
        rows = []
        for d in ref.domains:
            c, s = ref.counts(d), ref.counts(d, subtasks=True)
            rows.append([d] + [c[v] for v in VERDICTS] + [" / ".join(str(s[v]) for v in VERDICTS)])
        c, s = ref.counts(), ref.counts(subtasks=True)
        rows.append(["**all**"] + [c[v] for v in VERDICTS] + [" / ".join(str(s[v]) for v in VERDICTS)])
        out.append(("Reference solutions", ["Domain", *VERDICTS, "Subtasks (same order)"], rows,
                    f"Workload {ref.workload} ({ref.root}), sandbox {ref.sandbox}; "
                    f"extraction: rules{' + ' + ref.extract_model if ref.extract_model else ''}."))  # fmt: skip
        causes = Counter((i.attributed_to or "—", i.cause) for i in ref.tasks() if i.verdict == "cannot-run")
        if causes:
            out.append(("Why solutions cannot run", ["Attributed to", "Cause", "Tasks"],
                        [[a, k, v] for (a, k), v in causes.most_common()], None))  # fmt: skip
            runs = {(r.domain, r.task_id): r for r in ref.runs}
            rows = []
            for i in ref.tasks():
                r = runs.get((i.domain, i.task_id))
                if i.verdict != "cannot-run" or r is None:
                    continue
                shown = r.evidence + [f"workloads validate: {f}" for f in r.findings]
                rows.append([i.domain, i.task_id, i.attributed_to or "—", i.cause,
                             clip_words(i.cause_detail or "", 160), clip_words(" · ".join(shown), 300) or "—"])  # fmt: skip
            out.append(
                (
                    "Cannot run: the evidence",
                    ["Domain", "Task", "Attributed to", "Cause", "Detail", "Evidence"],
                    rows,
                    "The validator's findings are those of `kramabench workloads validate` on the same files.",
                )
            )
        ran = [r for r in ref.runs if (r.layout is not None and not r.layout.standard)
               or r.read_from in ("value", "printed+value")]  # fmt: skip
        if ran:
            how = {"value": "the value of its last expression", "printed+value": "what it printed, then the value of "
                   "its last expression", "printed": "what it printed"}  # fmt: skip
            rows = [[r.domain, r.task_id, r.layout.describe() if r.layout is not None else "—",
                     r.layout.inferred_from if r.layout is not None and not r.layout.standard else "—",
                     how.get(r.read_from or "", "—"), clip_words((r.value or "").replace("\n", " ⏎ "), 120) or "—"]
                    for r in ran]  # fmt: skip
            out.append(
                (
                    "How solutions were run",
                    ["Domain", "Task", "Layout", "Layout read from", "Answer read from", "Value shown"],
                    rows,
                    "Each solution runs as a notebook cell (the value of a last bare expression is shown, as a "
                    "notebook does) from a folder where its relative paths reach the lake (read-only).",
                )
            )
        if ref.proposals:
            classes = sorted({p.klass or "none" for p in ref.proposals})
            rows = []
            for d in ref.domains:
                mine = [p for p in ref.proposals if p.domain == d]
                rows.append([d] + [sum((p.klass or "none") == k for p in mine) for k in classes])
            out.append(("Proposed classes", ["Domain", *classes], rows,
                        "A first pass from the findings, to review by hand (docs/audit.md, Task classes); "
                        "drafts in reviews-proposed.toml."))  # fmt: skip
        proposed = {(p.domain, p.task_id): p for p in ref.proposals}
        rows = []
        for i in ref.tasks():
            ext = i.extraction
            got = None if ext is None or not ext.found else f"{str(ext.value)[:60]} ({ext.method})"
            detail = i.diff if i.verdict == "differs" else i.cause_detail if i.verdict != "reproduces" else ""
            p = proposed.get((i.domain, i.task_id))
            cls = "—" if p is None or p.klass is None else f"{p.klass} ({p.confidence})"
            if p is not None and p.reviewed:
                cls += f"; reviewed: {p.reviewed}"
            rows.append([i.domain, i.task_id, i.verdict + (f": {i.cause}" if i.cause else ""), str(i.gold)[:60], got,
                         (detail or "")[:140], cls])  # fmt: skip
        out.append(("Per task", ["Domain", "Task", "Verdict", "Gold", "Printed (how read)", "Detail", "Proposed class"],
                    rows, None))  # fmt: skip
        if ref.static:
            kept = [f for f in ref.static if f.kind != "validator" or f.severity != "info"]
            groups = group_findings(kept)
            rows = [[g.domain, (g.task_id or "—") + (f" ({len(g.subtasks)} subtask{'s' if len(g.subtasks) != 1 else ''})"
                                                     if g.subtasks else ""),
                     g.kind, g.code, g.count, " · ".join(g.examples) + (" …" if g.count > len(g.examples) else "")]
                    for g in groups]  # fmt: skip
            out.append(
                (
                    "Static gold checks",
                    ["Domain", "Task", "Kind", "Code", "Findings", "Examples"],
                    rows,
                    f"{len(kept)} finding(s) grouped per task and kind into {len(groups)} row(s); every finding "
                    "is in reference.json",
                )
            )
            scale = [g for g in groups if g.code == "gold_percent_scale"]
            if scale:
                out.append(
                    (
                        "Percent scale: question and gold disagree",
                        ["Domain", "Task", "Where", "Gold vs question"],
                        [
                            [
                                g.domain,
                                g.task_id,
                                ", ".join(g.subtasks) or "main answer",
                                " · ".join(g.examples),
                            ]
                            for g in scale
                        ],
                        "The paper scores these as they are (an answer in the question's scale is wrong); "
                        "`--normalise-percent` rescores a 100x answer to a percentage question.",
                    )
                )
    if proposals is not None and proposals.proposals:
        rows = [[p.id, p.erratum.task + (f"/{p.erratum.subtask}" if p.erratum.subtask else ""), p.kind,
                 clip_words(str(p.erratum.new), 120), p.erratum.reason, p.report] for p in proposals.proposals]  # fmt: skip
        out.append(
            (
                "Proposed errata (not applied)",
                ["Id", "Target", "Kind", "New", "Reason", "From report"],
                rows,
                "Accept with: kramabench audit apply PROPOSALS --accept ID ...",
            )
        )
        if proposals.ambiguous:
            out.append(
                (
                    "Ambiguous questions (kept as they are)",
                    ["Task", "Why"],
                    [[a.task_id, a.reason] for a in proposals.ambiguous],
                    None,
                )
            )
    return out


def _code_check(label: str, c: CodeCheck | None, expected_what: str) -> dict[str, Any] | None:
    """A derivation or correction as the page shows it: the code, what it printed, whether that matches."""
    if c is None:
        return None
    if not c.ran:
        verdict = f"did not run: {c.error or 'no output'}"
    else:
        printed = json.dumps(c.printed, default=str, ensure_ascii=False)
        verdict = f"printed {clip_words(printed, 300)}" + (f" (read as {c.how_read})" if c.how_read else "")
        verdict += f"; {'matches' if c.matches else 'does not match'} {expected_what}"
    return {"label": label, "code": c.code, "verdict": verdict}


def failure_details(failures: FailuresAudit | None) -> list[dict[str, Any]]:
    """Each audited failure in full: root cause, evidence, the derivation and the correction (code and what it
    printed when the audit ran it again), the readings of an ambiguous question, the report's problems, and the
    auditor's session (each program it ran, with its output: long output keeps its head and tail)."""
    out = []
    for r in failures.reports if failures is not None else []:
        cat = (r.category or "undecided") + (f" ({r.sub_kind})" if r.sub_kind else "")
        checks = [c for c in (
            _code_check("Derivation (code that reproduces the gold)", r.derivation, "the gold"),
            _code_check("Correction (code that computes the right answer)", r.correction,
                        f"the claimed answer {json.dumps(r.correct_answer, default=str)[:80]}"),
        ) if c]  # fmt: skip
        runs = []
        for e in r.transcript:
            if "ran" in e:
                runs.append({"turn": e.get("turn"), "status": e.get("ran"), "code": e.get("code") or "",
                             "stdout": e.get("stdout", e.get("stdout_tail", "")),
                             "stderr": e.get("stderr", e.get("stderr_tail", ""))})  # fmt: skip
        out.append(
            {
                "id": r.id,
                "heading": f"{r.id} — {r.attribution}: {cat}",
                "root_cause": r.root_cause or "—",
                "evidence": list(r.evidence),
                "ambiguity": r.ambiguity,
                "checks": checks,
                "problems": list(r.problems),
                "facts": f"auditor {r.auditor} · {r.turns} turn(s) · {r.runs} program(s) run"
                + (f" · ${r.cost_usd:.4f}" if r.cost_usd else ""),
                "runs": runs,
            }
        )
    return out


def render_markdown(
    title: str,
    secs: list[tuple[str, list[str], list[list[Any]], str | None]],
    details: list[dict[str, Any]] | None = None,
) -> str:
    lines = [f"# {md_text(title)}", ""]
    for name, header, rows, note in secs:
        lines += [f"## {md_text(name)}", ""]
        if note:
            lines += [md_text(note), ""]
        lines += _md_table(header, rows) if rows else ["(none)"]
        lines.append("")
    if details:
        lines += ["## Failure reports", ""]
        for d in details:
            lines += [
                f"### {md_text(d['heading'])}",
                "",
                f"_{md_text(d['facts'])}_",
                "",
                f"**Root cause.** {md_text(d['root_cause'])}",
                "",
            ]
            if d["evidence"]:
                lines += ["**Evidence.**", ""] + [f"- {md_text(x)}" for x in d["evidence"]] + [""]
            if d["ambiguity"]:
                lines += [f"**Readings of the question.** {md_text(d['ambiguity'])}", ""]
            for c in d["checks"]:
                lines += [
                    f"**{md_text(c['label'])}**, run again by the audit: {md_text(c['verdict'])}.",
                    "",
                    *md_code_block(c["code"], "python"),
                    "",
                ]
            if d["problems"]:
                lines += (
                    ["**Problems of the report.**", ""] + [f"- {md_text(p)}" for p in d["problems"]] + [""]
                )
            for run in d["runs"]:
                out = (run["stdout"] or "(no output)").rstrip()
                if run["stderr"].strip():
                    out += "\n--- stderr ---\n" + run["stderr"].rstrip()
                lines += [
                    f"Turn {md_text(run['turn'])}: the auditor ran ({md_text(run['status'])}):",
                    "",
                    *md_code_block(run["code"], "python"),
                    "",
                    *md_code_block(out, "text"),
                    "",
                ]
    return "\n".join(lines)


_CSS = """body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.9rem}td,th{border:1px solid #ddd;padding:.25rem .5rem;
text-align:left;vertical-align:top}th{background:#f4f4f4}.note{font-size:1.05rem}.headline{font-size:1.4rem;
font-weight:600;background:#fff6e0;padding:.6rem 1rem;border-left:4px solid #e0a000}
.reproduces{color:#17702a}.differs{color:#b06000}.cannot-run{color:#b00020}
pre{background:#f6f8fa;border:1px solid #e1e4e8;padding:.5rem .7rem;overflow:auto;max-height:420px;font-size:.82rem;
white-space:pre-wrap}pre.err{background:#fff5f5}section.failure{border-top:1px solid #ddd;padding-top:.4rem;margin-top:1rem}
.facts{color:#666;font-size:.85rem}ul.problems,p.problems{color:#9b1c1c}summary{cursor:pointer;color:#0b5cad}"""


def _titled_list(title: str, items: list[Any], attrs: str = "") -> str:
    """A bold title (a paragraph) over a bulleted list of ``items``, both with the HTML attributes ``attrs``."""
    lis = "".join(f"<li>{html_text(str(x))}</li>" for x in items)
    return f"<p{attrs}><b>{title}</b></p><ul{attrs}>{lis}</ul>"


def _details_html(details: list[dict[str, Any]]) -> str:
    e = html_text
    parts = ["<h2 id='failure-reports'>Failure reports</h2>"]
    for d in details:
        parts.append(f"<section class='failure' id='{e(d['id'])}'><h3>{e(d['heading'])}</h3>"
                     f"<p class='facts'>{e(d['facts'])}</p><p><b>Root cause.</b> {e(d['root_cause'])}</p>")  # fmt: skip
        if d["evidence"]:
            parts.append(_titled_list("Evidence.", d["evidence"]))
        if d["ambiguity"]:
            parts.append(f"<p><b>Readings of the question.</b> {e(d['ambiguity'])}</p>")
        for c in d["checks"]:
            parts.append(
                f"<p><b>{e(c['label'])}</b>, run again by the audit: {e(c['verdict'])}.</p>"
                f"<pre>{e(c['code'])}</pre>"
            )
        if d["problems"]:
            parts.append(_titled_list("Problems of the report.", d["problems"], " class='problems'"))
        if d["runs"]:
            body = "".join(
                f"<p>Turn {e(str(r['turn']))}: ran ({e(str(r['status']))})</p><pre>{e(r['code'])}</pre>"
                f"<pre class='out'>{e(r['stdout'] or '(no output)')}</pre>"
                + (f"<pre class='err'>{e(r['stderr'])}</pre>" if r["stderr"].strip() else "")
                for r in d["runs"]
            )
            parts.append(
                f"<details><summary>The auditor's session: {len(d['runs'])} program(s) and their output"
                f"</summary>{body}</details>"
            )
        parts.append("</section>")
    return "".join(parts)


def render_html(
    title: str,
    secs: list[tuple[str, list[str], list[list[Any]], str | None]],
    details: list[dict[str, Any]] | None = None,
) -> str:
    e = html_text
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{e(title)}</title><style>{_CSS}</style></head>",
             f"<body><h1>{e(title)}</h1>"]  # fmt: skip
    for n, (name, header, rows, note) in enumerate(secs):
        parts.append(f"<h2>{e(name)}</h2>")
        if note:
            parts.append(f"<p class='{'headline' if n == 0 else 'note'}'>{e(note)}</p>")
        parts.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
        for r in rows:
            cells = []
            for v in r:
                text = str(v if v is not None else "—").replace("**", "")
                cls = text.split(":")[0] if text.split(":")[0] in VERDICTS else ""
                cells.append(f"<td class='{cls}'>{e(text)}</td>" if cls else f"<td>{e(text)}</td>")
            parts.append("<tr>" + "".join(cells) + "</tr>")
        parts.append("</table>")
    if details:
        parts.append(_details_html(details))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(out_dir: Path, title: str, *, ref: ReferenceAudit | None = None, failures: FailuresAudit | None = None,
                 proposals: Proposals | None = None) -> tuple[Path, Path]:  # fmt: skip
    """Write ``audit.md`` and ``audit.html`` into ``out_dir``; returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    secs = sections(ref, failures, proposals)
    details = failure_details(failures)
    md, page = out_dir / "audit.md", out_dir / "audit.html"
    write_file(md, render_markdown(title, secs, details), regular_only=True)
    write_file(page, render_html(title, secs, details), regular_only=True)
    return md, page


__all__ = ["failure_details", "render_html", "render_markdown", "sections", "write_report"]
