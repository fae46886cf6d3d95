"""The Auditor: one LLM session per failed task, testing hypotheses by running code against the lake.

The auditor model gets the task's artifacts (question, gold, answer type, the reference solution, the
system's answer, code, output and transcript, the lake's file list) and works in turns, as DS-Guru does
(the same model and sandbox contracts, the same run-and-feed-back loop; the DS-Guru package itself is
reached only through its entry point, so the loop is the audit's own):
a reply with a Python block is run in the sandbox (the lake mounted read-only, no network, no gold: the
gold is in the auditor's prompt only, never in a system's) and the output comes back; a reply with a
JSON report ends the session. The report's derivation (code that reproduces the gold) and correction
(code that computes the right answer, for a gold error) are then run again by the audit itself and
scored with the project's scorers: ``verified`` says what the code really printed, not what the model
claims.
"""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from kramabench.audit.extract import extract_value
from kramabench.audit.taxonomy import Attribution, attribution_of, describe, normalise
from kramabench.files import head_tail

if TYPE_CHECKING:
    from kramabench.contracts.model import Model
    from kramabench.contracts.sandbox import ExecResult, Sandbox

log = logging.getLogger(__name__)

PROMPT_VERSION = "auditor-v2"
_OUT_CHARS = 3000


class AuditorOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(8, ge=1, le=40, description="model replies per session (runs + the report)")
    timeout_s: float = Field(120.0, gt=0, description="wall-clock limit per program the auditor runs")
    memory_mb: int = Field(4096, gt=0)
    temperature: float = 0.0
    max_tokens: int | None = 4000


class FailureCase(BaseModel):
    """What the auditor is shown about one failure."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    task_id: str
    question: str
    answer_type: str | None = None
    gold: Any = None
    system: str = ""
    system_answer: Any = None
    system_code: str | None = None
    system_output: str = Field("", description="the system's error message or output tail")
    transcript: str = Field("", description="a short account of the system's session")
    score: float | None = None
    score_details: dict[str, Any] = Field(default_factory=dict)
    reference_solution: str | None = None
    data_sources: list[str] = Field(default_factory=list)
    lake: Path
    subtasks: list[dict[str, Any]] = Field(
        default_factory=list, description="id, query, gold of each subtask"
    )


class CodeCheck(BaseModel):
    """Code of the report, run again by the audit: what it printed and whether that matches."""

    model_config = ConfigDict(extra="forbid")

    code: str
    ran: bool = False
    printed: Any = None
    how_read: str | None = None
    matches: bool = Field(
        False, description="derivation: reproduces the gold; correction: prints the claimed value"
    )
    score: float | None = None
    error: str | None = None


class AuditReport(BaseModel):
    """The structured report of one failure (one line of ``failures.jsonl``)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="report id: <domain>/<task_id>")
    domain: str
    task_id: str
    auditor: str
    prompt_version: str = PROMPT_VERSION
    attribution: Attribution = "undecided"
    category: str | None = None
    sub_kind: str | None = None
    root_cause: str = ""
    evidence: list[str] = Field(default_factory=list)
    derivation: CodeCheck | None = Field(
        None, description="code that reproduces the gold, verified by running it"
    )
    gold_reproduced: bool = Field(False, description="the derivation, run by the audit, printed the gold")
    correct_answer: Any = Field(None, description="for a gold error: the answer the auditor found right")
    correction: CodeCheck | None = None
    ambiguity: str | None = Field(None, description="for an ambiguous question: the readings")
    turns: int = 0
    runs: int = 0
    problems: list[str] = Field(default_factory=list, description="what was wrong with the auditor's report")
    transcript: list[dict[str, Any]] = Field(default_factory=list)
    cost_usd: float | None = 0.0
    wall_s: float = 0.0

    @property
    def derivation_verified(self) -> bool:
        return self.gold_reproduced


_SYSTEM = """You audit one failed task of a data-science benchmark. A system under test answered a question
over a data lake and the benchmark scored the answer as wrong. Decide whether the failure is the system's
fault or the benchmark's, by running code against the data until you find the computation that reproduces
the gold answer exactly, or until you conclude that no faithful reading of the question does.

To run code, reply with one ```python block. It runs with the data lake at {lake} (read-only), no
network; print what you need. You will get its output. You have {turns} replies in all, the last of which
must be the report.

To finish, reply with one ```json block holding:
{{"root_cause": "...", "attribution": "system" | "benchmark", "category": "<category>",
  "sub_kind": "<only for evaluation-false-positive>", "evidence": ["...", ...],
  "derivation_code": "<python that prints the gold value (for a gold calculation error: the mistaken
     computation that makes the wrong gold, if you found it: the best evidence), or empty>",
  "correct_answer": <for a gold calculation error: the right answer, else null>,
  "correct_code": "<python that prints correct_answer, or empty>",
  "ambiguity": "<for an ambiguous question: the readings, else empty>"}}

Categories:
{taxonomy}"""


def _fence(text: str, lang: str = "") -> str:
    return f"```{lang}\n{text.rstrip()}\n```"


def case_prompt(case: FailureCase, lake_dir: str, files: list[str]) -> str:
    subs = "\n".join(f"  - {s.get('id')}: {s.get('query')} -> gold {json.dumps(s.get('gold'), default=str)}"
                     for s in case.subtasks)  # fmt: skip
    listing = "\n".join(f"  {f}" for f in files[:200]) + (
        f"\n  ... ({len(files) - 200} more)" if len(files) > 200 else ""
    )
    parts = [
        f"Task {case.task_id} (domain {case.domain})",
        f"Question: {case.question}",
        f"Answer type: {case.answer_type}",
        f"Gold answer: {json.dumps(case.gold, default=str)}",
        f"Data sources named by the task: {', '.join(case.data_sources) or '(none)'}",
        f"Files of the lake ({lake_dir}):\n{listing}",
    ]
    if subs:
        parts.append(f"Subtasks and their golds:\n{subs}")
    if case.reference_solution:
        parts.append(
            "Reference solution of the benchmark:\n" + _fence(case.reference_solution[:6000], "python")
        )
    parts.append(f"System {case.system!r} answered: {json.dumps(case.system_answer, default=str)}"
                 + (f" (score {case.score:.3g}; {json.dumps(case.score_details, default=str)[:300]})"
                    if case.score is not None else ""))  # fmt: skip
    if case.system_code:
        parts.append("System's code:\n" + _fence(case.system_code[:6000], "python"))
    if case.system_output:
        parts.append("System's output / error:\n" + _fence(case.system_output[-2000:]))
    if case.transcript:
        parts.append("System's session:\n" + case.transcript[-2000:])
    return "\n\n".join(parts)


def _json_block(text: str) -> dict[str, Any] | None:
    for m in re.finditer(r"```(?:json)?\s*\n(.*?)```", text, re.S):
        try:
            obj = json.loads(m.group(1))
        except ValueError:
            continue
        if isinstance(obj, dict) and ("attribution" in obj or "category" in obj):
            return obj
    braces = re.search(r"\{.*\}", text, re.S)
    if braces:
        try:
            obj = json.loads(braces.group(0))
        except ValueError:
            return None
        if isinstance(obj, dict) and ("attribution" in obj or "category" in obj):
            return obj
    return None


_PY_BLOCK_RE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)```", re.S | re.I)


def _python_block(text: str) -> str | None:
    """The last fenced Python program of a reply (a ```json block is the report, never a program)."""
    text = re.sub(r"<think>.*?</think>", "", text or "", flags=re.S)
    bodies: list[str] = _PY_BLOCK_RE.findall(text)
    for body in reversed(bodies):
        if not body.strip() or body.lstrip().startswith("{"):
            continue
        try:
            compile(body, "<auditor>", "exec")
        except (SyntaxError, ValueError):
            continue
        return body
    return None


def _lake_files(lake: Path) -> list[str]:
    lake = Path(lake)
    if not lake.is_dir():
        return []
    return sorted(p.relative_to(lake).as_posix() for p in lake.rglob("*") if p.is_file())


def _run(sandbox: Sandbox, code: str, lake: Path, options: AuditorOptions) -> ExecResult:
    from kramabench.contracts.sandbox import Limits

    return sandbox.run(code, lake, Limits(wall_timeout_s=options.timeout_s, memory_mb=options.memory_mb))


def check_code(
    sandbox: Sandbox, code: str, case: FailureCase, options: AuditorOptions, *, expected: Any
) -> CodeCheck:
    """Run ``code``, read what it printed, and compare with ``expected`` using the project's scorer."""
    from kramabench.scorers.registry import score

    check = CodeCheck(code=code)
    res = _run(sandbox, code, case.lake, options)
    if not res.ok:
        from kramabench.audit.causes import last_exception

        check.error = res.explanation or last_exception(res.stderr) or f"exit code {res.exit_code}"
        return check
    check.ran = True
    ext = extract_value(res.stdout, case.answer_type)
    check.printed, check.how_read = ext.value, ext.method
    if ext.found and expected is not None:
        s = score(expected, ext.value, case.answer_type, question=case.question, diagnostics=False)
        check.score = s.value
        exact = not str(case.answer_type or "").endswith("_approximate")
        check.matches = s.value is not None and (s.value >= 1 - 1e-9 if exact else s.value >= 0.99)
    return check


def audit_case(case: FailureCase, model: Model, sandbox: Sandbox, options: AuditorOptions | None = None,
               *, auditor: str = "") -> AuditReport:  # fmt: skip
    """One Auditor session; never raises for the model's or the code's trouble (recorded in the report)."""
    from kramabench.contracts.model import ChatMessage, ModelError, ModelOptions

    options = options or AuditorOptions()
    t0 = time.monotonic()
    report = AuditReport(
        id=f"{case.domain}/{case.task_id}", domain=case.domain, task_id=case.task_id, auditor=auditor
    )
    lake_dir = sandbox.lake_dir(case.lake)
    messages = [
        ChatMessage(
            role="system", content=_SYSTEM.format(lake=lake_dir, turns=options.max_turns, taxonomy=describe())
        ),
        ChatMessage(role="user", content=case_prompt(case, lake_dir, _lake_files(case.lake))),
    ]
    mopts = ModelOptions(temperature=options.temperature, max_tokens=options.max_tokens)
    final: dict[str, Any] | None = None
    cost: float | None = 0.0
    for turn in range(1, options.max_turns + 1):
        report.turns = turn
        try:
            c = model.complete(messages, mopts)
        except ModelError as exc:
            report.problems.append(f"model error: {exc}")
            report.transcript.append({"turn": turn, "error": str(exc)})
            break
        cost = None if cost is None or c.cost_usd is None else cost + c.cost_usd
        text = c.text or ""
        report.transcript.append({"turn": turn, "reply": text[:8000]})
        final = _json_block(text)
        code = _python_block(text) if final is None else None
        if final is not None:
            break
        if code is None:
            nudge = "Reply with one ```python block to run, or the ```json report."
            messages += [ChatMessage(role="assistant", content=text), ChatMessage(role="user", content=nudge)]
            continue
        if turn == options.max_turns:
            break
        res = _run(sandbox, code, case.lake, options)
        report.runs += 1
        # long output keeps its head and its tail, with a marker saying how much was cut between them
        out = head_tail(res.stdout or "", _OUT_CHARS)
        err = head_tail(res.stderr or "", _OUT_CHARS // 2, head_share=1 / 4)
        status = (
            "ok"
            if res.ok
            else (res.explanation or ("timed out" if res.timed_out else f"exit code {res.exit_code}"))
        )
        report.transcript.append({"turn": turn, "ran": status, "code": code, "stdout": out, "stderr": err})
        left = options.max_turns - turn
        feedback = f"Run: {status}\nstdout:\n{_fence(out)}\nstderr:\n{_fence(err)}\n{left} repl{'y' if left == 1 else 'ies'} left."
        if left == 1:
            feedback += " Your next reply must be the ```json report."
        messages += [ChatMessage(role="assistant", content=text), ChatMessage(role="user", content=feedback)]
    report.cost_usd = cost
    if final is None:
        report.problems.append("the auditor gave no JSON report")
        report.root_cause = "undecided: no report"
        report.wall_s = time.monotonic() - t0
        return report
    category, sub_kind, problems = normalise(final.get("category"), final.get("sub_kind"))
    report.problems += problems
    report.category, report.sub_kind = category, sub_kind
    claimed = str(final.get("attribution") or "").strip().lower()
    implied = attribution_of(category) if category else "undecided"
    if category is not None and claimed and claimed != implied:
        report.problems.append(
            f"attribution {claimed!r} contradicts category {category!r}: the category's ({implied}) is kept"
        )
    report.attribution = implied
    report.root_cause = str(final.get("root_cause") or "")[:2000]
    ev = final.get("evidence") or []
    report.evidence = [str(e)[:500] for e in (ev if isinstance(ev, list) else [ev])][:20]
    report.ambiguity = str(final["ambiguity"])[:1000] if final.get("ambiguity") else None
    if final.get("derivation_code"):
        report.derivation = check_code(
            sandbox, str(final["derivation_code"]), case, options, expected=case.gold
        )
        report.gold_reproduced = report.derivation.matches
    report.correct_answer = final.get("correct_answer")
    if final.get("correct_code"):
        report.correction = check_code(sandbox, str(final["correct_code"]), case, options,
                                       expected=report.correct_answer)  # fmt: skip
    if category == "gold-calculation-error" and report.gold_reproduced:
        # the best evidence of a wrong gold: code that makes the wrong number, so the mistake can be seen
        report.evidence.insert(
            0,
            "the derivation, run again by the audit, reproduces the (wrong) gold: it shows how "
            "the gold was made",
        )
    report.wall_s = time.monotonic() - t0
    return report


__all__ = [
    "PROMPT_VERSION",
    "AuditReport",
    "AuditorOptions",
    "CodeCheck",
    "FailureCase",
    "audit_case",
    "case_prompt",
    "check_code",
]
